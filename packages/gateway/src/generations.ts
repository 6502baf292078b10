// The gateway's generations: the one new calls are served by, and the ones a reload replaced, each
// closing what its successor does not reuse once its last call has finished.

import { closeRuntime, type Runtime } from './runtime';

export interface Generations {
  /** The generation new calls are served by. */
  current(): Runtime;
  /** Serves `next` for new calls; the replaced generation closes once idle. Answers the replaced one. */
  replace(next: Runtime): Runtime;
  /** Closes the current generation, all of it. */
  close(): Promise<void>;
}

export function gatewayGenerations(first: Runtime): Generations {
  let live = first;
  return {
    current: () => live,
    replace(next) {
      const old = live;
      live = next;
      void old.idle().then(() => closeRuntime(old, next));
      return old;
    },
    close: () => closeRuntime(live),
  };
}
