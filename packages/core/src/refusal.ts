// Refusals and pauses travel as throws through the onion and are recorded on the context when
// raised, so a middleware that catches one cannot undo it.

import type { CheckInRequest } from './check-in';

export interface RefusalDetail {
  /** Stable machine code; default `DENIED`. */
  readonly code?: string;
  /** Calling again as-is may succeed (a store or provider was unavailable). Default false. */
  readonly retryable?: boolean;
  /** Operator-facing detail, put on the `gate.decision` event. Never a value, secret or stack. */
  readonly detail?: string;
  /** The reason already tells the model the tool ran (the result ceiling's does). */
  readonly mentionsRun?: boolean;
  /**
   * Thrown by a tool's own `execute` before it did anything (an imported tool whose server was never
   * called): the outcome says the tool did not run.
   */
  readonly beforeRun?: boolean;
}

/** A gate's refusal. `reason` is the sentence the model reads. */
export class Refusal extends Error {
  override readonly name = 'Refusal';
  readonly code: string;
  readonly retryable: boolean;
  readonly detail: string | undefined;
  readonly mentionsRun: boolean;
  readonly beforeRun: boolean;
  constructor(
    readonly gate: string,
    readonly reason: string,
    detail: RefusalDetail = {},
  ) {
    super(`[${gate} refused: ${reason}]`);
    this.code = detail.code ?? 'DENIED';
    this.retryable = detail.retryable ?? false;
    this.detail = detail.detail;
    this.mentionsRun = detail.mentionsRun ?? false;
    this.beforeRun = detail.beforeRun ?? false;
  }
}

/** Thrown by `ctx.ask` when a call must wait for a human. */
export class Pause extends Error {
  override readonly name = 'Pause';
  constructor(readonly request: CheckInRequest) {
    super(`[${request.asker} paused: waiting for a human to approve '${request.toolName}'.]`);
  }
}

/** Ends a sentence with a period, so every refusal reads as sentences. */
export function sentence(text: string): string {
  const trimmed = text.trim();
  return /[.!?\]]$/.test(trimmed) ? trimmed : `${trimmed}.`;
}

/**
 * Builds a model-readable refusal reason: what happened, whether a retry can help, what to do instead.
 *
 * @example
 * refusalReason(`'search' returned 48,210 characters; the ceiling is 8,000`, `Call it again with a smaller 'limit'`)
 */
export function refusalReason(...sentences: readonly (string | undefined | false)[]): string {
  return sentences
    .filter((s): s is string => typeof s === 'string' && s.trim() !== '')
    .map(sentence)
    .join(' ');
}

/** Formats a number the way refusals show sizes: 48210 → "48,210". */
export function formatCount(value: number): string {
  return String(Math.trunc(value)).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}
