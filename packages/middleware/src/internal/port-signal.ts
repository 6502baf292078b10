// The signal a gate hands a port (checker, credential provider), built only when the port reads it:
// Node takes microseconds to build an AbortSignal, and most ports answer at once without one.

import { AbortedError, DeadlineError } from '@toolgate/core';

export class PortSignal {
  #controller: AbortController | undefined;
  #stopped: { readonly reason: unknown } | undefined;

  /** Read at any time, even after the gate stopped waiting, it tells the same story. */
  get signal(): AbortSignal {
    if (this.#controller === undefined) {
      this.#controller = new AbortController();
      if (this.#stopped !== undefined) this.#controller.abort(this.#stopped.reason);
    }
    return this.#controller.signal;
  }

  /** The gate gave up waiting (deadline, or the call aborted): the signal aborts with that reason. */
  stopped(reason: unknown): void {
    if (!(reason instanceof DeadlineError || reason instanceof AbortedError) || this.#stopped !== undefined)
      return;
    this.#stopped = { reason };
    this.#controller?.abort(reason);
  }
}
