// One governed call, shared by the tool wrappers and the middleware: identity from the run's
// context, the dispatch, and a check-in turned into a LangGraph interrupt (or handed to onPause).
// A resume answer decides only a request it names that was raised for exactly this call and is still
// pending; `dispatcher.resume` then consumes it once. LangGraph re-runs the tool node on resume and
// replays earlier answers, so an answer naming a request already decided decides nothing again.

import { isGraphInterrupt, interrupt } from '@langchain/langgraph';
import {
  checkInLookup,
  Pause,
  refusalReason,
  type ApprovedCall,
  type CheckInDecision,
  type CheckInLookup,
  type CheckInRequest,
  type CheckInStore,
  type Dispatcher,
  type DispatchOutcome,
  type Identity,
} from '@toolgate/core';
import { decisionOf, namedIn } from './resume-answer';

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
  /** Who answered a human-in-the-loop style decision (`{ type: 'approve' }`). Default: `'langchain-approval'`. */
  readonly approvedBy?: (context: TContext) => string;
  /**
   * A check-in raised where `interrupt` cannot run (no graph, no checkpointer): the host gets the signed
   * request and calls `dispatcher.resume` when a person decides. The model reads that the call waits.
   */
  readonly onPause?: (request: CheckInRequest, call: PausedCall<TContext>) => void | Promise<void>;
  /**
   * The chain's check-in store (what `checkIns` is in `canonicalChain`). With it, a resume that reaches
   * another process finds the request the person answered; without it, only requests this process
   * raised are found, and the call is asked about again.
   */
  readonly checkIns?: CheckInStore;
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
  /** `[checkIn]`: the same field a turn's review carries, so a client reads both alike. */
  readonly checkIns: readonly CheckInRequest[];
}

export interface GovernedCall<TContext> {
  readonly toolName: string;
  readonly args: unknown;
  readonly toolCallId: string | undefined;
  readonly context: TContext;
  readonly signal: AbortSignal | undefined;
}

const DEFAULT_APPROVER = 'langchain-approval';

export function contextIdentity(context: unknown): Identity | undefined {
  if (typeof context !== 'object' || context === null) return undefined;
  const identity = (context as { identity?: unknown }).identity;
  return typeof identity === 'object' && identity !== null ? (identity as Identity) : undefined;
}

export function checkInInterrupt(request: CheckInRequest): CheckInInterrupt {
  return {
    actionRequests: [{ name: request.toolName, args: request.review, description: request.question }],
    reviewConfigs: [{ actionName: request.toolName, allowedDecisions: ['approve', 'reject'] }],
    checkIn: request,
    checkIns: [request],
  };
}

/** The first request `answer` names that is `current`, or pending and raised for exactly `call`. */
async function chosenBy(
  answer: unknown,
  current: CheckInRequest,
  call: ApprovedCall | undefined,
  lookup: CheckInLookup,
): Promise<{ request: CheckInRequest; value: unknown } | undefined> {
  for (const { id, value } of namedIn(answer)) {
    const request =
      call === undefined ? (id === current.id ? current : undefined) : await lookup.pending(id, call);
    if (request !== undefined) return { request, value };
  }
  return undefined;
}

const storeFailed = (toolName: string): string =>
  `[check-in refused: ${refusalReason(`the answer for '${toolName}' could not be checked because the check-in store is unavailable`, 'Retrying later may help')}]`;

/**
 * Once a person's answer decides this call, the other questions still pending about it (asked again
 * by a re-run in a process that could not find the first) have nobody left to answer them.
 */
async function withdrawOthers(lookup: CheckInLookup, call: ApprovedCall, decided: string): Promise<void> {
  let others: CheckInRequest[];
  try {
    others = await lookup.pendingFor(call);
  } catch {
    return; // They expire on their own.
  }
  for (const other of others) if (other.id !== decided) await lookup.revoke(other.id);
}

/** Who answered a LangChain-style decision, as the options say; never throws. */
export function approverOf<TContext>(options: GovernedOptions<TContext>): (context: TContext) => string {
  return (context) => {
    try {
      const by = options.approvedBy?.(context);
      return typeof by === 'string' && by.trim() !== '' ? by : DEFAULT_APPROVER;
    } catch {
      return DEFAULT_APPROVER;
    }
  };
}

/** Runs governed calls for one dispatcher; its index of raised requests lives as long as the adapter. */
export function governor<TContext>(dispatcher: Dispatcher, options: GovernedOptions<TContext>) {
  const identityOf = options.identity ?? contextIdentity;
  const lookup = checkInLookup(options.checkIns !== undefined ? { store: options.checkIns } : {});
  const approver = approverOf(options);

  return async function governedCall(call: GovernedCall<TContext>): Promise<DispatchOutcome | string> {
    let identity: Identity | undefined;
    try {
      identity = identityOf(call.context);
    } catch {
      return `[dispatch refused: ${refusalReason(`'${call.toolName}' did not run because the caller's identity could not be read`, 'Retrying will not help')}]`;
    }
    const signal = call.signal === undefined ? {} : { signal: call.signal };
    const source = dispatcher.tools.get(call.toolName)?.source;
    // What an answer's request must have been raised for: this tool, call id, caller and args.
    const asked: ApprovedCall | undefined =
      call.toolCallId === undefined
        ? undefined
        : {
            toolName: call.toolName,
            ...(source !== undefined ? { toolSource: source } : {}),
            toolCallId: call.toolCallId,
            args: call.args,
            ...(identity !== undefined ? { identity } : {}),
          };
    // A re-run of a tool node this process interrupted asks the newest question it raised for this
    // call, unless that was decided meanwhile (in another process sharing the store).
    let current = asked === undefined ? undefined : lookup.latest(asked);
    if (current !== undefined && asked !== undefined) {
      let stillPending: CheckInRequest | undefined;
      try {
        stillPending = await lookup.pending(current.id, asked);
      } catch {
        return storeFailed(call.toolName);
      }
      if (stillPending === undefined) {
        lookup.settle(current.id);
        current = undefined;
      }
    }
    let outcome: DispatchOutcome | undefined;
    if (current === undefined) {
      outcome = await dispatcher.dispatch(
        {
          toolName: call.toolName,
          args: call.args,
          ...(call.toolCallId === undefined ? {} : { toolCallId: call.toolCallId }),
        },
        { ...(identity === undefined ? {} : { identity }), ...signal },
      );
      if (outcome.kind !== 'paused') return outcome;
      current = outcome.checkIn;
      lookup.remember(current);
    }
    for (;;) {
      let answer: unknown;
      try {
        answer = interrupt(checkInInterrupt(current));
      } catch (error) {
        if (isGraphInterrupt(error)) throw error;
        // No graph or no checkpointer here: the pause cannot become an interrupt.
        lookup.settle(current.id);
        try {
          await options.onPause?.(current, {
            toolName: call.toolName,
            toolCallId: current.toolCallId,
            context: call.context,
          });
        } catch {
          // The host's hook failing must not crash the run; the call stays paused and the model is told so.
        }
        return outcome ?? new Pause(current).message;
      }
      let chosen;
      try {
        chosen = await chosenBy(answer, current, asked, lookup);
      } catch {
        return storeFailed(call.toolName);
      }
      // An answer that names no request of this call decides nothing: the person is asked again.
      if (chosen === undefined) continue;
      lookup.settle(chosen.request.id);
      if (asked !== undefined) await withdrawOthers(lookup, asked, chosen.request.id);
      outcome = await dispatcher.resume(
        chosen.request,
        decisionOf(chosen.value, () => approver(call.context)) as CheckInDecision,
        signal,
      );
      if (outcome.kind !== 'paused') return outcome;
      current = outcome.checkIn;
      lookup.remember(current);
    }
  };
}
