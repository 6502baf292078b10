// What the provider helpers share: dispatch one call and answer any pause through `onPause`.

import type {
  CheckInDecision,
  CheckInRequest,
  Dispatcher,
  DispatchOptions,
  DispatchOutcome,
  PausedOutcome,
  ToolCall,
} from '@toolgate/core';

export interface ProviderDispatchOptions extends DispatchOptions {
  /**
   * A paused call. Return a decision to resume at once; return undefined to leave it pending: the
   * tool result says the call waits for a human, and the app resumes it later with
   * `dispatcher.resume(request, decision)` (then `openAIToolMessage` / `anthropicToolResult` of the
   * new outcome).
   */
  readonly onPause?: (
    request: CheckInRequest,
    outcome: PausedOutcome,
  ) => CheckInDecision | undefined | Promise<CheckInDecision | undefined>;
}

// A call that keeps asking new questions is a bug in its chain; stop rather than loop forever.
const MAX_PAUSES_PER_CALL = 10;

/** Dispatches `call` with the caller's identity and signal, resuming while `onPause` answers. */
export async function dispatchWithPauses(
  dispatcher: Dispatcher,
  call: ToolCall,
  options: ProviderDispatchOptions,
): Promise<DispatchOutcome> {
  const { onPause, identity, signal } = options;
  const resumeOptions = signal !== undefined ? { signal } : {};
  let outcome = await dispatcher.dispatch(call, {
    ...(identity !== undefined ? { identity } : {}),
    ...resumeOptions,
  });
  for (
    let pauses = 0;
    outcome.kind === 'paused' && onPause !== undefined && pauses < MAX_PAUSES_PER_CALL;
    pauses++
  ) {
    let decision: CheckInDecision | undefined;
    try {
      decision = await onPause(outcome.checkIn, outcome);
    } catch {
      // An onPause that throws decided nothing: the call stays paused, never approved.
      break;
    }
    if (decision === undefined) break;
    outcome = await dispatcher.resume(outcome.checkIn, decision, resumeOptions);
  }
  return outcome;
}

/** A refusal or a failure: the provider's error flag is set so the model knows the tool did not answer. */
export const isError = (outcome: DispatchOutcome): boolean =>
  outcome.kind === 'refused' || outcome.kind === 'failed';

export function assertDispatcher(fn: string, dispatcher: unknown): asserts dispatcher is Dispatcher {
  if (typeof (dispatcher as Dispatcher | undefined)?.dispatch !== 'function')
    throw new TypeError(`${fn}: dispatcher must come from createDispatcher.`);
}

/** Reads a field of something a model produced without trusting its shape. */
export function field(value: unknown, key: string): unknown {
  return typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[key] : undefined;
}

export const text = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);
