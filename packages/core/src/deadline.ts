// Deadlines for the ports a gate calls (checkers, providers, stores). A port that does not answer
// in time is a failure, and the gate fails closed.

import { neverAborted, whenAborted } from './abort';

/** How long a checker, provider or store may take before its gate refuses, unless configured. */
export const DEFAULT_DEADLINE_MS = 5000;

export class DeadlineError extends Error {
  override readonly name = 'DeadlineError';
  constructor(readonly ms: number) {
    super(`no answer within ${ms} ms`);
  }
}

/** The call's signal ended the wait. */
export class AbortedError extends Error {
  override readonly name = 'AbortedError';
  constructor() {
    super('the call was aborted');
  }
}

/**
 * Runs `work` with a signal that aborts after `ms` or when `parent` aborts, and rejects at that
 * moment even if `work` ignores its signal. A synchronous answer is returned without arming a timer.
 * A `work` that declares no parameter is called without the signal, and none is built: Node takes
 * microseconds to build an AbortSignal, and gates call their ports on every dispatch.
 */
export async function withDeadline<T>(
  work: (signal: AbortSignal) => T | Promise<T>,
  ms: number,
  parent?: AbortSignal,
): Promise<T> {
  if (parent?.aborted) throw new AbortedError();
  // Cheap on its own: the controller builds its signal when first read, or when aborted.
  const controller = new AbortController();
  const value = work.length === 0 ? (work as () => T | Promise<T>)() : work(controller.signal);
  if (!isThenable(value)) return value;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let stopWaiting: (() => void) | undefined;
  const stop = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      controller.abort(new DeadlineError(ms));
      reject(new DeadlineError(ms));
    }, ms);
    if (parent !== undefined && parent !== neverAborted()) {
      stopWaiting = whenAborted(parent, () => {
        controller.abort(new AbortedError());
        reject(new AbortedError());
      });
    }
  });
  try {
    return await Promise.race([value, stop]);
  } finally {
    clearTimeout(timer);
    stopWaiting?.();
  }
}

function isThenable<T>(value: T | Promise<T>): value is Promise<T> {
  return typeof (value as { then?: unknown } | null)?.then === 'function';
}
