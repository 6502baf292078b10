// mcpServe: governed tools behind an MCP server. tools/call runs the same dispatcher and chain an
// agent uses; identity comes from the transport's auth info, never from what the client claims.

import { randomBytes } from 'node:crypto';
import {
  MissingRequiredClientCapabilityError,
  InMemoryServerEventBus,
  LOG_LEVEL_META_KEY,
  PROTOCOL_VERSION_META_KEY,
  Server,
  type ServerEventBus,
  type AuthInfo,
  type CallToolRequest,
  type CallToolResult,
  type LoggingLevel,
  type InputRequiredResult,
  type Tool as McpTool,
  type ServerContext,
  type Transport,
} from '@modelcontextprotocol/server';
import {
  createDispatcher,
  isChain,
  listableTools,
  newId,
  refusalReason,
  type Chain,
  type ChainSource,
  type Dispatcher,
  type DispatchOutcome,
  type Identity,
  type PausedOutcome,
  type Tool,
  type ToolgateEmitter,
  type TraceContext,
} from '@toolgate/core';
import { listedExtrasOf, type McpClient, type McpUpstream } from './client';
import { approvalForm, askPerson, canElicitForm } from './elicit';
import { checkInStates, type CheckInStateClaims } from './check-in-state';
import {
  checkInFormTooLong,
  checkInLoop,
  checkInStateInvalid,
  checkInStatesFull,
  checkInUnavailable,
  MAX_CHECK_IN_ROUNDS,
  settleModernCheckIn,
} from './modern-check-in';
import {
  declaredCapabilities,
  echoesUpstreamState,
  relayedInputRequired,
  STATE_INVALID_CODE,
  upstreamRetryOf,
} from './input-relay';
import { assertDistinctPrefixes, resourceWatch, serveProxied } from './proxied';
import { instructionsPerCaller, joinedInstructions } from './instructions';
import { listenGate, type ListenGate } from './listen';
import { openDownstream } from './relay';
import { ServedDownstream } from './served-downstream';
import { callToolResult, refusedBy, refusedResult, upstreamErrorResult, type McpSettled } from './results';
import {
  dispatchAsTask,
  ownerOf,
  ServedTasks,
  serveTaskMethods,
  taskAsked,
  taskCapable,
  TASKS_EXTENSION,
  type McpTaskControl,
  type RunningTask,
  type ServedTasksOptions,
} from './tasks';
import { DEFAULT_UPSTREAM_STATE_TTL_MS, upstreamStates, type UpstreamStateBinding } from './upstream-state';
import { parkedCalls } from './parked-calls';

/** What the SDK hands a request handler: the request's id, signal and `_meta`, the HTTP auth info, the session id. */
export type McpRequestExtra = ServerContext;

export interface McpServeOptions {
  /** The server's name and version, as the client sees them at initialize. */
  readonly name: string;
  readonly version: string;
  /** The policy: one chain, or `(identity) => Chain` per tenant. Its check-in key signs pauses. */
  /** Required unless `scope` gives each caller its own. */
  readonly chain?: ChainSource;
  /** Who is calling, from the transport's auth info (e.g. a verified bearer token). */
  readonly identityFrom?: (
    authInfo: AuthInfo | undefined,
    extra: McpRequestExtra,
  ) => Identity | undefined | Promise<Identity | undefined>;
  /** Share an emitter with other dispatchers; one is created otherwise. */
  readonly events?: ToolgateEmitter;
  /**
   * Shown to the client at initialize (and server/discover), followed by each upstream's own, under
   * its name: those of the upstreams this caller is served.
   */
  readonly instructions?: string;
  /** How long a person at the client may take to answer a check-in; default 10 minutes. */
  readonly checkInTimeoutMs?: number;
  /**
   * Wraps the dispatcher every tools/call goes through, e.g. `(d) => otel(d, { tracer })` from
   * `@toolgate/otel`. The wrapper must keep the Dispatcher interface; `served.dispatcher` is the wrapped one.
   */
  readonly instrument?: (dispatcher: Dispatcher) => Dispatcher;
  /**
   * The MCP clients whose resources and prompts are served too (under their prefixes, governed by the
   * chain's permission checker), and whose list changes reach downstream clients: a changed tool list
   * is imported again (through the pins) and the served tools follow it.
   */
  readonly upstreams?: readonly (McpClient | McpUpstream)[];
  /**
   * What this caller is served, asked on every request, for a host whose tools depend on the caller
   * and change while serving (a gateway's tenants, reloaded). With it, `tools` is empty and `chain`
   * unused: each request uses the scope's dispatcher, chain, listed tools and upstreams; a refusal
   * answers the call (and lists nothing) without running anything.
   */
  readonly scope?: (identity: Identity | undefined) => McpServeScope | McpServeRefusal;
  /**
   * Admits a tools/call before it runs: the release to call when it ended, or a refusal (shutting
   * down). A call that parks an upstream's call for the client's retry stays admitted until that call
   * is taken or ended; the retry says so (`continuesParkedCall`), as it finishes work in flight.
   */
  readonly admit?: (call: McpAdmission) => (() => void) | McpServeRefusal;
  /**
   * Settles a paused call instead of asking only the person at the client (a gateway also holds it
   * for its inbox and uses earlier grants). Default: approval over elicitation, refused without it;
   * a 2026-07-28 client is answered input-required with the approval form and a sealed state, and
   * its retry carries the answer out (modern-check-in.ts).
   */
  readonly settlePaused?: (first: PausedOutcome, call: McpPausedCall) => Promise<McpSettled>;
  /**
   * Reads the `requestState` a 2026-07-28 client echoes on its retry, before anything runs: a refusal
   * answers the call (nothing is dispatched), else `state` reaches `settlePaused` as `requestState`.
   * Without it, and without `settlePaused`, a state is this server's own check-in state or refused;
   * with `settlePaused` alone, an echoed state is ignored.
   */
  readonly readRequestState?: (
    requestState: string,
    call: { readonly identity: Identity | undefined; readonly toolName: string },
  ) => McpServeRefusal | { readonly state: unknown } | Promise<McpServeRefusal | { readonly state: unknown }>;
  /** Told once about every tools/call, after its answer is decided (a gateway logs it). */
  readonly onCall?: (report: McpCallReport) => void;
  /**
   * Settles a paused call whose client asked for a task (see tasks.ts): the task is handed out at
   * once, in `input_required`, and this decides it in the background. Without it, a pause is answered
   * as for a client that asked for no task.
   */
  readonly settlePausedTask?: (
    first: PausedOutcome,
    call: McpPausedCall,
    task: McpTaskControl,
  ) => Promise<McpSettled>;
  /** How tasks are kept (TTL, the cap per caller, the polling interval). */
  readonly tasks?: ServedTasksOptions;
  /**
   * The secret an upstream's `requestState` is sealed under when its input-required answer is
   * relayed to a 2026-07-28 client, and the default check-in flow's own (AES-256-GCM under a key
   * derived from it per use). Give every process of a host served behind a load balancer the same
   * one (and, for check-ins, one shared check-in store); default a random secret per `mcpServe`.
   */
  readonly requestStateKey?: string | Uint8Array;
  /**
   * How long the call of a 2025-era upstream that asked a 2026-07-28 client mid-call stays parked in
   * this process for the client's retry before it is ended (its question declined, its call
   * cancelled); default the relayed state's 10 minutes.
   */
  readonly parkedCallMs?: number;
  /** How many such calls are parked at once at most; beyond it a question is declined. Default 1000. */
  readonly maxParkedCalls?: number;
}

/** What `McpServeOptions.admit` is told of a tools/call. */
export interface McpAdmission {
  /** The call retries, with the client's answers, an upstream call parked in this process. */
  readonly continuesParkedCall: boolean;
}

/** What one caller is served (see `McpServeOptions.scope`). */
export interface McpServeScope {
  readonly dispatcher: Dispatcher;
  readonly chain: Chain;
  /** The tools this caller's tools/list shows. */
  listed(identity: Identity | undefined): readonly McpListedTool[];
  /** The upstreams whose resources and prompts this caller sees. */
  readonly upstreams: readonly McpUpstream[];
  /** The upstream a tool comes from, for the call report. */
  sourceOf?(toolName: string): string | undefined;
  /** Keeps what the scope uses open while a call runs; returns the release. */
  hold?(): () => void;
}

/** A refusal decided outside the chain, before anything runs. */
export interface McpServeRefusal {
  readonly refused: {
    readonly gate: string;
    readonly code: string;
    readonly retryable: boolean;
    /** Sentence for the model, as `refusalReason` builds it. */
    readonly reason: string;
  };
}

/** A paused call, as `settlePaused` receives it. */
export interface McpPausedCall {
  readonly server: Server;
  readonly dispatcher: Dispatcher;
  readonly identity: Identity | undefined;
  readonly extra: McpRequestExtra;
  readonly traceContext?: TraceContext;
  /** How long a person at the client may take to answer. */
  readonly checkInTimeoutMs: number;
  /** What `readRequestState` made of the state this retry echoed, when it echoed one. */
  readonly requestState?: unknown;
}

/** One tools/call as it ended. Names and codes only: no argument value. */
export interface McpCallReport {
  readonly identity: Identity | undefined;
  readonly toolName: string;
  /** The upstream the tool comes from, when the scope knows it. */
  readonly upstream?: string;
  /** The chain's first outcome; absent when the call was refused before the chain. */
  readonly first?: DispatchOutcome;
  readonly settled: McpSettled;
  readonly durationMs: number;
}

/** A tool as tools/list shows it. */
export interface McpListedTool {
  readonly name: string;
  readonly title?: string;
  readonly description: string;
  readonly inputSchema: { readonly type: 'object'; readonly [key: string]: unknown };
  readonly outputSchema?: Readonly<Record<string, unknown>>;
  readonly annotations?: Readonly<Record<string, unknown>>;
  readonly execution?: unknown;
  readonly icons?: readonly unknown[];
  readonly _meta?: Readonly<Record<string, unknown>>;
}

export interface McpServed {
  /** An SDK server over the dispatcher, ready for one `connect(transport)`. */
  readonly server: Server;
  /** The dispatcher tools/call goes through now; rebuilt when an upstream's tool list changes. */
  readonly dispatcher: Dispatcher;
  /** Another SDK server over the same dispatcher: one per connection (each HTTP session). */
  createServer(): Server;
  /**
   * Connects to a transport, as the SDK's `server.connect(transport)`: through `server` while it is free,
   * else through a new server over the same dispatcher (an SDK server serves one connection at a time).
   */
  connect(transport: Transport): Promise<void>;
  /** Tells every connected client that a list changed (a host that swaps its tools calls this). */
  listChanged(list: 'tools' | 'resources' | 'prompts'): void;
  /**
   * Where list changes are published for 2026-07-28 clients, which hold no session to notify but a
   * `subscriptions/listen` stream; `serveHttp` serves its streams from this bus.
   */
  readonly bus: ServerEventBus;
  /**
   * Governs a 2026-07-28 `subscriptions/listen` before the SDK answers it from `bus` (`serveHttp` calls
   * it): each resource it names is checked as reading it and watched upstream while the stream is open.
   */
  readonly governListen?: ListenGate;
  /** Calls of 2025-era upstreams parked now for a 2026-07-28 client's retry. */
  readonly parkedCalls: number;
  /** Closes every server this created. */
  close(): Promise<void>;
}

type ListedTool = {
  name: string;
  description: string;
  inputSchema: { type: 'object' };
  [field: string]: unknown;
};

/** Configuration `mcpServe` cannot honor. Names the tool or option and the fix. */
export class McpServeConfigError extends Error {
  override readonly name = 'McpServeConfigError';
  readonly code = 'ERR_MCP_SERVE_CONFIG';
}

const DEFAULT_CHECK_IN_TIMEOUT_MS = 10 * 60 * 1000;

/**
 * Serves `tools` over MCP through `chain`.
 *
 * @example
 * const served = mcpServe([search, refund], { name: 'billing', version: '1.0.0', chain: canonicalChain({ permissions, checkInKey }) });
 * await serveStdio(served);
 */
export function mcpServe(tools: readonly Tool<never, unknown>[], options: McpServeOptions): McpServed {
  if (typeof options !== 'object' || options === null)
    throw new McpServeConfigError('mcpServe: expected options { name, version, chain }.');
  const { name, version, identityFrom } = options;
  for (const [field, value] of [
    ['name', name],
    ['version', version],
  ] as const) {
    if (typeof value !== 'string' || value.trim() === '')
      throw new McpServeConfigError(`mcpServe: '${field}' must be a non-empty string.`);
  }
  if ('checkInKey' in options)
    throw new McpServeConfigError(
      `mcpServe '${name}': the check-in key belongs to the chain; pass canonicalChain({ checkInKey }) as 'chain'.`,
    );
  if (identityFrom !== undefined && typeof identityFrom !== 'function')
    throw new McpServeConfigError(
      `mcpServe '${name}': 'identityFrom' must be a function (authInfo, extra) => Identity.`,
    );
  const checkInTimeoutMs = options.checkInTimeoutMs ?? DEFAULT_CHECK_IN_TIMEOUT_MS;
  if (!Number.isInteger(checkInTimeoutMs) || checkInTimeoutMs <= 0)
    throw new McpServeConfigError(`mcpServe '${name}': 'checkInTimeoutMs' must be a positive integer.`);
  const { instrument } = options;
  if (instrument !== undefined && typeof instrument !== 'function')
    throw new McpServeConfigError(
      `mcpServe '${name}': 'instrument' must be a function (dispatcher) => Dispatcher.`,
    );
  for (const tool of tools) {
    const schema = (tool as { schema?: { name?: unknown; inputSchema?: { type?: unknown } } }).schema;
    if (schema?.inputSchema !== undefined && schema.inputSchema.type !== 'object') {
      throw new McpServeConfigError(
        `mcpServe '${name}': tool '${String(schema.name)}' has an inputSchema that is not type 'object'; MCP tools take an object of arguments.`,
      );
    }
  }
  if (options.scope === undefined && options.chain === undefined)
    throw new McpServeConfigError(
      `mcpServe '${name}': expected 'chain' (one chain, or (identity) => Chain per tenant), or 'scope'.`,
    );
  if (options.scope !== undefined && typeof options.scope !== 'function')
    throw new McpServeConfigError(`mcpServe '${name}': 'scope' must be a function (identity) => scope.`);
  const upstreams = options.upstreams ?? [];
  const { requestStateKey } = options;
  const keyUsable =
    requestStateKey === undefined ||
    ((typeof requestStateKey === 'string' || requestStateKey instanceof Uint8Array) &&
      requestStateKey.length >= 16);
  if (!keyUsable)
    throw new McpServeConfigError(
      `mcpServe '${name}': 'requestStateKey' must be a string or bytes of at least 16 characters (32 random bytes is right).`,
    );
  // One secret, two domain-separated keys: upstream states, and check-ins asked at a 2026-07-28 client.
  const stateSecret = requestStateKey ?? randomBytes(32);
  const states = upstreamStates(stateSecret);
  // Check-ins asked at 2026-07-28 clients are this server's own only when no host settles pauses.
  const ownCheckIns = options.settlePaused === undefined ? checkInStates(stateSecret) : undefined;
  for (const [field, value] of [
    ['parkedCallMs', options.parkedCallMs],
    ['maxParkedCalls', options.maxParkedCalls],
  ] as const)
    if (value !== undefined && (!Number.isInteger(value) || value <= 0))
      throw new McpServeConfigError(`mcpServe '${name}': '${field}' must be a positive integer.`);
  const parking = parkedCalls({
    waitMs: options.parkedCallMs ?? DEFAULT_UPSTREAM_STATE_TTL_MS,
    ...(options.maxParkedCalls !== undefined ? { max: options.maxParkedCalls } : {}),
  });
  try {
    assertDistinctPrefixes(name, upstreams);
  } catch (error) {
    throw new McpServeConfigError((error as Error).message);
  }
  function build(list: readonly Tool<never, unknown>[]): {
    dispatcher: Dispatcher;
    listed: ListedTool[];
    tools: readonly Tool<never, unknown>[];
  } {
    const created = createDispatcher({
      tools: list,
      chain: options.chain!,
      ...(options.events !== undefined ? { events: options.events } : {}),
    });
    const wrapped = instrument === undefined ? created : instrument(created);
    if (
      typeof wrapped !== 'object' ||
      wrapped === null ||
      typeof wrapped.dispatch !== 'function' ||
      typeof wrapped.resume !== 'function'
    )
      throw new McpServeConfigError(
        `mcpServe '${name}': 'instrument' must return a Dispatcher (with dispatch and resume).`,
      );
    const byName = new Map(list.map((tool) => [tool.schema.name, tool]));
    return {
      dispatcher: wrapped,
      tools: list,
      listed: created.schemas().map((schema) => {
        const tool = byName.get(schema.name);
        const extras = tool === undefined ? undefined : listedExtrasOf(tool);
        return {
          name: schema.name,
          ...(extras?.title !== undefined ? { title: extras.title } : {}),
          description: schema.description,
          inputSchema: schema.inputSchema as { type: 'object' },
          ...(extras?.outputSchema !== undefined ? { outputSchema: extras.outputSchema } : {}),
          ...(extras?.annotations !== undefined ? { annotations: extras.annotations } : {}),
          ...(extras?.execution !== undefined ? { execution: extras.execution } : {}),
          ...(extras?.icons !== undefined ? { icons: extras.icons } : {}),
          ...(extras?._meta !== undefined ? { _meta: extras._meta } : {}),
        };
      }),
    };
  }
  const { scope } = options;
  let current = scope === undefined ? build(tools) : undefined;

  // A tool some middleware refuses this identity whatever the args (a policy deny rule) is left out;
  // a caller whose identity or chain cannot be worked out sees nothing rather than everything.
  async function listedFor(extra: McpRequestExtra): Promise<readonly (ListedTool | McpListedTool)[]> {
    try {
      const identity = await identityFrom?.(extra.http?.authInfo, extra);
      if (scope !== undefined) {
        const scoped = scope(identity);
        return 'refused' in scoped ? [] : scoped.listed(identity);
      }
      const { listed, tools: listedTools } = current!;
      const chain = chainFor(identity);
      const visible = new Set(listableTools(listedTools, chain, identity).map((tool) => tool.schema.name));
      return listed.filter((tool) => visible.has(tool.name));
    } catch {
      return [];
    }
  }
  let served: readonly Tool<never, unknown>[] = tools;
  const servers = new Set<Server>();
  const tasks = new ServedTasks(options.tasks);
  const watch = resourceWatch();
  // The upstreams each connection's caller was last served (a gateway's tenant), for what it notifies.
  const callerUpstreams = new WeakMap<Server, readonly McpUpstream[]>();
  // The log level each 2025-11-25 connection set; a 2026-07-28 request carries its own.
  const logLevels = new WeakMap<Server, LoggingLevel>();
  const bus = new InMemoryServerEventBus();
  const announce = (list: 'tools' | 'resources' | 'prompts'): void => {
    bus.publish({ kind: `${list}_list_changed` });
    for (const server of servers) {
      const sent =
        list === 'tools'
          ? server.sendToolListChanged()
          : list === 'resources'
            ? server.sendResourceListChanged()
            : server.sendPromptListChanged();
      sent.catch(() => undefined);
    }
  };

  // An upstream's tool list changed (or a pin was accepted): import it again and serve what it has now.
  async function refreshTools(upstream: McpClient): Promise<void> {
    let fresh: Tool[];
    try {
      fresh = await upstream.tools();
    } catch {
      return;
    }
    const next = [
      ...served.filter((tool) => tool.source !== upstream.name),
      ...(fresh as Tool<never, unknown>[]),
    ];
    try {
      current = build(next);
      served = next;
    } catch {
      // A list that cannot be served (a name now collides) leaves the last good one in place.
      return;
    }
    announce('tools');
  }
  const unsubscribers = upstreams.map((upstream) =>
    upstream.subscribe((event) => {
      if (event.type !== 'mcp.list.changed') return;
      if (event.list === 'tools') {
        if ('tools' in upstream) void refreshTools(upstream);
        return;
      }
      announce(event.list);
    }),
  );

  // Approval over elicitation, the only way a bare MCP server can ask a person mid-call.
  async function settleByElicitation(first: PausedOutcome, call: McpPausedCall): Promise<McpSettled> {
    const { server, dispatcher, identity, extra, traceContext } = call;
    let outcome: DispatchOutcome = first;
    for (let round = 0; outcome.kind === 'paused' && round < MAX_CHECK_IN_ROUNDS; round++) {
      if (!canElicitForm(server)) {
        await revoke(outcome.checkIn.id, identity);
        return checkInUnavailable(outcome.checkIn);
      }
      const shown = approvalForm(outcome.checkIn);
      if (shown.form === undefined) {
        await revoke(outcome.checkIn.id, identity);
        return checkInFormTooLong(outcome.checkIn, shown.tooLong);
      }
      let decision;
      try {
        decision = await askPerson(server, outcome.checkIn, identity?.principal ?? 'mcp-client', {
          relatedRequestId: extra.mcpReq.id,
          signal: extra.mcpReq.signal,
          timeoutMs: call.checkInTimeoutMs,
        });
      } catch {
        await revoke(outcome.checkIn.id, identity);
        return refusedBy(
          outcome.checkIn.asker,
          'CHECKIN_NO_DECISION',
          refusalReason(
            `no decision on '${outcome.toolName}' came back from the person at the MCP client`,
            'Retrying may help once they are there',
          ),
          true,
        );
      }
      outcome = await dispatcher.resume(outcome.checkIn, decision, {
        signal: extra.mcpReq.signal,
        ...(traceContext !== undefined ? { traceContext } : {}),
      });
    }
    if (outcome.kind === 'paused') {
      await revoke(outcome.checkIn.id, identity);
      return checkInLoop(outcome.checkIn);
    }
    return { kind: 'outcome', outcome, via: 'elicitation' };
  }

  function chainFor(identity: Identity | undefined): Chain {
    const source = options.chain!;
    return isChain(source) ? source : source(identity);
  }

  // The store the caller's chain keeps check-ins in.
  const checkInStoreOf = (identity: Identity | undefined) =>
    (scope !== undefined ? scopeOf(identity)?.chain : chainFor(identity))?.checkInStore;

  // A request nobody can answer any more should not wait in an approval queue until it expires.
  async function revoke(checkInId: string, identity: Identity | undefined): Promise<void> {
    try {
      await checkInStoreOf(identity)?.revoke(checkInId);
    } catch {
      // The request still expires on its own.
    }
  }

  // The upstream an unscoped tool comes from (its `source`), binding a relayed state to it.
  const sourceOf = (toolName: string): string | undefined =>
    current?.tools.find((tool) => tool.schema.name === toolName)?.source;

  const scopeOf = (identity: Identity | undefined): McpServeScope | undefined => {
    const scoped = scope?.(identity);
    return scoped === undefined || 'refused' in scoped ? undefined : scoped;
  };

  // Without a level set, a 2025-11-25 client gets every message (as an SDK server sends them); a
  // 2026-07-28 request without one wants none.
  function logLevelOf(server: Server, extra: McpRequestExtra): { logLevel?: LoggingLevel } {
    if (isModernRequest(extra)) {
      const level = extra.mcpReq.envelope?.[LOG_LEVEL_META_KEY as keyof typeof extra.mcpReq.envelope];
      return typeof level === 'string' ? { logLevel: level as LoggingLevel } : {};
    }
    return { logLevel: logLevels.get(server) ?? 'debug' };
  }

  // One tools/call: identity, admission, the scope's dispatcher, the chain, the pause, the report.
  async function call(
    server: Server,
    request: CallToolRequest,
    extra: McpRequestExtra,
  ): Promise<CallToolResult | InputRequiredResult> {
    const started = performance.now();
    const toolName = request.params.name;
    let identity: Identity | undefined;
    const report = (settled: McpSettled, first?: DispatchOutcome, upstream?: string) => {
      try {
        options.onCall?.({
          identity,
          toolName,
          ...(upstream !== undefined ? { upstream } : {}),
          ...(first !== undefined ? { first } : {}),
          settled,
          durationMs: Math.round((performance.now() - started) * 100) / 100,
        });
      } catch {
        // A failing report must not change the answer.
      }
    };
    const refuseBefore = (refusal: McpServeRefusal['refused']): CallToolResult => {
      const settled = refusedBy(refusal.gate, refusal.code, refusal.reason, refusal.retryable);
      report(settled);
      return refusedResult(settled);
    };
    try {
      identity = await identityFrom?.(extra.http?.authInfo, extra);
    } catch {
      return refuseBefore({
        gate: 'identity',
        code: 'UNIDENTIFIED',
        retryable: false,
        reason: refusalReason(
          `the caller of '${toolName}' could not be identified`,
          'Retrying will not help',
          'Reconnect with valid credentials',
        ),
      });
    }
    let dispatcher: Dispatcher;
    let scoped: McpServeScope | undefined;
    if (scope !== undefined) {
      const answer = scope(identity);
      if ('refused' in answer) return refuseBefore(answer.refused);
      scoped = answer;
      dispatcher = answer.dispatcher;
      callerUpstreams.set(server, answer.upstreams);
    } else dispatcher = current!.dispatcher;
    let requestState: unknown;
    const echoed = isModernRequest(extra) ? extra.mcpReq.requestState() : undefined;
    // A 2026-07-28 client's declared capabilities; its retry of an upstream's question, when it is one.
    const declared = declaredCapabilities(extra);
    // What a relayed state of this call is bound to; a 2025-11-25 call has none, and pays nothing.
    const binding: UpstreamStateBinding | undefined =
      declared === undefined
        ? undefined
        : {
            identity,
            method: 'tools/call',
            target: toolName,
            upstream: scoped?.sourceOf?.(toolName) ?? sourceOf(toolName) ?? '',
            args: request.params.arguments ?? {},
          };
    let retry;
    try {
      retry = binding === undefined ? undefined : upstreamRetryOf(states, extra, binding);
    } catch (error) {
      report(
        refusedBy(
          'mcp',
          STATE_INVALID_CODE,
          refusalReason(
            `the requestState sent with '${toolName}' is not this caller's for this call`,
            'Retrying with it will not help',
          ),
        ),
      );
      throw error;
    }
    // The state of a check-in this server asked at the client, opened for this very call and spent.
    let checkInRetry: CheckInStateClaims | undefined;
    if (typeof echoed === 'string' && !echoesUpstreamState(extra)) {
      if (options.readRequestState !== undefined) {
        const read = await options.readRequestState(echoed, { identity, toolName });
        if ('refused' in read) return refuseBefore(read.refused);
        requestState = read.state;
      } else if (ownCheckIns !== undefined) {
        const read = ownCheckIns.read(echoed, { identity, toolName, args: request.params.arguments ?? {} });
        if (!read.ok) {
          const settled =
            read.problem === 'full' ? checkInStatesFull(toolName) : checkInStateInvalid(toolName);
          report(settled);
          return refusedResult(settled);
        }
        checkInRetry = read.claims;
      }
    }
    const admitted = options.admit?.({ continuesParkedCall: retry?.parkedCall !== undefined });
    if (admitted !== undefined && typeof admitted !== 'function') return refuseBefore(admitted.refused);
    const release = scoped?.hold?.();
    // Only the tool name and arguments come from the client; of _meta, only the trace context is read,
    // and it decides no policy: it parents a tracing wrapper's span.
    const traceContext = traceContextOf(request.params._meta);
    // The call's own id ties an imported tool's upstream call to this request: its progress, its
    // elicitations and its error blocks come back here.
    const toolCallId = newId('mcp');
    let markStarted!: () => void;
    let toolRan = false;
    const toolStarted = new Promise<void>(
      (resolve) =>
        (markStarted = () => {
          toolRan = true;
          resolve();
        }),
    );
    let markUpstreamTask!: () => void;
    const upstreamTask = new Promise<void>((resolve) => (markUpstreamTask = resolve));
    // A 2026-07-28 client holding a task of ours for the call is asked an upstream task's questions
    // through it, once it is handed out (told undefined when the call is answered without one).
    const holdsTask = declared !== undefined && taskAsked(request, extra, true);
    let markRunning!: (task: RunningTask | undefined) => void;
    const running = new Promise<RunningTask | undefined>(
      (resolve) =>
        (markRunning = (task) => {
          // A paused call handed out as a task runs its tool under it once approved.
          if (task !== undefined && holdsTask) downstream.runsAsTask = true;
          resolve(task);
        }),
    );
    const downstream = new ServedDownstream({
      server,
      extra,
      toolName,
      identity,
      modern:
        declared === undefined
          ? undefined
          : { clientCapabilities: declared, parking, ...(retry !== undefined ? { retry } : {}) },
      canRequest: !isModernRequest(extra),
      logLevel: logLevelOf(server, extra).logLevel,
      traceContext,
      checkInTimeoutMs,
      started: markStarted,
      upstreamTask: markUpstreamTask,
      ...(holdsTask
        ? {
            askThroughTask: async (inputRequests: Readonly<Record<string, unknown>>, signal: AbortSignal) => {
              const task = await running;
              if (task === undefined)
                throw new Error('the call has no task of the client to ask its questions through');
              return task.ask(
                inputRequests,
                `'${toolName}' waits for answers to its MCP server's questions.`,
                signal,
              );
            },
          }
        : {}),
    });
    const close = openDownstream(toolCallId, downstream);
    const paused = (): McpPausedCall => ({
      server,
      dispatcher,
      identity,
      extra,
      ...(traceContext !== undefined ? { traceContext } : {}),
      checkInTimeoutMs,
      ...(requestState !== undefined ? { requestState } : {}),
    });
    /** The call parked an upstream call, which now holds what this request held. */
    let heldByParked = false;
    const answer = (settled: McpSettled, first: DispatchOutcome): CallToolResult | InputRequiredResult => {
      const source = scoped?.sourceOf?.(toolName);
      // A retry the chain did not let run leaves its parked call to nobody: it ends now, not at its bound.
      if (retry?.parkedCall !== undefined && !toolRan) parking.end(retry.parkedCall);
      // A call parked for a question this answer does not relay (an after-gate failed it otherwise).
      const parked = downstream.asked?.parkedCall;
      if (parked !== undefined && !(settled.kind === 'outcome' && settled.outcome.kind === 'failed'))
        parking.end(parked);
      // The upstream needs what the client did not declare: the client hears it as the upstream said it.
      if (downstream.missingCapabilities !== undefined) {
        report(missingCapability(toolName), first, source);
        throw new MissingRequiredClientCapabilityError({
          requiredCapabilities: downstream.missingCapabilities,
        });
      }
      if (
        settled.kind === 'outcome' &&
        settled.outcome.kind === 'failed' &&
        downstream.asked !== undefined &&
        declared !== undefined &&
        binding !== undefined
      ) {
        let result: InputRequiredResult;
        try {
          result = relayedInputRequired(states, binding, downstream.asked, declared);
        } catch (error) {
          report(missingCapability(toolName), first, source);
          throw error;
        }
        report({ kind: 'input-required', asker: 'upstream', result }, first, source);
        // The parked call is still in flight: it keeps this request's admission and runtime until taken or ended.
        const parkedId = downstream.asked.parkedCall;
        if (parkedId !== undefined && parking.holdOpen(parkedId, releaseHeld)) heldByParked = true;
        return result;
      }
      // A check-in this server asks at the client is reported by its id: the form shows every
      // argument, and the state is the client's to echo, neither the report's.
      report(
        ownCheckIns !== undefined && settled.kind === 'input-required' && settled.asker === undefined
          ? { ...settled, result: { resultType: 'input_required' } }
          : settled,
        first,
        source,
      );
      if (settled.kind === 'refused') return refusedResult(settled);
      if (settled.kind === 'input-required') return settled.result;
      const { outcome } = settled;
      if (outcome.kind === 'failed' && downstream.errorResult !== undefined)
        return upstreamErrorResult(downstream.errorResult) ?? callToolResult(outcome);
      return callToolResult(outcome);
    };
    const releaseHeld = () => {
      release?.();
      if (typeof admitted === 'function' && !detached) admitted();
    };
    const releaseAll = () => {
      close();
      if (!heldByParked) releaseHeld();
    };
    // A task outlives this request: what the call holds is released when the task ends.
    let detached = false;
    try {
      const dispatch = (signal: AbortSignal) =>
        dispatcher.dispatch(
          { toolName, args: request.params.arguments ?? {}, toolCallId },
          {
            ...(identity !== undefined ? { identity } : {}),
            signal,
            ...(traceContext !== undefined ? { traceContext } : {}),
          },
        );
      let first: DispatchOutcome;
      const modern = isModernRequest(extra);
      const owner = ownerOf(identity);
      if (taskAsked(request, extra, modern) && (await tasks.hasRoom(owner).catch(() => false))) {
        const settleTask = options.settlePausedTask;
        const capable = taskCapable(executionOf(toolName, identity, scoped));
        // Handed out as the tool starts: decided before it does.
        if (capable && holdsTask) downstream.runsAsTask = true;
        const asTask = await dispatchAsTask({
          tasks,
          owner,
          modern,
          capable,
          dispatch,
          started: toolStarted,
          upstreamTask,
          requestSignal: extra.mcpReq.signal,
          ...(settleTask !== undefined
            ? { settlePaused: (first, task) => settleTask(first, paused(), task) }
            : {}),
          finish: (settled, first) => answer(settled, first) as CallToolResult,
          release: releaseAll,
          running: markRunning,
        });
        if (asTask.kind === 'task') {
          detached = true;
          // A shutdown does not wait for a task (it may wait for a person): closing cancels it instead.
          if (typeof admitted === 'function') admitted();
          return asTask.result as unknown as CallToolResult;
        }
        first = asTask.first;
      } else {
        markRunning(undefined);
        first = await dispatch(extra.mcpReq.signal);
      }
      // The retry did not pause (the policy changed): the check-in its state names is answered by nobody.
      if (checkInRetry !== undefined && first.kind !== 'paused')
        await revoke(checkInRetry.checkInId, identity);
      const settled: McpSettled =
        first.kind !== 'paused'
          ? { kind: 'outcome', outcome: first }
          : options.settlePaused !== undefined
            ? await options.settlePaused(first, paused())
            : ownCheckIns !== undefined && isModernRequest(extra)
              ? await settleModernCheckIn(first, {
                  dispatcher,
                  identity,
                  toolName,
                  args: request.params.arguments ?? {},
                  declared: declared ?? {},
                  inputResponses: extra.mcpReq.inputResponses,
                  signal: extra.mcpReq.signal,
                  ...(traceContext !== undefined ? { traceContext } : {}),
                  store: checkInStoreOf(identity),
                  states: ownCheckIns,
                  ...(checkInRetry !== undefined ? { retry: checkInRetry } : {}),
                  revoke: (id) => revoke(id, identity),
                })
              : await settleByElicitation(first, paused());
      return answer(settled, first);
    } finally {
      markRunning(undefined);
      if (!detached) releaseAll();
    }
  }

  // The `execution` a tool is listed with for this caller (whether it may run as a task).
  function executionOf(
    toolName: string,
    identity: Identity | undefined,
    scoped: McpServeScope | undefined,
  ): unknown {
    const shown = scoped !== undefined ? scoped.listed(identity) : (current?.listed ?? []);
    return shown.find((tool) => tool.name === toolName)?.execution;
  }

  function createServer(): Server {
    const proxying = upstreams.length > 0 || scope !== undefined;
    // Fixed upstreams: their instructions as they gave them when this server is made (each session,
    // each 2026-07-28 request). Per caller, they are the caller's upstreams', answered per request below.
    const instructions =
      scope === undefined ? joinedInstructions(options.instructions, upstreams) : options.instructions;
    const server = new Server(
      { name, version },
      {
        capabilities: proxying
          ? {
              tools: { listChanged: true },
              resources: { listChanged: true, subscribe: true },
              prompts: { listChanged: true },
              completions: {},
              logging: {},
              ...TASK_CAPABILITIES,
            }
          : { tools: { listChanged: true }, ...TASK_CAPABILITIES },
        ...(instructions !== undefined ? { instructions } : {}),
      },
    );
    server.setRequestHandler('tools/list', async (_request, extra) => ({
      tools: (await listedFor(extra)).map((tool) => ({ ...tool }) as McpTool),
    }));
    const upstreamsFor = async (extra: McpRequestExtra): Promise<readonly McpUpstream[]> => {
      if (scope === undefined) return upstreams;
      try {
        const seen = scopeOf(await identityFrom?.(extra.http?.authInfo, extra))?.upstreams ?? [];
        callerUpstreams.set(server, seen);
        return seen;
      } catch {
        return [];
      }
    };
    if (scope !== undefined)
      instructionsPerCaller(server, async (extra) =>
        joinedInstructions(options.instructions, await upstreamsFor(extra)),
      );
    if (proxying)
      // A notification carries no credentials: the connection's changed roots go to the upstreams its
      // caller was last served, never to another tenant's.
      server.setNotificationHandler('notifications/roots/list_changed', async () => {
        const told = scope === undefined ? upstreams : (callerUpstreams.get(server) ?? []);
        await Promise.all(told.map((upstream) => upstream.rootsListChanged?.().catch(() => undefined)));
      });
    if (proxying)
      // The level applies to this connection's calls; the caller's upstreams are told too, for the
      // 2025-11-25 ones that log outside a request's own level.
      server.setRequestHandler('logging/setLevel', async (request, extra) => {
        const { level } = request.params;
        logLevels.set(server, level);
        await Promise.all(
          (await upstreamsFor(extra)).map((upstream) =>
            upstream.setLoggingLevel?.(level, extra.mcpReq.signal).catch(() => undefined),
          ),
        );
        return {};
      });
    if (scope !== undefined)
      serveProxied(server, {
        upstreams: upstreamsFor,
        watch,
        chain: (identity): Chain => {
          const scoped = scopeOf(identity);
          // Thrown, so the read is refused as unidentified rather than served without a chain.
          if (scoped === undefined) throw new Error('no scope for this caller');
          return scoped.chain;
        },
        identify: async (extra) => identityFrom?.(extra.http?.authInfo, extra),
        states,
      });
    else if (upstreams.length > 0)
      serveProxied(server, {
        upstreams,
        chain: options.chain!,
        identify: async (extra) => identityFrom?.(extra.http?.authInfo, extra),
        watch,
        states,
      });
    server.setRequestHandler('tools/call', (request, extra) => call(server, request, extra));
    serveTaskMethods(server, {
      tasks,
      identify: async (extra) => identityFrom?.(extra.http?.authInfo, extra),
      isModern: isModernRequest,
    });
    const previous = server.onclose;
    server.onclose = () => {
      servers.delete(server);
      watch.drop(server);
      previous?.();
    };
    servers.add(server);
    return server;
  }

  const identify = async (extra: McpRequestExtra) => identityFrom?.(extra.http?.authInfo, extra);
  const governListen =
    scope !== undefined
      ? listenGate(
          {
            upstreams: async (extra) => scopeOf(await identify(extra))?.upstreams ?? [],
            chain: (identity): Chain => {
              const scoped = scopeOf(identity);
              if (scoped === undefined) throw new Error('no scope for this caller');
              return scoped.chain;
            },
            identify,
            watch,
          },
          bus,
        )
      : upstreams.length > 0
        ? listenGate({ upstreams, chain: options.chain!, identify, watch }, bus)
        : undefined;

  const server = createServer();
  return {
    server,
    get dispatcher() {
      if (current === undefined)
        throw new McpServeConfigError(
          `mcpServe '${name}': served with 'scope', so each caller has its own dispatcher; ask the scope.`,
        );
      return current.dispatcher;
    },
    createServer,
    get parkedCalls() {
      return parking.size;
    },
    async connect(transport) {
      const free = server.transport === undefined ? server : createServer();
      servers.add(free);
      await free.connect(transport);
    },
    listChanged: announce,
    bus,
    ...(governListen !== undefined ? { governListen } : {}),
    async close() {
      for (const unsubscribe of unsubscribers) unsubscribe();
      watch.close();
      await tasks.close().catch(() => undefined);
      parking.close();
      await Promise.all([...servers].map((server) => server.close().catch(() => undefined)));
      servers.clear();
    },
  };
}

// Tasks on tools/call: the 2025-11-25 capability, and the 2026-07-28 extension.
const TASK_CAPABILITIES = {
  tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } },
  extensions: { [TASKS_EXTENSION]: {} },
};

/** Whether the request came in revision 2026-07-28 (it carries the per-request `_meta` envelope). */
export function isModernRequest(extra: McpRequestExtra): boolean {
  return (
    extra.mcpReq.envelope?.[PROTOCOL_VERSION_META_KEY as keyof typeof extra.mcpReq.envelope] !== undefined
  );
}

/** How a call the client cannot take part in ends, for the report: it did not declare what the upstream needs. */
const missingCapability = (toolName: string) =>
  refusedBy(
    'mcp',
    'MISSING_CLIENT_CAPABILITY',
    refusalReason(
      `'${toolName}' needs a capability the client did not declare`,
      'Retrying will not help until the client declares it',
    ),
  );

// W3C headers are short; anything longer is not a trace context worth carrying.
const MAX_TRACE_HEADER = 512;

/** `_meta.traceparent` (and `tracestate`) as sent, when they are strings of a sane length. */
function traceContextOf(meta: unknown): TraceContext | undefined {
  if (typeof meta !== 'object' || meta === null) return undefined;
  const { traceparent, tracestate } = meta as Record<string, unknown>;
  if (typeof traceparent !== 'string' || traceparent.length > MAX_TRACE_HEADER) return undefined;
  return typeof tracestate === 'string' && tracestate.length <= MAX_TRACE_HEADER
    ? { traceparent, tracestate }
    : { traceparent };
}
