// A minimal agent loop: ask the model for its next move, dispatch each tool call, and feed the
// outcome's content back as the tool message. Tests script the model; a demo can plug in a real one.

import type {
  CheckInDecision,
  CheckInRequest,
  Dispatcher,
  DispatchOptions,
  DispatchOutcome,
  Identity,
  PausedOutcome,
  ToolSchema,
} from '@toolgate/core';

/** A tool call as a model emits it; `args` may be an object or the JSON string a model produced. */
export interface ModelToolCall {
  readonly toolName: string;
  readonly args?: unknown;
  readonly toolCallId?: string;
}

/** The model's final answer: the loop stops. */
export interface ModelSay {
  readonly say: string;
}

export type ModelTurn = ModelToolCall | ModelSay;

export type TranscriptEntry =
  | { readonly role: 'user'; readonly content: string }
  | {
      readonly role: 'assistant';
      readonly call: { readonly toolName: string; readonly args?: unknown; readonly toolCallId: string };
    }
  | { readonly role: 'assistant'; readonly text: string }
  /** A human answered a paused call; the call was resumed with this decision. */
  | {
      readonly role: 'check-in';
      readonly toolCallId: string;
      readonly request: CheckInRequest;
      readonly decision: CheckInDecision;
    }
  /** What the model read back for a call: `content` is exactly the outcome's content. */
  | {
      readonly role: 'tool';
      readonly toolCallId: string;
      readonly toolName: string;
      readonly content: string;
      readonly outcome: DispatchOutcome;
    };

/** Anything that picks the next move from the transcript: a scripted model in tests, an LLM adapter in a demo. */
export interface AgentModel {
  next(
    transcript: readonly TranscriptEntry[],
    tools: readonly ToolSchema[],
  ): ModelTurn | undefined | Promise<ModelTurn | undefined>;
}

export interface AgentLoopOptions {
  readonly model: AgentModel;
  readonly dispatcher: Dispatcher;
  /** Passed to every dispatch. */
  readonly identity?: Identity;
  /** Answers a paused call. Return undefined (or omit onPause) to stop the loop with the call pending. */
  readonly onPause?: (
    request: CheckInRequest,
    outcome: PausedOutcome,
  ) => CheckInDecision | undefined | Promise<CheckInDecision | undefined>;
  /** A first user message for the transcript. */
  readonly prompt?: string;
  /** Model turns before the loop gives up; default 20. */
  readonly maxTurns?: number;
  readonly signal?: AbortSignal;
}

/**
 * Why the loop ended: the model gave a final answer, had no next move, hit `maxTurns`, left a call
 * waiting for a human, or the signal aborted.
 */
export type AgentLoopStop = 'final' | 'exhausted' | 'max-turns' | 'paused' | 'aborted';

export interface AgentLoopResult {
  readonly stop: AgentLoopStop;
  readonly transcript: readonly TranscriptEntry[];
  /** The final outcome of each tool call, in order (after any resumes). */
  readonly outcomes: readonly DispatchOutcome[];
  /** The model's final answer when `stop` is `'final'`. */
  readonly finalText?: string;
  /** The call left waiting when `stop` is `'paused'`. */
  readonly pending?: PausedOutcome;
  /** Model turns taken. */
  readonly turns: number;
}

// A call that keeps asking new questions is a bug in its chain; stop rather than loop forever.
const MAX_PAUSES_PER_CALL = 10;

function assertTurn(turn: unknown): asserts turn is ModelTurn | undefined {
  if (turn === undefined) return;
  const shape = turn as Partial<ModelToolCall & ModelSay> | null;
  if (
    typeof shape === 'object' &&
    shape !== null &&
    (typeof shape.say === 'string' || typeof shape.toolName === 'string')
  )
    return;
  throw new TypeError(
    `runAgentLoop: the model returned neither { toolName, args } nor { say }; got ${JSON.stringify(turn)}.`,
  );
}

/**
 * Drives `model` against `dispatcher` until the model answers, runs out of moves or `maxTurns` is reached.
 * Each call goes through `dispatcher.dispatch` (and `resume` after `onPause` decides), so the very same
 * chain decides as in production.
 *
 * @example
 * const run = await runAgentLoop({
 *   model: scriptedModel([{ toolName: 'refund', args: { amount: '12' } }, { toolName: 'refund', args: { amount: 12 } }, { say: 'Refunded.' }]),
 *   dispatcher,
 *   identity: { tenant: 'acme' },
 *   onPause: () => checkInApproved({ by: 'agent-supervisor' }),
 * });
 */
export async function runAgentLoop(options: AgentLoopOptions): Promise<AgentLoopResult> {
  const { model, dispatcher, identity, onPause, signal } = options;
  if (typeof model?.next !== 'function')
    throw new TypeError('runAgentLoop: model must have a next(transcript, tools) method.');
  if (typeof dispatcher?.dispatch !== 'function')
    throw new TypeError('runAgentLoop: dispatcher must come from createDispatcher.');
  const maxTurns = options.maxTurns ?? 20;
  if (!Number.isInteger(maxTurns) || maxTurns <= 0) {
    throw new TypeError(`runAgentLoop: maxTurns must be a positive integer; got ${String(maxTurns)}.`);
  }
  const transcript: TranscriptEntry[] =
    options.prompt === undefined ? [] : [{ role: 'user', content: options.prompt }];
  const outcomes: DispatchOutcome[] = [];
  const tools = dispatcher.schemas();
  const dispatchOptions: DispatchOptions = {
    ...(identity !== undefined ? { identity } : {}),
    ...(signal !== undefined ? { signal } : {}),
  };
  let turns = 0;
  const end = (
    stop: AgentLoopStop,
    extra: { finalText?: string; pending?: PausedOutcome } = {},
  ): AgentLoopResult => ({
    stop,
    transcript,
    outcomes,
    turns,
    ...extra,
  });

  while (turns < maxTurns) {
    if (signal?.aborted) return end('aborted');
    const turn: unknown = await model.next(transcript, tools);
    assertTurn(turn);
    if (turn === undefined) return end('exhausted');
    turns += 1;
    if ('say' in turn) {
      transcript.push({ role: 'assistant', text: turn.say });
      return end('final', { finalText: turn.say });
    }
    let outcome = await dispatcher.dispatch(turn, dispatchOptions);
    const { toolCallId } = outcome;
    transcript.push({
      role: 'assistant',
      call: { toolName: turn.toolName, ...(turn.args !== undefined ? { args: turn.args } : {}), toolCallId },
    });
    for (let pauses = 0; outcome.kind === 'paused'; pauses++) {
      const decision =
        onPause === undefined || pauses >= MAX_PAUSES_PER_CALL
          ? undefined
          : await onPause(outcome.checkIn, outcome);
      if (decision === undefined) {
        outcomes.push(outcome);
        return end('paused', { pending: outcome });
      }
      transcript.push({ role: 'check-in', toolCallId, request: outcome.checkIn, decision });
      outcome = await dispatcher.resume(outcome.checkIn, decision, signal !== undefined ? { signal } : {});
    }
    outcomes.push(outcome);
    transcript.push({
      role: 'tool',
      toolCallId: outcome.toolCallId,
      toolName: outcome.toolName,
      content: outcome.content,
      outcome,
    });
  }
  return end('max-turns');
}
