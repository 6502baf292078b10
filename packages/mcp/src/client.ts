// mcpClient: imports an MCP server's tools as toolgate Tools stamped with the server's name as
// `source`, so policy can tell them apart. It carries what the server sends as sent, comes back when
// the server goes away, and trusts no definition it has not pinned. A tool toolgate cannot govern is
// skipped, never fatal.

import { createHash } from 'node:crypto';
import { isIP } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { StreamableHTTPClientTransport, type Client, type Transport } from '@modelcontextprotocol/client';
import {
  ProtocolError,
  ProtocolErrorCode,
  SdkError,
  SdkErrorCode,
  CLIENT_CAPABILITIES_META_KEY,
  LOG_LEVEL_META_KEY,
  isInputRequiredResult,
  type CallToolResult,
  type ClientCapabilities,
  type InputRequiredResult,
  type CompleteRequest,
  type CompleteResult,
  type CreateMessageResult,
  type ElicitResult,
  type ListRootsResult,
  type GetPromptResult,
  type LoggingLevel,
  type McpSubscription,
  type ListPromptsResult,
  type ListResourcesResult,
  type ListResourceTemplatesResult,
  type ReadResourceResult,
  type Tool as McpTool,
} from '@modelcontextprotocol/client';
import {
  assertTool,
  digestOf,
  inMemoryPins,
  Refusal,
  redactValue,
  refusalReason,
  TOOL_NAME_PATTERN,
  type CheckInStore,
  type ContentBlock,
  type ContentResult,
  type Credential,
  type CredentialNeed,
  type Identity,
  type JsonSchema,
  type PinRecord,
  type PinStore,
  type Tool,
  type ToolAnnotations,
  type ToolArgs,
  type ToolMiddlewareContext,
  type TraceContext,
} from '@toolgate/core';
import {
  ajvValidator,
  descriptionFindings,
  instructionsProblem,
  type SchemaValidator,
} from '@toolgate/middleware';
import { Connection, McpUnavailableError, type BackoffOptions, type McpClientStatus } from './connection';
import {
  closedSchema,
  escapeInvisible,
  hintHolds,
  invisibleIn,
  listedExtras,
  mcpHeaderProblem,
  mergeDeclarations,
  pinnedDefinition,
  poisonedDescriptions,
  type AnnotationHint,
  type ImportDeclaration,
  type ListedExtras,
} from './imported';
import {
  downstreamOf,
  UpstreamAskedError,
  type DownstreamCall,
  type UpstreamAsked,
  type UpstreamRelay,
} from './relay';
import { answerable } from './input-relay';
import { HeldUpstreamCall, type HeldQuestion, type QuestionMethod } from './held-upstream-call';
import type { ParkedCalls } from './parked-calls';
import {
  callAsUpstreamTask,
  cancelUpstreamTask,
  followUpstreamTask,
  liftTaskResults,
  resumeUpstreamTask,
  requiresTask,
  TASKS_EXTENSION,
  upstreamTakesTasks,
  UpstreamTaskError,
  upstreamTaskOf,
  type FollowedUpstreamTask,
  type FollowUpstreamTaskOptions,
  type UpstreamTaskQuestions,
} from './upstream-tasks';
import { InPlaceStdioClientTransport } from './stdio';

export type { McpClientStatus, BackoffOptions } from './connection';
export type { AnnotationHint, ImportDeclaration } from './imported';

// Long enough for a loaded machine to answer server/discover; a legacy server usually says "method not found" at once.
const UPSTREAM_PROBE_TIMEOUT_MS = 5_000;

export interface McpClientOptions {
  /** Who the server is; every imported tool carries it as `source`, and its pins are kept under it. */
  readonly name: string;
  /**
   * How to reach the server: an SDK client transport, or a factory that makes a fresh one per
   * connection (needed to restart a stdio server or reconnect). Give one of `transport`, `url`, `command`.
   */
  readonly transport?: Transport | (() => Transport | Promise<Transport>);
  /** A Streamable HTTP endpoint, e.g. `http://127.0.0.1:3000/mcp`. Plain `http://` only to loopback unless `allowInsecure`. */
  readonly url?: string | URL;
  /** A stdio server to spawn (and respawn): the command and its arguments. */
  readonly command?: readonly [string, ...string[]];
  /** Environment of the spawned server (stdio); default the SDK's safe subset of this process's. */
  readonly env?: Readonly<Record<string, string>>;
  /** Working directory of the spawned server (stdio). */
  readonly cwd?: string;
  /** Where the spawned server's stderr goes; default 'inherit'. */
  readonly stderr?: 'inherit' | 'ignore' | 'pipe';
  /** Allows a plain `http://` url to a host that is not loopback; traffic and credentials then travel unencrypted. */
  readonly allowInsecure?: boolean;
  /** HTTP only: headers sent with every request; a function is asked again for each connection (a rotated secret is picked up). */
  readonly headers?: Readonly<Record<string, string>> | (() => Readonly<Record<string, string>>);
  /**
   * HTTP only: the fetch every request goes through, after the per-call headers are added; default the
   * global fetch. A gateway answers an upstream's 401 here (it gets a token and retries); a `Refusal` it
   * throws fails the call with that refusal.
   */
  readonly fetch?: typeof fetch;
  /**
   * HTTP only: headers built per tools/call from the credential the credentials gate resolved for the
   * call (the tool's `needs`). They reach the server and nothing else: not the model, the downstream
   * client, events or the ledger.
   */
  readonly credentialHeaders?: (credential: Credential) => Readonly<Record<string, string>>;
  /** The credential every imported tool needs (resolved by the credentials gate); `declare` may override it. */
  readonly needs?: CredentialNeed;
  /** Prepended verbatim to every tool and prompt name and resource URI not named by `rename`, e.g. `'docs_'`. */
  readonly prefix?: string;
  /** The exact local name for a remote tool; answer undefined to keep the default (prefix + name). */
  readonly rename?: Readonly<Record<string, string>> | ((remoteName: string) => string | undefined);
  /** Declarations for imported tools, by local name: `{ search: { checkIn: 'always' } }`. */
  readonly declare?: Readonly<Record<string, ImportDeclaration>>;
  /**
   * Declarations for every imported tool whose hint holds (MCP's defaults apply to a hint the server
   * leaves out), e.g. `{ destructiveHint: { checkIn: 'always' }, openWorldHint: { capabilities: ['external_net'] } }`.
   */
  readonly fromAnnotations?: Readonly<Partial<Record<AnnotationHint, ImportDeclaration>>>;
  /** Object schemas are closed (`additionalProperties: false` where absent); `false` keeps them as served. */
  readonly closeSchemas?: boolean;
  /** A tool whose name, title or description has invisible characters is skipped; 'escape' keeps it, the characters written out. */
  readonly invisibleCharacters?: 'skip' | 'escape';
  /** A tool whose description addresses the model (alone or with the server's other tools) is not listed; 'allow' lists it. Default 'screen'. */
  readonly descriptions?: 'screen' | 'allow';
  /**
   * The server's tool set is pinned at the first listing; a tool added or renamed later is held
   * (not listed) until the new set is accepted (`acceptPin(pins, { source, name: TOOL_SET, kind: 'server' })`).
   * 'allow' lists it at once. Default 'review'.
   */
  readonly newTools?: 'review' | 'allow';
  /** Where the server is, for its identity pin, when `transport` is given instead of `url` or `command`. */
  readonly identity?: { readonly url?: string; readonly command?: readonly string[] };
  /** Where definitions are pinned; default in memory (pinned again in each process). */
  readonly pins?: PinStore;
  /** The chain's check-in store: pending check-ins for a tool whose definition changed are revoked in it. */
  readonly checkIns?: CheckInStore;
  /** The trace context to send upstream per call, e.g. `activeTraceContext` from `@toolgate/otel`. */
  readonly traceContext?: () => TraceContext | undefined;
  /** How long one `tools/call` may take; default 60000 ms. */
  readonly timeoutMs?: number;
  /** Reconnection after the server goes away. */
  readonly backoff?: BackoffOptions;
  /** Checks that each remote inputSchema compiles; default ajv, the validate-args default. */
  readonly validator?: SchemaValidator;
  /** Told about each remote tool left out, and why. */
  readonly onSkip?: (skipped: SkippedTool) => void;
  /** Told about pins, changed definitions and server identities, connection states and list changes. */
  readonly onEvent?: (event: McpClientEvent) => void;
  /**
   * Whether the server may ask for the calling client's roots ('relay', the default): asked during a
   * call, the one client making it answers. 'refuse' does not declare roots to the server at all, for
   * a server that would take a caller's roots as a wider sandbox for everyone.
   */
  readonly roots?: 'relay' | 'refuse';
  /**
   * Whether the server's sampling requests reach the calling client ('allow', the default) or are
   * refused with an error the server reads ('deny'). Either way the request is reported (`mcp.sampling`).
   */
  readonly sampling?: 'allow' | 'deny';
}

/** A remote tool toolgate left out: it could not be governed as listed. */
export interface SkippedTool {
  readonly type: 'mcp.tool.skipped';
  readonly source: string;
  /** The name as the server listed it (bounded, for display). */
  readonly toolName: string;
  readonly reason: string;
}

/** What a client reports: facts and digests, never a definition's text or a credential. */
export type McpClientEvent =
  | SkippedTool
  | {
      readonly type: 'mcp.tool.pinned';
      readonly source: string;
      readonly toolName: string;
      readonly digest: string;
    }
  | {
      readonly type: 'mcp.tool.changed';
      readonly source: string;
      readonly toolName: string;
      readonly pinned: string;
      readonly served: string;
      /** Pending check-ins for the tool that were revoked. */
      readonly voided: number;
    }
  | {
      readonly type: 'mcp.tool.accepted';
      readonly source: string;
      readonly toolName: string;
      readonly digest: string;
    }
  | {
      readonly type: 'mcp.server.pinned' | 'mcp.server.changed';
      readonly source: string;
      readonly pinned: string;
      readonly served: string;
      /** What identifies the server now: its reported name, endpoint, TLS key and command (and, for information, its version). */
      readonly identity: Readonly<Record<string, unknown>>;
    }
  | {
      /** Tools added or renamed since the tool set was pinned: not listed until the set is accepted. */
      readonly type: 'mcp.tools.held';
      readonly source: string;
      readonly toolNames: readonly string[];
    }
  | { readonly type: 'mcp.status'; readonly source: string; readonly status: McpClientStatus }
  | {
      readonly type: 'mcp.list.changed';
      readonly source: string;
      readonly list: 'tools' | 'resources' | 'prompts';
    }
  | {
      /** The server's instructions address the model (screened like descriptions): not passed on. */
      readonly type: 'mcp.instructions.dropped';
      readonly source: string;
      readonly reason: string;
    }
  | {
      /** The server asked the calling client to sample: relayed, or refused with `code`. No message text. */
      readonly type: 'mcp.sampling';
      readonly source: string;
      readonly outcome: 'relayed' | 'refused';
      readonly code?: 'SAMPLING_DENIED' | 'SAMPLING_UNAVAILABLE';
      /** The tool call it came during, and who made it, when one call was running. */
      readonly toolName?: string;
      readonly identity?: Identity;
    }
  | {
      /** A resource the server was asked to watch changed; `uri` is prefixed. */
      readonly type: 'mcp.resource.updated';
      readonly source: string;
      readonly uri: string;
    };

/** An upstream's resources and prompts, under the client's prefix; what mcpServe proxies. */
export interface McpUpstream {
  readonly name: string;
  readonly prefix: string;
  listResources(cursor?: string): Promise<ListResourcesResult>;
  listResourceTemplates(cursor?: string): Promise<ListResourceTemplatesResult>;
  /**
   * Reads a resource by its prefixed URI. With `relay` (a 2026-07-28 caller), a 2026-07-28 server's
   * input-required answer rejects with `UpstreamAskedError`, to be relayed to the caller.
   */
  readResource(uri: string, signal?: AbortSignal, relay?: UpstreamRelay): Promise<ReadResourceResult>;
  listPrompts(cursor?: string): Promise<ListPromptsResult>;
  /** Gets a prompt by its prefixed name; `relay` as for `readResource`. */
  getPrompt(
    name: string,
    args: Readonly<Record<string, string>> | undefined,
    signal?: AbortSignal,
    relay?: UpstreamRelay,
  ): Promise<GetPromptResult>;
  /** Asks the server for completions of a prompt argument or template variable; the reference's name or URI is prefixed. */
  complete?(params: CompleteRequest['params'], signal?: AbortSignal): Promise<CompleteResult>;
  /** Sets the server's log level (a server without logging is left alone). */
  setLoggingLevel?(level: LoggingLevel, signal?: AbortSignal): Promise<void>;
  /** Asks the server to report changes of a resource (prefixed URI) as `mcp.resource.updated` events. */
  subscribeResource?(uri: string, signal?: AbortSignal): Promise<void>;
  unsubscribeResource?(uri: string, signal?: AbortSignal): Promise<void>;
  /** The server's instructions as it gave them at connect, when they passed the description screen. */
  instructions?(): string | undefined;
  /** Tells the server the calling client's roots changed (a server not asking for roots is left alone). */
  rootsListChanged?(): Promise<void>;
  /** Hears list changes ('tools' also after a reconnect or an accepted pin); answers a function that stops listening. */
  subscribe(listener: (event: McpClientEvent) => void): () => void;
}

export interface McpClient extends McpUpstream {
  /** Connects on first use, lists every page of the server's tools, pins them, and returns those it can govern. */
  tools(): Promise<Tool[]>;
  /** The tools the latest `tools()` left out. */
  readonly skipped: readonly SkippedTool[];
  /** Where the connection stands: connected, retrying or failed, and why. */
  status(): McpClientStatus;
  /**
   * Records the definition the server serves now for `toolName` (local or remote name) as the pinned one,
   * so calls run again. False when no changed definition awaits acceptance.
   */
  acceptPin(toolName: string): Promise<boolean>;
  /** Closes the connection; imported tools refuse from then on. */
  close(): Promise<void>;
}

const DEFAULT_TIMEOUT_MS = 60_000;
// The longest a timer can wait: a held call's request is bounded by its rounds and parkings instead.
const HELD_REQUEST_TIMEOUT_MS = 2 ** 31 - 1;
// The keys a held call's question is relayed under, one per kind (one question is pending at a time).
const QUESTION_KEYS: Readonly<Record<QuestionMethod, string>> = {
  'elicitation/create': 'elicitation',
  'sampling/createMessage': 'sampling',
  'roots/list': 'roots',
};
// A server that hands back a cursor forever must not hang a listing.
const MAX_PAGES = 1000;
const IDENTITY_META = 'io.toolgate/identity';
// MissingRequiredClientCapability: the server needs a capability the client did not declare.
const MISSING_CAPABILITY = -32021;
const HEADERS_META = 'io.toolgate/headers';
const LOOPBACK = new Set(['127.0.0.1', 'localhost', '::1', '[::1]']);

/** A remote `isError` result: the message is the server's own text. */
class McpToolError extends Error {
  override readonly name = 'McpToolError';
}

/** The server answered input-required: the question is relayed to the client, the call did not finish. */
class McpInputRequiredError extends Error {
  override readonly name = 'McpInputRequired';
}

/** The server did not answer in time, or the call was cancelled. */
class McpConnectionError extends Error {
  override readonly name = 'McpConnectionError';
}

/** Why a client cannot be configured as given. Names the client and the fix. */
export class McpClientConfigError extends TypeError {
  override readonly name = 'McpClientConfigError';
  readonly code = 'ERR_MCP_CLIENT_CONFIG';
}

interface Served {
  readonly remote: string;
  readonly local: string;
  readonly digest: string;
}

/**
 * Connects lazily to one MCP server and imports its tools, each stamped `source: name`.
 *
 * @example
 * const docs = mcpClient({ name: 'docs', command: ['docs-mcp'], prefix: 'docs_' });
 * const dispatcher = createDispatcher({ tools: [...ours, ...(await docs.tools())], chain });
 */
export function mcpClient(options: McpClientOptions): McpClient {
  const { name, prefix = '', rename, onSkip, onEvent } = options ?? ({} as McpClientOptions);
  if (typeof name !== 'string' || name.trim() === '')
    throw new McpClientConfigError(
      `mcpClient: 'name' must be a non-empty string; it becomes each tool's source.`,
    );
  const given = (['transport', 'url', 'command'] as const).filter((key) => options[key] !== undefined);
  if (given.length !== 1)
    throw new McpClientConfigError(
      `mcpClient '${name}': give exactly one of 'transport', 'url' or 'command'.`,
    );
  if (typeof prefix !== 'string')
    throw new McpClientConfigError(`mcpClient '${name}': 'prefix' must be a string.`);
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  if (!Number.isInteger(timeoutMs) || timeoutMs <= 0)
    throw new McpClientConfigError(`mcpClient '${name}': 'timeoutMs' must be a positive integer.`);
  if (options.credentialHeaders !== undefined && options.url === undefined)
    throw new McpClientConfigError(
      `mcpClient '${name}': 'credentialHeaders' needs an HTTP server given by 'url'; headers cannot travel over another transport.`,
    );
  const endpoint =
    options.url === undefined ? undefined : checkedUrl(name, options.url, options.allowInsecure === true);
  const validator = options.validator ?? ajvValidator();
  const pins = options.pins ?? inMemoryPins();
  const closeSchemas = options.closeSchemas !== false;
  const escapeText = options.invisibleCharacters === 'escape';
  const screenText = options.descriptions !== 'allow';
  const reviewNewTools = options.newTools !== 'allow';
  const relayRoots = options.roots !== 'refuse';
  const allowSampling = options.sampling !== 'deny';
  const listeners = new Set<(event: McpClientEvent) => void>();
  const headerSets = new Map<string, Readonly<Record<string, string>>>();
  // Tools the SDK's listing would drop for malformed x-mcp-header declarations, with why (see below).
  const headerExcluded = new Map<string, { readonly tool: McpTool; readonly reason: string }>();
  let skipped: SkippedTool[] = [];
  // What the server serves now, by remote name, and which of those differ from their pins.
  let served = new Map<string, Served>();
  const changed = new Map<string, PinRecord>();
  let listedOnce = false;

  const emit = (event: McpClientEvent): void => {
    if (event.type === 'mcp.tool.skipped') onSkip?.(event);
    try {
      onEvent?.(event);
    } catch {
      // A listener's failure is its own.
    }
    for (const listener of listeners) {
      try {
        listener(event);
      } catch {
        // Same.
      }
    }
  };

  const localName = (remote: string): string => {
    const renamed = typeof rename === 'function' ? rename(remote) : rename?.[remote];
    return renamed ?? `${prefix}${remote}`;
  };
  const unprefixed = (local: string, what: string): string => {
    if (!local.startsWith(prefix))
      throw new ProtocolError(
        ProtocolErrorCode.InvalidParams,
        `no ${what} '${local.slice(0, 200)}' on MCP server '${name}'`,
      );
    return local.slice(prefix.length);
  };

  const made = transportFactory(name, options, endpoint, headerSets);
  const factory = async () => liftTaskResults(await made());
  const connection = new Connection(
    name,
    factory,
    {
      setup(client) {
        screenHeaderDeclarations(client, headerExcluded);
        client.setNotificationHandler('notifications/tools/list_changed', () => {
          void relist(client);
        });
        client.setNotificationHandler('notifications/resources/list_changed', () =>
          emit({ type: 'mcp.list.changed', source: name, list: 'resources' }),
        );
        client.setNotificationHandler('notifications/prompts/list_changed', () =>
          emit({ type: 'mcp.list.changed', source: name, list: 'prompts' }),
        );
        // An upstream's question reaches the person at the downstream client of the one call running
        // now; with none, or several, nobody can tell whose it is, and it is declined.
        client.setRequestHandler('elicitation/create', async (request, extra) => {
          const running = onlyCallRunning();
          const held = running?.held?.ask(
            'elicitation/create',
            running.redact(request.params),
            extra.mcpReq.signal,
            ({ resolve }) => resolve({ action: 'decline' }),
          );
          if (held !== undefined) return held as Promise<ElicitResult>;
          const only = running?.call;
          if (only === undefined || !only.canElicit) return { action: 'decline' };
          try {
            return await only.elicit(request.params, extra.mcpReq.signal);
          } catch {
            return { action: 'cancel' };
          }
        });
        // Sampling, like elicitation, belongs to the one call running now; without a client that can
        // sample, or where the configuration denies this server sampling, it is refused (sampling has
        // no "decline"). The server reads why; the calling client is never asked.
        client.setRequestHandler('sampling/createMessage', async (request, extra) => {
          const only = onlyCallRunning();
          const during = {
            ...(only !== undefined ? { toolName: only.call.toolName } : {}),
            ...(only?.call.identity !== undefined ? { identity: only.call.identity } : {}),
          };
          const refusal = (code: 'SAMPLING_DENIED' | 'SAMPLING_UNAVAILABLE', message: string) => {
            emit({ type: 'mcp.sampling', source: name, outcome: 'refused', code, ...during });
            return new ProtocolError(ProtocolErrorCode.InvalidRequest, message);
          };
          const unavailable = () =>
            refusal('SAMPLING_UNAVAILABLE', 'sampling is not available: no calling client that supports it');
          if (!allowSampling)
            throw refusal(
              'SAMPLING_DENIED',
              `sampling refused: this gateway's policy does not let MCP server '${name}' ask its callers to sample`,
            );
          // Relayed when the held call's caller answers (reported then), refused as below otherwise.
          const held = only?.held?.ask(
            'sampling/createMessage',
            only.redact(request.params),
            extra.mcpReq.signal,
            ({ reject }) => reject(unavailable()),
          );
          if (held !== undefined) return held as Promise<CreateMessageResult>;
          if (only === undefined || !only.call.canSample) throw unavailable();
          samplingRelayed(only.call);
          return only.call.sample(only.redact(request.params), extra.mcpReq.signal);
        });
        // The roots are the calling client's, so only a call's own client answers; outside a call, or
        // with several calls running, nobody's roots are handed out.
        if (relayRoots)
          client.setRequestHandler('roots/list', async (request, extra) => {
            const unavailable = () =>
              new ProtocolError(
                ProtocolErrorCode.InvalidRequest,
                'roots are not available: no calling client that declared roots',
              );
            const running = onlyCallRunning();
            const held = running?.held?.ask(
              'roots/list',
              request.params ?? {},
              extra.mcpReq.signal,
              ({ reject }) => reject(unavailable()),
            );
            if (held !== undefined) return held as Promise<ListRootsResult>;
            const only = running?.call;
            if (only?.listRoots === undefined) throw unavailable();
            return only.listRoots(extra.mcpReq.signal);
          });
        // A log message goes to the client whose call is running, never to other callers.
        client.setNotificationHandler('notifications/message', (notification) => {
          const only = onlyCallRunning();
          only?.call.log(only.redact(notification.params));
        });
        client.setNotificationHandler('notifications/resources/updated', (notification) =>
          emit({ type: 'mcp.resource.updated', source: name, uri: `${prefix}${notification.params.uri}` }),
        );
      },
      async connected(client, again) {
        await pinServer(client);
        takeInstructions(client);
        // A server that came back may serve other tools: listen again, through the pins.
        if (again && listedOnce) await relist(client);
        // It also forgot what it was asked to watch (a restarted process, a lost session).
        if (again) await rewatch(client);
      },
      changed(status) {
        emit({ type: 'mcp.status', source: name, status });
      },
    },
    options.backoff ?? {},
    {
      capabilities: {
        elicitation: { form: {} },
        sampling: {},
        ...(relayRoots ? { roots: { listChanged: true } } : {}),
        // Tasks: a 2026-07-28 upstream may answer a call with one; the call follows it (upstream-tasks.ts).
        extensions: { [TASKS_EXTENSION]: {} },
      },
      // Each upstream in the newest revision it offers: 2026-07-28 when it answers server/discover,
      // else the 2025 handshake. A stdio server that stays silent on the probe is taken as 2025-era.
      versionNegotiation: { mode: 'auto', probe: { timeoutMs: UPSTREAM_PROBE_TIMEOUT_MS } },
    },
  );
  // The calls in flight, with the credential values each must never pass on downstream.
  const inFlight = new Map<string, readonly string[]>();
  // Of those, the 2025-era upstream calls held for 2026-07-28 callers (under the same keys).
  const heldCalls = new Map<string, HeldUpstreamCall<DownstreamCall>>();
  // With several calls in flight, nobody can tell whose a question or a log message is. A parked call
  // is not running: its upstream waits for the answer to the question it asked.
  const onlyCallRunning = ():
    | {
        readonly call: DownstreamCall;
        readonly held: HeldUpstreamCall<DownstreamCall> | undefined;
        redact<T>(value: T): T;
      }
    | undefined => {
    let only: [string, readonly string[]] | undefined;
    for (const entry of inFlight) {
      if (heldCalls.size > 0 && heldCalls.get(entry[0])?.parked === true) continue;
      if (only !== undefined) return undefined;
      only = entry;
    }
    if (only === undefined) return undefined;
    const [id, secrets] = only;
    const held = heldCalls.get(id);
    const call = held !== undefined ? held.round : downstreamOf(id);
    return call === undefined
      ? undefined
      : { call, held, redact: <T>(value: T) => redactValue(value, secrets) as T };
  };

  // What the server says about using it reaches the model as the served server's instructions, so
  // it is screened as a tool description is; with the description screen off, it is passed as given.
  let instructions: string | undefined;
  function takeInstructions(client: Client): void {
    const given = client.getInstructions();
    const findings = screenText && given !== undefined ? descriptionFindings(given) : [];
    instructions = findings.length === 0 ? given : undefined;
    if (findings.length > 0)
      emit({ type: 'mcp.instructions.dropped', source: name, reason: instructionsProblem(findings) });
  }

  // The server's identity is its endpoint (and, over TLS, its key) or its command, and the name it
  // reports; its version is not: a version bump re-checks every tool against its pin at the listing
  // that follows the reconnect, and nothing else.
  let identityChange: { readonly pinned: string; readonly served: string } | undefined;

  const where = endpoint ?? urlOrUndefined(options.identity?.url);
  const how = options.command ?? options.identity?.command;

  async function pinServer(client: Client): Promise<void> {
    const version = client.getServerVersion();
    // A key that cannot be read is pinned as such: the next connection that reads it is a change.
    const tlsKey = where?.protocol === 'https:' ? await tlsKeyOf(where).catch(() => 'unreadable') : undefined;
    const identity: Record<string, unknown> = {
      serverName: version?.name ?? null,
      ...(where !== undefined ? { endpoint: where.href } : {}),
      ...(tlsKey !== undefined ? { tlsKey } : {}),
      ...(how !== undefined ? { command: [...how] } : {}),
    };
    const digest = await digestOf(identity);
    const { record, pinned } = await pins.observe(
      { source: name, kind: 'server', name: SERVER_IDENTITY, digest, definition: identity },
      new Date().toISOString(),
    );
    identityChange = record.digest === digest ? undefined : { pinned: record.digest, served: digest };
    if (pinned || record.digest !== digest)
      emit({
        type: pinned ? 'mcp.server.pinned' : 'mcp.server.changed',
        source: name,
        pinned: record.digest,
        served: digest,
        identity: { ...identity, version: version?.version ?? null },
      });
  }

  /**
   * Pins the set of tool names the server lists; answers those not in the accepted set. The first
   * listing is the accepted set; later, a name added (or a tool renamed) waits for the set to be accepted.
   */
  async function heldForReview(listed: readonly McpTool[]): Promise<Set<string>> {
    const names = [...new Set(listed.map((remote) => String(remote.name)))].sort();
    const definition = { tools: names };
    const digest = await digestOf(definition);
    const { record } = await pins.observe(
      { source: name, kind: 'server', name: TOOL_SET, digest, definition },
      new Date().toISOString(),
    );
    if (record.digest === digest) return new Set();
    const accepted = new Set(
      Array.isArray(record.definition['tools']) ? (record.definition['tools'] as unknown[]).map(String) : [],
    );
    const added = names.filter((tool) => !accepted.has(tool));
    if (added.length > 0)
      emit({ type: 'mcp.tools.held', source: name, toolNames: added.map((tool) => localName(tool)) });
    return new Set(added);
  }

  /** Refuses every call while the server's identity differs from its pin, unless accepted since (here or in another process). */
  async function refuseIfServerChanged(local: string): Promise<void> {
    const change = identityChange;
    if (change === undefined) return;
    const stored = await pins.get(name, 'server', SERVER_IDENTITY).catch(() => undefined);
    if (stored !== undefined && stored.digest === change.served) {
      identityChange = undefined;
      return;
    }
    throw new Refusal(
      'mcp',
      refusalReason(
        `'${local}' did not run: MCP server '${name}' is not the server that was reviewed and pinned (its endpoint, key or command changed)`,
        'Retrying will not help until an operator reviews the new server identity and accepts it',
        'Continue without this tool, or tell the user its server awaits review',
      ),
      {
        code: 'SERVER_IDENTITY_CHANGED',
        mentionsRun: true,
        beforeRun: true,
        detail: `pinned ${change.pinned}, served ${change.served}`,
      },
    );
  }

  async function listAll(client: Client): Promise<McpTool[]> {
    return pages(async (cursor) => {
      const result = await client.listTools(cursor === undefined ? {} : { cursor });
      return { items: result.tools, nextCursor: result.nextCursor };
    });
  }

  async function relist(client: Client): Promise<void> {
    try {
      await importAll(client);
    } catch {
      // The next tools() tries again; a listing that fails changes nothing.
      return;
    }
    emit({ type: 'mcp.list.changed', source: name, list: 'tools' });
  }

  /** Lists, checks and pins every tool; answers the tools toolgate can govern. */
  async function importAll(client: Client): Promise<Tool[]> {
    const imported: Tool[] = [];
    const taken = new Set<string>();
    const left: SkippedTool[] = [];
    const now = new Map<string, Served>();
    const skip = (remote: McpTool, reason: string) => {
      const event: SkippedTool = {
        type: 'mcp.tool.skipped',
        source: name,
        toolName: String(remote.name).slice(0, 100),
        reason,
      };
      left.push(event);
      emit(event);
    };
    const listed = await listAll(client);
    for (const { tool, reason } of headerExcluded.values())
      skip(tool, `its inputSchema declares a malformed header: ${reason}`);
    const poisoned = screenText ? poisonedDescriptions(listed) : new Map<string, string>();
    const held = reviewNewTools ? await heldForReview(listed) : new Set<string>();
    for (const remote of listed) {
      const local = localName(remote.name);
      const problem =
        importProblem(remote, local, taken) ??
        (held.has(remote.name)
          ? `it was added to the server after its tool set was pinned, and is held for review (toolgate pins accept tools:${name})`
          : undefined);
      if (problem !== undefined) {
        skip(remote, problem);
        continue;
      }
      const definition = pinnedDefinition(remote);
      const digest = await digestOf(definition);
      const { record, pinned } = await pins.observe(
        { source: name, kind: 'tool', name: remote.name, digest, definition },
        new Date().toISOString(),
      );
      if (pinned) emit({ type: 'mcp.tool.pinned', source: name, toolName: local, digest });
      // Screened as listed: a changed tool is listed with its pinned text, so its new text waits for review.
      const poison = record.digest === digest ? poisoned.get(remote.name) : undefined;
      if (poison !== undefined) {
        skip(remote, poison);
        continue;
      }
      // What is served now, before any call can compare it with the pin: a call racing this listing
      // must not read the previous digest and take the change for accepted.
      served.set(remote.name, { remote: remote.name, local, digest });
      // A changed tool is listed as it was pinned: the new text is what the model must not read yet.
      const trusted = record.digest === digest ? remote : (record.definition as unknown as McpTool);
      if (record.digest !== digest) {
        if (!changed.has(remote.name) || changed.get(remote.name)!.changed?.digest !== digest)
          emit({
            type: 'mcp.tool.changed',
            source: name,
            toolName: local,
            pinned: record.digest,
            served: digest,
            voided: await voidCheckIns(local),
          });
        changed.set(remote.name, record);
      } else {
        changed.delete(remote.name);
      }
      const tool = buildTool(trusted, local);
      if (typeof tool === 'string') {
        skip(remote, tool);
        continue;
      }
      taken.add(local);
      now.set(remote.name, { remote: remote.name, local, digest });
      imported.push(tool);
    }
    for (const remote of changed.keys()) if (!now.has(remote)) changed.delete(remote);
    served = now;
    skipped = left;
    listedOnce = true;
    return imported;
  }

  function importProblem(remote: McpTool, local: string, taken: Set<string>): string | undefined {
    if (typeof local !== 'string' || !TOOL_NAME_PATTERN.test(local))
      return `its local name does not match ${TOOL_NAME_PATTERN.source}; give it one with 'rename'`;
    if (taken.has(local)) return `another tool from this server is already named '${local}'`;
    const header = mcpHeaderProblem(remote.inputSchema);
    if (header !== undefined) return `its inputSchema declares a malformed header: ${header}`;
    if (!escapeText) {
      for (const [field, text] of [
        ['name', remote.name],
        ['title', remote.title],
        ['description', remote.description],
        ['annotations.title', remote.annotations?.title],
      ] as const) {
        const found = typeof text === 'string' ? invisibleIn(text) : [];
        if (found.length > 0)
          return `its ${field} has invisible characters (${found.join(', ')}) a person reviewing it cannot see; import it with invisibleCharacters: 'escape' to see them`;
      }
    }
    return undefined;
  }

  async function voidCheckIns(local: string): Promise<number> {
    const store = options.checkIns;
    if (store === undefined) return 0;
    let voided = 0;
    try {
      for (const record of await store.list({ toolName: local, state: 'pending' })) {
        if (record.request.toolSource !== name) continue;
        if (await store.revoke(record.request.id)) voided += 1;
      }
    } catch {
      // Those left still fail at resume: the tool refuses while its definition differs from the pin.
    }
    return voided;
  }

  function buildTool(remote: McpTool, local: string): Tool | string {
    const shown = escapeText ? escapeInvisible : (text: string) => text;
    const served = remote.inputSchema as JsonSchema;
    const inputSchema = closeSchemas ? closedSchema(served) : served;
    try {
      validator.compile(inputSchema);
    } catch (error) {
      return `its inputSchema does not compile (${describe(error)})`;
    }
    const annotations = annotationsOf(remote, shown);
    const declared = mergeDeclarations([
      options.needs === undefined ? undefined : { needs: options.needs },
      ...(Object.keys(options.fromAnnotations ?? {}) as AnnotationHint[])
        .filter((hint) => hintHolds(annotations, hint))
        .map((hint) => options.fromAnnotations![hint]),
      options.declare?.[local],
    ]);
    const remoteName = remote.name;
    const taskRequired = requiresTask((remote as { execution?: unknown }).execution);
    const { checkIn } = declared;
    const tool: Tool = {
      schema: { name: local, description: shown(remote.description ?? remote.title ?? ''), inputSchema },
      source: name,
      ...(annotations !== undefined ? { annotations } : {}),
      ...(declared.capabilities !== undefined ? { capabilities: declared.capabilities } : {}),
      ...(declared.resultCeiling !== undefined ? { resultCeiling: declared.resultCeiling } : {}),
      ...(declared.needs !== undefined ? { needs: declared.needs } : {}),
      // Nobody is asked to approve a call of a tool whose definition changed: it is refused instead.
      ...(checkIn !== undefined
        ? {
            checkIn: (args: ToolArgs, ctx: ToolMiddlewareContext) => {
              if (changed.has(remoteName)) {
                unaskedBecauseChanged.add(ctx);
                return false;
              }
              return checkIn === 'always' ? true : checkIn(args as never, ctx as never);
            },
          }
        : {}),
      execute: (args, ctx) => call(remoteName, local, args, ctx, taskRequired),
    };
    try {
      assertTool(tool, { allowSource: true });
    } catch (error) {
      return describe(error);
    }
    listed.set(tool, listedExtras(remote, shown));
    return tool;
  }

  const unaskedBecauseChanged = new WeakSet<object>();

  async function refuseIfChanged(remote: string, local: string, ctx: ToolMiddlewareContext): Promise<void> {
    let record = changed.get(remote);
    if (record === undefined && !unaskedBecauseChanged.has(ctx)) return;
    // Another process (the gateway command, the inbox) may have accepted it since.
    const now = served.get(remote);
    if (record !== undefined && now !== undefined) {
      const stored = await pins.get(name, 'tool', remote).catch(() => undefined);
      if (stored !== undefined && stored.digest === now.digest) {
        changed.delete(remote);
        record = undefined;
      }
    }
    if (record === undefined && !unaskedBecauseChanged.has(ctx)) return;
    throw new Refusal(
      'mcp',
      refusalReason(
        `'${local}' did not run: MCP server '${name}' now describes it differently from the definition that was reviewed and pinned`,
        'Retrying will not help until an operator reviews the new definition and accepts it',
        'Continue without this tool, or tell the user it awaits review',
      ),
      {
        code: 'TOOL_DEFINITION_CHANGED',
        mentionsRun: true,
        beforeRun: true,
        detail: `pinned ${record?.digest ?? '?'}, served ${record?.changed?.digest ?? '?'}`,
      },
    );
  }

  async function call(
    remote: string,
    local: string,
    args: ToolArgs,
    ctx: ToolMiddlewareContext,
    taskRequired = false,
  ): Promise<unknown> {
    // Nearly every call has no change to check and a connected client: it waits on nothing for them.
    if (identityChange !== undefined) await refuseIfServerChanged(local);
    if (changed.get(remote) !== undefined || unaskedBecauseChanged.has(ctx))
      await refuseIfChanged(remote, local, ctx);
    // A client closed on purpose is not coming back: that is a failure, not a wait.
    if (connection.status().state === 'closed')
      throw new McpConnectionError(`the connection to MCP server '${name}' is closed`);
    let client: Client;
    try {
      client = connection.connectedClient() ?? (await connection.client());
    } catch (error) {
      throw unavailable(local, error);
    }
    const downstream = downstreamOf(ctx.toolCallId);
    const secrets = ctx.credential?.secrets() ?? [];
    const meta = metaFor(ctx.identity, options.traceContext, downstream?.traceContext);
    // A 2026-07-28 server logs only at the level each request carries.
    if (downstream?.logLevel !== undefined) meta[LOG_LEVEL_META_KEY] = downstream.logLevel;
    let nonce: string | undefined;
    if (options.credentialHeaders !== undefined && ctx.credential !== undefined) {
      nonce = crypto.randomUUID();
      headerSets.set(nonce, credentialHeadersFor(name, local, options.credentialHeaders, ctx.credential));
      meta[HEADERS_META] = nonce;
    }
    // A retry answering a parked call answers it, or fails: the tool is never called anew for it.
    const parkedCall = downstream?.modern?.retry?.parkedCall;
    if (parkedCall !== undefined) {
      if (nonce !== undefined) headerSets.delete(nonce);
      return resumeParked(parkedCall, local, ctx, downstream!, secrets);
    }
    // A 2026-07-28 caller of a 2025-era upstream: the upstream asks on the call itself, so the call is
    // held here: inside the caller's task of ours when it runs as one (asked through it, nothing
    // parked), else across the caller's rounds. A 2025-11-25 upstream task's questions are declined.
    const parking = downstream?.modern?.parking;
    if (parking !== undefined && !speaksModern(client) && !(taskRequired && upstreamTakesTasks(client))) {
      const params = {
        name: remote,
        arguments: args,
        ...(Object.keys(meta).length > 0 ? { _meta: meta } : {}),
      };
      const ask = downstream!.runsAsTask === true ? downstream!.askThroughTask : undefined;
      return ask !== undefined
        ? callAskingThroughTask(client, params, { local, ctx, downstream: downstream!, secrets, ask }, nonce)
        : callHeld(client, params, { local, ctx, downstream: downstream!, secrets, parking }, nonce);
    }
    // A 2026-07-28 caller's upstream hears what that caller declared, and asks it in-band: its
    // input-required answer is handed back to relay, never fulfilled here.
    const relay = downstream?.modern !== undefined && speaksModern(client) ? downstream.modern : undefined;
    // This client follows an upstream's task itself, whatever the caller declared.
    if (relay !== undefined) meta[CLIENT_CAPABILITIES_META_KEY] = withTasks(relay.clientCapabilities);
    // An upstream task's questions go to a 2026-07-28 caller: through the caller's task of ours when
    // it holds one, else in an input-required answer.
    const askThroughTask = relay !== undefined ? downstream?.askThroughTask : undefined;
    const following = { signal: ctx.signal, timeoutMs, ...(relay !== undefined ? { relayInput: true } : {}) };
    inFlight.set(ctx.toolCallId, secrets);
    let result: CallToolResult | InputRequiredResult;
    let taskQuestions: UpstreamTaskQuestions | undefined;
    // The chain has decided: the tool runs now (a downstream task is handed out from here on).
    downstream?.started?.();
    try {
      const resumed = relay?.retry?.upstreamTask;
      if (resumed !== undefined) {
        // The client answered an upstream task's questions: the task gets them, no new call is made.
        downstream?.upstreamTask?.();
        const followed = await resumeUpstreamTask(
          client,
          resumed,
          relay?.retry?.inputResponses ?? {},
          following,
        );
        ({ result, questions: taskQuestions } = settledTask(followed));
      } else if (taskRequired && upstreamTakesTasks(client))
        result = await callAsUpstreamTask(
          client,
          { name: remote, arguments: args, ...(Object.keys(meta).length > 0 ? { _meta: meta } : {}) },
          { signal: ctx.signal, timeoutMs },
        );
      else {
        result = (await client.callTool(
          {
            name: remote,
            arguments: args,
            ...(Object.keys(meta).length > 0 ? { _meta: meta } : {}),
            ...retryParams(relay),
          },
          {
            signal: ctx.signal,
            timeout: timeoutMs,
            ...(relay !== undefined ? { allowInputRequired: true } : {}),
            ...(downstream?.progress !== undefined
              ? {
                  onprogress: ({
                    progress,
                    total,
                    message,
                  }: {
                    progress: number;
                    total?: number | undefined;
                    message?: string | undefined;
                  }) => downstream.progress!(progress, total, message),
                  resetTimeoutOnProgress: true,
                }
              : {}),
          },
        )) as CallToolResult;
        const handle = isInputRequiredResult(result) ? undefined : upstreamTaskOf(result);
        if (handle !== undefined) {
          downstream?.upstreamTask?.();
          let followed = await followUpstreamTask(client, handle, following);
          if (askThroughTask !== undefined)
            followed = await answeredThroughTask(client, followed, {
              ask: askThroughTask,
              declared: relay!.clientCapabilities,
              secrets,
              following,
              downstream: downstream!,
            });
          ({ result, questions: taskQuestions } = settledTask(followed));
        }
      }
      // Asked only what the client cannot answer, the task would wait for nothing: it is cancelled
      // (the client gets -32021 as for a direct answer).
      if (
        taskQuestions !== undefined &&
        relay !== undefined &&
        Object.keys(answerable(taskQuestions.inputRequests, relay.clientCapabilities).inputRequests)
          .length === 0
      )
        await cancelUpstreamTask(client, taskQuestions.taskId);
    } catch (error) {
      // Only a 2026-07-28 caller's own capabilities were what the upstream checked.
      const missing = relay === undefined ? undefined : missingCapabilitiesOf(error);
      if (missing !== undefined && downstream !== undefined) downstream.missingCapabilities = missing;
      throw callProblem(name, local, timeoutMs, error, ctx.signal);
    } finally {
      inFlight.delete(ctx.toolCallId);
      if (nonce !== undefined) headerSets.delete(nonce);
    }
    if (taskQuestions !== undefined || isInputRequiredResult(result)) {
      const asked =
        taskQuestions !== undefined
          ? {
              inputRequests: redactValue(taskQuestions.inputRequests, secrets) as Record<string, unknown>,
              upstreamTask: taskQuestions.taskId,
            }
          : askedOf(result as unknown as InputRequiredResult, secrets);
      if (downstream !== undefined) downstream.asked = asked;
      throw new McpInputRequiredError(
        `MCP server '${name}' asked the client for input before '${local}' can finish`,
      );
    }
    return toolResult(result, local, downstream, secrets);
  }

  /** A tool result as the chain sees it: blocks prefixed; an `isError` result thrown, its blocks kept. */
  function toolResult(
    result: CallToolResult,
    local: string,
    downstream: DownstreamCall | undefined,
    secrets: readonly string[],
  ): ContentResult {
    const content = result.content.map((block) => prefixedBlock(block as ContentBlock, prefix));
    if (result.isError === true) {
      if (downstream !== undefined)
        downstream.errorResult = redactValue({ content, isError: true }, secrets) as CallToolResult;
      const text = textOf(content).trim();
      throw new McpToolError(
        text || `MCP server '${name}' reported an error from '${local}' without a message`,
      );
    }
    const value: ContentResult =
      result.structuredContent !== undefined && result.structuredContent !== null
        ? { content, structuredContent: result.structuredContent as Record<string, unknown> }
        : { content };
    return value;
  }

  /** One round of a held call: what the caller's call (the first, or a retry) brings to it. */
  interface HeldRound {
    readonly local: string;
    readonly ctx: ToolMiddlewareContext;
    readonly downstream: DownstreamCall;
    readonly secrets: readonly string[];
    readonly parking: ParkedCalls;
  }

  /**
   * Sends a 2025-era upstream `params` as a call held open here, in flight under the first round's
   * call id for its whole life (retries bring their own), its credential headers forgotten with it.
   * Each wait for the upstream is bounded by timeoutMs (held.next), and a wait for the caller by the
   * parking's wait or the task's time to live: the request itself spans them all.
   */
  function startHeld(
    client: Client,
    params: { name: string; arguments: ToolArgs; _meta?: Record<string, unknown> },
    round: {
      readonly ctx: ToolMiddlewareContext;
      readonly downstream: DownstreamCall;
      readonly secrets: readonly string[];
    },
    nonce: string | undefined,
    ended?: (held: HeldUpstreamCall<DownstreamCall>) => void,
  ): HeldUpstreamCall<DownstreamCall> {
    const key = round.ctx.toolCallId;
    const held: HeldUpstreamCall<DownstreamCall> = new HeldUpstreamCall(
      { upstream: name, identity: round.ctx.identity },
      () => {
        inFlight.delete(key);
        heldCalls.delete(key);
        if (nonce !== undefined) headerSets.delete(nonce);
        ended?.(held);
      },
    );
    inFlight.set(key, round.secrets);
    heldCalls.set(key, held);
    round.downstream.started?.();
    held.start(
      (signal) =>
        client.callTool(params, {
          signal,
          timeout: HELD_REQUEST_TIMEOUT_MS,
          onprogress: ({ progress, total, message }) => {
            held.touch();
            held.round?.progress?.(progress, total, message);
          },
        }) as Promise<CallToolResult>,
      round.downstream,
    );
    return held;
  }

  /** Sends a 2025-era upstream the tools/call of a 2026-07-28 caller, held here while it asks. */
  function callHeld(
    client: Client,
    params: { name: string; arguments: ToolArgs; _meta?: Record<string, unknown> },
    round: HeldRound,
    nonce: string | undefined,
  ): Promise<ContentResult> {
    const held = startHeld(client, params, round, nonce, (ended) => {
      // Ended while parked (its upstream call failed): nobody will take it any more.
      if (ended.parkedAs !== undefined) round.parking.end(ended.parkedAs);
    });
    return settleHeld(held, round);
  }

  /**
   * Sends a 2025-era upstream the tools/call of a 2026-07-28 caller holding a task of ours for it. The
   * call keeps running inside that task: each question the caller declared it can answer is asked
   * through the task (under our key), and the owner's tasks/update answers the upstream's pending
   * request with that key only. A question it cannot answer, a cancel of our task or its time to live
   * ends the upstream call (its request declined or refused, its call cancelled).
   */
  async function callAskingThroughTask(
    client: Client,
    params: { name: string; arguments: ToolArgs; _meta?: Record<string, unknown> },
    through: {
      readonly local: string;
      readonly ctx: ToolMiddlewareContext;
      readonly downstream: DownstreamCall;
      readonly secrets: readonly string[];
      readonly ask: NonNullable<DownstreamCall['askThroughTask']>;
    },
    nonce: string | undefined,
  ): Promise<ContentResult> {
    const { local, ctx, downstream, secrets, ask } = through;
    // Never parked: while it waits for the task's owner it still counts as running (onlyCallRunning).
    const held = startHeld(client, params, through, nonce);
    try {
      for (;;) {
        const step = await nextHeldStep(held, { local, ctx, downstream, secrets });
        if ('result' in step) return step.result;
        const { question, inputRequests } = step;
        if (question.method === 'sampling/createMessage') samplingRelayed(downstream);
        let answers: Readonly<Record<string, unknown>>;
        try {
          // The wait ends too when the upstream withdraws its request: its call goes on without it.
          answers = await ask(
            redactValue(inputRequests, secrets) as Record<string, unknown>,
            AbortSignal.any([ctx.signal, question.withdrawn]),
          );
        } catch (error) {
          if (question.withdrawn.aborted && !ctx.signal.aborted) continue;
          throw new McpConnectionError(
            `the question MCP server '${name}' asked during '${local}' went unanswered (${describe(error)})`,
          );
        }
        // Only the key it was asked under: the task passed on no other.
        const given = answers[QUESTION_KEYS[question.method]];
        if (typeof given === 'object' && given !== null && !Array.isArray(given))
          question.answer(given as Record<string, unknown>);
        else question.unanswered();
      }
    } finally {
      // Whatever ended the wait unfinished (a cancel, the task's time to live, a question it cannot
      // answer): the pending request is declined or refused and the upstream call cancelled.
      held.end();
    }
  }

  /**
   * A held call's next step: its result (the call is done), or its next question and what of it the
   * caller may be asked. A question the caller did not declare it can answer ends the call (its
   * request declined or refused, its call cancelled) and throws: the caller gets -32021.
   */
  async function nextHeldStep(
    held: HeldUpstreamCall<DownstreamCall>,
    round: Omit<HeldRound, 'parking'>,
  ): Promise<
    | { readonly result: ContentResult }
    | { readonly question: HeldQuestion; readonly inputRequests: Record<string, unknown> }
  > {
    const { local, ctx, downstream, secrets } = round;
    let question: HeldQuestion;
    try {
      const step = await held.next(
        timeoutMs,
        ctx.signal,
        () => new McpConnectionError(`MCP server '${name}' did not answer '${local}' within ${timeoutMs} ms`),
      );
      if (step.kind === 'result') {
        held.finish();
        return { result: toolResult(step.result, local, downstream, secrets) };
      }
      question = step.question;
    } catch (error) {
      throw error instanceof McpConnectionError
        ? error
        : callProblem(name, local, timeoutMs, error, ctx.signal);
    }
    const asked = {
      [QUESTION_KEYS[question.method]]: { method: question.method, params: question.params },
    };
    const { inputRequests, missing } = answerable(asked, downstream.modern?.clientCapabilities ?? {});
    if (Object.keys(inputRequests).length === 0) {
      downstream.missingCapabilities = missing;
      held.end();
      throw new McpConnectionError(
        `MCP server '${name}' asked the client for what it did not declare before '${local}' could finish`,
      );
    }
    return { question, inputRequests };
  }

  /** A sampling request relayed to the caller: reported without its text. */
  function samplingRelayed(downstream: DownstreamCall): void {
    emit({
      type: 'mcp.sampling',
      source: name,
      outcome: 'relayed',
      toolName: downstream.toolName,
      ...(downstream.identity !== undefined ? { identity: downstream.identity } : {}),
    });
  }

  /** Answers the question of the parked call `id` with the retry's answer, and waits again. */
  function resumeParked(
    id: string,
    local: string,
    ctx: ToolMiddlewareContext,
    downstream: DownstreamCall,
    secrets: readonly string[],
  ): Promise<ContentResult> {
    const parking = downstream.modern?.parking;
    const parked = parking?.take(id, ctx.identity, name);
    if (parking === undefined || !(parked instanceof HeldUpstreamCall))
      throw new McpConnectionError(
        `the call of '${local}' this requestState answers is not waiting in this process: it was answered already, it waited longer than ${parking === undefined ? 'allowed' : `${parking.waitMs} ms`} and was ended, or another process holds it (an MCP server on revision 2025-11-25 asks on the call itself, so a client's retries must reach the process that holds the call). Call the tool again without a requestState to start over`,
      );
    const held = parked as HeldUpstreamCall<DownstreamCall>;
    held.parkedAs = undefined;
    downstream.started?.();
    held.resume(downstream);
    const { question } = held;
    if (question !== undefined) {
      // Only the key it was asked under: upstreamRetryOf passed on no other.
      const given = downstream.modern?.retry?.inputResponses?.[QUESTION_KEYS[question.method]];
      if (typeof given === 'object' && given !== null && !Array.isArray(given))
        question.answer(given as Record<string, unknown>);
      else question.unanswered();
    }
    return settleHeld(held, { local, ctx, downstream, secrets, parking });
  }

  /**
   * Waits for a held call's result or next question. A question the caller declared it can answer
   * parks the call and is relayed; one it cannot answer ends the call (-32021 to the caller); with
   * the parking full, it is declined as before and the round waits on.
   */
  async function settleHeld(
    held: HeldUpstreamCall<DownstreamCall>,
    round: HeldRound,
  ): Promise<ContentResult> {
    const { local, ctx, downstream, secrets, parking } = round;
    for (;;) {
      const step = await nextHeldStep(held, { local, ctx, downstream, secrets });
      if ('result' in step) return step.result;
      const { question, inputRequests } = step;
      const id = parking.park(held);
      if (id === undefined) {
        question.unanswered();
        continue;
      }
      held.parkedAs = id;
      held.park();
      if (question.method === 'sampling/createMessage') samplingRelayed(downstream);
      downstream.asked = {
        inputRequests: redactValue(inputRequests, secrets) as Record<string, unknown>,
        parkedCall: id,
      };
      throw new McpInputRequiredError(
        `MCP server '${name}' asked the client for input before '${local}' can finish`,
      );
    }
  }

  function unavailable(local: string, error: unknown): Refusal {
    const status = connection.status();
    return new Refusal(
      'mcp',
      refusalReason(
        `'${local}' did not run: MCP server '${name}' is ${status.state === 'failed' ? 'down' : 'not connected now'} (${error instanceof McpUnavailableError ? error.message : 'it could not be reached'})`,
        'Retrying in a moment may help',
      ),
      {
        code: 'MCP_UNAVAILABLE',
        retryable: true,
        mentionsRun: true,
        beforeRun: true,
        detail: `status ${status.state}`,
      },
    );
  }

  const listening = new Map<string, McpSubscription>();
  // The remote URIs downstream clients watch through this client, kept across reconnects.
  const watching = new Set<string>();

  // A 2026-07-28 server has no resources/subscribe: a subscriptions/listen stream per URI watches it.
  async function watch(client: Client, remote: string, signal?: AbortSignal): Promise<void> {
    if (!speaksModern(client)) {
      await client.subscribeResource(
        { uri: remote },
        { timeout: timeoutMs, ...(signal !== undefined ? { signal } : {}) },
      );
      return;
    }
    if (listening.has(remote)) return;
    const stream = await client.listen({ resourceSubscriptions: [remote] }, { timeout: timeoutMs });
    listening.set(remote, stream);
    void stream.closed.then(() => {
      if (listening.get(remote) === stream) listening.delete(remote);
    });
  }

  // Each URI on its own: one the server now refuses must not stop the others' updates.
  async function rewatch(client: Client): Promise<void> {
    const streams = [...listening.values()];
    listening.clear();
    for (const stream of streams) stream.close().catch(() => undefined);
    await Promise.all([...watching].map((remote) => watch(client, remote).catch(() => undefined)));
  }

  const upstream = {
    async listResources(cursor?: string): Promise<ListResourcesResult> {
      const client = await connection.client();
      if (client.getServerCapabilities()?.resources === undefined) return { resources: [] };
      const result = await client.listResources(cursor === undefined ? {} : { cursor });
      return {
        ...result,
        resources: result.resources.map((resource) => ({ ...resource, uri: `${prefix}${resource.uri}` })),
      };
    },
    async listResourceTemplates(cursor?: string): Promise<ListResourceTemplatesResult> {
      const client = await connection.client();
      if (client.getServerCapabilities()?.resources === undefined) return { resourceTemplates: [] };
      const result = await client.listResourceTemplates(cursor === undefined ? {} : { cursor });
      return {
        ...result,
        resourceTemplates: result.resourceTemplates.map((template) => ({
          ...template,
          uriTemplate: `${prefix}${template.uriTemplate}`,
        })),
      };
    },
    async readResource(
      uri: string,
      signal?: AbortSignal,
      relay?: UpstreamRelay,
    ): Promise<ReadResourceResult> {
      const client = await connection.client();
      const modern = relay !== undefined && speaksModern(client) ? relay : undefined;
      const result = (await client.readResource(
        { uri: unprefixed(uri, 'resource'), ...relayedParams(modern) },
        {
          timeout: timeoutMs,
          ...(signal !== undefined ? { signal } : {}),
          ...(modern !== undefined ? { allowInputRequired: true } : {}),
        },
      )) as ReadResourceResult | InputRequiredResult;
      if (isInputRequiredResult(result)) throw new UpstreamAskedError(askedOf(result, []));
      return {
        ...result,
        contents: result.contents.map((content) => ({ ...content, uri: `${prefix}${content.uri}` })),
      };
    },
    async listPrompts(cursor?: string): Promise<ListPromptsResult> {
      const client = await connection.client();
      if (client.getServerCapabilities()?.prompts === undefined) return { prompts: [] };
      const result = await client.listPrompts(cursor === undefined ? {} : { cursor });
      return {
        ...result,
        prompts: result.prompts.map((prompt) => ({ ...prompt, name: `${prefix}${prompt.name}` })),
      };
    },
    async getPrompt(
      prompt: string,
      args: Readonly<Record<string, string>> | undefined,
      signal?: AbortSignal,
      relay?: UpstreamRelay,
    ): Promise<GetPromptResult> {
      const client = await connection.client();
      const modern = relay !== undefined && speaksModern(client) ? relay : undefined;
      const result = (await client.getPrompt(
        {
          name: unprefixed(prompt, 'prompt'),
          ...(args !== undefined ? { arguments: { ...args } } : {}),
          ...relayedParams(modern),
        },
        {
          timeout: timeoutMs,
          ...(signal !== undefined ? { signal } : {}),
          ...(modern !== undefined ? { allowInputRequired: true } : {}),
        },
      )) as GetPromptResult | InputRequiredResult;
      if (isInputRequiredResult(result)) throw new UpstreamAskedError(askedOf(result, []));
      return {
        ...result,
        messages: result.messages.map((message) => ({
          ...message,
          content: prefixedBlock(message.content as ContentBlock, prefix) as typeof message.content,
        })),
      };
    },
    async complete(params: CompleteRequest['params'], signal?: AbortSignal): Promise<CompleteResult> {
      const client = await connection.client();
      if (client.getServerCapabilities()?.completions === undefined)
        return { completion: { values: [], total: 0, hasMore: false } };
      const { ref } = params;
      const remoteRef =
        ref.type === 'ref/prompt'
          ? { ...ref, name: unprefixed(ref.name, 'prompt') }
          : { ...ref, uri: unprefixed(ref.uri, 'resource') };
      return client.complete(
        { ...params, ref: remoteRef },
        { timeout: timeoutMs, ...(signal !== undefined ? { signal } : {}) },
      );
    },
    instructions: () => instructions,
    async rootsListChanged(): Promise<void> {
      if (!relayRoots || connection.status().state !== 'connected') return;
      const client = await connection.client();
      await client.sendRootsListChanged();
    },
    async setLoggingLevel(level: LoggingLevel, signal?: AbortSignal): Promise<void> {
      const client = await connection.client();
      if (client.getServerCapabilities()?.logging === undefined) return;
      await client.setLoggingLevel(level, {
        timeout: timeoutMs,
        ...(signal !== undefined ? { signal } : {}),
      });
    },
    async subscribeResource(uri: string, signal?: AbortSignal): Promise<void> {
      const client = await connection.client();
      const remote = unprefixed(uri, 'resource');
      await watch(client, remote, signal);
      watching.add(remote);
    },
    async unsubscribeResource(uri: string, signal?: AbortSignal): Promise<void> {
      const client = await connection.client();
      const remote = unprefixed(uri, 'resource');
      watching.delete(remote);
      const stream = listening.get(remote);
      if (stream !== undefined) {
        listening.delete(remote);
        await stream.close();
        return;
      }
      if (speaksModern(client)) return;
      await client.unsubscribeResource(
        { uri: remote },
        { timeout: timeoutMs, ...(signal !== undefined ? { signal } : {}) },
      );
    },
  };

  return {
    name,
    prefix,
    ...upstream,
    get skipped() {
      return skipped;
    },
    status: () => connection.status(),
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    async tools() {
      if (connection.status().state === 'closed') throw new Error(`mcpClient '${name}' is closed.`);
      let client: Client;
      try {
        client = await connection.client();
      } catch (error) {
        throw new Error(`mcpClient '${name}': could not connect to the MCP server (${describe(error)}).`, {
          cause: error,
        });
      }
      return importAll(client);
    },
    async acceptPin(toolName) {
      const entry = served.get(toolName) ?? [...served.values()].find((s) => s.local === toolName);
      if (entry === undefined) return false;
      const accepted = await pins.accept(name, 'tool', entry.remote, entry.digest, new Date().toISOString());
      if (!accepted) return false;
      changed.delete(entry.remote);
      emit({ type: 'mcp.tool.accepted', source: name, toolName: entry.local, digest: entry.digest });
      emit({ type: 'mcp.list.changed', source: name, list: 'tools' });
      return true;
    },
    async close() {
      const never = connection.status().state === 'idle';
      await connection.close();
      // A transport instance never connected is closed directly, so a spawned process does not linger.
      const { transport } = options;
      if (never && transport !== undefined && typeof transport !== 'function') await transport.close();
    },
  };
}

/**
 * Accepts the changed definition recorded for a tool in `pins`, as `toolgate pins accept` does: the
 * definition served now becomes the pinned one. `digest` guards against accepting a definition that
 * changed again after it was reviewed. False when nothing (or something else) awaits acceptance.
 */
export async function acceptPin(
  pins: PinStore,
  pin: {
    readonly source: string;
    readonly name: string;
    readonly digest?: string;
    /** `'server'` accepts a changed server identity (`name` is then `SERVER_IDENTITY`). */
    readonly kind?: 'tool' | 'server';
  },
): Promise<boolean> {
  const kind = pin.kind ?? 'tool';
  const record = await pins.get(pin.source, kind, pin.name);
  const digest = pin.digest ?? record?.changed?.digest;
  if (digest === undefined) return false;
  return pins.accept(pin.source, kind, pin.name, digest, new Date().toISOString());
}

function urlOrUndefined(text: string | undefined): URL | undefined {
  if (text === undefined) return undefined;
  try {
    return new URL(text);
  } catch {
    return undefined;
  }
}

/** Whether the connection speaks revision 2026-07-28 or later (revisions are dates, so they sort as text). */
function speaksModern(client: Client): boolean {
  return (client.getNegotiatedProtocolVersion() ?? '') >= '2026-07-28';
}

/** The name a server's identity is pinned under (kind `'server'`). */
export const SERVER_IDENTITY = 'identity';

/** The name a server's set of tool names is pinned under (kind `'server'`). */
export const TOOL_SET = 'tools';

/** `sha256:` of the public key the server at `endpoint` presents over TLS (a probe connection, bounded). */
export function tlsKeyOf(endpoint: URL): Promise<string> {
  return new Promise((resolve, reject) => {
    const host = endpoint.hostname.replace(/^\[|\]$/g, '');
    const socket = tlsConnect({
      host,
      port: Number(endpoint.port || 443),
      ...(isIP(host) === 0 ? { servername: host } : {}),
      // The key is pinned whoever signed it; trust in the certificate is the MCP connection's own check.
      rejectUnauthorized: false,
      timeout: 5000,
    });
    const done = (error?: Error, key?: string) => {
      socket.destroy();
      if (error !== undefined) reject(error);
      else resolve(key!);
    };
    socket.once('secureConnect', () => {
      const { pubkey } = socket.getPeerCertificate();
      if (pubkey === undefined) return done(new Error('no certificate'));
      done(undefined, `sha256:${createHash('sha256').update(pubkey).digest('hex')}`);
    });
    socket.once('timeout', () => done(new Error('timeout')));
    socket.once('error', (error) => done(error));
  });
}

// What tools/list shows of an imported tool beyond its schema, for mcpServe.
const listed = new WeakMap<object, ListedExtras>();

/** The title, annotations, output schema, execution and `_meta` an imported tool was listed with. */
export function listedExtrasOf(tool: object): ListedExtras | undefined {
  return listed.get(tool);
}

async function pages<T>(
  page: (cursor: string | undefined) => Promise<{ items: T[]; nextCursor?: string | undefined }>,
) {
  const all: T[] = [];
  const cursors = new Set<string>();
  let cursor: string | undefined;
  for (let n = 0; n < MAX_PAGES; n++) {
    const result = await page(cursor);
    all.push(...result.items);
    cursor = result.nextCursor;
    if (cursor === undefined || cursors.has(cursor)) break;
    cursors.add(cursor);
  }
  return all;
}

function annotationsOf(remote: McpTool, shown: (text: string) => string): ToolAnnotations | undefined {
  const annotations = remote.annotations;
  if (typeof annotations !== 'object' || annotations === null) return undefined;
  // Only the hints core checks, with the right types: a server's junk must not fail the import.
  const kept: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(annotations)) {
    if (key === 'title') {
      if (typeof value === 'string') kept[key] = shown(value);
    } else if (key.endsWith('Hint')) {
      if (typeof value === 'boolean') kept[key] = value;
    } else kept[key] = value;
  }
  return kept;
}

function checkedUrl(name: string, url: string | URL, allowInsecure: boolean): URL {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new McpClientConfigError(`mcpClient '${name}': 'url' is not a valid URL.`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
    throw new McpClientConfigError(`mcpClient '${name}': 'url' must be http:// or https://.`);
  if (parsed.protocol === 'http:' && !LOOPBACK.has(parsed.hostname) && !allowInsecure)
    throw new McpClientConfigError(
      `mcpClient '${name}': 'url' is plain http:// to '${parsed.hostname}', which is not this machine, so calls and credentials would travel unencrypted. Use https://, or set allowInsecure: true if the network is trusted.`,
    );
  return parsed;
}

function transportFactory(
  name: string,
  options: McpClientOptions,
  endpoint: URL | undefined,
  headerSets: Map<string, Readonly<Record<string, string>>>,
): () => Transport | Promise<Transport> {
  const { transport, command } = options;
  if (typeof transport === 'function') return transport;
  if (transport !== undefined) {
    // One instance can be connected once: a server that goes away through it cannot come back.
    let used = false;
    return () => {
      if (used)
        throw new Error(
          `the transport given to mcpClient '${name}' was already used; give a factory to reconnect`,
        );
      used = true;
      return transport;
    };
  }
  if (command !== undefined) {
    const [program, ...args] = command;
    return () =>
      new InPlaceStdioClientTransport({
        command: program,
        args,
        ...(options.env !== undefined ? { env: { ...options.env } } : {}),
        ...(options.cwd !== undefined ? { cwd: options.cwd } : {}),
        stderr: options.stderr ?? 'inherit',
      });
  }
  const headersOf = options.headers;
  const base = options.fetch ?? fetch;
  const fetchWithHeaders: typeof fetch = async (input, init) => {
    if (init === undefined || typeof init.body !== 'string' || !init.body.includes(HEADERS_META))
      return base(input, init);
    const { body, extra } = withoutHeaderMeta(init.body, headerSets);
    const merged = new Headers(init.headers);
    for (const [key, value] of Object.entries(extra)) merged.set(key, value);
    return base(input, { ...init, body, headers: merged });
  };
  return () => {
    const headers = typeof headersOf === 'function' ? headersOf() : headersOf;
    return new StreamableHTTPClientTransport(endpoint!, {
      fetch: fetchWithHeaders,
      ...(headers !== undefined ? { requestInit: { headers: { ...headers } } } : {}),
    });
  };
}

/**
 * The headers `credentialHeaders` builds for one call, checked before anything is sent: a builder that
 * throws or builds a header fetch would reject fails the call here, and no message names a value.
 */
function credentialHeadersFor(
  name: string,
  local: string,
  build: NonNullable<McpClientOptions['credentialHeaders']>,
  credential: Credential,
): Readonly<Record<string, string>> {
  const refuse = (what: string) =>
    new McpConnectionError(
      `'${local}' was not sent to MCP server '${name}': ${what} (the value is not shown)`,
    );
  let built: unknown;
  try {
    built = build(credential);
  } catch (error) {
    throw refuse(`credentialHeaders threw ${error instanceof Error ? error.name : typeof error}`);
  }
  if (typeof built !== 'object' || built === null || Array.isArray(built))
    throw refuse('credentialHeaders did not answer an object of header names and values');
  const checked = new Headers();
  const headers: Record<string, string> = {};
  for (const [key, value] of Object.entries(built)) {
    const header = key.slice(0, 100);
    if (typeof value !== 'string')
      throw refuse(`credentialHeaders built header '${header}' as ${typeof value}, not a string`);
    try {
      checked.set(key, value);
    } catch {
      throw refuse(`credentialHeaders built header '${header}', which HTTP cannot carry`);
    }
    headers[key] = value;
  }
  return headers;
}

/** The request body with the header marker taken out of `_meta`, and the headers it stood for. */
function withoutHeaderMeta(
  text: string,
  headerSets: Map<string, Readonly<Record<string, string>>>,
): { body: string; extra: Readonly<Record<string, string>> } {
  let extra: Readonly<Record<string, string>> = {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return { body: text, extra };
  }
  for (const message of Array.isArray(parsed) ? parsed : [parsed]) {
    const meta = (message as { params?: { _meta?: Record<string, unknown> } } | null)?.params?._meta;
    if (meta === undefined || typeof meta !== 'object' || meta === null || !(HEADERS_META in meta)) continue;
    const nonce = meta[HEADERS_META];
    delete meta[HEADERS_META];
    if (typeof nonce === 'string') extra = { ...extra, ...headerSets.get(nonce) };
  }
  return { body: JSON.stringify(parsed), extra };
}

function metaFor(
  identity: Identity | undefined,
  traceContext: (() => TraceContext | undefined) | undefined,
  // The trace context the downstream request arrived with: the upstream call joins the caller's trace
  // even without a tracer configured here.
  arrived: TraceContext | undefined,
) {
  const meta: Record<string, unknown> = {};
  if (identity !== undefined && (identity.tenant !== undefined || identity.principal !== undefined))
    meta[IDENTITY_META] = {
      ...(identity.tenant !== undefined ? { tenant: identity.tenant } : {}),
      ...(identity.principal !== undefined ? { principal: identity.principal } : {}),
    };
  let trace: TraceContext | undefined;
  try {
    trace = traceContext?.() ?? arrived;
  } catch {
    trace = arrived;
  }
  if (typeof trace?.traceparent === 'string') {
    meta['traceparent'] = trace.traceparent;
    if (typeof trace.tracestate === 'string') meta['tracestate'] = trace.tracestate;
  }
  return meta;
}

/** A block with its resource URIs under the client's prefix, so a client that follows one reads it through us. */
function prefixedBlock(block: ContentBlock, prefix: string): ContentBlock {
  if (prefix === '') return block;
  if (block.type === 'resource_link' && typeof block['uri'] === 'string')
    return { ...block, uri: `${prefix}${block['uri']}` };
  const resource = block['resource'];
  if (block.type === 'resource' && typeof resource === 'object' && resource !== null) {
    const uri = (resource as { uri?: unknown }).uri;
    if (typeof uri === 'string') return { ...block, resource: { ...resource, uri: `${prefix}${uri}` } };
  }
  return block;
}

function describe(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.split('\n')[0]!.slice(0, 200);
}

function callProblem(
  name: string,
  local: string,
  timeoutMs: number,
  error: unknown,
  signal: AbortSignal,
): Error {
  if (signal.aborted)
    return new McpConnectionError(`the call to '${local}' on MCP server '${name}' was cancelled`);
  // The configured fetch refused the request (an upstream's authorization failed): its own words.
  if (error instanceof Refusal) return error;
  if (error instanceof SdkError || error instanceof ProtocolError) {
    if (error.code === SdkErrorCode.RequestTimeout)
      return new McpConnectionError(`MCP server '${name}' did not answer '${local}' within ${timeoutMs} ms`);
    if (error.code === SdkErrorCode.ConnectionClosed)
      return new Refusal(
        'mcp',
        refusalReason(
          `the connection to MCP server '${name}' closed before '${local}' answered, so it may or may not have run`,
          'Retrying in a moment may help: the connection is being restored',
          'Check whether the first call took effect before repeating anything that must happen once',
        ),
        { code: 'MCP_CONNECTION_LOST', retryable: true, mentionsRun: true },
      );
    return new McpConnectionError(
      `MCP server '${name}' rejected the call to '${local}': ${describe(error).replace(/^MCP error -?\d+: /, '')}`,
    );
  }
  // The task's own account (a failed task's error message, bounded), said by the upstream's server.
  if (error instanceof UpstreamTaskError) return new McpToolError(`MCP server '${name}': ${error.message}`);
  if (error instanceof Error && error.message === 'Not connected')
    return new Refusal(
      'mcp',
      refusalReason(
        `'${local}' did not run: the connection to MCP server '${name}' is closed`,
        'Retrying in a moment may help',
      ),
      { code: 'MCP_UNAVAILABLE', retryable: true, mentionsRun: true, beforeRun: true },
    );
  // Transport errors can carry URLs and response bodies, so only their kind is passed on.
  return new McpConnectionError(
    `MCP server '${name}' could not be reached for '${local}' (${error instanceof Error ? error.name : typeof error})`,
  );
}

function textOf(content: readonly ContentBlock[]): string {
  return content
    .filter((block) => block.type === 'text' && typeof block['text'] === 'string')
    .map((block) => block['text'] as string)
    .join('\n');
}

/**
 * Follows an upstream task whose questions are asked through the client's task of ours, round after
 * round, until it ends. The client is asked only what it declared it can answer; asked nothing it
 * can, the task is cancelled (and the client told which capabilities it lacks). A question left
 * unanswered (a cancel of our task, its time to live) cancels the upstream task.
 */
async function answeredThroughTask(
  client: Client,
  first: FollowedUpstreamTask,
  through: {
    readonly ask: NonNullable<DownstreamCall['askThroughTask']>;
    readonly declared: ClientCapabilities;
    readonly secrets: readonly string[];
    readonly following: FollowUpstreamTaskOptions;
    readonly downstream: DownstreamCall;
  },
): Promise<FollowedUpstreamTask> {
  let followed = first;
  while ('questions' in followed) {
    const { taskId } = followed.questions;
    const { inputRequests, missing } = answerable(followed.questions.inputRequests, through.declared);
    if (Object.keys(inputRequests).length === 0) {
      await cancelUpstreamTask(client, taskId);
      if (Object.keys(missing).length > 0) through.downstream.missingCapabilities = missing;
      throw new UpstreamTaskError(
        "the MCP server's task asked for input this client did not declare it can answer",
      );
    }
    let answers: Readonly<Record<string, unknown>>;
    try {
      answers = await through.ask(
        redactValue(inputRequests, through.secrets) as Record<string, unknown>,
        through.following.signal,
      );
    } catch (error) {
      await cancelUpstreamTask(client, taskId);
      throw error instanceof UpstreamTaskError
        ? error
        : new UpstreamTaskError(`its task's questions went unanswered: ${describe(error)}`);
    }
    followed = await resumeUpstreamTask(client, taskId, answers, through.following);
  }
  return followed;
}

/** A followed task's result, or its questions (with an empty result never read). */
function settledTask(followed: FollowedUpstreamTask): {
  result: CallToolResult;
  questions: UpstreamTaskQuestions | undefined;
} {
  return 'questions' in followed
    ? { result: { content: [] }, questions: followed.questions }
    : { result: followed.result, questions: undefined };
}

/** The capabilities an upstream is told for a 2026-07-28 caller: the caller's, and the tasks extension. */
function withTasks(declared: ClientCapabilities): ClientCapabilities {
  const extensions = (declared as { extensions?: Record<string, unknown> }).extensions;
  return { ...declared, extensions: { ...extensions, [TASKS_EXTENSION]: {} } } as ClientCapabilities;
}

/** The retry fields for a request to a 2026-07-28 upstream: its own state and the client's answers. */
function retryParams(relay: UpstreamRelay | undefined): Record<string, unknown> {
  const retry = relay?.retry;
  if (retry === undefined) return {};
  return {
    ...(retry.inputResponses !== undefined ? { inputResponses: { ...retry.inputResponses } } : {}),
    ...(retry.requestState !== undefined ? { requestState: retry.requestState } : {}),
  };
}

/** What an upstream's input-required answer asks, with the call's credential values redacted. */
function askedOf(result: InputRequiredResult, secrets: readonly string[]): UpstreamAsked {
  return {
    inputRequests: redactValue(result.inputRequests ?? {}, secrets) as Record<string, unknown>,
    ...(typeof result.requestState === 'string' ? { requestState: result.requestState } : {}),
  };
}

/** The capabilities a -32021 error from the server says the client lacks. */
function missingCapabilitiesOf(error: unknown): ClientCapabilities | undefined {
  if (!(error instanceof ProtocolError) || error.code !== MISSING_CAPABILITY) return undefined;
  const data = error.data as { requiredCapabilities?: unknown } | undefined;
  const required = data?.requiredCapabilities;
  return typeof required === 'object' && required !== null && !Array.isArray(required)
    ? (required as ClientCapabilities)
    : {};
}

/** The `_meta` and retry fields of a request outside tools/call to a 2026-07-28 upstream for a 2026-07-28 caller. */
function relayedParams(relay: UpstreamRelay | undefined): Record<string, unknown> {
  if (relay === undefined) return {};
  return { _meta: { [CLIENT_CAPABILITIES_META_KEY]: relay.clientCapabilities }, ...retryParams(relay) };
}

/**
 * The SDK v2 client drops a 2026-07-28 HTTP server's tools whose `x-mcp-header` declarations are
 * malformed from every listing, with a console warning and no record (SEP-2243). The same rule runs
 * first here, on each listing the SDK filters, so each such tool is known with its reason and reported
 * as skipped (an event, `/readyz`) instead of vanishing; the SDK then finds nothing to drop. Where the
 * SDK has no such filter (stdio, 2025-11-25) `importProblem` applies the same rule.
 */
function screenHeaderDeclarations(
  client: Client,
  excluded: Map<string, { readonly tool: McpTool; readonly reason: string }>,
): void {
  const sdk = client as unknown as {
    _excludeInvalidXMcpHeaderTools?: (result: { tools: McpTool[] }) => void;
  };
  const filter = sdk._excludeInvalidXMcpHeaderTools;
  // A later SDK without the method keeps its own behaviour.
  if (typeof filter !== 'function') return;
  sdk._excludeInvalidXMcpHeaderTools = (result) => {
    excluded.clear();
    result.tools = result.tools.filter((tool) => {
      const problem = mcpHeaderProblem(tool.inputSchema);
      if (problem !== undefined) excluded.set(String(tool.name), { tool, reason: problem });
      return problem === undefined;
    });
    filter.call(client, result);
  };
}
