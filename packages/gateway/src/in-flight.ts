// A count of work in flight that can be waited on until it reaches zero: a generation's calls
// (runtime.ts), and the calls and responses a shutdown lets finish (drain.ts).

export interface InFlight {
  /** Work started. */
  begin(): void;
  /** Work finished; at zero, every waiter wakes. */
  end(): void;
  readonly count: number;
  /** Resolves when nothing is in flight. */
  idle(): Promise<void>;
}

export function inFlightCounter(): InFlight {
  let count = 0;
  let waiters: (() => void)[] = [];
  return {
    begin() {
      count += 1;
    },
    end() {
      count = Math.max(0, count - 1);
      if (count > 0) return;
      const woken = waiters;
      waiters = [];
      for (const wake of woken) wake();
    },
    get count() {
      return count;
    },
    idle: () => (count === 0 ? Promise.resolve() : new Promise<void>((wake) => waiters.push(wake))),
  };
}
