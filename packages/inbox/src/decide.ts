// Recording a decision, shared by the pages, the JSON API and webhook links: checked input, the
// store's once-only `decide`, and — when the inbox runs beside the dispatcher — carrying it out.

import type { CheckInRecord, DispatchOutcome, RecordedDecision, StandingGrant } from '@toolgate/core';
import { grantToCreate, type GrantInput } from './grants';
import type { InboxContext } from './options';
import { expired } from './records';

export const MAX_NOTE_CHARS = 2000;
const MAX_ARGS_CHARS = 1_000_000;
const DEFAULT_REASON = 'a person declined this call';

/** What the approver asked for, as received. */
export type DecisionInput =
  | {
      readonly approve: true;
      readonly note?: unknown;
      readonly args?: unknown;
      /** Also a standing grant for calls like this one, within bounds. */
      readonly grant?: GrantInput;
    }
  | { readonly approve: false; readonly reason?: unknown };

/** What happened when the decision was carried out, without the result itself. */
export type OutcomeSummary =
  | { readonly kind: 'result'; readonly ran: true }
  | {
      readonly kind: 'refused';
      readonly ran: boolean;
      readonly gate: string;
      readonly code: string;
      readonly reason: string;
    }
  | { readonly kind: 'paused'; readonly ran: false; readonly checkInId: string }
  | { readonly kind: 'failed'; readonly ran: boolean }
  | { readonly kind: 'error'; readonly ran: false };

export type DecideAnswer =
  | {
      readonly ok: true;
      readonly record: CheckInRecord;
      readonly outcome?: OutcomeSummary;
      /** The standing grant made with this approval. */
      readonly grant?: StandingGrant;
      /** Why the standing grant asked for was not made (it could not be recorded, or the store failed). */
      readonly grantError?: string;
    }
  | {
      readonly ok: false;
      readonly status: 400 | 409;
      readonly error: 'bad_request' | 'already_decided' | 'expired' | 'not_pending';
      readonly message: string;
      readonly record?: CheckInRecord;
    };

const bad = (message: string): DecideAnswer => ({ ok: false, status: 400, error: 'bad_request', message });

function optionalText(value: unknown, name: string): string | undefined | DecideAnswer {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') return bad(`'${name}' must be a string.`);
  const text = value.trim();
  if (text.length > MAX_NOTE_CHARS) return bad(`'${name}' is longer than ${MAX_NOTE_CHARS} characters.`);
  return text === '' ? undefined : text;
}

const isAnswer = (value: unknown): value is DecideAnswer =>
  typeof value === 'object' && value !== null && 'ok' in value;

/** Changed args as given (an object, or JSON text from a form), or the fault. */
function changedArgs(value: unknown): Record<string, unknown> | undefined | DecideAnswer {
  if (value === undefined || value === null) return undefined;
  let parsed = value;
  if (typeof value === 'string') {
    if (value.length > MAX_ARGS_CHARS) return bad('The changed arguments are too long.');
    try {
      parsed = JSON.parse(value);
    } catch {
      return bad('The changed arguments are not valid JSON.');
    }
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    return bad('The changed arguments must be a JSON object, like the arguments shown.');
  if (JSON.stringify(parsed).length > MAX_ARGS_CHARS) return bad('The changed arguments are too long.');
  return parsed as Record<string, unknown>;
}

function decisionOf(inbox: InboxContext, by: string, input: DecisionInput): RecordedDecision | DecideAnswer {
  const decidedAt = new Date(inbox.now()).toISOString();
  if (!input.approve) {
    const reason = optionalText(input.reason, 'reason');
    if (isAnswer(reason)) return reason;
    return { approved: false, by, reason: reason ?? DEFAULT_REASON, decidedAt };
  }
  const note = optionalText(input.note, 'note');
  if (isAnswer(note)) return note;
  const args = changedArgs(input.args);
  if (isAnswer(args)) return args;
  return {
    approved: true,
    by,
    ...(note !== undefined ? { note } : {}),
    ...(args !== undefined ? { args } : {}),
    decidedAt,
  };
}

function notOpen(inbox: InboxContext, record: CheckInRecord): DecideAnswer | undefined {
  if (record.decision !== undefined) {
    const { decision } = record;
    const what = decision.approved ? 'approved' : 'declined';
    return {
      ok: false,
      status: 409,
      error: 'already_decided',
      message: `${decision.by} already ${what} this check-in at ${decision.decidedAt}.`,
      record,
    };
  }
  if (record.state !== 'pending')
    return {
      ok: false,
      status: 409,
      error: 'not_pending',
      message: `This check-in is ${record.state}.`,
      record,
    };
  if (expired(inbox, record))
    return { ok: false, status: 409, error: 'expired', message: 'This check-in has expired.', record };
  return undefined;
}

/** Why changed args cannot be approved, as one sentence, or undefined when they fit. */
async function argsProblem(
  inbox: InboxContext,
  record: CheckInRecord,
  args: Readonly<Record<string, unknown>>,
): Promise<string | undefined> {
  let problems: readonly string[];
  try {
    problems = await inbox.checkArgs!(record.request, args);
    if (!Array.isArray(problems)) throw new TypeError('checkArgs did not answer a list');
  } catch {
    return 'The changed arguments could not be checked; nothing was recorded. Try again.';
  }
  if (problems.length === 0) return undefined;
  const listed = problems.slice(0, 10).map(String).join('; ');
  return `The changed arguments do not fit the tool: ${listed}. Nothing was recorded; fix them and approve again.`;
}

export function summarize(outcome: DispatchOutcome): OutcomeSummary {
  switch (outcome.kind) {
    case 'result':
      return { kind: 'result', ran: true };
    case 'refused':
      return {
        kind: 'refused',
        ran: outcome.ran,
        gate: outcome.gate,
        code: outcome.code,
        reason: outcome.reason,
      };
    case 'paused':
      return { kind: 'paused', ran: false, checkInId: outcome.checkIn.id };
    case 'failed':
      return { kind: 'failed', ran: outcome.ran };
  }
}

/**
 * Makes `grant`: told to the host first (its audit log), so a grant that cannot be recorded never
 * comes into force, then stored.
 */
async function madeGrant(
  inbox: InboxContext,
  grant: StandingGrant,
  by: string,
): Promise<{ readonly grant?: StandingGrant; readonly grantError?: string }> {
  if (!(await inbox.onGrant({ kind: 'created', grant, by })))
    return {
      grantError: 'The approval is recorded, but the standing grant was not made: it could not be recorded.',
    };
  try {
    await inbox.grants!.create(grant);
  } catch {
    return { grantError: 'The approval is recorded, but the standing grant could not be saved.' };
  }
  return { grant };
}

/** Records `by`'s decision on `record` once; carries it out when the inbox holds a `carryOut`. */
export async function decide(
  inbox: InboxContext,
  record: CheckInRecord,
  by: string,
  input: DecisionInput,
): Promise<DecideAnswer> {
  const decision = decisionOf(inbox, by, input);
  if (isAnswer(decision)) return decision;
  const closed = notOpen(inbox, record);
  if (closed !== undefined) return closed;
  if (decision.approved && decision.args !== undefined && inbox.checkArgs !== undefined) {
    const problem = await argsProblem(inbox, record, decision.args);
    if (problem !== undefined) return bad(problem);
  }
  let grant: StandingGrant | undefined;
  if (input.approve && input.grant !== undefined && decision.approved) {
    // Checked before anything is recorded: a grant that would widen the call refuses the approval.
    const made = await grantToCreate(inbox, record.request, decision.args, by, input.grant);
    if (typeof made === 'string') return bad(made);
    grant = made;
  }
  const id = record.request.id;
  const kept = await inbox.checkIns.decide(id, decision);
  const after = (await inbox.checkIns.get(id)) ?? record;
  if (!kept)
    return (
      notOpen(inbox, after) ?? {
        ok: false,
        status: 409,
        error: 'not_pending',
        message: 'This check-in can no longer be decided.',
        record: after,
      }
    );
  // The approval stands either way; a grant is made whole or not at all, and the answer says which.
  const granted = grant === undefined ? {} : await madeGrant(inbox, grant, by);
  if (inbox.carryOut === undefined) return { ok: true, record: after, ...granted };
  let outcome: OutcomeSummary;
  try {
    outcome = summarize(await inbox.carryOut(after));
  } catch {
    outcome = { kind: 'error', ran: false };
  }
  return { ok: true, record: (await inbox.checkIns.get(id)) ?? after, outcome, ...granted };
}
