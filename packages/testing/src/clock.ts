// A clock a test moves by hand, so times in outcomes, check-in requests and stores are exact.

export interface FixedClock {
  /** Milliseconds since the epoch. Detached-safe: pass `clock.now` as a dispatcher's `clock` or a store's `now`. */
  readonly now: () => number;
  /** The current time as ISO 8601. */
  readonly iso: () => string;
  /** Moves time forward by `ms` (zero or more) and returns the new time. */
  readonly advance: (ms: number) => number;
  /** Jumps to `at` (ISO 8601 or milliseconds since the epoch). */
  readonly set: (at: string | number) => void;
}

/** The default start: a fixed instant far from any real clock, so leaked real times stand out. */
export const FIXED_CLOCK_START = '2030-01-01T00:00:00.000Z';

function toMillis(fn: string, at: string | number): number {
  const ms = typeof at === 'number' ? at : Date.parse(at);
  if (!Number.isFinite(ms))
    throw new TypeError(`${fn}: '${String(at)}' is not a time; pass ISO 8601 or epoch milliseconds.`);
  return ms;
}

/**
 * A clock that stands still until told to move.
 *
 * @example
 * const clock = fixedClock();
 * const dispatcher = createDispatcher({ tools, chain, clock: clock.now });
 * clock.advance(15 * 60_000); // the check-in request has now expired
 */
export function fixedClock(start: string | number = FIXED_CLOCK_START): FixedClock {
  let current = toMillis('fixedClock', start);
  return {
    now: () => current,
    iso: () => new Date(current).toISOString(),
    advance: (ms) => {
      if (typeof ms !== 'number' || !Number.isFinite(ms) || ms < 0) {
        throw new TypeError(
          `fixedClock.advance: ms must be a finite number of zero or more; got ${String(ms)}.`,
        );
      }
      current += ms;
      return current;
    },
    set: (at) => {
      current = toMillis('fixedClock.set', at);
    },
  };
}
