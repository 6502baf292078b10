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

/** A `SpentStateStore` in this process's memory: right for one process only. */
export function inMemorySpentStates(options: { readonly now?: () => number } = {}): SpentStateStore {
  const now = options.now ?? Date.now;
  const spent = new Map<string, number>();
  return {
    async spend(nonce, expiresAt) {
      if (typeof nonce !== 'string' || nonce === '') return false;
      const at = now();
      for (const [seen, until] of spent) if (until <= at) spent.delete(seen);
      if (spent.has(nonce)) return false;
      spent.set(nonce, expiresAt);
      return true;
    },
  };
}
