// What a caller hands `dispatch` and `resume`, read defensively: args as a frozen plain object,
// the identity as a frozen copy, a decision as the core's verbs build it.

import type { CheckInDecision } from './check-in';
import { frozenCopy } from './context';
import type { Identity } from './identity';
import type { ToolArgs } from './tool';

const EMPTY_ARGS: Readonly<ToolArgs> = Object.freeze({});

/** Args as a plain object, or the sentence fragment saying what is wrong with them. */
export function parseArgs(raw: unknown): Readonly<ToolArgs> | string {
  let value = raw;
  if (value === undefined) return EMPTY_ARGS;
  if (typeof value === 'string') {
    if (value.trim() === '') return EMPTY_ARGS;
    try {
      value = JSON.parse(value);
    } catch {
      return 'were not valid JSON';
    }
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return `must be a JSON object, not ${value === null ? 'null' : Array.isArray(value) ? 'an array' : `a ${typeof value}`}`;
  }
  try {
    return frozenCopy(value as ToolArgs);
  } catch {
    // A getter or proxy trap threw while the args were copied: they cannot be read, so they cannot run.
    return 'could not be read';
  }
}

/** The call's identity as a frozen copy: no middleware can move a call to another tenant's scope. */
export function identityOf(raw: unknown): Identity | undefined {
  if (typeof raw !== 'object' || raw === null) return undefined;
  const copy: { -readonly [K in keyof Identity]: Identity[K] } = { ...(raw as Identity) };
  // Roles are copied too: a caller mutating its array after dispatch must not change what policy saw.
  if (Array.isArray(copy.roles)) copy.roles = Object.freeze(copy.roles.filter((r) => typeof r === 'string'));
  else delete copy.roles;
  return Object.freeze(copy);
}

const isText = (value: unknown): value is string => typeof value === 'string' && value.trim() !== '';

/**
 * A decision as checkInApproved / checkInDeclined build it: who decided, a reason for a decline, and
 * for an approval with changes, its args as a plain object.
 */
export function isDecision(decision: unknown): decision is CheckInDecision {
  if (typeof decision !== 'object' || decision === null) return false;
  const { approved, by, reason, args } = decision as Record<string, unknown>;
  if (!isText(by)) return false;
  if (approved === false) return isText(reason);
  return (
    approved === true &&
    (args === undefined || (typeof args === 'object' && args !== null && !Array.isArray(args)))
  );
}
