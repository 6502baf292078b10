// One governed call of an SDK function tool. For a tool that declares `checkIn: 'always'`, the call
// is dispatched when the SDK asks whether it needs approval, so the check-in request is raised from
// the model's own call before a person sees the interruption; the approval in a RunState later
// answers exactly that request through `dispatcher.resume`, once. A RunState is plain JSON a host
// keeps: replayed or edited, it finds no request still waiting for its call, and is refused.

import type { RunContext, ToolInputGuardrailDefinition, ToolOutputGuardrailDefinition } from '@openai/agents';
import {
  canonicalJson,
  checkInApproved,
  checkInLookup,
  refusalReason,
  type ApprovedCall,
  type CheckInRequest,
  type CheckInStore,
  type Dispatcher,
  type DispatchOutcome,
  type Identity,
} from '@toolgate/core';

/** A pause the SDK's approval flow does not answer, handed to the host with the signed request. */
export interface PausedCall<TContext> {
  readonly toolName: string;
  readonly toolCallId: string;
  /** The run's context object (`run(agent, input, { context })`). */
  readonly context: TContext;
}

export interface GovernedToolsOptions<TContext> {
  /**
   * Who is calling, read from the run's own context object, never from the model's args. Default:
   * the context's `identity` property when it is an object.
   */
  readonly identity?: (context: TContext) => Identity | undefined;
  /** Who approved an SDK interruption, for the check-in receipt. Default: `'openai-agents-approval'`. */
  readonly approvedBy?: (context: TContext) => string;
  /**
   * A check-in the SDK's approval does not cover (a `checkIn` predicate that trips, a policy
   * middleware's `ask`, or a second question in one call): the host gets the signed request and calls
   * `dispatcher.resume` when a person decides. The model reads that the call is waiting for approval.
   */
  readonly onPause?: (request: CheckInRequest, call: PausedCall<TContext>) => void | Promise<void>;
  /**
   * The chain's check-in store (what `checkIns` is in `canonicalChain`). With it, a RunState approved
   * in another process sharing the store finds the request raised when the SDK asked; without it,
   * only requests this process raised are found, and any other approval is refused.
   */
  readonly checkIns?: CheckInStore;
  /**
   * The SDK's tool input guardrails (`defineToolInputGuardrail`), given to every governed tool. The SDK
   * runs them after any approval and before `execute`: one that rejects keeps the call from reaching
   * the chain, and the model reads its message.
   */
  readonly inputGuardrails?: readonly ToolInputGuardrailDefinition<TContext>[];
  /** The SDK's tool output guardrails, given to every governed tool; they see the text the model would read. */
  readonly outputGuardrails?: readonly ToolOutputGuardrailDefinition<TContext>[];
}

const DEFAULT_APPROVER = 'openai-agents-approval';
const CHECK_IN = 'check-in';
// Outcomes of calls the chain decided while the SDK asked, waiting for the `execute` that follows.
const DECIDED_LIMIT = 1_000;

function contextIdentity(context: unknown): Identity | undefined {
  if (typeof context !== 'object' || context === null) return undefined;
  const identity = (context as { identity?: unknown }).identity;
  return typeof identity === 'object' && identity !== null ? (identity as Identity) : undefined;
}

const refusal = (gate: string, what: string, ...rest: string[]): string =>
  `[${gate} refused: ${refusalReason(what, ...rest)}]`;

/** The approval flow of one dispatcher's tools: its index and decided outcomes live as long as the tools. */
export function governor<TContext>(dispatcher: Dispatcher, options: GovernedToolsOptions<TContext>) {
  const identityOf = options.identity ?? contextIdentity;
  const approvedBy = options.approvedBy ?? (() => DEFAULT_APPROVER);
  const lookup = checkInLookup(options.checkIns !== undefined ? { store: options.checkIns } : {});
  const decided = new Map<string, DispatchOutcome>();

  const callOf = (toolName: string, toolCallId: string, args: unknown, identity: Identity | undefined) => {
    const source = dispatcher.tools.get(toolName)?.source;
    return {
      toolName,
      ...(source !== undefined ? { toolSource: source } : {}),
      toolCallId,
      args,
      ...(identity !== undefined ? { identity } : {}),
    } satisfies ApprovedCall;
  };
  // The SDK may hand the args as parsed JSON or as text; one call has one key either way.
  const keyOf = (call: ApprovedCall): string | undefined => {
    try {
      const args: unknown = typeof call.args === 'string' ? JSON.parse(call.args) : call.args;
      return canonicalJson({ ...call, args });
    } catch {
      return undefined;
    }
  };

  /**
   * Asked by the SDK before the call runs: raises the check-in now. A call the chain decides without
   * the check-in gate's question (refused, or paused by another asker) needs no SDK approval; its
   * outcome waits for the `execute` the SDK runs next.
   */
  async function needsApproval(
    toolName: string,
    sdkName: string,
    runContext: RunContext<TContext>,
    input: unknown,
    callId: string | undefined,
  ): Promise<boolean> {
    if (callId === undefined) return true;
    try {
      // The SDK asks again about a call it holds a decision for (a resumed RunState): that decision's
      // request exists, and a new one raised now would be answered by an approval nobody gave it.
      if (runContext.isToolApproved({ toolName: sdkName, callId }) !== undefined) return true;
      const identity = identityOf(runContext.context);
      const call = callOf(toolName, callId, input, identity);
      if ((await lookup.pendingFor(call, CHECK_IN)).length > 0) return true;
      const outcome = await dispatcher.dispatch(
        { toolName, args: input, toolCallId: callId },
        identity === undefined ? {} : { identity },
      );
      if (outcome.kind === 'paused' && outcome.checkIn.asker === CHECK_IN) {
        lookup.remember(outcome.checkIn);
        return true;
      }
      const key = keyOf(call);
      if (key === undefined) return true;
      if (decided.size >= DECIDED_LIMIT) decided.delete(decided.keys().next().value!);
      decided.set(key, outcome);
      return false;
    } catch {
      // Nothing could be decided here: ask, and `execute` refuses an approval it cannot match.
      return true;
    }
  }

  /** What the model reads for an outcome; a pause the SDK's approval did not answer goes to the host. */
  async function settle(outcome: DispatchOutcome, context: TContext): Promise<string> {
    if (outcome.kind !== 'paused') return outcome.content;
    const request = outcome.checkIn;
    try {
      await options.onPause?.(request, {
        toolName: request.toolName,
        toolCallId: request.toolCallId,
        context,
      });
    } catch {
      // The host's hook failing must not crash the run; the call stays paused and the model is told so.
    }
    return outcome.content;
  }

  /** The SDK's approval answers the one request raised when it asked, through `resume`, once. */
  async function answer(
    call: ApprovedCall,
    context: TContext,
    signal: AbortSignal | undefined,
  ): Promise<DispatchOutcome | string> {
    let requests: CheckInRequest[];
    try {
      requests = await lookup.pendingFor(call, CHECK_IN);
    } catch {
      return refusal(
        CHECK_IN,
        `the approval for '${call.toolName}' could not be checked because the check-in store is unavailable`,
        'Retrying later may help',
      );
    }
    const [request, ...duplicates] = requests;
    if (request === undefined) {
      return refusal(
        CHECK_IN,
        `this approval for '${call.toolName}' answers no request that is still waiting: it was already used, it expired, or the call's arguments or caller changed since a person saw it`,
        'Running the same approval again will not help',
        'Ask for a new approval',
      );
    }
    // One approval answers one request: a duplicate raised for the same call is withdrawn, never left to a replay.
    for (const duplicate of duplicates) await lookup.revoke(duplicate.id);
    lookup.settle(request.id);
    let by: string;
    try {
      by = approvedBy(context);
      if (typeof by !== 'string' || by.trim() === '') by = DEFAULT_APPROVER;
    } catch {
      by = DEFAULT_APPROVER;
    }
    return dispatcher.resume(request, checkInApproved({ by }), signal === undefined ? {} : { signal });
  }

  async function execute(
    toolName: string,
    input: unknown,
    run: {
      context: TContext;
      callId: string | undefined;
      approved: boolean;
      viaSdk: boolean;
      signal?: AbortSignal;
    },
  ): Promise<string> {
    let identity: Identity | undefined;
    try {
      identity = identityOf(run.context);
    } catch {
      return refusal(
        'dispatch',
        `'${toolName}' did not run because the caller's identity could not be read`,
        'Retrying will not help',
      );
    }
    const { callId, signal } = run;
    if (run.viaSdk && callId !== undefined) {
      const call = callOf(toolName, callId, input, identity);
      const key = keyOf(call);
      const earlier = key === undefined ? undefined : decided.get(key);
      if (key !== undefined) decided.delete(key);
      if (earlier !== undefined) return settle(earlier, run.context);
      if (run.approved) {
        const outcome = await answer(call, run.context, signal);
        return typeof outcome === 'string' ? outcome : settle(outcome, run.context);
      }
    }
    const outcome = await dispatcher.dispatch(
      { toolName, args: input, ...(callId === undefined ? {} : { toolCallId: callId }) },
      { ...(identity === undefined ? {} : { identity }), ...(signal === undefined ? {} : { signal }) },
    );
    return settle(outcome, run.context);
  }

  return { needsApproval, execute };
}
