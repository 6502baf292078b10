// One upstream MCP server behind the gateway, through `mcpClient`: a transport factory (stdio
// `command` or Streamable HTTP `url`, credentials resolved per connection) so a crashed server is
// restarted with bounded exponential backoff; definitions pinned in the configured state store; the
// configuration's declarations per tool (`declare`) and by annotation (`fromAnnotations`). Its tools
// follow the server: a list change, a reconnect or an accepted pin imports them again.

import { matchesToolGlob } from '@toolgate/policy';
import { statSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Readable } from 'node:stream';
import { getDefaultEnvironment } from '@modelcontextprotocol/client/stdio';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import type { Transport } from '@modelcontextprotocol/client';
import type { CheckInStore, PinStore, Tool, ToolArgs } from '@toolgate/core';
import {
  listedExtrasOf,
  mcpClient,
  type ImportDeclaration,
  type ListedExtras,
  type McpClient,
  type McpClientEvent,
  type McpClientStatus,
  InPlaceStdioClientTransport,
} from '@toolgate/mcp';
import type { ConfigIssue, ConfigPath } from './config/errors';
import type { LogFields } from './log';
import type {
  AnnotationHint,
  CredentialConfig,
  DefaultsConfig,
  ResolvedConfig,
  ToolDeclaration,
  UpstreamConfig,
} from './config/types';
import { fingerprint } from './config/fingerprint';
import { fillCredentials, resolveCredential } from './credentials';
import { followStderr } from './upstream-stderr';
import { stderrTail, type StderrTail } from './stderr-tail';
import {
  needsUpstreamIdentity,
  perPrincipalHeaders,
  upstreamIdentity,
  type PrincipalCredentials,
  type UpstreamIdentity,
} from './upstream-identity';

export type UpstreamState = McpClientStatus['state'];

export interface UpstreamStatus {
  readonly name: string;
  readonly state: UpstreamState;
  readonly tools: number;
  /** Why it is not connected, in words that name no secret. */
  readonly error?: string;
  /** The last lines a stdio server that did not complete its handshake wrote to stderr, redacted. */
  readonly stderr?: readonly string[];
  /** Times the connection came back after it was lost. */
  readonly restarts: number;
  /** Tools the server lists that are not served, with why (invisible characters, a description addressed to the model, …). */
  readonly skipped?: readonly { readonly tool: string; readonly reason: string }[];
}

export interface Upstream {
  readonly name: string;
  /** Equal fingerprints mean equal configuration: a reload keeps such an upstream connected. */
  readonly fingerprint: string;
  /** The governed tools as the server serves them now, with local (prefixed) names. */
  readonly tools: readonly Tool[];
  /** Local tool name → the upstream's own name. */
  readonly remoteNames: ReadonlyMap<string, string>;
  /** The MCP client: resources and prompts, pins, list-change events. */
  readonly client: McpClient;
  /** On whose behalf it is called, when per caller (token exchange, per-principal credentials). */
  readonly identity?: UpstreamIdentity;
  status(): UpstreamStatus;
  /** Hears every change of the tool list (after `tools` changed); answers a function that stops listening. */
  onToolsChanged(listener: () => void): () => void;
  /** Imports the tools again now (e.g. once a pin held for review is accepted); listeners hear the change. */
  refresh(): Promise<void>;
  close(): Promise<void>;
}

export interface UpstreamContext {
  /** Relative commands, cwd and files resolve here. */
  readonly baseDir: string;
  readonly credentials?: Readonly<Record<string, CredentialConfig<ResolvedConfig>>>;
  readonly defaults?: DefaultsConfig<ResolvedConfig>;
  /** Places a problem in the configuration file. */
  readonly issue: (path: ConfigPath, message: string, fix?: string) => ConfigIssue;
  /** Operator events: restarts, skipped tools, pins. */
  readonly log?: (fields: LogFields) => void;
  /** Records what an operator must be able to find later (a tool not listed, and why) in the audit log. */
  readonly audit?: (entry: {
    kind: string;
    source: string;
    tool?: string;
    code: string;
    tenant?: string;
    principal?: string;
    args?: { reason: string };
  }) => void;
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Where tool definitions are pinned; default in memory. */
  readonly pins?: PinStore;
  /** What a tool added to a server while serving does: held for review (default) or listed. */
  readonly newTools?: 'review' | 'allow';
  /** Pending check-ins of a tool whose definition changed are revoked here. */
  readonly checkIns?: CheckInStore;
  /** Hears each credential value a connection resolved, so the gateway treats it as its own secret. */
  readonly onCredential?: (value: string) => void;
  /** Reconnection timing (tests shorten it). */
  readonly backoff?: { readonly initialDelayMs?: number; readonly maxDelayMs?: number };
  /** Per-principal credentials (`credentials.<name>.perPrincipal`), filled into headers per call. */
  readonly principalCredentials?: PrincipalCredentials;
  /** Hears the status of each HTTP response the upstream gives the gateway's own requests. */
  readonly onHttpStatus?: (status: number) => void;
}

/** The upstream could not be connected or its tools do not match what the configuration names. */
export class UpstreamError extends Error {
  override readonly name = 'UpstreamError';
  constructor(
    /** The upstream's name, as configured. */
    readonly upstream: string,
    /** What is wrong, as a clause (no upstream name, no closing period). */
    readonly problem: string,
    readonly issues: readonly ConfigIssue[] = [],
  ) {
    super(`upstream '${upstream}': ${problem}`);
  }
}

const HINTS: readonly AnnotationHint[] = [
  'readOnlyHint',
  'destructiveHint',
  'idempotentHint',
  'openWorldHint',
];
const BACKOFF = { initialDelayMs: 500, maxDelayMs: 30_000, maxAttempts: 8 };

// What tools/list shows of a governed tool beyond name, description and schema.
const extras = new WeakMap<Tool, ListedExtras>();

/** The title, annotations, output schema and `_meta` the upstream listed a governed tool with. */
export function listedExtrasFor(tool: Tool): ListedExtras | undefined {
  return extras.get(tool);
}

/** Equal for equal configuration: a reload keeps such an upstream connected. */
export function upstreamFingerprint(
  config: UpstreamConfig<ResolvedConfig>,
  context: UpstreamContext,
): string {
  return fingerprint(config, context.credentials, context.defaults, context.newTools);
}

/** Connects one upstream and imports its tools; rejects with `UpstreamError` naming what failed. */
export async function connectUpstream(
  name: string,
  config: UpstreamConfig<ResolvedConfig>,
  context: UpstreamContext,
): Promise<Upstream> {
  const prefix = config.prefix ?? '';
  const timeoutMs = config.timeout ?? 60_000;
  const backoff = { ...BACKOFF, ...context.backoff };
  let closed = false;
  let restarts = 0;
  let wasConnected = false;
  let kick: NodeJS.Timeout | undefined;
  // Tools whose served definition differs from the pin: once one runs, it was accepted elsewhere.
  const changed = new Set<string>();
  const listeners = new Set<() => void>();

  // The stderr of the newest stdio connection, kept until its handshake completes.
  let tail: StderrTail | undefined;
  // It answered 401 at start: it is served once a connection is authorized.
  let needsAuth = false;
  // Declared before the first import: an upstream waiting for authorization returns from there.
  let refreshing: Promise<void> | undefined;
  // The last HTTP status the server answered the gateway's own requests with (no per-call identity).
  let lastStatus: number | undefined;
  // Called on behalf of each caller: @toolgate/mcp sends the call's own headers (its credential).
  const identity =
    config.url !== undefined && needsUpstreamIdentity(config, context.principalCredentials)
      ? upstreamIdentity(name, config, {
          ...(context.principalCredentials !== undefined
            ? { principalCredentials: context.principalCredentials }
            : {}),
        })
      : undefined;
  const client = mcpClient({
    name,
    ...(identity === undefined
      ? {
          transport: () => {
            const made = transport(name, config, {
              ...context,
              onHttpStatus: (status) => {
                lastStatus = status;
              },
            });
            tail = made.tail;
            return made.transport;
          },
        }
      : {
          url: config.url!,
          headers: () => connectionHeaders(name, config, context),
          fetch: identity.fetch,
          credentialHeaders: (credential) => credential.reveal() as Readonly<Record<string, string>>,
        }),
    prefix,
    timeoutMs,
    backoff,
    ...(context.pins !== undefined ? { pins: context.pins } : {}),
    ...(context.checkIns !== undefined ? { checkIns: context.checkIns } : {}),
    identity: {
      ...(config.url !== undefined ? { url: config.url } : {}),
      ...(config.command !== undefined ? { command: config.command } : {}),
    },
    ...(context.newTools !== undefined ? { newTools: context.newTools } : {}),
    ...(config.sampling !== undefined ? { sampling: config.sampling } : {}),
    // Off unless configured: a 2025-11-25 server may keep one caller's roots as every caller's sandbox.
    roots: config.roots ?? 'refuse',
    declare: declarations(prefix, config.tools),
    ...(context.defaults?.annotations !== undefined
      ? { fromAnnotations: annotationDeclarations(context.defaults.annotations) }
      : {}),
    onEvent: (event) => observe(event),
  });

  function observe(event: McpClientEvent): void {
    switch (event.type) {
      case 'mcp.status': {
        const { state, reason } = event.status;
        if (state === 'connected') {
          tail?.stop();
          // Authorized at last: import its tools (listeners rebuild the tenants that serve them).
          if (needsAuth) {
            needsAuth = false;
            void refresh();
          }
          if (wasConnected) {
            restarts += 1;
            context.log?.({ level: 'info', msg: 'upstream.restarted', upstream: name, restarts });
          }
          wasConnected = true;
        } else if (state === 'retrying' && wasConnected && event.status.attempts === 1) {
          context.log?.({ level: 'warn', msg: 'upstream.down', upstream: name, why: reason });
        } else if (state === 'failed' && !closed) {
          context.log?.({ level: 'error', msg: 'upstream.failed', upstream: name, why: reason });
          // Nobody may call it for a while; a gateway keeps trying on its own, at the longest delay.
          clearTimeout(kick);
          kick = setTimeout(() => void refresh(), backoff.maxDelayMs);
          kick.unref();
        }
        return;
      }
      case 'mcp.tool.skipped':
        context.log?.({
          level: 'warn',
          msg: 'upstream.tool-skipped',
          upstream: name,
          tool: event.toolName,
          why: event.reason,
        });
        context.audit?.({
          kind: 'tool.unlisted',
          source: name,
          tool: event.toolName,
          code: unlistedCode(event.reason),
          args: { reason: event.reason },
        });
        return;
      case 'mcp.tool.pinned':
        context.log?.({ msg: 'pin.pinned', upstream: name, tool: event.toolName, digest: event.digest });
        return;
      case 'mcp.tool.changed':
        changed.add(event.toolName);
        context.log?.({
          level: 'warn',
          msg: 'pin.changed',
          upstream: name,
          tool: event.toolName,
          pinned: event.pinned,
          served: event.served,
          voided: event.voided,
        });
        return;
      case 'mcp.tool.accepted':
        changed.delete(event.toolName);
        context.log?.({ msg: 'pin.accepted', upstream: name, tool: event.toolName, digest: event.digest });
        return;
      case 'mcp.server.changed':
        context.log?.({
          level: 'warn',
          msg: 'upstream.identity-changed',
          upstream: name,
          pinned: event.pinned,
          served: event.served,
        });
        return;
      case 'mcp.list.changed':
        if (event.list === 'tools') void refresh();
        return;
      case 'mcp.instructions.dropped':
        context.log?.({
          level: 'warn',
          msg: 'upstream.instructions-dropped',
          upstream: name,
          why: event.reason,
        });
        context.audit?.({
          kind: 'instructions.dropped',
          source: name,
          code: 'INSTRUCTIONS_ADDRESS_MODEL',
          args: { reason: event.reason },
        });
        return;
      case 'mcp.sampling': {
        const who = {
          ...(event.toolName !== undefined ? { tool: event.toolName } : {}),
          ...(event.identity?.tenant !== undefined ? { tenant: event.identity.tenant } : {}),
          ...(event.identity?.principal !== undefined ? { principal: event.identity.principal } : {}),
        };
        if (event.outcome === 'relayed') {
          context.log?.({ msg: 'sampling.relayed', upstream: name, ...who });
          context.audit?.({ kind: 'sampling.relayed', source: name, code: 'SAMPLING_RELAYED', ...who });
          return;
        }
        const code = event.code ?? 'SAMPLING_DENIED';
        context.log?.({ level: 'warn', msg: 'sampling.refused', upstream: name, code, ...who });
        context.audit?.({ kind: 'sampling.refused', source: name, code, ...who });
        return;
      }
      default:
        return;
    }
  }

  const remoteOf = (local: string) => local.slice(prefix.length);

  let current: Governed;
  try {
    const imported = await client.tools();
    // At connect, a configuration that names tools the server does not serve is refused; on a later
    // refresh the server changed, not the configuration, so the new list is taken as it is.
    checkNamedTools(imported);
    current = governed(imported);
  } catch (cause) {
    if (config.url !== undefined && (identity?.needsAuthorization() === true || lastStatus === 401)) {
      // An upstream that wants OAuth does not stop the gateway: it serves no tools and says why
      // until a connection is authorized (the connection keeps trying; a 'failed' one is kicked).
      needsAuth = true;
      current = { tools: [], remoteNames: new Map(), live: new Map() };
      context.log?.({ level: 'warn', msg: 'upstream.failed', upstream: name, why: NEEDS_AUTH });
      return upstreamOf();
    }
    closed = true;
    await client.close().catch(() => undefined);
    if (cause instanceof UpstreamError) throw cause;
    throw new UpstreamError(name, `${connectProblem(config, cause)}${stderrNote(tail)}`);
  }

  /** Imports the tools again; a listing that fails leaves the last one in place. */
  function refresh(): Promise<void> {
    if (closed) return Promise.resolve();
    refreshing ??= (async () => {
      try {
        current = governed(await client.tools());
      } catch {
        return;
      } finally {
        refreshing = undefined;
      }
      for (const listener of listeners) {
        try {
          listener();
        } catch {
          // A listener's failure is its own.
        }
      }
    })();
    return refreshing;
  }

  interface Governed {
    readonly tools: Tool[];
    readonly remoteNames: Map<string, string>;
    readonly live: Map<string, Tool>;
  }

  /** Throws `UpstreamError` when the configuration names tools `imported` does not hold. */
  function checkNamedTools(imported: readonly Tool[]): void {
    const live = new Map(imported.map((tool) => [tool.schema.name, tool]));
    const remotes = [...live.keys()].map(remoteOf);
    const issues = namingIssues(name, config, remotes, context, (remote) => live.get(`${prefix}${remote}`));
    if (issues.length > 0)
      throw new UpstreamError(name, 'its configuration names tools it does not serve', issues);
  }

  /** The imported tools the configuration lets through, each forwarding to the newest import. */
  function governed(imported: readonly Tool[]): Governed {
    const live = new Map(imported.map((tool) => [tool.schema.name, tool]));
    const tools: Tool[] = [];
    const remoteNames = new Map<string, string>();
    for (const [local, tool] of live) {
      const remote = remoteOf(local);
      if (config.include !== undefined && !matchesToolGlob(remote, config.include)) continue;
      if (config.exclude !== undefined && matchesToolGlob(remote, config.exclude)) continue;
      const never = config.tools?.[remote]?.checkIn === 'never';
      const { egress, paths } = config.tools?.[remote] ?? {};
      const { checkIn, execute: _execute, ...rest } = tool;
      const wrapped: Tool = {
        ...rest,
        // What only the operator knows of an imported tool: the guards enforce it (tenant.ts turns them on).
        ...(egress !== undefined ? { egress: [...egress] } : {}),
        ...(paths !== undefined ? { paths } : {}),
        // 'never' overrides an annotation default; a tool whose definition changed is refused anyway.
        ...(checkIn !== undefined && !never ? { checkIn } : {}),
        execute: (args: ToolArgs, ctx) => run(local, args, ctx),
      };
      const listedAs = listedExtrasOf(tool);
      if (listedAs !== undefined) extras.set(wrapped, listedAs);
      tools.push(wrapped);
      remoteNames.set(local, remote);
    }
    return { tools, remoteNames, live };
  }

  async function run(local: string, args: ToolArgs, ctx: Parameters<Tool['execute']>[1]): Promise<unknown> {
    const tool = current.live.get(local);
    if (tool === undefined) throw new Error(`MCP server '${name}' no longer serves '${local}'`);
    const value = await tool.execute(args, ctx);
    // It ran although its definition had changed: an operator accepted it in another process.
    if (changed.delete(local)) void refresh();
    return value;
  }

  return upstreamOf();

  function upstreamOf(): Upstream {
    return {
      name,
      fingerprint: upstreamFingerprint(config, context),
      get tools() {
        return current.tools;
      },
      get remoteNames() {
        return current.remoteNames;
      },
      client,
      ...(identity !== undefined ? { identity } : {}),
      status: () => {
        const status = client.status();
        return {
          name,
          state: status.state,
          tools: current.tools.length,
          ...(needsAuth && status.state !== 'connected'
            ? { error: NEEDS_AUTH }
            : status.reason !== undefined && status.state !== 'connected'
              ? { error: status.reason }
              : {}),
          ...(status.state !== 'connected' && tail !== undefined && tail.lines().length > 0
            ? { stderr: tail.lines() }
            : {}),
          restarts,
          ...(client.skipped.length > 0
            ? { skipped: client.skipped.map((event) => ({ tool: event.toolName, reason: event.reason })) }
            : {}),
        };
      },
      onToolsChanged(listener) {
        listeners.add(listener);
        return () => listeners.delete(listener);
      },
      refresh,
      async close() {
        closed = true;
        clearTimeout(kick);
        listeners.clear();
        await client.close().catch(() => undefined);
      },
    };
  }
}

const NEEDS_AUTH =
  "needs authorization: it answered 401; give it upstreams.<name>.auth.clientCredentials (its authorization server is found from the server's RFC 9728 metadata) or check the client's secret";

/**
 * The headers of every request of one connection (read again per connection, so a rotated credential
 * is used), without those that use a per-principal credential: each call brings its own of those.
 */
function connectionHeaders(
  name: string,
  config: UpstreamConfig<ResolvedConfig>,
  context: UpstreamContext,
): Record<string, string> {
  const personal = new Set(perPrincipalHeaders(config, context.principalCredentials));
  const headers: Record<string, string> = {};
  try {
    for (const [key, value] of Object.entries(config.headers ?? {})) {
      if (personal.has(key)) continue;
      headers[key] = fillCredentials(value, (credential) => {
        const resolved = resolveCredential(credential, context.credentials, context.baseDir, context.env);
        context.onCredential?.(resolved);
        return resolved;
      });
    }
  } catch (cause) {
    throw new UpstreamError(name, (cause as Error).message);
  }
  return headers;
}

/** A fresh transport per connection: credentials are read again each time, so a rotated one is used. */
function transport(
  name: string,
  config: UpstreamConfig<ResolvedConfig>,
  context: UpstreamContext,
): { transport: Transport; tail?: StderrTail } {
  const secrets: string[] = [];
  const lookup = (credential: string) => {
    const value = resolveCredential(credential, context.credentials, context.baseDir, context.env);
    context.onCredential?.(value);
    secrets.push(value);
    return value;
  };
  try {
    if (config.command !== undefined) {
      const [command, ...args] = config.command;
      const cwd = resolve(context.baseDir, config.cwd ?? '.');
      // spawn reports a missing working folder as the command missing (ENOENT); name it as what it is.
      if (!isDirectory(cwd)) throw new UpstreamError(name, `${MISSING_CWD}'${cwd}'`);
      const env: Record<string, string> = { ...getDefaultEnvironment() };
      const handed: string[] = [];
      for (const [key, value] of Object.entries(config.env ?? {})) {
        env[key] = fillCredentials(value, lookup);
        handed.push(env[key]);
      }
      const stdio = new InPlaceStdioClientTransport({
        command: command!,
        args,
        env,
        cwd,
        // Kept until the handshake for start errors (stderr-tail.ts); followed into the log when there is one.
        stderr: 'pipe',
      });
      const stream = stdio.stderr as Readable | null;
      if (context.log !== undefined && stream !== null) followStderr(name, stream, handed, context.log);
      return { transport: stdio, tail: stderrTail(stream, secrets) };
    }
    const headers: Record<string, string> = {};
    for (const [key, value] of Object.entries(config.headers ?? {}))
      headers[key] = fillCredentials(value, lookup);
    return {
      transport: new StreamableHTTPClientTransport(new URL(config.url!), {
        requestInit: { headers },
        // What the server answered, as a fact: a 401 means it wants authorization, not that it is broken.
        fetch: async (input, init) => {
          const response = await fetch(input, init);
          context.onHttpStatus?.(response.status);
          return response;
        },
      }),
    };
  } catch (cause) {
    if (cause instanceof UpstreamError) throw cause;
    throw new UpstreamError(name, (cause as Error).message);
  }
}

/** The configuration's per-tool declarations, by local name, as `mcpClient` takes them. */
function declarations(
  prefix: string,
  tools: Readonly<Record<string, ToolDeclaration<ResolvedConfig>>> | undefined,
): Record<string, ImportDeclaration> {
  const declared: Record<string, ImportDeclaration> = {};
  for (const [remote, declaration] of Object.entries(tools ?? {})) {
    const ceiling = declaration.resultCeiling;
    declared[`${prefix}${remote}`] = {
      ...(declaration.checkIn === 'always' ? { checkIn: 'always' as const } : {}),
      ...(declaration.capabilities !== undefined ? { capabilities: [...declaration.capabilities] } : {}),
      ...(ceiling !== undefined
        ? {
            resultCeiling: {
              maxChars: ceiling.maxChars,
              ...(ceiling.maxBytes !== undefined ? { maxBytes: ceiling.maxBytes } : {}),
              ...(ceiling.narrowBy !== undefined ? { narrowBy: [...ceiling.narrowBy] } : {}),
            },
          }
        : {}),
    };
  }
  return declared;
}

/** `defaults.annotations` as `mcpClient`'s `fromAnnotations`. */
function annotationDeclarations(
  annotations: NonNullable<DefaultsConfig<ResolvedConfig>['annotations']>,
): Partial<Record<AnnotationHint, ImportDeclaration>> {
  const declared: Partial<Record<AnnotationHint, ImportDeclaration>> = {};
  for (const hint of HINTS) {
    const rule = annotations[hint];
    if (rule === undefined) continue;
    declared[hint] = {
      ...(rule.checkIn === 'always' ? { checkIn: 'always' as const } : {}),
      ...(rule.capabilities !== undefined ? { capabilities: [...rule.capabilities] } : {}),
    };
  }
  return declared;
}

/** `include`, `exclude` and `tools` entries that name nothing the server serves. */
function namingIssues(
  source: string,
  upstream: UpstreamConfig<ResolvedConfig>,
  remotes: readonly string[],
  ctx: UpstreamContext,
  toolOf: (remote: string) => Tool | undefined,
): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  const at = ['upstreams', source];
  const named = (list: readonly string[] | undefined, key: 'include' | 'exclude') =>
    list?.forEach((glob, index) => {
      if (!remotes.some((remote) => matchesToolGlob(remote, glob)))
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
  // An egress or paths declaration must name an argument the tool's schema has.
  for (const [tool, declaration] of Object.entries(upstream.tools ?? {})) {
    const schema = toolOf(tool)?.schema.inputSchema as { properties?: Record<string, unknown> } | undefined;
    if (schema === undefined) continue;
    const properties = Object.keys(schema.properties ?? {});
    const check = (argPath: string, where: ConfigPath) => {
      const top = argPath.split('.')[0]!;
      if (!properties.includes(top))
        issues.push(
          ctx.issue(
            where,
            `names the argument '${top}', which '${tool}' does not take`,
            `its arguments: ${properties.join(', ') || '(none)'}`,
          ),
        );
    };
    declaration.egress?.forEach((argPath, index) => check(argPath, [...at, 'tools', tool, 'egress', index]));
    for (const argPath of Object.keys(declaration.paths ?? {}))
      check(argPath, [...at, 'tools', tool, 'paths', argPath]);
  }
  return issues;
}

function listed(names: readonly string[]): string {
  if (names.length === 0) return '(no tools)';
  return names.length > 20 ? `${names.slice(0, 20).join(', ')}, … (${names.length})` : names.join(', ');
}

function connectProblem(config: UpstreamConfig<ResolvedConfig>, cause: unknown): string {
  // mcpClient wraps the connection error; the transport's own is its cause.
  const inner = (cause as { cause?: unknown } | undefined)?.cause ?? cause;
  const deepest = (inner as { cause?: unknown } | undefined)?.cause ?? inner;
  const text = [cause, inner, deepest].map((e) => (e instanceof Error ? e.message : String(e))).join(' ');
  const code = (deepest as { code?: unknown } | undefined)?.code ?? (inner as { code?: unknown })?.code;
  // Our own finding (a missing working folder) already says what is wrong.
  const ours = [cause, inner, deepest].find((e) => e instanceof UpstreamError);
  if (ours instanceof UpstreamError) return ours.problem;
  if (config.command !== undefined) {
    if (code === 'ENOENT' || /ENOENT/.test(text))
      return `the command '${config.command[0]}' was not found; check 'command' (relative paths resolve against the configuration file)`;
    return `the server started by '${config.command[0]}' did not answer the MCP handshake (${firstLine(inner instanceof Error ? inner.message : String(inner))})`;
  }
  // An HTTP error may carry the response body or URL; only its kind is passed on.
  return `the server at its 'url' could not be reached or did not speak MCP (${inner instanceof Error ? inner.name : 'error'})`;
}

/** What a server that failed to start printed last, to end a start error with. */
function stderrNote(tail: StderrTail | undefined): string {
  const lines = tail?.lines() ?? [];
  return lines.length === 0 ? '' : `; its stderr ended with: ${lines.join(' | ')}`;
}

const MISSING_CWD = 'its working folder (cwd) does not exist: ';

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

function firstLine(text: string): string {
  return text.split('\n')[0]!.slice(0, 200);
}

/** A stable code for why a tool is not listed, for the audit log (its reason is digested there). */
function unlistedCode(reason: string): string {
  if (reason.includes('description contains') || reason.includes("other tools' descriptions"))
    return 'DESCRIPTION_ADDRESSES_MODEL';
  if (reason.includes('invisible characters')) return 'INVISIBLE_CHARACTERS';
  if (reason.includes('held for review')) return 'TOOL_HELD_FOR_REVIEW';
  if (reason.includes('inputSchema does not compile')) return 'SCHEMA_NOT_COMPILED';
  return 'TOOL_NOT_IMPORTED';
}
