// A model that follows a script: each step is a tool call, a final answer, or a function of the
// transcript so far (to read a refusal and react to it).

import type { ToolSchema } from '@toolgate/core';
import type { AgentModel, ModelSay, ModelToolCall, ModelTurn, TranscriptEntry } from './agent-loop';

/** A step that decides from what the model has read: a move, a final answer as a string, or undefined to stop. */
export type ScriptFunction = (
  transcript: readonly TranscriptEntry[],
  tools: readonly ToolSchema[],
) => ModelTurn | string | undefined | Promise<ModelTurn | string | undefined>;

export type ScriptStep = ModelToolCall | ModelSay | ScriptFunction;

export interface ScriptedModel extends AgentModel {
  /** Steps not yet taken. */
  readonly remaining: number;
  /** Steps taken so far. */
  readonly taken: number;
}

function describeStep(step: unknown): string {
  try {
    return JSON.stringify(step) ?? typeof step;
  } catch {
    return typeof step;
  }
}

function assertStep(step: unknown, index: number): asserts step is ScriptStep {
  if (typeof step === 'function') return;
  const shape = step as Partial<ModelToolCall & ModelSay> | null;
  if (typeof shape === 'object' && shape !== null) {
    if (typeof shape.say === 'string' && shape.toolName === undefined) return;
    if (typeof shape.toolName === 'string' && shape.say === undefined) return;
  }
  throw new TypeError(
    `scriptedModel: step #${index + 1} must be { toolName, args? }, { say } or a function of the transcript; got ${describeStep(step)}.`,
  );
}

/**
 * A model for tests: plays `steps` in order, one per turn, and has no next move once they run out.
 *
 * @example
 * scriptedModel([
 *   { toolName: 'refund', args: { amount: 'twelve' } },
 *   (transcript) => (lastToolMessage(transcript)?.includes('validate-args refused') ? { toolName: 'refund', args: { amount: 12 } } : 'Gave up.'),
 *   { say: 'Refunded 12.' },
 * ]);
 */
export function scriptedModel(steps: readonly ScriptStep[]): ScriptedModel {
  if (!Array.isArray(steps)) throw new TypeError('scriptedModel: steps must be an array.');
  steps.forEach(assertStep);
  let taken = 0;
  return {
    get remaining() {
      return steps.length - taken;
    },
    get taken() {
      return taken;
    },
    async next(transcript, tools) {
      const step = steps[taken];
      if (step === undefined) return undefined;
      taken += 1;
      if (typeof step !== 'function') return step;
      const move = await step(transcript, tools);
      if (move === undefined) return undefined;
      if (typeof move === 'string') return { say: move };
      assertStep(move, taken - 1);
      if (typeof move === 'function')
        throw new TypeError(`scriptedModel: step #${taken} returned a function; return a move.`);
      return move;
    },
  };
}

/** The content of the last tool message in the transcript: what the model read most recently. */
export function lastToolMessage(transcript: readonly TranscriptEntry[]): string | undefined {
  for (let i = transcript.length - 1; i >= 0; i--) {
    const entry = transcript[i]!;
    if (entry.role === 'tool') return entry.content;
  }
  return undefined;
}
