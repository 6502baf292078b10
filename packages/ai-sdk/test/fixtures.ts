// A scripted AI SDK mock model (from 'ai/test') that decides its next move from the prompt it is sent.

import type {
  LanguageModelV4CallOptions,
  LanguageModelV4GenerateResult,
  LanguageModelV4StreamPart,
} from '@ai-sdk/provider';
import { convertArrayToReadableStream, MockLanguageModelV4 } from 'ai/test';

export { KEY, SECRET, world } from '../../../test-support/adapter-world';

/** A model's move: call tools, or say something and stop. */
export type Move =
  | {
      readonly calls: readonly { readonly toolName: string; readonly input: unknown; readonly id?: string }[];
    }
  | { readonly say: string };

const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 1, text: 1, reasoning: 0 },
};

/**
 * The AI SDK's own mock model, scripted: each step picks its move from the prompt so far (what the
 * tools answered). Every prompt it was sent is kept, so a test can assert on what the model read.
 */
export function scriptedAiModel(script: readonly ((read: readonly string[]) => Move)[]) {
  const prompts: LanguageModelV4CallOptions['prompt'][] = [];
  let step = 0;
  let ids = 0;
  const generate = async (options: LanguageModelV4CallOptions): Promise<LanguageModelV4GenerateResult> => {
    prompts.push(options.prompt);
    const next = script[step++];
    const move = next === undefined ? { say: 'done' } : next(toolTexts(options.prompt));
    if ('say' in move)
      return {
        content: [{ type: 'text', text: move.say }],
        finishReason: { unified: 'stop', raw: undefined },
        usage,
        warnings: [],
      };
    return {
      content: move.calls.map((call) => ({
        type: 'tool-call' as const,
        toolCallId: call.id ?? `tc_${++ids}`,
        toolName: call.toolName,
        input: JSON.stringify(call.input),
      })),
      finishReason: { unified: 'tool-calls', raw: undefined },
      usage,
      warnings: [],
    };
  };
  const model = new MockLanguageModelV4({
    doGenerate: generate,
    // The same script, streamed: each step's content as stream parts.
    doStream: async (options) => {
      const { content, finishReason } = await generate(options);
      const parts: LanguageModelV4StreamPart[] = [{ type: 'stream-start', warnings: [] }];
      for (const part of content) {
        if (part.type === 'text') {
          parts.push({ type: 'text-start', id: 't' }, { type: 'text-delta', id: 't', delta: part.text });
          parts.push({ type: 'text-end', id: 't' });
        } else if (part.type === 'tool-call') parts.push(part);
      }
      parts.push({ type: 'finish', finishReason, usage });
      return { stream: convertArrayToReadableStream(parts) };
    },
  });
  return { model, prompts, everything: () => JSON.stringify(prompts) };
}

/** The text of every tool result in a prompt, in order: what the model has read so far. */
export function toolTexts(prompt: LanguageModelV4CallOptions['prompt']): string[] {
  const texts: string[] = [];
  for (const message of prompt) {
    if (message.role !== 'tool') continue;
    for (const part of message.content) {
      if (part.type !== 'tool-result') continue;
      const output = part.output;
      texts.push(
        output.type === 'text' || output.type === 'error-text' ? output.value : JSON.stringify(output),
      );
    }
  }
  return texts;
}

export const last = (read: readonly string[]): string => read[read.length - 1] ?? '';
