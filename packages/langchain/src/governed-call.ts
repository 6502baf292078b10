// One governed call, shared by the tool wrappers and the middleware: identity from the run's
// context, the dispatch, and a check-in turned into a LangGraph interrupt (or handed to onPause).

import { isGraphInterrupt, interrupt } from '@langchain/langgraph';
import {
  canonicalJson,
  checkInApproved,
  checkInDeclined,
  Pause,
  refusalReason,
  type CheckInDecision,
  type CheckInRequest,
  type Dispatcher,
  type DispatchOutcome,
  type Identity,
} from '@toolgate/core';

/** A pause that could not become an interrupt, handed to the host with the signed request. */
export interface PausedCall<TContext> {
  readonly toolName: string;
  readonly toolCallId: string;
  /** The run's context object (`agent.invoke(input, { context })`). */
  readonly context: TContext;
}

export interface GovernedOptions<TContext> {
  /**
   * Who is calling, read from the run's context (`invoke(input, { context })`), never from the model's
   * args. Default: the context's `identity` property when it is an object.
   */
  readonly identity?: (context: TContext) => Identity | undefined;
  /** Who answered a human-in-the-loop style resume (`{ decisions: [...] }`). Default: `'langchain-approval'`. */
  readonly approvedBy?: (context: TContext) => string;
  /**
   * A check-in raised where `interrupt` cannot run (no graph, no checkpointer): the host gets the signed
   * request and calls `dispatcher.resume` when a person decides. The model reads that the call waits.
   */
  readonly onPause?: (request: CheckInRequest, call: PausedCall<TContext>) => void | Promise<void>;
}

/** What `interrupt` carries: the human-in-the-loop request shape LangChain UIs read, plus the signed request. */
export interface CheckInInterrupt {
  readonly actionRequests: readonly {
    name: string;
    args: Readonly<Record<string, unknown>>;
    description: string;
  }[];
  readonly reviewConfigs: readonly {
    actionName: string;
    allowedDecisions: readonly ('approve' | 'reject')[];
  }[];
  readonly checkIn: CheckInRequest;
}

export interface GovernedCall<TContext> {
  readonly toolName: string;
  readonly args: unknown;
  readonly toolCallId: string | undefined;
  readonly context: TContext;
  readonly signal: AbortSignal | undefined;
}

const DEFAULT_APPROVER = 'langchain-approval';
// Unanswered requests this process raised, so a resumed run answers the very request the person saw.
const HELD_LIMIT = 1_000;

function contextIdentity(context: unknown): Identity | undefined {
  if (typeof context !== 'object' || context === null) return undefined;
  const identity = (context as { identity?: unknown }).identity;
  return typeof identity === 'object' && identity !== null ? (identity as Identity) : undefined;
}

export function checkInInterrupt(request: CheckInRequest): CheckInInterrupt {
  return {
    actionRequests: [{ name: request.toolName, args: request.review, description: request.question }],
    reviewConfigs: [{ actionName: request.toolName, allowedDecisions: ['approve', 'reject'] }],
    checkIn: request,
  };
}

/** A resume value as a check-in decision: a toolgate decision as is, or a `{ decisions: [...] }` answer. */
function decisionOf(answer: unknown, by: () => string): CheckInDecision {
  const decisions = (answer as { decisions?: unknown } | null)?.decisions;
  if (Array.isArray(decisions)) {
    const first = decisions[0] as { type?: unknown; message?: unknown } | undefined;
    if (first?.type === 'approve') return checkInApproved({ by: by() });
    if (first?.type === 'reject') {
      const message =
        typeof first.message === 'string' && first.message.trim() !== '' ? first.message : 'declined';
      return checkInDeclined({ by: by(), reason: message });
    }
  }
  // Anything else goes to resume as given; resume refuses what is not a decision, and the model reads why.
  return answer as CheckInDecision;
}

/** Runs governed calls for one dispatcher; the held requests live as long as the adapter. */
export function governor<TContext>(dispatcher: Dispatcher, options: GovernedOptions<TContext>) {
  const identityOf = options.identity ?? contextIdentity;
  const held = new Map<string, { request: CheckInRequest; index: number }>();

  function approver(context: TContext): string {
    try {
      const by = options.approvedBy?.(context);
      return typeof by === 'string' && by.trim() !== '' ? by : DEFAULT_APPROVER;
    } catch {
      return DEFAULT_APPROVER;
    }
  }

  function hold(key: string, request: CheckInRequest, index: number): void {
    held.delete(key);
    if (held.size >= HELD_LIMIT) held.delete(held.keys().next().value!);
    held.set(key, { request, index });
  }

  return async function governedCall(call: GovernedCall<TContext>): Promise<DispatchOutcome | string> {
    let identity: Identity | undefined;
    try {
      identity = identityOf(call.context);
    } catch {
      return `[dispatch refused: ${refusalReason(`'${call.toolName}' did not run because the caller's identity could not be read`, 'Retrying will not help')}]`;
    }
    const signal = call.signal === undefined ? {} : { signal: call.signal };
    // Only a call that may have paused before needs its key: most calls never pay for it.
    let key: string | undefined;
    const keyOf = () =>
      (key ??= canonicalJson({
        tool: call.toolName,
        id: call.toolCallId ?? null,
        args: call.args ?? null,
        identity: identity ?? null,
      }));
    const earlier = call.toolCallId === undefined || held.size === 0 ? undefined : held.get(keyOf());
    let index = 0;
    let outcome: DispatchOutcome | undefined;
    let request: CheckInRequest;
    if (earlier !== undefined) {
      // A resumed run: the interrupts before this one return their answers again, in order.
      for (; index < earlier.index; index++) interrupt(undefined);
      request = earlier.request;
    } else {
      outcome = await dispatcher.dispatch(
        {
          toolName: call.toolName,
          args: call.args,
          ...(call.toolCallId === undefined ? {} : { toolCallId: call.toolCallId }),
        },
        { ...(identity === undefined ? {} : { identity }), ...signal },
      );
      if (outcome.kind !== 'paused') return outcome;
      request = outcome.checkIn;
    }
    for (;;) {
      let answer: unknown;
      try {
        answer = interrupt(checkInInterrupt(request));
      } catch (error) {
        if (isGraphInterrupt(error)) {
          if (call.toolCallId !== undefined) hold(keyOf(), request, index);
          throw error;
        }
        // No graph or no checkpointer here: the pause cannot become an interrupt.
        if (held.size > 0) held.delete(keyOf());
        try {
          await options.onPause?.(request, {
            toolName: call.toolName,
            toolCallId: request.toolCallId,
            context: call.context,
          });
        } catch {
          // The host's hook failing must not crash the run; the call stays paused and the model is told so.
        }
        return outcome ?? new Pause(request).message;
      }
      if (held.size > 0) held.delete(keyOf());
      outcome = await dispatcher.resume(
        request,
        decisionOf(answer, () => approver(call.context)),
        signal,
      );
      if (outcome.kind !== 'paused') return outcome;
      request = outcome.checkIn;
      index++;
    }
  };
}
