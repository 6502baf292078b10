// Every export here is public API of @toolgate/mcp: import tools from MCP servers, serve governed tools over MCP.

// Client: MCP server → toolgate Tools stamped with `source`
export type { McpClient, McpClientOptions, SkippedTool } from './client';
export { mcpClient } from './client';

// Server: toolgate Tools → an MCP server running the chain
export type { McpRequestExtra, McpServed, McpServeOptions } from './serve';
export { mcpServe, McpServeConfigError } from './serve';

// Running a served set over stdio or Streamable HTTP
export type { HttpServing, ServeHttpOptions, ServeHttpWarning, Serving } from './transports';
export { serveHttp, serveStdio } from './transports';
