// Every export here is public API of @toolgate/mcp: import tools from MCP servers, serve governed tools over MCP.

// Client: MCP server → toolgate Tools stamped with `source`
export type {
  AnnotationHint,
  BackoffOptions,
  ImportDeclaration,
  McpClient,
  McpClientEvent,
  McpClientOptions,
  McpClientStatus,
  McpUpstream,
  SkippedTool,
} from './client';
export { acceptPin, mcpClient, McpClientConfigError, SERVER_IDENTITY, TOOL_SET } from './client';

// Server: toolgate Tools → an MCP server running the chain
export type {
  McpAdmission,
  McpCallReport,
  McpListedTool,
  McpPausedCall,
  McpRequestExtra,
  McpServed,
  McpServeOptions,
  McpServeRefusal,
  McpServeScope,
} from './serve';
export { isModernRequest, mcpServe, McpServeConfigError } from './serve';
export type { ListenGate, ListenRefusal } from './listen';

// For servers built beside mcpServe (the gateway's per-tenant server): outcomes as MCP results, and
// check-ins over elicitation
export type { McpSettled } from './results';
export { callToolResult, refusalResult, refusedResult } from './results';
export type { ApprovalForm } from './elicit';
export { approvalForm, askPerson, canElicitForm, formDecision, MAX_FORM_ARGUMENTS_CHARS } from './elicit';
export type { ProxySetup } from './proxied';
export { serveProxied } from './proxied';
export { listedExtrasOf } from './client';
export type { ListedExtras } from './imported';

// Running a served set over stdio or Streamable HTTP
export type {
  HttpServing,
  ProtectedResourceOptions,
  ServeHttpOptions,
  ServeHttpWarning,
  Serving,
} from './transports';
export { serveHttp, serveStdio } from './transports';
export { InPlaceStdioClientTransport } from './stdio';
export type { McpTaskControl, McpTaskStatus, ServedTasksOptions, TaskError, TaskOwner } from './tasks';
export { TASK_REFUSED, TASK_RUNNER_LOST, TASKS_EXTENSION } from './tasks';
export { downstreamOf, type DownstreamCall } from './relay';
