// Single-use tokens that travel through a client (the gateway's `requestState`) are spent by
// recording their nonce. Several processes behind one balancer must share that record, or a state
// replayed to a second process would run the call a second time.

/**
 * Where spent nonces are recorded. `spend` is the single-use point: true the first time a nonce is
 * spent, false every time after, also when two processes sharing the store spend it at once. A
 * nonce is kept until `expiresAt`; after that the token it came from is refused as expired anyway.
 */
export interface SpentStateStore {
  spend(nonce: string, expiresAt: number): Promise<boolean>;
}

// Expired nonces are swept once the record has doubled since the last sweep, and not below this.
const SWEEP_FROM = 1024;

/**
 * Nonces spent in this process, each kept until its token would have expired anyway: a nonce whose
 * time is past counts as never spent (its token is refused as expired before it is spent). With a
 * `max`, a record full of unexpired nonces does not take another ('full') rather than forget one,
 * which would let its token be used again. A nonce that is not a non-empty string is never taken.
 */
export class SpentNonces {
  readonly #until = new Map<string, number>();
  #sweepAt = SWEEP_FROM;

  constructor(readonly max: number = Number.POSITIVE_INFINITY) {}

  spend(nonce: unknown, expiresAt: number, now: number): 'taken' | 'replayed' | 'full' {
    if (typeof nonce !== 'string' || nonce === '') return 'replayed';
    const until = this.#until.get(nonce);
    if (until !== undefined && until > now) return 'replayed';
    if (this.#until.size >= Math.min(this.#sweepAt, this.max)) {
      for (const [seen, end] of this.#until) if (end <= now) this.#until.delete(seen);
      this.#sweepAt = Math.max(SWEEP_FROM, this.#until.size * 2);
    }
    if (!this.#until.has(nonce) && this.#until.size >= this.max) return 'full';
    this.#until.set(nonce, expiresAt);
    return 'taken';
  }
}

/** A `SpentStateStore` in this process's memory: right for one process only. */
export function inMemorySpentStates(options: { readonly now?: () => number } = {}): SpentStateStore {
  const now = options.now ?? Date.now;
  const spent = new SpentNonces();
  return {
    async spend(nonce, expiresAt) {
      return spent.spend(nonce, expiresAt, now()) === 'taken';
    },
  };
}
