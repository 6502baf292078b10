// A person's decision recorded in a CheckInStore (by an inbox, a bot, another process) and carried
// out by whoever holds the dispatcher: the record becomes the signed, single-use resume, so the
// place where people decide needs no dispatcher, and a decision made in one process runs in another.

import {
  checkInApproved,
  checkInDeclined,
  type CheckInDecision,
  type CheckInRecord,
  type CheckInStore,
  type RecordedDecision,
} from './check-in';
import type { Dispatcher, ResumeOptions } from './dispatcher';
import type { DispatchOutcome } from './outcomes';

export interface CarryOutOptions extends ResumeOptions {
  /**
   * The store the decision was recorded in. A decision whose call stopped before its approval was
   * spent (policy refused the changed args, another asker paused it) is revoked there, so it never
   * lingers as a standing approval.
   */
  readonly checkIns: CheckInStore;
}

/** The decision `dispatcher.resume` takes for a recorded one. */
export function decisionOf(recorded: RecordedDecision): CheckInDecision {
  if (!recorded.approved) return checkInDeclined({ by: recorded.by, reason: recorded.reason });
  return checkInApproved({
    by: recorded.by,
    ...(recorded.note !== undefined ? { note: recorded.note } : {}),
    ...(recorded.args !== undefined ? { args: recorded.args } : {}),
  });
}

/**
 * Carries out the decision recorded on `record` through `dispatcher.resume`: approve runs the call,
 * decline refuses it with the person's reason, approve with changes runs the changed args through the
 * whole chain (the person can narrow a call, never widen what policy allows). The resume verifies the
 * request's signature and spends it once, so two holders carrying out one decision run the call once:
 * the other is refused `CHECKIN_NOT_PENDING`.
 *
 * @example
 * const record = await awaitDecision(checkIns, paused.checkIn.id, { timeoutMs: 30_000 });
 * if (record?.decision) outcome = await carryOutDecision(dispatcher, record, { checkIns });
 */
export async function carryOutDecision(
  dispatcher: Dispatcher,
  record: CheckInRecord,
  options: CarryOutOptions,
): Promise<DispatchOutcome> {
  const recorded = record?.decision;
  if (recorded === undefined) {
    throw new TypeError(
      `carryOutDecision: check-in '${String(record?.request?.id)}' has no decision yet; wait for one with awaitDecision.`,
    );
  }
  const { checkIns, ...resumeOptions } = options;
  const outcome = await dispatcher.resume(record.request, decisionOf(recorded), resumeOptions);
  const unspent =
    outcome.kind === 'paused' || (outcome.kind === 'refused' && !outcome.retryable && !outcome.ran);
  if (unspent) {
    // Best effort: a record that stays pending still expires, and its decision can run at most once.
    await checkIns.revoke(record.request.id).catch(() => false);
  }
  return outcome;
}

export interface AwaitDecisionOptions {
  readonly signal?: AbortSignal;
  /** How often the store is read; default 250 ms. */
  readonly pollMs?: number;
  /** Give up after this long and answer the record as last read; default: until the request expires. */
  readonly timeoutMs?: number;
  /** Milliseconds since the epoch, the clock expiry is judged by; default `Date.now`. */
  readonly now?: () => number;
}

/**
 * Reads `id` from the store until a person has decided it, it stops being pending, it expires or
 * `timeoutMs` passes; answers the record as last read (check `record.decision`), or undefined for an
 * unknown id. Rejects only when `signal` aborts or the store fails.
 */
export async function awaitDecision(
  store: CheckInStore,
  id: string,
  options: AwaitDecisionOptions = {},
): Promise<CheckInRecord | undefined> {
  const { signal, pollMs = 250, now = Date.now } = options;
  if (!(Number.isFinite(pollMs) && pollMs > 0))
    throw new TypeError('awaitDecision: pollMs must be a positive number of milliseconds.');
  const until = options.timeoutMs === undefined ? Number.POSITIVE_INFINITY : now() + options.timeoutMs;
  for (;;) {
    signal?.throwIfAborted();
    const record = await store.get(id);
    if (record === undefined) return undefined;
    const expired = Date.parse(record.request.expiresAt) <= now();
    if (record.decision !== undefined || record.state !== 'pending' || expired || now() >= until)
      return record;
    const wait = Math.min(pollMs, until - now(), Date.parse(record.request.expiresAt) - now());
    await sleep(Math.max(0, wait), signal);
  }
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
