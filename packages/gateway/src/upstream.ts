// One upstream MCP server behind the gateway: connected through `mcpClient` (stdio `command` or
// Streamable HTTP `url`), its tools filtered by `include`/`exclude` and given the declarations the
// configuration writes for them (per tool, and from annotation defaults). The tools handed to the
// chain forward to whichever connection is live, so a crashed server can be restarted underneath.

import { resolve } from 'node:path';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { Tool, ToolArgs } from '@toolgate/core';
import { mcpClient, type McpClient } from '@toolgate/mcp';
import type { ConfigIssue, ConfigPath } from './config/errors';
import type { LogFields } from './log';
import type { AnnotationHint, CredentialConfig, DefaultsConfig, UpstreamConfig } from './config/types';
import { durationMs } from './config/units';
import { fillCredentials, resolveCredential } from './credentials';
import { globMatcher, matchesAny } from './glob';

export type UpstreamState = 'connected' | 'restarting' | 'closed';

export interface UpstreamStatus {
  readonly name: string;
  readonly state: UpstreamState;
  readonly tools: number;
  /** Why it is not connected, in words that name no secret. */
  readonly error?: string;
  readonly restarts: number;
}

export interface Upstream {
  readonly name: string;
  /** Equal fingerprints mean equal configuration: a reload keeps such an upstream connected. */
  readonly fingerprint: string;
  /** The governed tools, with local (prefixed) names. */
  readonly tools: readonly Tool[];
  /** Local tool name → the upstream's own name. */
  readonly remoteNames: ReadonlyMap<string, string>;
  status(): UpstreamStatus;
  close(): Promise<void>;
}

export interface UpstreamContext {
  /** Relative commands, cwd and files resolve here. */
  readonly baseDir: string;
  readonly credentials?: Readonly<Record<string, CredentialConfig>>;
  readonly defaults?: DefaultsConfig;
  /** Places a problem in the configuration file. */
  readonly issue: (path: ConfigPath, message: string, fix?: string) => ConfigIssue;
  /** Operator events: restarts, skipped tools. */
  readonly log?: (fields: LogFields) => void;
  readonly env?: Readonly<Record<string, string | undefined>>;
}

/** The upstream could not be connected or its tools do not match what the configuration names. */
export class UpstreamError extends Error {
  override readonly name = 'UpstreamError';
  constructor(
    message: string,
    readonly issues: readonly ConfigIssue[] = [],
  ) {
    super(message);
  }
}

const HINTS: readonly AnnotationHint[] = [
  'readOnlyHint',
  'destructiveHint',
  'idempotentHint',
  'openWorldHint',
];
const RESTART_MIN_MS = 500;
const RESTART_MAX_MS = 30_000;

/** Connects one upstream and imports its tools; rejects with `UpstreamError` naming what failed. */
export async function connectUpstream(
  name: string,
  config: UpstreamConfig,
  context: UpstreamContext,
): Promise<Upstream> {
  const fingerprint = JSON.stringify([config, context.credentials, context.defaults]);
  const prefix = config.prefix ?? '';
  const timeoutMs =
    config.timeout === undefined ? 60_000 : durationMs(config.timeout, `upstreams.${name}.timeout`);
  let closed = false;
  let restarts = 0;
  let error: string | undefined;
  let state: UpstreamState = 'connected';

  const transport = (): Transport => {
    const lookup = (credential: string) =>
      resolveCredential(credential, context.credentials, context.baseDir, context.env);
    if (config.command !== undefined) {
      const [command, ...args] = config.command;
      const env: Record<string, string> = { ...getDefaultEnvironment() };
      for (const [key, value] of Object.entries(config.env ?? {})) env[key] = fillCredentials(value, lookup);
      return new StdioClientTransport({
        command: command!,
        args,
        env,
        cwd: resolve(context.baseDir, config.cwd ?? '.'),
        // The server's stderr is its own business, and may echo what it was sent.
        stderr: 'ignore',
      });
    }
    const headers: Record<string, string> = {};
    for (const [key, value] of Object.entries(config.headers ?? {}))
      headers[key] = fillCredentials(value, lookup);
    return new StreamableHTTPClientTransport(new URL(config.url!), { requestInit: { headers } });
  };

  let live = new Map<string, Tool>();
  let client: McpClient | undefined;

  async function open(): Promise<Map<string, Tool>> {
    let made: Transport;
    try {
      made = transport();
    } catch (cause) {
      throw new UpstreamError(`upstream '${name}': ${(cause as Error).message}`);
    }
    made.onclose = () => {
      if (!closed && current === made) void restart('the connection closed');
    };
    const opened = mcpClient({ name, transport: made, prefix, timeoutMs });
    current = made;
    let imported: Tool[];
    try {
      imported = await opened.tools();
    } catch (cause) {
      current = undefined;
      await opened.close().catch(() => undefined);
      throw new UpstreamError(`upstream '${name}': ${connectProblem(config, cause)}`);
    }
    for (const skipped of opened.skipped)
      context.log?.({
        level: 'warn',
        msg: 'upstream.tool-skipped',
        upstream: name,
        tool: skipped.toolName,
        why: skipped.reason,
      });
    client = opened;
    return new Map(imported.map((tool) => [tool.schema.name, tool]));
  }
  let current: Transport | undefined;

  async function restart(why: string): Promise<void> {
    if (closed || state === 'restarting') return;
    state = 'restarting';
    error = why;
    context.log?.({ level: 'warn', msg: 'upstream.down', upstream: name, why });
    const old = client;
    client = undefined;
    void old?.close().catch(() => undefined);
    for (let attempt = 0; !closed; attempt++) {
      await sleep(Math.min(RESTART_MAX_MS, RESTART_MIN_MS * 2 ** attempt));
      if (closed) return;
      try {
        live = await open();
        restarts += 1;
        state = 'connected';
        error = undefined;
        context.log?.({ level: 'info', msg: 'upstream.restarted', upstream: name, attempt: attempt + 1 });
        return;
      } catch (cause) {
        error = (cause as Error).message;
      }
    }
  }

  live = await open();
  const tools = governedTools(name, config, live, context);

  return {
    name,
    fingerprint,
    tools: tools.tools,
    remoteNames: tools.remoteNames,
    status: () => ({
      name,
      state,
      tools: tools.tools.length,
      ...(error !== undefined ? { error } : {}),
      restarts,
    }),
    async close() {
      closed = true;
      state = 'closed';
      await client?.close().catch(() => undefined);
    },
  };

  /** The live tool behind a local name, for the forwarding execute. */
  function liveTool(local: string): Tool {
    const tool = live.get(local);
    if (state !== 'connected' || client === undefined)
      throw new Error(`MCP server '${name}' is restarting; try again shortly`);
    if (tool === undefined) throw new Error(`MCP server '${name}' no longer serves '${local}'`);
    return tool;
  }

  function governedTools(
    source: string,
    upstream: UpstreamConfig,
    imported: ReadonlyMap<string, Tool>,
    ctx: UpstreamContext,
  ): { tools: Tool[]; remoteNames: Map<string, string> } {
    const issues: ConfigIssue[] = [];
    const remoteOf = (local: string) => local.slice(prefix.length);
    const remotes = [...imported.keys()].map(remoteOf);
    const at = ['upstreams', source];
    const named = (list: readonly string[] | undefined, key: 'include' | 'exclude') =>
      list?.forEach((glob, index) => {
        if (!remotes.some((remote) => globMatcher(glob).test(remote)))
          issues.push(
            ctx.issue([...at, key, index], `matches no tool of '${source}'`, `it serves: ${listed(remotes)}`),
          );
      });
    named(upstream.include, 'include');
    named(upstream.exclude, 'exclude');
    for (const tool of Object.keys(upstream.tools ?? {})) {
      if (!remotes.includes(tool))
        issues.push(
          ctx.issue(
            [...at, 'tools', tool],
            `declares '${tool}', which '${source}' does not serve`,
            `it serves: ${listed(remotes)}`,
          ),
        );
    }
    if (issues.length > 0)
      throw new UpstreamError(
        `upstream '${source}': its configuration names tools it does not serve`,
        issues,
      );

    const tools: Tool[] = [];
    const remoteNames = new Map<string, string>();
    for (const [local, tool] of imported) {
      const remote = remoteOf(local);
      if (upstream.include !== undefined && !matchesAny(remote, upstream.include)) continue;
      if (upstream.exclude !== undefined && matchesAny(remote, upstream.exclude)) continue;
      tools.push(
        declared(tool, upstream.tools?.[remote], ctx.defaults, (args, toolCtx) =>
          liveTool(local).execute(args, toolCtx),
        ),
      );
      remoteNames.set(local, remote);
    }
    return { tools, remoteNames };
  }
}

/** The tool as the chain sees it: the upstream's definition plus the configuration's declarations. */
function declared(
  tool: Tool,
  declaration: NonNullable<UpstreamConfig['tools']>[string] | undefined,
  defaults: DefaultsConfig | undefined,
  execute: Tool['execute'],
): Tool {
  const capabilities = new Set<string>(tool.capabilities ?? []);
  let checkIn: 'always' | undefined;
  for (const hint of HINTS) {
    const rule = defaults?.annotations?.[hint];
    if (rule === undefined || tool.annotations?.[hint] !== true) continue;
    if (rule.checkIn === 'always') checkIn = 'always';
    for (const capability of rule.capabilities ?? []) capabilities.add(capability);
  }
  for (const capability of declaration?.capabilities ?? []) capabilities.add(capability);
  if (declaration?.checkIn === 'always') checkIn = 'always';
  if (declaration?.checkIn === 'never') checkIn = undefined;
  const ceiling = declaration?.resultCeiling;
  return {
    schema: tool.schema,
    ...(tool.source !== undefined ? { source: tool.source } : {}),
    ...(tool.annotations !== undefined ? { annotations: tool.annotations } : {}),
    ...(capabilities.size > 0 ? { capabilities: [...capabilities] } : {}),
    ...(checkIn !== undefined ? { checkIn } : {}),
    ...(ceiling !== undefined
      ? {
          resultCeiling: {
            maxChars: ceiling.maxChars,
            ...(ceiling.narrowBy !== undefined ? { narrowBy: [...ceiling.narrowBy] } : {}),
          },
        }
      : {}),
    execute: execute as (args: ToolArgs, ctx: Parameters<Tool['execute']>[1]) => Promise<unknown>,
  };
}

function listed(names: readonly string[]): string {
  if (names.length === 0) return '(no tools)';
  return names.length > 20 ? `${names.slice(0, 20).join(', ')}, … (${names.length})` : names.join(', ');
}

function connectProblem(config: UpstreamConfig, cause: unknown): string {
  const message = cause instanceof Error ? cause.message : String(cause);
  const code =
    (cause as { cause?: { code?: unknown } } | undefined)?.cause?.code ?? (cause as { code?: unknown })?.code;
  if (config.command !== undefined) {
    if (code === 'ENOENT' || /ENOENT/.test(message))
      return `the command '${config.command[0]}' was not found; check 'command' (relative paths resolve against the configuration file)`;
    return `the server started by '${config.command[0]}' did not answer the MCP handshake (${firstLine(message)})`;
  }
  // An HTTP error may carry the response body or URL; only its kind is passed on.
  return `the server at its 'url' could not be reached or did not speak MCP (${cause instanceof Error ? cause.name : 'error'})`;
}

function firstLine(text: string): string {
  return text.split('\n')[0]!.slice(0, 200);
}

function sleep(ms: number): Promise<void> {
  return new Promise((done) => setTimeout(done, ms).unref?.());
}
