// The dispatcher: finds the tool and the chain for a call, runs it (run.ts) and answers with a
// DispatchOutcome. It never throws for anything a model or gate did. Build-time checks live in
// tool-registry.ts, outcome assembly in outcome.ts.

import { EventEmitter } from 'eventemitter3';
import type { Chain } from './chain';
import { isChain } from './chain';
import { identityOf, isDecision, parseArgs } from './call-input';
import { canonicalJson } from './canonical';
import type { CheckInDecision, CheckInRequest } from './check-in';
import type { CallEnvironment } from './context';
import { callEnvironment } from './environment';
import type { ToolgateListeners } from './events';
import type { Identity } from './identity';
import { newId } from './ids';
import { refusedBeforeChain, type EarlyCall } from './outcome';
import type { DispatchOutcome, RefusedOutcome } from './outcomes';
import { refusalReason } from './refusal';
import { verifyCheckInRequest } from './resume';
import { runCall, type RunRequest } from './run';
import { TOOL_NAME_PATTERN, type Tool, type ToolArgs, type ToolSchema } from './tool';
import { pollutingKeyPath, unsafeKeyReason } from './unsafe-keys';
import { chainProblem, DispatcherConfigError, registerTools, type ToolRegistry } from './tool-registry';

export { DispatcherConfigError } from './tool-registry';

/** The model's request: a tool name and its args (an object, or the JSON string a model produced). */
export interface ToolCall {
  readonly toolName: string;
  readonly args?: unknown;
  readonly toolCallId?: string;
}

export interface DispatchOptions {
  readonly identity?: Identity;
  readonly signal?: AbortSignal;
  /**
   * The W3C trace context the call arrived with (an MCP request's `_meta.traceparent`), for a tracing
   * wrapper such as `@toolgate/otel` to parent its span on. The core passes it through and never reads it.
   */
  readonly traceContext?: TraceContext;
}

/** W3C Trace Context headers, as strings exactly as received. */
export interface TraceContext {
  readonly traceparent: string;
  readonly tracestate?: string;
}

/** What `resume` takes besides the request and the decision: no identity (the request carries it). */
export type ResumeOptions = Pick<DispatchOptions, 'signal' | 'traceContext'>;

export type ChainSource = Chain | ((identity: Identity | undefined) => Chain);

export type ToolgateEmitter = EventEmitter<ToolgateListeners>;

export interface DispatcherOptions {
  // Tools of any args type; each is checked again by assertTool at build.
  readonly tools: readonly Tool<never, unknown>[];
  /** One chain, or a function choosing the chain per identity (per-tenant policy). */
  readonly chain: ChainSource;
  /** Share an emitter between dispatchers; one is created otherwise. */
  readonly events?: ToolgateEmitter;
  /** Milliseconds since the epoch; inject a fixed clock for deterministic tests. */
  readonly clock?: () => number;
  /** Ids for calls dispatched without a `toolCallId`. */
  readonly callIds?: () => string;
  /**
   * Where a setup problem found at call time (a per-tenant chain that cannot serve the tools) is
   * reported, once per problem; `console.warn` by default. The refused outcome's `detail` says it too.
   */
  readonly warn?: (message: string) => void;
}

export interface Dispatcher {
  dispatch(call: ToolCall, options?: DispatchOptions): Promise<DispatchOutcome>;
  /** Verifies a paused call's request, then re-runs its chain from the top with the human's decision. */
  resume(
    request: CheckInRequest,
    decision: CheckInDecision,
    options?: ResumeOptions,
  ): Promise<DispatchOutcome>;
  /** What the model sees: name, description, inputSchema. Never `needs` or anything secret. */
  schemas(): ToolSchema[];
  /** Listens to a core event, or to a gate event a middleware emits with `ctx.emit` (`'<area>.<what>'`). */
  on<K extends keyof ToolgateListeners>(type: K, listener: ToolgateListeners[K]): Dispatcher;
  off<K extends keyof ToolgateListeners>(type: K, listener: ToolgateListeners[K]): Dispatcher;
  readonly events: ToolgateEmitter;
  readonly tools: ReadonlyMap<string, Tool>;
}

/** What every call of one dispatcher shares. */
interface DispatcherCore {
  readonly registry: ToolRegistry;
  readonly env: CallEnvironment;
  readonly callIds: () => string;
  /** The chain for a caller, or the refusal when none is usable. */
  readonly chainFor: (identity: Identity | undefined, call: EarlyCall) => Chain | RefusedOutcome;
}

/**
 * Builds the dispatcher. Refuses, naming the tool, config that cannot be honored: duplicate names,
 * tool declarations that fail `assertTool`, and any gate whose `checkTool` objects.
 *
 * @example
 * const dispatcher = createDispatcher({ tools: [search], chain: canonicalChain({ permissions }) });
 * const outcome = await dispatcher.dispatch({ toolName: 'search', args: { query: 'refunds' } });
 */
export function createDispatcher(options: DispatcherOptions): Dispatcher {
  const chainSource = checkedChainSource(options);
  const registry = registerTools(options.tools as readonly unknown[]);
  const emitter: ToolgateEmitter = options.events ?? new EventEmitter<ToolgateListeners>();
  const env = callEnvironment(emitter, options.clock ?? Date.now);
  const core: DispatcherCore = {
    registry,
    env,
    callIds: options.callIds ?? (() => newId('call')),
    chainFor: chainResolver(chainSource, registry, env, options.warn ?? ((message) => console.warn(message))),
  };
  const dispatcher: Dispatcher = {
    dispatch: (call, opts = {}) => dispatchCall(core, call, opts),
    resume: (request, decision, opts = {}) => resumeCall(core, request, decision, opts),
    schemas: () => registry.schemas.map((s) => ({ ...s })),
    on(type, listener) {
      emitter.on(type, listener as never);
      return dispatcher;
    },
    off(type, listener) {
      emitter.off(type, listener as never);
      return dispatcher;
    },
    events: emitter,
    tools: registry.tools,
  };
  return dispatcher;
}

function checkedChainSource(options: DispatcherOptions): ChainSource {
  if (typeof options !== 'object' || options === null)
    throw new DispatcherConfigError('createDispatcher: expected { tools, chain }.');
  if (!Array.isArray(options.tools))
    throw new DispatcherConfigError('createDispatcher: tools must be an array of Tool.');
  const { chain } = options;
  if (!isChain(chain) && typeof chain !== 'function') {
    throw new DispatcherConfigError(
      'createDispatcher: chain must be a Chain (createChain / canonicalChain) or a function (identity) => Chain.',
    );
  }
  return chain;
}

/**
 * Picks the chain per call. A single chain is checked against the tools at build (and throws there);
 * a chain function's chains are checked the first time each is returned, and a call under one that
 * fails is refused with an operator event.
 */
function chainResolver(
  source: ChainSource,
  registry: ToolRegistry,
  env: CallEnvironment,
  warn: (message: string) => void,
): DispatcherCore['chainFor'] {
  const checked = new WeakMap<Chain, string | null>();
  const warned = new Set<string>();
  const warnOnce = (message: string) => {
    if (warned.has(message)) return;
    warned.add(message);
    try {
      warn(message);
    } catch {
      // A logger that throws must not turn a refusal into a crash.
    }
  };
  if (isChain(source)) {
    const problem = chainProblem(source, registry.tools.values());
    if (problem !== undefined) throw new DispatcherConfigError(`createDispatcher: ${problem}.`);
    return () => source;
  }
  const rejected = (call: EarlyCall, chainId: string, problem: string, code: string, what: string) => {
    if (env.wants('chain.rejected')) {
      const { toolName, toolCallId } = call;
      env.emit('chain.rejected', {
        type: 'chain.rejected',
        toolName,
        toolCallId,
        chainId,
        problem,
        at: env.now(),
      });
    }
    const detail = `toolgate: the chain for this caller${chainId === '' ? '' : ` (${chainId})`} cannot be used: ${problem}`;
    warnOnce(detail);
    const refused = refusedBeforeChain(
      env,
      { ...call, chainId },
      code,
      refusalReason(`'${call.toolName}' cannot run because ${what}`, 'Retrying will not help'),
    );
    return { ...refused, detail };
  };
  return (identity, call) => {
    let chain: Chain;
    try {
      chain = source(identity);
      if (!isChain(chain)) throw new TypeError('the chain function did not return a Chain');
    } catch (error) {
      const problem = `the chain function failed: ${error instanceof Error ? error.name : typeof error}`;
      return rejected(call, '', problem, 'CHAIN_UNAVAILABLE', 'no policy is available for this caller');
    }
    let problem = checked.get(chain);
    if (problem === undefined) {
      problem = chainProblem(chain, registry.tools.values()) ?? null;
      checked.set(chain, problem);
    }
    if (problem === null) return chain;
    return rejected(call, chain.id, problem, 'CHAIN_MISCONFIGURED', "this caller's policy is misconfigured");
  };
}

/** Not async itself: a call's only async frame is its run. Whatever throws here still rejects. */
function dispatchCall(core: DispatcherCore, call: ToolCall, opts: DispatchOptions): Promise<DispatchOutcome> {
  try {
    const answer = dispatchSync(core, call, opts);
    return 'kind' in answer ? Promise.resolve(answer) : runCall(core.env, answer);
  } catch (error) {
    return Promise.reject(error);
  }
}

/** The run a call asks for, or the refusal it gets before any chain runs. */
function dispatchSync(
  core: DispatcherCore,
  call: ToolCall,
  opts: DispatchOptions,
): RunRequest | RefusedOutcome {
  const safeCall = (typeof call === 'object' && call !== null ? call : {}) as Partial<ToolCall>;
  const toolCallId =
    typeof safeCall.toolCallId === 'string' && safeCall.toolCallId !== ''
      ? safeCall.toolCallId
      : core.callIds();
  const toolName = typeof safeCall.toolName === 'string' ? safeCall.toolName : '';
  const identity = identityOf(opts.identity);
  const chain = core.chainFor(identity, { toolName, toolCallId, chainId: '' });
  if (!isChain(chain)) return chain;
  const tool = core.registry.tools.get(toolName);
  if (tool === undefined) {
    const early = { toolName, toolCallId, chainId: chain.id };
    const named = TOOL_NAME_PATTERN.test(toolName)
      ? `there is no tool named '${toolName}'`
      : 'the requested tool name is not valid';
    const known = core.registry.knownNames.join(', ') || '(no tools)';
    return refusedBeforeChain(core.env, early, 'UNKNOWN_TOOL', refusalReason(named, `Call one of: ${known}`));
  }
  const args = parseArgs(safeCall.args);
  if (typeof args === 'string') {
    const early = { toolName, toolCallId, chainId: chain.id, toolSource: tool.source };
    const reason = refusalReason(
      `the arguments for '${toolName}' ${args}`,
      'Call it again with a JSON object of arguments',
    );
    return refusedBeforeChain(core.env, early, 'BAD_ARGS', reason);
  }
  let polluting: string | undefined;
  try {
    polluting = pollutingKeyPath(args);
  } catch {
    // A nested getter or proxy trap threw: args that cannot be read cannot run.
    polluting = '';
  }
  if (polluting !== undefined) {
    const early = { toolName, toolCallId, chainId: chain.id, toolSource: tool.source };
    if (polluting === '') {
      const reason = refusalReason(
        `the arguments for '${toolName}' could not be read`,
        'Call it again with a JSON object of arguments',
      );
      return refusedBeforeChain(core.env, early, 'BAD_ARGS', reason);
    }
    return refusedBeforeChain(core.env, early, 'UNSAFE_ARG_KEY', unsafeKeyReason(toolName, polluting));
  }
  return { tool, chain, args, toolCallId, identity, signal: opts.signal, resume: undefined };
}

const RESUME_PROBLEMS: Record<string, string> = {
  'no-service': `this approval cannot be checked because the policy has no check-in key`,
  malformed: `this approval request is malformed`,
  signature: `this approval request was not issued by this deployment or was altered`,
  expired: `this approval request has expired`,
};

async function resumeCall(
  core: DispatcherCore,
  request: CheckInRequest,
  decision: CheckInDecision,
  opts: ResumeOptions,
): Promise<DispatchOutcome> {
  const shape = request as Partial<CheckInRequest> | null;
  const toolName = typeof shape?.toolName === 'string' ? shape.toolName : '';
  const toolCallId = typeof shape?.toolCallId === 'string' ? shape.toolCallId : core.callIds();
  const identity = identityOf(shape?.identity);
  const chain = core.chainFor(identity, { toolName, toolCallId, chainId: '', resumed: true });
  if (!isChain(chain)) return chain;
  const refuse = (code: string, reason: string) =>
    resumeRefused(core.env, shape, chain, toolCallId, code, reason);
  if (!isDecision(decision)) {
    const reason = refusalReason(
      'the decision given to resume is not a check-in decision',
      'Build it with checkInApproved or checkInDeclined',
    );
    return refuse('CHECKIN_BAD_DECISION', reason);
  }
  const service = chain.pauseService();
  const problem =
    service === undefined
      ? 'no-service'
      : await verifyCheckInRequest(request, service.signer, core.env.now());
  if (problem !== undefined) {
    const what = `'${toolName || 'the tool'}' did not run: ${RESUME_PROBLEMS[problem]}`;
    const code = `CHECKIN_${problem.toUpperCase().replace('-', '_')}`;
    return refuse(code, refusalReason(what, 'Ask for a new approval'));
  }
  const tool = core.registry.tools.get(request.toolName);
  if (tool === undefined || tool.source !== request.toolSource) {
    const what = `the approved tool '${toolName}' is not served here`;
    return refuse('UNKNOWN_TOOL', refusalReason(what, 'Ask for a new approval'));
  }
  // The signature covers the canonical JSON of the request, which look-alikes also match (-0 for 0,
  // NaN for null, a toJSON object for a string): run exactly what was signed, not the object handed in.
  // An approval with changes runs the person's args instead, through the whole chain again.
  const changed = decision.approved ? decision.args : undefined;
  let args: Readonly<ToolArgs>;
  try {
    args = Object.freeze(JSON.parse(canonicalJson(changed ?? request.args)) as ToolArgs);
  } catch {
    const reason = refusalReason(
      'the changed arguments given with the approval cannot be read as JSON',
      'Approve again with a JSON object of arguments',
    );
    return refuse('CHECKIN_BAD_DECISION', reason);
  }
  const resume = { request, decision, answered: false };
  const { signal } = opts;
  return runCall(core.env, { tool, chain, args, toolCallId: request.toolCallId, identity, signal, resume });
}

/** A resume refused before its chain ran: refused in check-in's name, with a checkin.resolved event. */
function resumeRefused(
  env: CallEnvironment,
  shape: Partial<CheckInRequest> | null,
  chain: Chain,
  toolCallId: string,
  code: string,
  reason: string,
): RefusedOutcome {
  const toolName = typeof shape?.toolName === 'string' ? shape.toolName : '';
  const call = { toolName, toolCallId, chainId: chain.id, resumed: true };
  const outcome = refusedBeforeChain(env, call, code, reason, 'check-in');
  if (env.wants('checkin.resolved')) {
    env.emit('checkin.resolved', {
      type: 'checkin.resolved',
      toolName,
      toolCallId,
      chainId: chain.id,
      requestId: typeof shape?.id === 'string' ? shape.id : '',
      asker: typeof shape?.asker === 'string' ? shape.asker : '',
      approved: false,
      failure: code,
      at: env.now(),
    });
  }
  return outcome;
}
