// One governed AI SDK tool call. For a tool whose check-in rides the SDK's approval flow, the call is
// dispatched when the SDK asks whether it needs approval, so the check-in request a person approves
// is raised from the model's own call, server side; the SDK's approval later answers exactly that
// request through `dispatcher.resume`, once. History the app sends back only says which request to
// look up: a replay, an edited input, a reused tool call id or a forged approval finds none that is
// still waiting, and is refused.

import {
  canonicalJson,
  checkInApproved,
  checkInLookup,
  refusalReason,
  type ApprovedCall,
  type CheckInDecision,
  type Dispatcher,
  type DispatchOutcome,
  type Identity,
  type PausedOutcome,
  type RefusedOutcome,
  type Tool as ToolgateTool,
} from '@toolgate/core';
import type { ModelMessage, ToolExecutionOptions } from 'ai';
import { approvalFor, approvalsBefore, approverOf, askedCallId, type SdkApproval } from './approvals';
import type { AiSdkToolsOptions, ToolContext } from './tools';

/** What the SDK hands `needsApproval` besides the input. */
export interface ApprovalQuestion {
  readonly toolCallId: string;
  readonly messages: ModelMessage[];
  readonly context?: unknown;
}

// A call that keeps asking new questions is a bug in its chain; stop rather than loop forever.
const MAX_PAUSES_PER_CALL = 10;
// Outcomes of calls the chain decided while the SDK asked, waiting for the `execute` that follows.
const DECIDED_LIMIT = 1_000;
const CHECK_IN = 'check-in';

export function governor<C extends ToolContext>(
  dispatcher: Dispatcher,
  options: AiSdkToolsOptions<C>,
  identityOf: (context: C | undefined) => Identity | undefined,
) {
  const lookup = checkInLookup(options.checkIns !== undefined ? { store: options.checkIns } : {});
  const decided = new Map<string, DispatchOutcome>();

  const callOf = (
    declared: ToolgateTool,
    toolCallId: string,
    args: unknown,
    identity: Identity | undefined,
  ) =>
    ({
      toolName: declared.schema.name,
      ...(declared.source !== undefined ? { toolSource: declared.source } : {}),
      toolCallId,
      args,
      ...(identity !== undefined ? { identity } : {}),
    }) satisfies ApprovedCall;

  const decidedKey = (call: ApprovedCall): string | undefined => {
    try {
      return canonicalJson(call);
    } catch {
      return undefined;
    }
  };

  /**
   * Asked by the SDK before it runs the call: raises the check-in now, so the person approves the
   * request the model's call raised. A call the chain decides without the check-in gate's question
   * (refused, or paused by another asker) needs no SDK approval; `execute` answers with that outcome.
   */
  async function needsApproval(
    declared: ToolgateTool,
    input: unknown,
    asked: ApprovalQuestion,
  ): Promise<boolean> {
    try {
      // The SDK asks again while it executes an approval it collected; that approval's request exists.
      if (approvalFor(asked.messages, asked.toolCallId) !== undefined) return true;
      const identity = identityOf(asked.context as C | undefined);
      const toolCallId = askedCallId(asked.toolCallId, approvalsBefore(asked.messages, asked.toolCallId));
      const call = callOf(declared, toolCallId, input, identity);
      if ((await lookup.pendingFor(call, CHECK_IN)).length > 0) return true;
      const outcome = await dispatcher.dispatch(
        { toolName: call.toolName, args: input, toolCallId },
        identity !== undefined ? { identity } : {},
      );
      if (outcome.kind === 'paused' && outcome.checkIn.asker === CHECK_IN) {
        lookup.remember(outcome.checkIn);
        return true;
      }
      const key = decidedKey(callOf(declared, asked.toolCallId, input, identity));
      if (key === undefined) return true;
      if (decided.size >= DECIDED_LIMIT) decided.delete(decided.keys().next().value!);
      decided.set(key, outcome);
      return false;
    } catch {
      // Nothing could be decided here: ask, and `execute` refuses an approval it cannot match.
      return true;
    }
  }

  async function execute(
    declared: ToolgateTool,
    input: unknown,
    execution: ToolExecutionOptions<C>,
    viaSdk: boolean,
  ): Promise<string> {
    const identity = identityOf(execution.context as C | undefined);
    const signal = execution.abortSignal;
    const toolCallId = execution.toolCallId;
    let outcome: DispatchOutcome | undefined;
    if (viaSdk) {
      const key = decidedKey(callOf(declared, toolCallId, input, identity));
      outcome = key === undefined ? undefined : decided.get(key);
      if (key !== undefined) decided.delete(key);
      const approval = outcome === undefined ? approvalFor(execution.messages, toolCallId) : undefined;
      if (approval?.approved === true)
        outcome = await answer(declared, input, toolCallId, approval, identity, signal);
    }
    outcome ??= await dispatcher.dispatch(
      { toolName: declared.schema.name, args: input, toolCallId },
      { ...(identity !== undefined ? { identity } : {}), ...(signal !== undefined ? { signal } : {}) },
    );
    for (let pauses = 0; outcome.kind === 'paused' && pauses < MAX_PAUSES_PER_CALL; pauses++) {
      const decision = await onPause(outcome);
      if (decision === undefined) break;
      outcome = await dispatcher.resume(outcome.checkIn, decision, signal !== undefined ? { signal } : {});
    }
    try {
      options.onOutcome?.(outcome);
    } catch {
      // An observer that throws is the observer's bug; the model still reads what the chain decided.
    }
    return outcome.content;
  }

  /** The SDK's approval answers the one request raised when it asked, through `resume`, once. */
  async function answer(
    declared: ToolgateTool,
    input: unknown,
    toolCallId: string,
    approval: SdkApproval,
    identity: Identity | undefined,
    signal: AbortSignal | undefined,
  ): Promise<DispatchOutcome> {
    const call = callOf(declared, askedCallId(toolCallId, approval.ordinal), input, identity);
    let requests;
    try {
      requests = await lookup.pendingFor(call, CHECK_IN);
    } catch {
      return refused(
        declared,
        toolCallId,
        'CHECKIN_STORE_FAILED',
        refusalReason(
          `the approval for '${call.toolName}' could not be checked because the check-in store is unavailable`,
          'Retrying later may help',
        ),
        true,
      );
    }
    const [request, ...duplicates] = requests;
    if (request === undefined) {
      return refused(
        declared,
        toolCallId,
        'CHECKIN_UNMATCHED',
        refusalReason(
          `this approval for '${call.toolName}' answers no request that is still waiting: it was already used, it expired, or the call's arguments or caller changed since a person saw it`,
          'Sending the same approval again will not help',
          'Ask for a new approval',
        ),
        false,
      );
    }
    // One approval answers one request: a duplicate raised for the same ask is withdrawn, never left to a replay.
    for (const duplicate of duplicates) await lookup.revoke(duplicate.id);
    lookup.settle(request.id);
    return dispatcher.resume(
      request,
      checkInApproved({ by: approverOf(approval.approvalId) }),
      signal !== undefined ? { signal } : {},
    );
  }

  async function onPause(outcome: PausedOutcome): Promise<CheckInDecision | undefined> {
    if (options.onPause === undefined) return undefined;
    try {
      return await options.onPause(outcome.checkIn, outcome);
    } catch {
      // An onPause that throws decided nothing: the call stays paused, never approved.
      return undefined;
    }
  }

  return { needsApproval, execute };
}

/** The adapter's own refusal, when no chain ran: the approval answers nothing. */
function refused(
  declared: ToolgateTool,
  toolCallId: string,
  code: string,
  reason: string,
  retryable: boolean,
): RefusedOutcome {
  return {
    kind: 'refused',
    toolName: declared.schema.name,
    ...(declared.source !== undefined ? { toolSource: declared.source } : {}),
    toolCallId,
    chainId: '',
    ran: false,
    ledger: [],
    content: `[${CHECK_IN} refused: ${reason}]`,
    gate: CHECK_IN,
    code,
    reason,
    retryable,
  };
}
