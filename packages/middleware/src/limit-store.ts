// The port behind the limits gate: one atomic check-and-consume over all the limits a call meets,
// and a refund for a call that did not run. In memory here; @toolgate/store-redis shares it across
// processes. Both keep one number per key, GCRA's "theoretical arrival time" (see README).

/** One limit a call draws on: `amount` units from a bucket of `limit` units that refills over `windowMs`. */
export interface LimitCharge {
  /** The limit's name, as configured; safe to show and to put in a key. */
  readonly rule: string;
  /** Whose bucket: the identity values the limit is kept per, as a string. A store may hash it. */
  readonly key: string;
  /** Units this call takes (1 for a rate, the declared cost for a budget); a positive safe integer, at most `limit`. */
  readonly amount: number;
  /** Units per window; a positive safe integer, at most 20 per millisecond of window. */
  readonly limit: number;
  /** The window, in milliseconds; a positive integer of at most 366 days. */
  readonly windowMs: number;
}

/** The longest window a limit may have: 366 days, so a bucket's expiry stays a sane integer everywhere. */
export const MAX_LIMIT_WINDOW_MS = 366 * 86_400_000;
/**
 * At most this many units per millisecond of window: a bucket's time is a double near the epoch in
 * ms (one step ≈ 0.0002 ms), so a unit must move it by 0.05 ms or more to be counted within 0.25%.
 */
export const MAX_UNITS_PER_MS = 20;

/** Why a charge is outside what a store can count exactly, or undefined when it is within bounds. */
export function limitChargeProblem(charge: LimitCharge): string | undefined {
  const { amount, limit, windowMs } = charge;
  if (!Number.isSafeInteger(windowMs) || windowMs <= 0 || windowMs > MAX_LIMIT_WINDOW_MS)
    return `windowMs must be a whole number of milliseconds from 1 to ${MAX_LIMIT_WINDOW_MS} (366 days)`;
  if (!Number.isSafeInteger(limit) || limit <= 0) return 'limit must be a positive safe integer';
  if (limit > windowMs * MAX_UNITS_PER_MS)
    return `limit must be at most ${MAX_UNITS_PER_MS} units per millisecond of window`;
  if (!Number.isSafeInteger(amount) || amount <= 0 || amount > limit)
    return 'amount must be a positive safe integer no larger than limit';
  return undefined;
}

/** The store's answer: every charge fitted and was taken, or none was taken. */
export type LimitAnswer =
  | { readonly allowed: true }
  | {
      readonly allowed: false;
      /** Which charge did not fit (the one that frees up last, when several do not). */
      readonly index: number;
      /** How long until it would fit, by the store's clock. */
      readonly retryAfterMs: number;
    };

export interface LimitStore {
  /**
   * Atomically: when every charge fits, takes them all; otherwise takes none. `now` is the
   * dispatcher's clock; a shared store may keep time by its own clock instead (Redis does).
   */
  consume(charges: readonly LimitCharge[], now: number): LimitAnswer | Promise<LimitAnswer>;
  /** Gives back charges taken by `consume`, never past a full bucket. */
  refund(charges: readonly LimitCharge[], now: number): void | Promise<void>;
}

/** Whether `value` is a LimitAnswer for `count` charges. Anything else is the store failing. */
export function isLimitAnswer(value: unknown, count: number): value is LimitAnswer {
  if (typeof value !== 'object' || value === null) return false;
  const { allowed, index, retryAfterMs } = value as Record<string, unknown>;
  if (allowed === true) return true;
  return (
    allowed === false &&
    Number.isInteger(index) &&
    (index as number) >= 0 &&
    (index as number) < count &&
    typeof retryAfterMs === 'number' &&
    Number.isFinite(retryAfterMs) &&
    retryAfterMs >= 0
  );
}
