// One governed AI SDK tool call. Whatever asks the SDK's approval question (the tool's `needsApproval`,
// `toolgateApproval`, or the app's own `toolApproval`), the approval that comes back answers exactly one
// thing, once: the check-in request the chain raised for the model's call when the SDK asked, or, for
// a call whose chain did not ask, that very call as the SDK was handed it. History the app sends back
// only says which request or call to look up: a replay, an edited input, a reused tool call id or a
// forged approval finds none that is still waiting, and is refused.

import {
  canonicalJson,
  checkInApproved,
  checkInLookup,
  refusalReason,
  type ApprovedCall,
  type CheckInDecision,
  type CheckInLookup,
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

/** What the SDK hands an approval question besides the input. */
export interface ApprovalQuestion {
  readonly toolCallId: string;
  readonly messages: ModelMessage[];
}

/** An answer to the SDK's approval question, as `toolApproval` takes it. */
export type ApprovalStatus =
  | { readonly type: 'not-applicable' }
  | { readonly type: 'approved' | 'denied' | 'user-approval'; readonly reason?: string };

// A call that keeps asking new questions is a bug in its chain; stop rather than loop forever.
const MAX_PAUSES_PER_CALL = 10;
// Calls remembered between the SDK's question and its `execute`: outcomes decided, calls awaiting.
const REMEMBERED_LIMIT = 1_000;
const CHECK_IN = 'check-in';
const NOT_APPLICABLE: ApprovalStatus = { type: 'not-applicable' };

/**
 * What every adapter over one dispatcher shares in this process, so an approval asked by
 * `toolgateApproval` is answered in the ToolSet's `execute`: the requests raised here, the outcomes
 * the chain decided when the SDK asked, and the calls the SDK was handed and has not executed.
 */
interface Rendezvous {
  readonly index: CheckInLookup;
  readonly decided: Map<string, DispatchOutcome>;
  readonly awaiting: Map<string, Handing[]>;
}

/** One call the SDK was handed: how many handings of it are still unsettled. */
interface Handing {
  readonly call: ApprovedCall;
  readonly args: unknown;
  readonly identity: Identity | undefined;
  count: number;
}

const rendezvous = new WeakMap<Dispatcher, Rendezvous>();

function rendezvousOf(dispatcher: Dispatcher): Rendezvous {
  let shared = rendezvous.get(dispatcher);
  if (shared === undefined) {
    shared = { index: checkInLookup(), decided: new Map(), awaiting: new Map() };
    rendezvous.set(dispatcher, shared);
  }
  return shared;
}

function bounded<V>(map: Map<string, V>, key: string, value: V): void {
  if (!map.has(key) && map.size >= REMEMBERED_LIMIT) map.delete(map.keys().next().value!);
  map.set(key, value);
}

/** A call's key: tool, source, call id, identity, args. Undefined when the args have no JSON form. */
function keyOf(call: ApprovedCall): string | undefined {
  try {
    return canonicalJson(call);
  } catch {
    return undefined;
  }
}

/** Whether the approval question's answer lets the SDK run the call without a person. */
const userApproval = (app: ApprovalStatus): ApprovalStatus =>
  app.type === 'user-approval' ? app : { type: 'user-approval' };

export function governor<C extends ToolContext>(
  dispatcher: Dispatcher,
  options: Pick<AiSdkToolsOptions<C>, 'checkIns' | 'onPause' | 'onOutcome'>,
  identityOf: (context: C | undefined) => Identity | undefined,
) {
  const shared = rendezvousOf(dispatcher);
  const { decided, awaiting } = shared;
  const lookup = options.checkIns !== undefined ? checkInLookup({ store: options.checkIns }) : shared.index;

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

  /** The call as the SDK asks about it now: its id, and which ask for that id this is. */
  const askedCall = (
    declared: ToolgateTool,
    input: unknown,
    asked: ApprovalQuestion,
    identity: Identity | undefined,
  ): ApprovedCall =>
    callOf(
      declared,
      askedCallId(asked.toolCallId, approvalsBefore(asked.messages, asked.toolCallId)),
      input,
      identity,
    );

  // Calls the SDK was handed, by tool and asked call id, each with a count: +1 when the SDK is handed
  // the call, -1 when it is settled. The SDK's streaming path may report the handing after the call
  // was settled, so a count may dip below zero for a moment; only a positive count is a call still
  // awaiting an approval. The SDK passes the same input object along one step, so matching by
  // reference is the fast path; args that arrive as another object (a history sent back) are compared
  // by their canonical JSON.
  const slotOf = (call: ApprovedCall): string =>
    `${call.toolName}\u0000${call.toolSource ?? ''}\u0000${call.toolCallId}`;

  function handing(call: ApprovedCall, create: boolean): Handing | undefined {
    const slot = slotOf(call);
    let list = awaiting.get(slot);
    const same = list?.find((h) => h.args === call.args && h.identity === call.identity);
    if (same !== undefined) return same;
    if (list !== undefined) {
      const key = keyOf(call);
      const equal = key === undefined ? undefined : list.find((h) => keyOf(h.call) === key);
      if (equal !== undefined) return equal;
    }
    if (!create) return undefined;
    if (list === undefined) {
      if (awaiting.size >= REMEMBERED_LIMIT) awaiting.delete(awaiting.keys().next().value!);
      list = [];
      awaiting.set(slot, list);
    }
    const made: Handing = { call, args: call.args, identity: call.identity, count: 0 };
    list.push(made);
    return made;
  }

  function count(call: ApprovedCall, by: number): void {
    const entry = handing(call, true)!;
    entry.count += by;
    if (entry.count === 0) {
      const slot = slotOf(call);
      const rest = (awaiting.get(slot) ?? []).filter((h) => h !== entry);
      if (rest.length === 0) awaiting.delete(slot);
      else awaiting.set(slot, rest);
    }
  }

  /** The SDK was handed this call: an approval of it may come back, once. */
  const handed = (call: ApprovedCall): void => count(call, +1);

  /** The SDK ran this call, or a request was raised for it: no approval answers it as handed. */
  const settleHanded = (call: ApprovedCall): void => count(call, -1);

  /** Spends one handing of this call for an approval; answers whether one was waiting. */
  function spendHanded(call: ApprovedCall): boolean {
    const entry = handing(call, false);
    if (entry === undefined || entry.count <= 0) return false;
    count(call, -1);
    return true;
  }

  /** Called by the SDK for every call of the tool before it decides about approval. */
  function inputAvailable(
    declared: ToolgateTool,
    input: unknown,
    asked: ApprovalQuestion & { readonly context?: unknown },
  ): void {
    try {
      handed(askedCall(declared, input, asked, identityOf(asked.context as C | undefined)));
    } catch {
      // A call that cannot be keyed is never approved later: its approval is refused.
    }
  }

  /**
   * The approval question, answered from the chain: asked when the SDK decides whether a person must
   * approve the call, before anything runs. `app` is the app's own answer (not-applicable when it has
   * none). A check-in the chain raises is put to the SDK's person and answered once by the approval;
   * a refusal is the SDK's denial with the refusal's reason; a call the chain runs or pauses for another
   * asker needs no SDK approval (`execute` answers with that outcome).
   */
  async function question(
    declared: ToolgateTool,
    input: unknown,
    asked: ApprovalQuestion,
    identity: Identity | undefined,
    app: ApprovalStatus,
    refusals: 'deny' | 'execute',
  ): Promise<ApprovalStatus> {
    if (app.type === 'denied') return app;
    let call: ApprovedCall | undefined;
    try {
      // The SDK asks again while it executes an approval it collected: that approval's request exists.
      if (approvalFor(asked.messages, asked.toolCallId) !== undefined) return userApproval(app);
      call = askedCall(declared, input, asked, identity);
      // Only a tool that declares a check-in is dispatched here: the app asking a person about any
      // other tool must not find it already run, and one nobody asks about runs in `execute`.
      if (declared.checkIn === undefined || (declared.checkIn !== 'always' && app.type === 'user-approval'))
        return app;
      if ((await lookup.pendingFor(call, CHECK_IN)).length > 0) {
        settleHanded(call);
        return userApproval(app);
      }
      const outcome = await dispatcher.dispatch(
        { toolName: call.toolName, args: input, toolCallId: call.toolCallId },
        identity !== undefined ? { identity } : {},
      );
      if (outcome.kind === 'paused' && outcome.checkIn.asker === CHECK_IN) {
        // The request is the authority for this call now: its approval answers that, never the handing.
        settleHanded(call);
        shared.index.remember(outcome.checkIn);
        // The person sees why: the app's reason, else the chain's question (it names no argument value).
        const reason = (app.type === 'user-approval' ? app.reason : undefined) ?? outcome.checkIn.question;
        return reason !== '' ? { type: 'user-approval', reason } : { type: 'user-approval' };
      }
      if (outcome.kind === 'refused' && refusals === 'deny') {
        settleHanded(call);
        observe(outcome);
        return { type: 'denied', reason: outcome.reason };
      }
      const key = keyOf(callOf(declared, asked.toolCallId, input, identity));
      if (key === undefined) return userApproval(app);
      bounded(decided, key, outcome);
      return app.type === 'approved' ? app : NOT_APPLICABLE;
    } catch {
      // Nothing could be decided here: ask, and `execute` refuses an approval it cannot match.
      if (call !== undefined) settleHanded(call);
      return userApproval(app);
    }
  }

  /** The tool's own `needsApproval` (for `checkIn: 'always'`), when the app gives no `toolApproval`. */
  async function needsApproval(
    declared: ToolgateTool,
    input: unknown,
    asked: ApprovalQuestion & { readonly context?: unknown },
  ): Promise<boolean> {
    const identity = identityOf(asked.context as C | undefined);
    // A refusal is not put to a person: `execute` answers with it.
    const status = await question(declared, input, asked, identity, NOT_APPLICABLE, 'execute');
    return status.type === 'user-approval';
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
      // Most calls were decided by nobody before: keep the key's cost off their path.
      const key = decided.size === 0 ? undefined : keyOf(callOf(declared, toolCallId, input, identity));
      outcome = key === undefined ? undefined : decided.get(key);
      if (key !== undefined) decided.delete(key);
      const approval = outcome === undefined ? approvalFor(execution.messages, toolCallId) : undefined;
      if (approval?.approved === true)
        outcome = await answer(declared, input, toolCallId, approval, identity, signal);
      else settleHanded(askedCall(declared, input, execution, identity));
    }
    outcome ??= await dispatcher.dispatch(
      { toolName: declared.schema.name, args: input, toolCallId },
      { ...(identity !== undefined ? { identity } : {}), ...(signal !== undefined ? { signal } : {}) },
    );
    outcome = await whilePaused(outcome, signal);
    observe(outcome);
    return outcome.content;
  }

  async function whilePaused(outcome: DispatchOutcome, signal: AbortSignal | undefined) {
    for (let pauses = 0; outcome.kind === 'paused' && pauses < MAX_PAUSES_PER_CALL; pauses++) {
      const decision = await onPause(outcome);
      if (decision === undefined) break;
      outcome = await dispatcher.resume(outcome.checkIn, decision, signal !== undefined ? { signal } : {});
    }
    return outcome;
  }

  function observe(outcome: DispatchOutcome): void {
    try {
      options.onOutcome?.(outcome);
    } catch {
      // An observer that throws is the observer's bug; the model still reads what the chain decided.
    }
  }

  /**
   * The SDK's approval answers the one request raised when it asked, through `resume`, once; for a call
   * whose chain raised none (the app asked), the call the SDK was handed, once.
   */
  async function answer(
    declared: ToolgateTool,
    input: unknown,
    toolCallId: string,
    approval: SdkApproval,
    identity: Identity | undefined,
    signal: AbortSignal | undefined,
  ): Promise<DispatchOutcome> {
    const call = callOf(declared, askedCallId(toolCallId, approval.ordinal), input, identity);
    const by = approverOf(approval.approvalId);
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
      if (spendHanded(call)) return approvedAsHanded(call, by, signal);
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
    for (const duplicate of duplicates) {
      shared.index.settle(duplicate.id);
      await lookup.revoke(duplicate.id);
    }
    shared.index.settle(request.id);
    return dispatcher.resume(request, checkInApproved({ by }), signal !== undefined ? { signal } : {});
  }

  /**
   * The app asked a person about a call its chain raised no request for: the approval is that call's,
   * spent once above. The call runs through the chain now; a check-in the chain raises for exactly it
   * (a policy that requires one) is answered by the same approval, once.
   */
  async function approvedAsHanded(
    call: ApprovedCall,
    by: string,
    signal: AbortSignal | undefined,
  ): Promise<DispatchOutcome> {
    const outcome = await dispatcher.dispatch(
      { toolName: call.toolName, args: call.args, toolCallId: call.toolCallId },
      {
        ...(call.identity !== undefined ? { identity: call.identity } : {}),
        ...(signal !== undefined ? { signal } : {}),
      },
    );
    if (outcome.kind !== 'paused' || outcome.checkIn.asker !== CHECK_IN) return outcome;
    return dispatcher.resume(
      outcome.checkIn,
      checkInApproved({ by }),
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

  return { question, needsApproval, inputAvailable, execute };
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
