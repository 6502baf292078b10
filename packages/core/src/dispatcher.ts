// The dispatcher: finds the tool and the chain, runs the composed onion around the executor, and
// turns whatever happened into a DispatchOutcome. It never throws for anything a model or gate did.

import { EventEmitter } from 'eventemitter3';
import type { Chain } from './chain';
import { isChain } from './chain';
import { canonicalJson } from './canonical';
import type { CheckInDecision, CheckInRequest } from './check-in';
import { CallContext, frozenCopy, type CallEnvironment, type ResumeState } from './context';
import { absorb, executeTurn, outcomeOf, raceAbort } from './execute';
import { governed } from './governed';
import type { ToolgateEventMap, ToolgateEventType, ToolgateListeners } from './events';
import type { Identity } from './identity';
import { newId } from './ids';
import type { DispatchOutcome, LedgerRow, RefusedOutcome } from './outcomes';
import { refusalReason } from './refusal';
import { verifyCheckInRequest } from './resume';
import { assertTool, TOOL_NAME_PATTERN, type Tool, type ToolArgs, type ToolSchema } from './tool';

/** The model's request: a tool name and its args (an object, or the JSON string a model produced). */
export interface ToolCall {
  readonly toolName: string;
  readonly args?: unknown;
  readonly toolCallId?: string;
}

export interface DispatchOptions {
  readonly identity?: Identity;
  readonly signal?: AbortSignal;
}

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
}

export interface Dispatcher {
  dispatch(call: ToolCall, options?: DispatchOptions): Promise<DispatchOutcome>;
  /** Verifies a paused call's request, then re-runs its chain from the top with the human's decision. */
  resume(
    request: CheckInRequest,
    decision: CheckInDecision,
    options?: Pick<DispatchOptions, 'signal'>,
  ): Promise<DispatchOutcome>;
  /** What the model sees: name, description, inputSchema. Never `needs` or anything secret. */
  schemas(): ToolSchema[];
  /** Listens to a core event, or to a gate event a middleware emits with `ctx.emit` (`'<area>.<what>'`). */
  on<K extends keyof ToolgateListeners>(type: K, listener: ToolgateListeners[K]): Dispatcher;
  off<K extends keyof ToolgateListeners>(type: K, listener: ToolgateListeners[K]): Dispatcher;
  readonly events: ToolgateEmitter;
  readonly tools: ReadonlyMap<string, Tool>;
}

/** Configuration the dispatcher cannot honor. Names the tool and the fix. */
export class DispatcherConfigError extends Error {
  override readonly name = 'DispatcherConfigError';
  readonly code = 'ERR_DISPATCHER_CONFIG';
}

/** The first reason `chain` cannot serve one of `tools`, or undefined. */
function chainProblem(chain: Chain, tools: Iterable<Tool>): string | undefined {
  for (const tool of tools) {
    for (const middleware of chain.middleware) {
      let problem: string | undefined;
      try {
        problem = middleware.checkTool?.(tool, chain);
      } catch (error) {
        problem = `its checkTool threw ${error instanceof Error ? error.name : typeof error}`;
      }
      if (problem !== undefined)
        return `tool '${tool.schema.name}' cannot be served by gate '${middleware.name}': ${problem}`;
    }
  }
  return undefined;
}

const isText = (value: unknown): value is string => typeof value === 'string' && value.trim() !== '';

/** A decision as checkInApproved / checkInDeclined build it: who decided, and a reason for a decline. */
function isDecision(decision: unknown): decision is CheckInDecision {
  if (typeof decision !== 'object' || decision === null) return false;
  const { approved, by, reason } = decision as Record<string, unknown>;
  return isText(by) && (approved === true || (approved === false && isText(reason)));
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
  if (typeof options !== 'object' || options === null)
    throw new DispatcherConfigError('createDispatcher: expected { tools, chain }.');
  const { chain: chainSource } = options;
  if (!Array.isArray(options.tools))
    throw new DispatcherConfigError('createDispatcher: tools must be an array of Tool.');
  if (!isChain(chainSource) && typeof chainSource !== 'function') {
    throw new DispatcherConfigError(
      'createDispatcher: chain must be a Chain (createChain / canonicalChain) or a function (identity) => Chain.',
    );
  }
  const tools = new Map<string, Tool>();
  for (const candidate of options.tools as readonly unknown[]) {
    assertTool(candidate, { allowSource: true });
    const tool = frozenDeclarations(candidate);
    const existing = tools.get(tool.schema.name);
    if (existing !== undefined) {
      const from = (t: Tool) => (t.source === undefined ? 'our own tools' : `MCP server '${t.source}'`);
      throw new DispatcherConfigError(
        `createDispatcher: two tools are named '${tool.schema.name}' (from ${from(existing)} and ${from(tool)}). Rename one, or give the MCP client a prefix.`,
      );
    }
    tools.set(tool.schema.name, tool);
  }
  const knownNames = [...tools.keys()];
  const schemas: ToolSchema[] = [...tools.values()].map((t) => ({
    name: t.schema.name,
    description: t.schema.description,
    inputSchema: t.schema.inputSchema,
  }));

  const checked = new WeakMap<Chain, string | null>();
  if (isChain(chainSource)) {
    const problem = chainProblem(chainSource, tools.values());
    if (problem !== undefined) throw new DispatcherConfigError(`createDispatcher: ${problem}.`);
    checked.set(chainSource, null);
  }

  const emitter: ToolgateEmitter = options.events ?? new EventEmitter<ToolgateListeners>();
  const now = options.clock ?? Date.now;
  const callIds = options.callIds ?? (() => newId('call'));
  // eventemitter3 counts the event types that have listeners. When that count is zero, no lookup per
  // event is needed, and a dispatch asks about a dozen events. An emitter that answers listenerCount
  // itself is always asked.
  const countsItself = emitter.listenerCount !== EventEmitter.prototype.listenerCount;
  const env: CallEnvironment = {
    now,
    wants: (type) =>
      (countsItself || (emitter as { _eventsCount?: unknown })._eventsCount !== 0) &&
      emitter.listenerCount(type as ToolgateEventType) > 0,
    emit: (type, event) => {
      try {
        (emitter.emit as (type: string, event: unknown) => boolean)(type, event);
      } catch {
        // A listener that throws is the listener's bug; it must not decide, or crash, the call.
      }
    },
  };

  function emitBare<K extends ToolgateEventType>(type: K, event: Omit<ToolgateEventMap[K], 'at'>): void {
    if (env.wants(type)) env.emit(type, { type, ...event, at: now() });
  }

  function chainFor(
    identity: Identity | undefined,
    toolName: string,
    toolCallId: string,
    resumed: boolean,
  ): Chain | RefusedOutcome {
    let chain: Chain;
    try {
      chain = isChain(chainSource) ? chainSource : chainSource(identity);
      if (!isChain(chain)) throw new TypeError('the chain function did not return a Chain');
    } catch (error) {
      const problem = `the chain function failed: ${error instanceof Error ? error.name : typeof error}`;
      emitBare('chain.rejected', { toolName, toolCallId, chainId: '', problem });
      return dispatchRefusal(
        toolName,
        toolCallId,
        '',
        'CHAIN_UNAVAILABLE',
        refusalReason(
          `'${toolName}' cannot run because no policy is available for this caller`,
          'Retrying will not help',
        ),
        undefined,
        undefined,
        resumed,
      );
    }
    let problem = checked.get(chain);
    if (problem === undefined) {
      problem = chainProblem(chain, tools.values()) ?? null;
      checked.set(chain, problem);
    }
    if (problem !== null) {
      emitBare('chain.rejected', { toolName, toolCallId, chainId: chain.id, problem });
      return dispatchRefusal(
        toolName,
        toolCallId,
        chain.id,
        'CHAIN_MISCONFIGURED',
        refusalReason(
          `'${toolName}' cannot run because this caller's policy is misconfigured`,
          'Retrying will not help',
        ),
        undefined,
        undefined,
        resumed,
      );
    }
    return chain;
  }

  async function run(
    tool: Tool,
    chain: Chain,
    args: Readonly<ToolArgs>,
    toolCallId: string,
    identity: Identity | undefined,
    signal: AbortSignal | undefined,
    resume: ResumeState | undefined,
  ): Promise<DispatchOutcome> {
    const started = now();
    const plan = chain.planFor(tool, governed as never);
    const ctx = new CallContext({
      tool,
      toolCallId,
      args,
      identity,
      signal,
      resume,
      chain,
      plan,
      env,
    });
    ctx.publish('dispatch.start', () => ({ resumed: resume !== undefined }));
    const composed = plan.composed as unknown as (
      c: CallContext,
      next: (c: CallContext) => Promise<void>,
    ) => Promise<void>;
    const running = composed(ctx, executeTurn);
    try {
      await (signal === undefined ? running : raceAbort(running, signal));
    } catch (error) {
      absorb(ctx, error, signal);
    }
    ctx.closed = true;
    const outcome = outcomeOf(ctx);
    ctx.publish('dispatch.end', () => ({
      kind: outcome.kind,
      ran: outcome.ran,
      ...(outcome.kind === 'refused' ? { gate: outcome.gate, code: outcome.code } : {}),
      durationMs: now() - started,
    }));
    return outcome;
  }

  async function dispatch(call: ToolCall, opts: DispatchOptions = {}): Promise<DispatchOutcome> {
    const safeCall = (typeof call === 'object' && call !== null ? call : {}) as Partial<ToolCall>;
    const toolCallId =
      typeof safeCall.toolCallId === 'string' && safeCall.toolCallId !== '' ? safeCall.toolCallId : callIds();
    const requested = typeof safeCall.toolName === 'string' ? safeCall.toolName : '';
    const identity = identityOf(opts.identity);
    const chain = chainFor(identity, requested, toolCallId, false);
    if (!isChain(chain)) return chain;
    const tool = tools.get(requested);
    if (tool === undefined) {
      const named = TOOL_NAME_PATTERN.test(requested)
        ? `there is no tool named '${requested}'`
        : 'the requested tool name is not valid';
      return dispatchRefusal(
        requested,
        toolCallId,
        chain.id,
        'UNKNOWN_TOOL',
        refusalReason(named, `Call one of: ${knownNames.join(', ') || '(no tools)'}`),
      );
    }
    const args = parseArgs(safeCall.args);
    if (typeof args === 'string') {
      return dispatchRefusal(
        requested,
        toolCallId,
        chain.id,
        'BAD_ARGS',
        refusalReason(
          `the arguments for '${requested}' ${args}`,
          'Call it again with a JSON object of arguments',
        ),
        tool.source,
      );
    }
    return run(tool, chain, args, toolCallId, identity, opts.signal, undefined);
  }

  async function resume(
    request: CheckInRequest,
    decision: CheckInDecision,
    opts: Pick<DispatchOptions, 'signal'> = {},
  ): Promise<DispatchOutcome> {
    const shape = request as Partial<CheckInRequest> | null;
    const toolName = typeof shape?.toolName === 'string' ? shape.toolName : '';
    const toolCallId = typeof shape?.toolCallId === 'string' ? shape.toolCallId : callIds();
    const identity = identityOf(shape?.identity);
    const chain = chainFor(identity, toolName, toolCallId, true);
    if (!isChain(chain)) return chain;
    const refuse = (code: string, reason: string) => {
      const outcome = dispatchRefusal(
        toolName,
        toolCallId,
        chain.id,
        code,
        reason,
        undefined,
        'check-in',
        true,
      );
      emitBare('checkin.resolved', {
        toolName,
        toolCallId,
        chainId: chain.id,
        requestId: typeof shape?.id === 'string' ? shape.id : '',
        asker: typeof shape?.asker === 'string' ? shape.asker : '',
        approved: false,
        failure: code,
      });
      return outcome;
    };
    if (!isDecision(decision)) {
      return refuse(
        'CHECKIN_BAD_DECISION',
        refusalReason(
          'the decision given to resume is not a check-in decision',
          'Build it with checkInApproved or checkInDeclined',
        ),
      );
    }
    const service = chain.pauseService();
    const problem =
      service === undefined ? 'no-service' : await verifyCheckInRequest(request, service.signer, now());
    if (problem !== undefined) {
      const reasons: Record<string, string> = {
        'no-service': `this approval cannot be checked because the policy has no check-in key`,
        malformed: `this approval request is malformed`,
        signature: `this approval request was not issued by this deployment or was altered`,
        expired: `this approval request has expired`,
      };
      return refuse(
        `CHECKIN_${problem.toUpperCase().replace('-', '_')}`,
        refusalReason(
          `'${toolName || 'the tool'}' did not run: ${reasons[problem]}`,
          'Ask for a new approval',
        ),
      );
    }
    const tool = tools.get(request.toolName);
    if (tool === undefined || tool.source !== request.toolSource) {
      return refuse(
        'UNKNOWN_TOOL',
        refusalReason(`the approved tool '${toolName}' is not served here`, 'Ask for a new approval'),
      );
    }
    // The signature covers the canonical JSON of the request, which look-alikes also match (-0 for 0,
    // NaN for null, a toJSON object for a string): run exactly what was signed, not the object handed in.
    const signedArgs = JSON.parse(canonicalJson(request.args)) as ToolArgs;
    return run(tool, chain, Object.freeze(signedArgs), request.toolCallId, identity, opts.signal, {
      request,
      decision,
      answered: false,
    });
  }

  function dispatchRefusal(
    toolName: string,
    toolCallId: string,
    chainId: string,
    code: string,
    reason: string,
    toolSource?: string,
    gate = 'dispatch',
    resumed = false,
  ): RefusedOutcome {
    const row: LedgerRow = { gate, outcome: 'deny', why: reason, changed: false };
    const base = { toolName, toolCallId, ...(toolSource !== undefined ? { toolSource } : {}), chainId };
    // Refused before any chain ran, the call still starts and ends like every other in the event stream.
    if (env.wants('dispatch.start'))
      env.emit('dispatch.start', { type: 'dispatch.start', ...base, resumed, at: now() });
    if (env.wants('gate.decision'))
      env.emit('gate.decision', { type: 'gate.decision', ...base, ...row, code, at: now() });
    if (env.wants('dispatch.end'))
      env.emit('dispatch.end', {
        type: 'dispatch.end',
        ...base,
        kind: 'refused',
        ran: false,
        gate,
        code,
        durationMs: 0,
        at: now(),
      });
    return {
      kind: 'refused',
      ...base,
      ran: false,
      gate,
      code,
      reason,
      retryable: false,
      content: `[${gate} refused: ${reason}]`,
      ledger: [row],
    };
  }

  const dispatcher: Dispatcher = {
    dispatch,
    resume,
    schemas: () => schemas.map((s) => ({ ...s })),
    on(type, listener) {
      emitter.on(type, listener as never);
      return dispatcher;
    },
    off(type, listener) {
      emitter.off(type, listener as never);
      return dispatcher;
    },
    events: emitter,
    tools,
  };
  return dispatcher;
}

/**
 * `ctx.tool` is read-only: the declarations the gates read (checkIn, needs, wants, …) cannot be changed by a
 * middleware or a tool mid-call, which would otherwise outlive the call. Frozen in place, so the tool keeps
 * its identity; its inputSchema stays the caller's object.
 */
function frozenDeclarations(tool: Tool): Tool {
  const { schema, capabilities, needs, resultCeiling, wants, checkInComponent } = tool;
  for (const part of [
    schema,
    capabilities,
    needs,
    needs?.scopes,
    resultCeiling,
    resultCeiling?.narrowBy,
    wants,
    checkInComponent,
    checkInComponent?.props,
  ]) {
    if (typeof part === 'object' && part !== null) Object.freeze(part);
  }
  return Object.freeze(tool);
}

/** Args as a plain object, or the sentence fragment saying what is wrong with them. */
function parseArgs(raw: unknown): Readonly<ToolArgs> | string {
  let value = raw;
  if (value === undefined) return Object.freeze({});
  if (typeof value === 'string') {
    if (value.trim() === '') return Object.freeze({});
    try {
      value = JSON.parse(value);
    } catch {
      return 'were not valid JSON';
    }
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return `must be a JSON object, not ${value === null ? 'null' : Array.isArray(value) ? 'an array' : `a ${typeof value}`}`;
  }
  try {
    return frozenCopy(value as ToolArgs);
  } catch {
    // A getter or proxy trap threw while the args were copied: they cannot be read, so they cannot run.
    return 'could not be read';
  }
}

/** The call's identity as a frozen copy: no middleware can move a call to another tenant's scope. */
function identityOf(raw: unknown): Identity | undefined {
  if (typeof raw !== 'object' || raw === null) return undefined;
  return Object.freeze({ ...(raw as Identity) });
}
