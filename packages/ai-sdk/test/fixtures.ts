// The peers' workload for adapter tests: one governed world (permissions, check-ins, a credential, a
// ceiling) and a scripted AI SDK mock model that decides its next move from the prompt it is sent.

import type { LanguageModelV4CallOptions, LanguageModelV4GenerateResult } from '@ai-sdk/provider';
import {
  createDispatcher,
  defineTool,
  type Dispatcher,
  type DispatchOutcome,
  type Middleware,
} from '@toolgate/core';
import { canonicalChain } from '@toolgate/middleware';
import {
  fixedClock,
  inMemoryCheckIns,
  seededIds,
  staticCredentials,
  staticPermissions,
} from '@toolgate/testing';
import { MockLanguageModelV4 } from 'ai/test';

export const SECRET = 'sk_live_ADAPTER_SECRET_9f3e';
export const KEY = 'adapter-test-check-in-key-0123456789';

/** A world with every gate the adapters must carry: validation, permission, check-in, credentials, ceiling. */
export function world(options: { policy?: Middleware } = {}) {
  const clock = fixedClock();
  const permissions = staticPermissions(
    [
      { tool: 'delete_account', allow: false, reason: 'only an admin may delete accounts' },
      { tenant: 'acme', allow: true },
    ],
    { default: 'deny' },
  );
  const credentials = staticCredentials({ billing: SECRET });
  const ran: Record<string, unknown[]> = {};
  const record = (name: string, args: unknown) => (ran[name] ??= []).push(args);
  const tools = [
    defineTool({
      name: 'echo',
      description: 'Echo a text back.',
      inputSchema: {
        type: 'object',
        properties: { text: { type: 'string' } },
        required: ['text'],
        additionalProperties: false,
      },
      execute: (args: { text: string }) => {
        record('echo', args);
        return args.text;
      },
    }),
    defineTool({
      name: 'delete_account',
      description: 'Delete an account.',
      inputSchema: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] },
      execute: (args: { id: string }) => {
        record('delete_account', args);
        return 'deleted';
      },
    }),
    defineTool({
      name: 'refund',
      description: 'Refund an order.',
      inputSchema: { type: 'object', properties: { amount: { type: 'number' } }, required: ['amount'] },
      checkIn: 'always',
      execute: (args: { amount: number }) => {
        record('refund', args);
        return `refunded ${args.amount}`;
      },
    }),
    defineTool({
      name: 'transfer',
      description: 'Transfer money; large amounts need a human.',
      inputSchema: { type: 'object', properties: { amount: { type: 'number' } }, required: ['amount'] },
      checkIn: (args: { amount: number }) => args.amount > 100,
      execute: (args: { amount: number }) => {
        record('transfer', args);
        return `transferred ${args.amount}`;
      },
    }),
    defineTool({
      name: 'charge',
      description: 'Charge the card on file.',
      inputSchema: { type: 'object', properties: { cents: { type: 'number' } }, required: ['cents'] },
      needs: { kind: 'api_key', service: 'billing' },
      execute: (args: { cents: number }, ctx) => {
        record('charge', args);
        // A careless tool that echoes its key: the model must still never read it.
        return `charged ${args.cents} with ${ctx.credential?.reveal() ?? 'no key'}`;
      },
    }),
    defineTool({
      name: 'search',
      description: 'Search the docs.',
      inputSchema: { type: 'object', properties: { limit: { type: 'number' } } },
      resultCeiling: { maxChars: 200, narrowBy: ['limit'] },
      execute: (args: { limit?: number }) => {
        record('search', args);
        return 'x'.repeat((args.limit ?? 100) * 10);
      },
    }),
  ];
  let chain = canonicalChain({
    permissions,
    credentials,
    checkInKey: KEY,
    checkIns: inMemoryCheckIns({ now: clock.now }),
  });
  if (options.policy !== undefined) chain = chain.use(options.policy);
  const dispatcher = createDispatcher({ tools, chain, clock: clock.now, callIds: seededIds('adapters') });
  return { dispatcher, permissions, credentials, ran, clock };
}

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
  const model = new MockLanguageModelV4({
    doGenerate: async (options): Promise<LanguageModelV4GenerateResult> => {
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

export type { Dispatcher, DispatchOutcome };
