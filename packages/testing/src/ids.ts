// Deterministic ids: the same seed gives the same sequence, so toolCallIds in outcomes and
// transcripts are stable across runs.

import { shortHash } from '@toolgate/core';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

export interface SeededIdsOptions {
  /** Default `'call'`, matching the dispatcher's own `call_…` ids. */
  readonly prefix?: string;
  /** Random characters after the prefix; default 20. */
  readonly length?: number;
}

/** mulberry32: a tiny, well-mixed 32-bit PRNG. Not for secrets; ids in tests only. */
function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  };
}

/**
 * An id source for `createDispatcher({ callIds })`: `prefix_` + base62 characters from a seeded PRNG.
 *
 * @example
 * const dispatcher = createDispatcher({ tools, chain, callIds: seededIds('refund-flow') });
 */
export function seededIds(seed: string | number = 1, options: SeededIdsOptions = {}): () => string {
  const prefix = options.prefix ?? 'call';
  const length = options.length ?? 20;
  if (!Number.isInteger(length) || length <= 0) {
    throw new TypeError(`seededIds: length must be a positive integer; got ${String(length)}.`);
  }
  const next = mulberry32(parseInt(shortHash(String(seed)).slice(0, 8), 16));
  return () => {
    let id = '';
    for (let i = 0; i < length; i++) id += BASE62[next() % 62];
    return prefix === '' ? id : `${prefix}_${id}`;
  };
}
