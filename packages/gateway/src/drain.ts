// The gateway's shutdown drain: MCP calls (a call parked for its client's retry included) and POST
// responses still in flight may finish, up to `listen.drain`, while new sessions and calls are turned
// away. One counter for both, so shutdown waits once.

import { inFlightCounter } from './in-flight';

export interface Drain {
  /**
   * A call starts; false once draining (the caller refuses it), unless it `continues` work in flight
   * (it finishes what the drain waits for).
   */
  enter(continues?: boolean): boolean;
  /** That call finished. */
  leave(): void;
  /** A response is being sent; `finished` is called once it has been sent or dropped. */
  track(watch: (finished: () => void) => void): void;
  readonly draining: boolean;
  /** Calls and responses in flight. */
  readonly inFlight: number;
  /** Turns new work away and resolves when in-flight work has finished or `deadlineMs` has passed. */
  drain(deadlineMs: number): Promise<void>;
}

export function gatewayDrain(): Drain {
  const work = inFlightCounter();
  let draining = false;
  return {
    enter(continues = false) {
      if (draining && !continues) return false;
      work.begin();
      return true;
    },
    leave: () => work.end(),
    track(watch) {
      work.begin();
      watch(() => work.end());
    },
    get draining() {
      return draining;
    },
    get inFlight() {
      return work.count;
    },
    async drain(deadlineMs) {
      draining = true;
      if (work.count === 0) return;
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        work.idle(),
        new Promise<void>((done) => {
          timer = setTimeout(done, deadlineMs);
          timer.unref?.();
        }),
      ]);
      clearTimeout(timer);
    },
  };
}
