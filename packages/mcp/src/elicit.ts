// Check-in over MCP elicitation: the paused call's question goes to the person at the client as a
// form (approve or decline, an optional note), and their answer becomes a check-in decision. The
// person sees every argument in full, or the check-in is refused: never an approval of args unseen.

import type { Server } from '@modelcontextprotocol/server';
import type { ElicitRequestFormParams } from '@modelcontextprotocol/server';
import { checkInApproved, checkInDeclined, type CheckInDecision, type CheckInRequest } from '@toolgate/core';

/** Characters the arguments may take in the form; past this, nobody reads them all, so nobody approves. */
export const MAX_FORM_ARGUMENTS_CHARS = 20_000;
/** Longer lines are folded onto continuation lines, never cut. */
const FOLD_AT = 100;
const CONTINUED = '    ↳ ';
/** The evidence is the operator's summary, not what runs: it may be cut. */
const MAX_EVIDENCE_CHARS = 2000;
// Characters a person cannot see or that reorder what they see (C1 controls, zero-width and bidi
// controls, line separators, tag characters): written as \u escapes, so a value cannot hide or fake text.
const INVISIBLE =
  // eslint-disable-next-line no-misleading-character-class -- each entry is one code point, on purpose
  /[\u0080-\u009f\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u2028-\u202e\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff0-\ufffb]|\udb40[\udc00-\udc7f]/g;
const PLAIN_KEY = /^[A-Za-z_$][A-Za-z0-9_$.-]*$/;

/** Whether the connected client said it can show a form to its user. */
export function canElicitForm(server: Server): boolean {
  const elicitation = server.getClientCapabilities()?.elicitation;
  if (elicitation === undefined) return false;
  // An empty elicitation capability means form mode.
  return elicitation.form !== undefined || elicitation.url === undefined;
}

const visible = (text: string): string =>
  text.replace(INVISIBLE, (char) =>
    [...char].map((unit) => `\\u${unit.charCodeAt(0).toString(16).padStart(4, '0')}`).join(''),
  );

/** A value as JSON, pretty when nested, with nothing invisible in it; JSON keeps a string on one line. */
function jsonOf(value: unknown): string {
  let text: string | undefined;
  try {
    text = JSON.stringify(value, null, 2);
  } catch {
    // Args come from a dispatch that already read them as JSON; this is only a guard.
  }
  return visible(text ?? String(value));
}

/** Lines over FOLD_AT split onto marked continuation lines, each piece kept. */
function folded(line: string): string[] {
  if (line.length <= FOLD_AT) return [line];
  const pieces = [line.slice(0, FOLD_AT)];
  for (let at = FOLD_AT; at < line.length; at += FOLD_AT)
    pieces.push(CONTINUED + line.slice(at, at + FOLD_AT));
  return pieces;
}

/**
 * Every argument as the person reads it: a header naming each key, then one entry per argument,
 * shortest value first (so a long memo cannot push the amount out of view), each value in full.
 */
export function argumentsText(review: unknown): string {
  if (typeof review !== 'object' || review === null || Array.isArray(review))
    return `Arguments:\n${folded(jsonOf(review)).join('\n')}`;
  const entries = Object.entries(review as Record<string, unknown>).map(([key, value]) => {
    const name = PLAIN_KEY.test(key) ? key : jsonOf(key);
    return { name, value: jsonOf(value) };
  });
  if (entries.length === 0) return 'Arguments: none';
  entries.sort((a, b) => a.value.length - b.value.length || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const lines = [
    `Arguments (${entries.length}), each shown in full: ${entries.map((e) => e.name).join(', ')}`,
  ];
  for (const { name, value } of entries) {
    const [first = '', ...rest] = value.split('\n');
    lines.push(...folded(`  ${name}: ${first}`), ...rest.flatMap((line) => folded(`    ${line}`)));
  }
  return lines.join('\n');
}

function evidenceText(evidence: unknown): string {
  const text = jsonOf(evidence);
  return text.length > MAX_EVIDENCE_CHARS
    ? `${text.slice(0, MAX_EVIDENCE_CHARS)}… (evidence cut at ${MAX_EVIDENCE_CHARS} of ${text.length} characters)`
    : text;
}

/** The form to show, or how long the arguments are when they are too long to show in full. */
export type ApprovalForm =
  { readonly form: ElicitRequestFormParams } | { readonly tooLong: number; readonly form?: never };

/** The form the person sees: the question, every argument in full, and the evidence summary. */
export function approvalForm(request: CheckInRequest): ApprovalForm {
  const shownArguments = argumentsText(request.review);
  if (shownArguments.length > MAX_FORM_ARGUMENTS_CHARS) return { tooLong: shownArguments.length };
  const from = request.toolSource === undefined ? '' : ` from MCP server '${visible(request.toolSource)}'`;
  const lines = [
    visible(request.question),
    '',
    `Tool: '${request.toolName}'${from}`,
    shownArguments,
    ...(request.evidence === undefined ? [] : [`Evidence:\n${evidenceText(request.evidence)}`]),
  ];
  return {
    form: {
      mode: 'form',
      message: lines.join('\n'),
      requestedSchema: {
        type: 'object',
        properties: {
          decision: {
            type: 'string',
            title: 'Decision',
            description: `Approve or decline this call of '${request.toolName}'.`,
            enum: ['approve', 'decline'],
          },
          note: { type: 'string', title: 'Note', description: 'Optional: why, kept with the decision.' },
        },
        required: ['decision'],
      },
    },
  };
}

/**
 * Asks the person at the client with `approvalForm(request)`. Declining the form, or dismissing it,
 * declines the call. Rejects when no answer arrives (the client failed, went away, or took longer
 * than `timeoutMs`), and, without asking, when the arguments are too long to show in full: check
 * `approvalForm(request).form` first to say so to the model.
 */
export async function askPerson(
  server: Server,
  request: CheckInRequest,
  by: string,
  options: { relatedRequestId: string | number; signal: AbortSignal; timeoutMs: number },
): Promise<CheckInDecision> {
  const { form } = approvalForm(request);
  if (form === undefined) throw new RangeError('the arguments are too long to show in full');
  const answer = await server.elicitInput(form, {
    relatedRequestId: options.relatedRequestId,
    signal: options.signal,
    timeout: options.timeoutMs,
  });
  return formDecision(answer, by);
}

/**
 * The decision an answer to `approvalForm` carries (the client's elicitation result, or a 2026-07-28
 * retry's input response). Only an accepted form saying approve approves; anything else declines.
 */
export function formDecision(
  answer: { readonly action?: unknown; readonly content?: Record<string, unknown> | undefined },
  by: string,
): CheckInDecision {
  const note = typeof answer.content?.['note'] === 'string' ? answer.content['note'].trim() : '';
  if (answer.action === 'accept' && answer.content?.['decision'] === 'approve')
    return checkInApproved(note === '' ? { by } : { by, note });
  if (answer.action === 'cancel')
    return checkInDeclined({ by, reason: 'the approval request was dismissed without a decision' });
  return checkInDeclined({ by, reason: note === '' ? 'declined in the MCP client' : note });
}
