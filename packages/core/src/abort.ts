// Waiting on an abort signal with one listener per signal, however many waits share it. Parallel calls
// share their caller's signal (an agent's run-level signal) and every gate waits on it: a listener each
// trips Node's listener-leak warning past ten and makes every removal scan all the others.

let never: AbortSignal | undefined;

/**
 * A signal nothing can abort (its controller is unreachable): waiting on it needs no listener. Made
 * on first use: workerd forbids building an AbortController while a module loads.
 */
export function neverAborted(): AbortSignal {
  return (never ??= new AbortController().signal);
}

const waiting = new WeakMap<AbortSignal, Set<() => void>>();

/** Calls `onAbort` once when `signal` aborts (at once if it already has); returns what stops the wait. */
export function whenAborted(signal: AbortSignal, onAbort: () => void): () => void {
  if (signal.aborted) {
    onAbort();
    return () => undefined;
  }
  let waits = waiting.get(signal);
  if (waits === undefined) {
    const created = new Set<() => void>();
    waiting.set(signal, created);
    signal.addEventListener(
      'abort',
      () => {
        for (const wait of [...created]) wait();
        created.clear();
      },
      { once: true },
    );
    waits = created;
  }
  const registered = waits;
  // A wrapper of its own, so the same function registered twice is two waits.
  const wait = () => onAbort();
  registered.add(wait);
  return () => registered.delete(wait);
}
