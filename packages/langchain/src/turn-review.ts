// One review per model turn, the way LangChain's humanInTheLoopMiddleware asks: every call of the turn
// whose chain pauses for a person goes into one interrupt's `actionRequests`, resumed by
// `{ decisions }` in that order. The chain runs up to its check-in in the model node (nothing that
// needs a person runs there), and the AI message records which request each call raised. The review
// node reads that record on every re-run, so a decision always answers the request the person was
// shown, and only while it is pending for exactly that call: a replayed checkpoint finds it used, and
// edited thread state finds it raised for other args; neither runs anything.

import { AIMessage, ToolMessage, type BaseMessage } from '@langchain/core/messages';
import { interrupt, isGraphInterrupt } from '@langchain/langgraph';
import {
  Pause,
  refusalReason,
  type ApprovedCall,
  type CheckInLookup,
  type CheckInRequest,
  type Dispatcher,
  type DispatchOutcome,
  type Identity,
} from '@toolgate/core';
import type { PausedCall } from './governed-call';
import { decisionsFor } from './turn-decisions';

/** What the model node records on the AI message, per tool call id (the message's response metadata). */
type Recorded = { readonly checkIn: string } | { readonly content: string; readonly ok: boolean };

const RECORD_KEY = 'toolgate';
// A chain that keeps asking new questions about one call is a bug; stop rather than loop forever.
const MAX_ROUNDS = 32;

/** What the turn's interrupt carries: humanInTheLoopMiddleware's request, plus the signed requests. */
export interface TurnInterrupt {
  readonly actionRequests: readonly {
    name: string;
    args: Readonly<Record<string, unknown>>;
    description: string;
  }[];
  readonly reviewConfigs: readonly {
    actionName: string;
    allowedDecisions: readonly ('approve' | 'edit' | 'reject')[];
  }[];
  /** The request each action asks about, in the same order. */
  readonly checkIns: readonly CheckInRequest[];
  /** The first of `checkIns`. */
  readonly checkIn: CheckInRequest;
}

export interface TurnOptions<TContext> {
  readonly dispatcher: Dispatcher;
  readonly lookup: CheckInLookup;
  readonly identityOf: (context: TContext) => Identity | undefined;
  readonly approver: (context: TContext) => string;
  readonly onPause:
    ((request: CheckInRequest, call: PausedCall<TContext>) => void | Promise<void>) | undefined;
}

interface TurnCall {
  readonly name: string;
  readonly args: Record<string, unknown>;
  readonly id: string;
}

const toolCallsOf = (message: AIMessage): TurnCall[] =>
  (message.tool_calls ?? []).flatMap((call) =>
    typeof call.id === 'string' && call.id !== ''
      ? [{ name: call.name, args: (call.args ?? {}) as Record<string, unknown>, id: call.id }]
      : [],
  );

export function turnInterrupt(requests: readonly CheckInRequest[]): TurnInterrupt {
  return {
    actionRequests: requests.map((r) => ({ name: r.toolName, args: r.review, description: r.question })),
    reviewConfigs: requests.map((r) => ({
      actionName: r.toolName,
      allowedDecisions: ['approve', 'edit', 'reject'],
    })),
    checkIns: requests,
    checkIn: requests[0]!,
  };
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

function recordOf(message: AIMessage): Record<string, Recorded> | undefined {
  const record = (message.response_metadata as Record<string, unknown> | undefined)?.[RECORD_KEY];
  return isRecord(record) ? (record as Record<string, Recorded>) : undefined;
}

const noLongerWaiting = (toolName: string): string =>
  `[check-in refused: ${refusalReason(
    `the request for '${toolName}' is no longer waiting: it was answered already, it expired, or the call's arguments or caller changed since it was raised`,
    'Resuming again will not help',
    'Call the tool again to ask anew',
  )}]`;

const storeFailed = (toolName: string): string =>
  `[check-in refused: ${refusalReason(`the answer for '${toolName}' could not be checked because the check-in store is unavailable`, 'Retrying later may help')}]`;

const toolMessage = (call: TurnCall, content: string, ok: boolean): ToolMessage =>
  new ToolMessage({ content, tool_call_id: call.id, name: call.name, status: ok ? 'success' : 'error' });

const outcomeMessage = (call: TurnCall, outcome: DispatchOutcome): ToolMessage =>
  toolMessage(call, outcome.content, outcome.kind === 'result');

export function turnReview<TContext>(options: TurnOptions<TContext>) {
  const { dispatcher, lookup } = options;

  const approvedCall = (call: TurnCall, identity: Identity | undefined): ApprovedCall => {
    const source = dispatcher.tools.get(call.name)?.source;
    return {
      toolName: call.name,
      ...(source !== undefined ? { toolSource: source } : {}),
      toolCallId: call.id,
      args: call.args,
      ...(identity !== undefined ? { identity } : {}),
    };
  };

  /**
   * In the model node, after the model answered: each call to a tool that declares a check-in runs
   * through the chain up to it. A pause is recorded by its request id; any other outcome (a refusal,
   * or the result when the check-in did not trip) by the text the model will read.
   */
  async function raise(
    message: AIMessage,
    context: TContext,
    signal: AbortSignal | undefined,
  ): Promise<void> {
    const calls = toolCallsOf(message).filter(
      (call) => dispatcher.tools.get(call.name)?.checkIn !== undefined,
    );
    if (calls.length === 0) return;
    let identity: Identity | undefined;
    try {
      identity = options.identityOf(context);
    } catch {
      return; // The tool node answers each call with the refusal for an unreadable identity.
    }
    const record: Record<string, Recorded> = {};
    for (const call of calls) {
      const outcome = await dispatcher.dispatch(
        { toolName: call.name, args: call.args, toolCallId: call.id },
        { ...(identity !== undefined ? { identity } : {}), ...(signal !== undefined ? { signal } : {}) },
      );
      if (outcome.kind === 'paused') {
        lookup.remember(outcome.checkIn);
        record[call.id] = { checkIn: outcome.checkIn.id };
      } else record[call.id] = { content: outcome.content, ok: outcome.kind === 'result' };
    }
    message.response_metadata = { ...message.response_metadata, [RECORD_KEY]: record };
  }

  /**
   * The review node: one interrupt for every request the turn raised that is still pending for exactly
   * its call; the answer decides all of them or none (asked again). Answers with the tool messages of
   * every call the turn recorded, and whether the tool node has calls left.
   */
  async function review(
    messages: readonly BaseMessage[],
    context: TContext,
    signal: AbortSignal | undefined,
  ): Promise<{ messages: BaseMessage[]; jumpTo?: 'model' } | undefined> {
    const message = messages.at(-1);
    if (message === undefined || !AIMessage.isInstance(message)) return undefined;
    const record = recordOf(message);
    if (record === undefined) return undefined;
    const calls = toolCallsOf(message).filter((call) => isRecord(record[call.id]));
    if (calls.length === 0) return undefined;
    let identity: Identity | undefined;
    try {
      identity = options.identityOf(context);
    } catch {
      return undefined; // The tool node refuses each call by name.
    }

    const answered = new Map<string, ToolMessage>();
    // Each call's review follows its request: the one the turn recorded, then each one a later asker
    // of the same chain raised once the person approved (its receipts name the request before it).
    let active: { call: TurnCall; id: string }[] = [];
    for (const call of calls) {
      const entry = record[call.id]!;
      if ('content' in entry)
        answered.set(call.id, toolMessage(call, String(entry.content), entry.ok === true));
      else active.push({ call, id: String(entry.checkIn) });
    }

    // Every round is one interrupt. LangGraph answers a re-run's interrupts in order with the answers
    // given so far, so a round whose requests were all answered in an earlier run spends its answer
    // without deciding anything again, and the rounds line up with what the person was shown.
    for (let round = 0; active.length > 0 && round < MAX_ROUNDS; round++) {
      const pending: { call: TurnCall; request: CheckInRequest }[] = [];
      const moved: { call: TurnCall; request: CheckInRequest }[] = [];
      for (const { call, id } of active) {
        const asked = approvedCall(call, identity);
        try {
          const request = await lookup.pending(id, asked);
          if (request !== undefined) {
            pending.push({ call, request });
            continue;
          }
          const next = (await lookup.pendingFor(asked)).find((r) =>
            r.receipts?.some((rc) => rc.requestId === id),
          );
          if (next !== undefined) moved.push({ call, request: next });
          else answered.set(call.id, toolMessage(call, noLongerWaiting(call.name), false));
        } catch {
          answered.set(call.id, toolMessage(call, storeFailed(call.name), false));
        }
      }
      const shown = pending.length > 0 ? pending : moved;
      if (shown.length === 0) break;
      let answer: unknown;
      try {
        answer = interrupt(turnInterrupt(shown.map((each) => each.request)));
      } catch (error) {
        if (isGraphInterrupt(error)) throw error;
        // No checkpointer: the pauses go to the host, and the model reads that the calls wait.
        for (const { call, request } of [...pending, ...moved]) {
          lookup.settle(request.id);
          try {
            await options.onPause?.(request, { toolName: call.name, toolCallId: call.id, context });
          } catch {
            // The host's hook failing must not crash the run; the call stays paused.
          }
          answered.set(call.id, toolMessage(call, new Pause(request).message, false));
        }
        break;
      }
      const successors = moved.map(({ call, request }) => ({ call, id: request.id }));
      if (pending.length === 0) {
        active = successors;
        continue;
      }
      // An answer that does not decide every request shown decides none: the person is asked again.
      const decided = decisionsFor(
        answer,
        pending.map((each) => each.request),
        () => options.approver(context),
      );
      if (decided === undefined) {
        active = [...pending.map(({ call, request }) => ({ call, id: request.id })), ...successors];
        continue;
      }
      active = successors;
      for (const [i, { call, request }] of pending.entries()) {
        lookup.settle(request.id);
        const outcome = await dispatcher.resume(
          request,
          decided[i]!.decision,
          signal !== undefined ? { signal } : {},
        );
        if (outcome.kind === 'paused') {
          lookup.remember(outcome.checkIn);
          active.push({ call, id: outcome.checkIn.id });
        } else answered.set(call.id, outcomeMessage(call, outcome));
      }
    }
    for (const { call } of active)
      if (!answered.has(call.id)) answered.set(call.id, toolMessage(call, noLongerWaiting(call.name), false));

    const replies = toolCallsOf(message).flatMap((call) => answered.get(call.id) ?? []);
    const answeredIds = new Set(
      messages
        .flatMap((m) => (ToolMessage.isInstance(m) ? [m.tool_call_id] : []))
        .concat([...answered.keys()]),
    );
    const left = (message.tool_calls ?? []).some(
      (call) => call.id === undefined || !answeredIds.has(call.id),
    );
    return left ? { messages: replies } : { messages: replies, jumpTo: 'model' };
  }

  return { raise, review };
}
