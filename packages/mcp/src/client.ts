// mcpClient: imports an MCP server's tools as toolgate Tools stamped with the server's name as
// `source`, so policy can tell them apart. A tool toolgate cannot govern is skipped, never fatal.

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  ErrorCode,
  McpError,
  type CallToolResult,
  type Tool as McpTool,
} from '@modelcontextprotocol/sdk/types.js';
import {
  assertTool,
  TOOL_NAME_PATTERN,
  type JsonSchema,
  type Tool,
  type ToolAnnotations,
  type ToolArgs,
} from '@toolgate/core';
import { ajvValidator, type SchemaValidator } from '@toolgate/middleware';

export interface McpClientOptions {
  /** Who the server is; every imported tool carries it as `source`. */
  readonly name: string;
  /** Any SDK client transport: stdio, Streamable HTTP, in-memory. Give this or `url`. */
  readonly transport?: Transport;
  /** A Streamable HTTP endpoint, e.g. `http://127.0.0.1:3000/mcp`. Give this or `transport`. */
  readonly url?: string | URL;
  /** Prepended verbatim to every tool name not named by `rename`, e.g. `'docs_'`. */
  readonly prefix?: string;
  /** The exact local name for a remote tool; answer undefined to keep the default (prefix + name). */
  readonly rename?: Readonly<Record<string, string>> | ((remoteName: string) => string | undefined);
  /** How long one `tools/call` may take; default 60000 ms. */
  readonly timeoutMs?: number;
  /** Checks that each remote inputSchema compiles; default ajv, the validate-args default. */
  readonly validator?: SchemaValidator;
  /** Told about each remote tool left out, and why. */
  readonly onSkip?: (skipped: SkippedTool) => void;
}

/** A remote tool toolgate left out: it could not be governed as listed. */
export interface SkippedTool {
  readonly type: 'mcp.tool.skipped';
  readonly source: string;
  /** The name as the server listed it (bounded, for display). */
  readonly toolName: string;
  readonly reason: string;
}

export interface McpClient {
  readonly name: string;
  /** Connects on first use, lists every page of the server's tools, and returns those it can govern. */
  tools(): Promise<Tool[]>;
  /** The tools the latest `tools()` left out. */
  readonly skipped: readonly SkippedTool[];
  /** Closes the transport; imported tools fail from then on. */
  close(): Promise<void>;
}

const DEFAULT_TIMEOUT_MS = 60_000;
// A server that hands back a cursor forever must not hang tools().
const MAX_PAGES = 1000;

/** A remote `isError` result: the message is the server's own text. */
class McpToolError extends Error {
  override readonly name = 'McpToolError';
}

/** The server could not be reached, closed, or did not answer in time. */
class McpConnectionError extends Error {
  override readonly name = 'McpConnectionError';
}

/**
 * Connects lazily to one MCP server and imports its tools, each stamped `source: name`.
 *
 * @example
 * const docs = mcpClient({ name: 'docs', transport: new StdioClientTransport({ command: 'docs-mcp' }) });
 * const dispatcher = createDispatcher({ tools: [...ours, ...(await docs.tools())], chain });
 */
export function mcpClient(options: McpClientOptions): McpClient {
  const { name, prefix = '', rename, onSkip } = options ?? ({} as McpClientOptions);
  if (typeof name !== 'string' || name.trim() === '')
    throw new TypeError(`mcpClient: 'name' must be a non-empty string; it becomes each tool's source.`);
  if ((options.transport === undefined) === (options.url === undefined))
    throw new TypeError(`mcpClient '${name}': give exactly one of 'transport' or 'url'.`);
  if (typeof prefix !== 'string') throw new TypeError(`mcpClient '${name}': 'prefix' must be a string.`);
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  if (!Number.isInteger(timeoutMs) || timeoutMs <= 0)
    throw new TypeError(`mcpClient '${name}': 'timeoutMs' must be a positive integer.`);
  const validator = options.validator ?? ajvValidator();
  const transport = options.transport ?? new StreamableHTTPClientTransport(new URL(options.url!));
  const client = new Client({ name: `toolgate:${name}`, version: '0.1.0' });
  let connecting: Promise<void> | undefined;
  let closed = false;
  let skipped: SkippedTool[] = [];

  const localName = (remote: string): string => {
    const renamed = typeof rename === 'function' ? rename(remote) : rename?.[remote];
    return renamed ?? `${prefix}${remote}`;
  };

  async function connect(): Promise<void> {
    if (closed) throw new Error(`mcpClient '${name}' is closed.`);
    connecting ??= client.connect(transport).catch((error: unknown) => {
      throw new Error(`mcpClient '${name}': could not connect to the MCP server (${describe(error)}).`, {
        cause: error,
      });
    });
    return connecting;
  }

  async function listAll(): Promise<McpTool[]> {
    const listed: McpTool[] = [];
    const cursors = new Set<string>();
    let cursor: string | undefined;
    for (let page = 0; page < MAX_PAGES; page++) {
      const result = await client.listTools(cursor === undefined ? {} : { cursor });
      listed.push(...result.tools);
      cursor = result.nextCursor;
      if (cursor === undefined || cursors.has(cursor)) break;
      cursors.add(cursor);
    }
    return listed;
  }

  async function call(remote: string, args: ToolArgs, signal: AbortSignal): Promise<unknown> {
    let result: CallToolResult;
    try {
      result = (await client.callTool({ name: remote, arguments: args }, undefined, {
        signal,
        timeout: timeoutMs,
      })) as CallToolResult;
    } catch (error) {
      throw new McpConnectionError(connectionProblem(name, remote, timeoutMs, error, signal), {
        cause: error,
      });
    }
    if (result.isError === true) {
      const text = textOf(result).trim();
      throw new McpToolError(
        text || `MCP server '${name}' reported an error from '${remote}' without a message`,
      );
    }
    return valueOf(result);
  }

  function importTool(remote: McpTool, taken: Set<string>): Tool | string {
    const local = localName(remote.name);
    if (typeof local !== 'string' || !TOOL_NAME_PATTERN.test(local))
      return `its local name does not match ${TOOL_NAME_PATTERN.source}; give it one with 'rename'`;
    if (taken.has(local)) return `another tool from this server is already named '${local}'`;
    const inputSchema = remote.inputSchema as JsonSchema;
    try {
      validator.compile(inputSchema);
    } catch (error) {
      return `its inputSchema does not compile (${describe(error)})`;
    }
    const tool: Tool = {
      schema: { name: local, description: remote.description ?? remote.title ?? '', inputSchema },
      source: name,
      ...(remote.annotations !== undefined ? { annotations: remote.annotations as ToolAnnotations } : {}),
      execute: (args, ctx) => call(remote.name, args, ctx.signal),
    };
    try {
      assertTool(tool, { allowSource: true });
    } catch (error) {
      return describe(error);
    }
    return tool;
  }

  return {
    name,
    get skipped() {
      return skipped;
    },
    async tools() {
      await connect();
      const imported: Tool[] = [];
      const taken = new Set<string>();
      const left: SkippedTool[] = [];
      for (const remote of await listAll()) {
        const tool = importTool(remote, taken);
        if (typeof tool === 'string') {
          const skip: SkippedTool = {
            type: 'mcp.tool.skipped',
            source: name,
            toolName: String(remote.name).slice(0, 100),
            reason: tool,
          };
          left.push(skip);
          onSkip?.(skip);
          continue;
        }
        taken.add(tool.schema.name);
        imported.push(tool);
      }
      skipped = left;
      return imported;
    },
    async close() {
      closed = true;
      // Client.close closes its transport; a transport never connected is closed directly.
      await (connecting === undefined ? transport.close() : client.close());
    },
  };
}

function describe(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.split('\n')[0]!.slice(0, 200);
}

function connectionProblem(
  name: string,
  remote: string,
  timeoutMs: number,
  error: unknown,
  signal: AbortSignal,
): string {
  if (signal.aborted) return `the call to '${remote}' on MCP server '${name}' was cancelled`;
  if (error instanceof McpError) {
    if (error.code === ErrorCode.RequestTimeout)
      return `MCP server '${name}' did not answer '${remote}' within ${timeoutMs} ms`;
    if (error.code === ErrorCode.ConnectionClosed)
      return `the connection to MCP server '${name}' closed before '${remote}' answered`;
    return `MCP server '${name}' rejected the call to '${remote}': ${describe(error).replace(/^MCP error -?\d+: /, '')}`;
  }
  if (error instanceof Error && error.message === 'Not connected')
    return `the connection to MCP server '${name}' is closed`;
  // Transport errors can carry URLs and response bodies, so only their kind is passed on.
  return `MCP server '${name}' could not be reached for '${remote}' (${error instanceof Error ? error.name : typeof error})`;
}

function textOf(result: CallToolResult): string {
  return result.content
    .filter((block): block is Extract<typeof block, { type: 'text' }> => block.type === 'text')
    .map((block) => block.text)
    .join('\n');
}

/** Structured content when the server sent it, else the text, else the content blocks as they are. */
function valueOf(result: CallToolResult): unknown {
  if (result.structuredContent !== undefined) return result.structuredContent;
  if (result.content.every((block) => block.type === 'text')) return textOf(result);
  return result.content;
}
