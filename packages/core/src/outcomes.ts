// What `dispatch` returns. No arm lets a middleware fabricate a result: `result` is built only
// from what the executor recorded.

import type { CheckInReceipt, CheckInRequest } from './check-in';

export type LedgerOutcome = 'allow' | 'deny' | 'ask' | 'transform';

/** One decision of one middleware in one call. */
export interface LedgerRow {
  readonly gate: string;
  readonly outcome: LedgerOutcome;
  readonly why?: string;
  /** The rule of the gate's rule set that decided (the policy gate names it), as a field, never read from `why`. */
  readonly rule?: string;
  /** The middleware changed the args or the result. */
  readonly changed: boolean;
}

interface OutcomeBase {
  readonly toolName: string;
  readonly toolSource?: string;
  readonly toolCallId: string;
  /** Which policy decided: see `Chain.id`. */
  readonly chainId: string;
  /** Whether the tool's execute ran. The model is never told a tool did not run when it did. */
  readonly ran: boolean;
  readonly ledger: readonly LedgerRow[];
  /** The string the model reads. */
  readonly content: string;
}

export interface ResultOutcome extends OutcomeBase {
  readonly kind: 'result';
  readonly value: unknown;
  readonly receipts?: readonly CheckInReceipt[];
}

export interface RefusedOutcome extends OutcomeBase {
  readonly kind: 'refused';
  /** The middleware (or `dispatch`) that refused. */
  readonly gate: string;
  /** A stable machine code, e.g. `CHECKER_FAILED`. */
  readonly code: string;
  /** The model-readable sentence, without the bracketed frame. */
  readonly reason: string;
  /** Whether calling again as-is may succeed (a store or provider was unavailable). */
  readonly retryable: boolean;
  /** For the developer, never the model: what is wrong with the setup, when the refusal is about it. */
  readonly detail?: string;
}

export interface PausedOutcome extends OutcomeBase {
  readonly kind: 'paused';
  readonly checkIn: CheckInRequest;
}

export interface FailedOutcome extends OutcomeBase {
  readonly kind: 'failed';
  readonly error: { readonly name: string; readonly message: string };
}

export type DispatchOutcome = ResultOutcome | RefusedOutcome | PausedOutcome | FailedOutcome;
export type OutcomeKind = DispatchOutcome['kind'];
