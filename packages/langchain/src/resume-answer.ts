// What a LangGraph resume value decides: only the check-in requests it names. LangGraph hands one
// un-keyed resume value to every pending interrupt, so an answer that names no request must decide
// nothing, or one "approve" would approve every question asked at once.

import { checkInApproved, checkInDeclined } from '@toolgate/core';

/** LangChain's human-in-the-loop decision, naming the check-in request it decides. */
export interface NamedDecision {
  readonly type: 'approve' | 'reject';
  readonly checkInId: string;
  readonly message?: string;
}

/** One request an answer names, and what it says about it. */
export interface Named {
  readonly id: string;
  readonly value: unknown;
}

// An answer is client data; a huge one must not turn into thousands of store reads.
const MAX_NAMED = 64;

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * The requests an answer names, in order: each `{ decisions: [{ checkInId, type }] }` entry, then each
 * `{ [checkInId]: decision }` key. Anything else names nothing.
 */
export function namedIn(answer: unknown): Named[] {
  const named: Named[] = [];
  try {
    if (!isRecord(answer)) return named;
    const decisions = answer['decisions'];
    if (Array.isArray(decisions)) {
      for (const entry of decisions.slice(0, MAX_NAMED))
        if (isRecord(entry) && typeof entry['checkInId'] === 'string')
          named.push({ id: entry['checkInId'], value: entry });
    }
    for (const key of Object.keys(answer).slice(0, MAX_NAMED))
      if (key !== 'decisions') named.push({ id: key, value: answer[key] });
  } catch {
    // A getter or proxy that throws names nothing more.
  }
  return named.slice(0, MAX_NAMED);
}

/** A named value as a check-in decision: LangChain's approve/reject, or a toolgate decision as given. */
export function decisionOf(value: unknown, by: () => string): unknown {
  if (!isRecord(value)) return value;
  if (value['type'] === 'approve') return checkInApproved({ by: by() });
  if (value['type'] === 'reject') {
    const message = value['message'];
    return checkInDeclined({
      by: by(),
      reason: typeof message === 'string' && message.trim() !== '' ? message : 'declined',
    });
  }
  // Anything else goes to resume as given; resume refuses what is not a decision, and the model reads why.
  return value;
}
