// The port behind the limits gate: one atomic check-and-consume over all the limits a call meets,
// and a refund for a call that did not run. In memory here; @toolgate/store-redis shares it across
// processes. Both keep one number per key, GCRA's "theoretical arrival time" (see README).

/** One limit a call draws on: `amount` units from a bucket of `limit` units that refills over `windowMs`. */
export interface LimitCharge {
  /** The limit's name, as configured; safe to show and to put in a key. */
  readonly rule: string;
  /** Whose bucket: the identity values the limit is kept per, as a string. A store may hash it. */
  readonly key: string;
  /** Units this call takes (1 for a rate, the declared cost for a budget); a positive number. */
  readonly amount: number;
  /** Units per window; a positive number. */
  readonly limit: number;
  /** The window, in milliseconds; a positive integer. */
  readonly windowMs: number;
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
