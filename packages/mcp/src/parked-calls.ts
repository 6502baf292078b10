// The upstream calls of 2025-era servers parked in this process while their 2026-07-28 callers answer
// a question (held-upstream-call.ts). A parked call is named by a random id that only a sealed state
// carries; it is taken once (a replay or a racing second retry finds nothing), only by the caller who
// parked it, and ended when nobody takes it in time. Their number is capped: beyond it, a question is
// answered as it was before calls were parked (declined).

import { randomBytes } from 'node:crypto';
import type { Identity } from '@toolgate/core';

/** How many calls one server parks at most. */
export const DEFAULT_MAX_PARKED_CALLS = 1000;

/** A parked call, as the registry keeps it. */
export interface ParkedCall {
  /** The upstream (its `source`) the call is held on. */
  readonly upstream: string;
  /** Who parked it: only they take it. */
  readonly identity: Identity | undefined;
  /** Ends it unanswered: its question declined (or refused) and its upstream call cancelled. */
  end(): void;
}

export interface ParkedCalls {
  /** How long a parked call waits for its retry before it is ended. */
  readonly waitMs: number;
  /** Parks `call` under a fresh random id; undefined when the cap is reached. */
  park(call: ParkedCall): string | undefined;
  /**
   * Takes the call `id` names, once, when `identity` parked it and `upstream` holds it. A call taken,
   * ended, or never parked here answers undefined.
   */
  take(id: string, identity: Identity | undefined, upstream: string): ParkedCall | undefined;
  /** Ends the call `id` names, if it is still parked (a retry the chain did not let run). */
  end(id: string): void;
  /**
   * Hands the parked call `id` what its request held (its admission, its runtime): `release` runs once
   * the call is taken or ended, as the call is still in flight until then. False when `id` is no
   * longer parked: the caller releases it now.
   */
  holdOpen(id: string, release: () => void): boolean;
  /** How many calls are parked now. */
  readonly size: number;
  /** Ends every parked call. */
  close(): void;
}

export interface ParkedCallsOptions {
  readonly waitMs: number;
  readonly max?: number;
}

const owner = (identity: Identity | undefined): string =>
  JSON.stringify([identity?.tenant ?? null, identity?.principal ?? null]);

export function parkedCalls(options: ParkedCallsOptions): ParkedCalls {
  const { waitMs } = options;
  const max = options.max ?? DEFAULT_MAX_PARKED_CALLS;
  const parked = new Map<
    string,
    { readonly call: ParkedCall; readonly timer: NodeJS.Timeout; release?: () => void }
  >();
  const remove = (id: string) => {
    const entry = parked.get(id);
    if (entry === undefined) return undefined;
    parked.delete(id);
    clearTimeout(entry.timer);
    entry.release?.();
    return entry.call;
  };
  return {
    waitMs,
    park(call) {
      if (parked.size >= max) return undefined;
      const id = randomBytes(24).toString('base64url');
      const timer = setTimeout(() => remove(id)?.end(), waitMs);
      // A parked call must not keep a process alive that is otherwise done.
      timer.unref();
      parked.set(id, { call, timer });
      return id;
    },
    take(id, identity, upstream) {
      const entry = parked.get(id);
      if (
        entry === undefined ||
        entry.call.upstream !== upstream ||
        owner(entry.call.identity) !== owner(identity)
      )
        return undefined;
      return remove(id);
    },
    end(id) {
      remove(id)?.end();
    },
    holdOpen(id, release) {
      const entry = parked.get(id);
      if (entry === undefined || entry.release !== undefined) return false;
      entry.release = release;
      return true;
    },
    get size() {
      return parked.size;
    },
    close() {
      for (const id of [...parked.keys()]) remove(id)?.end();
    },
  };
}
