// A check-in asked at a 2026-07-28 client by mcpServe alone: the request cannot carry a question to
// the client mid-call, so the paused call is answered input-required with the approval form (every
// argument shown, as on the 2025-11-25 path) and a sealed state (check-in-state.ts). The retry runs
// the chain again (a changed policy applies) and carries the person's answer to the check-in the
// state names, through the dispatcher's signed, single-use resume: approve runs the call once,
// decline refuses it with the person's reason.

import {
  formatCount,
  refusalReason,
  type CheckInRequest,
  type CheckInStore,
  type Dispatcher,
  type DispatchOutcome,
  type Identity,
  type PausedOutcome,
  type TraceContext,
} from '@toolgate/core';
import type { ClientCapabilities, InputRequiredResult } from '@modelcontextprotocol/server';
import { approvalForm, formDecision, MAX_FORM_ARGUMENTS_CHARS } from './elicit';
import type { CheckInStateClaims, CheckInStates } from './check-in-state';
import { refusedBy, type McpSettled } from './results';

/** The key of the approval question in the input-required answer and its retry's `inputResponses`. */
export const APPROVAL_INPUT = 'approval';
// Each round answers a different middleware's ask in the same call; more than this is a loop.
export const MAX_CHECK_IN_ROUNDS = 8;

type Refused = Extract<McpSettled, { kind: 'refused' }>;

/** The client cannot show a person the question. */
export const checkInUnavailable = (request: CheckInRequest): Refused =>
  refusedBy(
    request.asker,
    'CHECKIN_UNAVAILABLE',
    refusalReason(
      `'${request.toolName}' needs a person's approval, and this MCP client cannot ask one (it does not support elicitation)`,
      'Retrying will not help',
      'Tell the user the action needs approval, or use a client that supports elicitation',
    ),
  );

/** The form cannot show every argument in full, so nobody may approve it there. */
export const checkInFormTooLong = (request: CheckInRequest, chars: number): Refused =>
  refusedBy(
    request.asker,
    'CHECKIN_FORM_TOO_LONG',
    refusalReason(
      `'${request.toolName}' needs a person's approval, but its arguments are too long to show in full in the MCP client's approval form (${formatCount(chars)} characters; at most ${formatCount(MAX_FORM_ARGUMENTS_CHARS)})`,
      'Retrying with the same arguments will not help',
      'Call it again with shorter arguments, or do the work in smaller calls',
    ),
  );

export const checkInLoop = (request: CheckInRequest): Refused =>
  refusedBy(
    request.asker,
    'CHECKIN_LOOP',
    refusalReason(
      `'${request.toolName}' asked for approval too many times in one call`,
      'Retrying will not help',
    ),
  );

/** A state that did not open for this call, was used already, or expired; nothing ran. */
export const checkInStateInvalid = (toolName: string, gate = 'check-in'): Refused =>
  refusedBy(
    gate,
    'CHECKIN_STATE_INVALID',
    refusalReason(
      `the requestState sent with '${toolName.slice(0, 200)}' is not one this server gave this caller for this call, or it was used already or expired`,
      'Retrying with it will not help',
      'Call the tool again without a requestState to ask for approval anew',
    ),
  );

/** Too many answered states are kept at once to take another without forgetting one. */
export const checkInStatesFull = (toolName: string): Refused =>
  refusedBy(
    'check-in',
    'CHECKIN_BUSY',
    refusalReason(
      `too many approvals are being answered on this server to take the one sent with '${toolName.slice(0, 200)}'`,
      'Retrying a little later with the same requestState can help',
    ),
    true,
  );

const storeFailed = (request: CheckInRequest): Refused =>
  refusedBy(
    request.asker,
    'CHECKIN_STORE_FAILED',
    refusalReason(
      `the approval for '${request.toolName}' could not be checked because the check-in store is unavailable`,
      'Calling again without a requestState later may help',
    ),
    true,
  );

export interface ModernCheckInCall {
  readonly dispatcher: Dispatcher;
  readonly identity: Identity | undefined;
  readonly toolName: string;
  /** The arguments as the client sent them, which a state binds. */
  readonly args: unknown;
  /** What the request declared the client can do. */
  readonly declared: ClientCapabilities;
  /** The answers the retry carries. */
  readonly inputResponses: unknown;
  readonly signal: AbortSignal;
  readonly traceContext?: TraceContext;
  /** The chain's check-in store, where the check-in a state names is read. */
  readonly store: CheckInStore | undefined;
  readonly states: CheckInStates;
  /** The opened state a retry carried, when it carried one of ours. */
  readonly retry?: CheckInStateClaims;
  /** Revokes a check-in nobody will answer; never throws. */
  revoke(id: string): Promise<void>;
}

/** A client that declared form elicitation (an empty capability means form mode). */
const declaresForm = (declared: ClientCapabilities): boolean => {
  const { elicitation } = declared;
  return elicitation !== undefined && (elicitation.form !== undefined || elicitation.url === undefined);
};

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Settles a paused 2026-07-28 call: asks at the client, or carries out the answer its retry brought. */
export async function settleModernCheckIn(
  first: PausedOutcome,
  call: ModernCheckInCall,
): Promise<McpSettled> {
  if (call.retry === undefined) return askAtClient(first.checkIn, 0, call);
  const retried = await settleRetry(first, call.retry, call);
  if (!('round' in retried)) return retried;
  const { outcome, round } = retried;
  if (outcome.kind === 'paused') return askAtClient(outcome.checkIn, round, call);
  return { kind: 'outcome', outcome, via: 'elicitation' };
}

/** The input-required answer asking about `request`; a refusal (and the check-in revoked) when it cannot. */
async function askAtClient(
  request: CheckInRequest,
  round: number,
  call: ModernCheckInCall,
): Promise<McpSettled> {
  const refuse = async (settled: Refused): Promise<Refused> => {
    await call.revoke(request.id);
    return settled;
  };
  if (round >= MAX_CHECK_IN_ROUNDS) return refuse(checkInLoop(request));
  if (!declaresForm(call.declared)) return refuse(checkInUnavailable(request));
  const shown = approvalForm(request);
  if (shown.form === undefined) return refuse(checkInFormTooLong(request, shown.tooLong));
  const result: InputRequiredResult = {
    resultType: 'input_required',
    inputRequests: { [APPROVAL_INPUT]: { method: 'elicitation/create', params: shown.form } as never },
    requestState: call.states.seal(call, request, round),
  };
  return { kind: 'input-required', checkInId: request.id, result };
}

/**
 * A retry with an opened state. The chain paused this retry with a check-in of its own; the state
 * names the one the person was asked about, which decides when it is still pending and the retry
 * paused for the same call (same chain, same args as shown). A changed chain asks afresh.
 */
async function settleRetry(
  first: PausedOutcome,
  state: CheckInStateClaims,
  call: ModernCheckInCall,
): Promise<McpSettled | { readonly outcome: DispatchOutcome; readonly round: number }> {
  const own = first.checkIn;
  const round = state.round + 1;
  const { store } = call;
  if (store === undefined) return checkInStateInvalid(own.toolName, own.asker);
  let asked;
  try {
    asked = await store.get(state.checkInId);
  } catch {
    await call.revoke(own.id);
    return storeFailed(own);
  }
  // Its expiry is the state's, checked when the state was read.
  if (asked === undefined || asked.state !== 'pending') {
    await call.revoke(own.id);
    return checkInStateInvalid(own.toolName, own.asker);
  }
  // The policy or what the asker is shown changed since the person was asked: their answer was to
  // another question, so this one is asked instead.
  if (asked.request.chainId !== own.chainId || asked.request.argsDigest !== own.argsDigest) {
    await call.revoke(asked.request.id);
    return { outcome: first, round };
  }
  await call.revoke(own.id);
  const answer = isRecord(call.inputResponses) ? call.inputResponses[APPROVAL_INPUT] : undefined;
  // No answer to the form: the same check-in is asked again.
  if (!isRecord(answer)) return askAtClient(asked.request, round, call);
  const decision = formDecision(answer, call.identity?.principal ?? 'mcp-client');
  const outcome = await call.dispatcher.resume(asked.request, decision, {
    signal: call.signal,
    ...(call.traceContext !== undefined ? { traceContext: call.traceContext } : {}),
  });
  return { outcome, round };
}
