// The Vercel AI SDK's own loop (generateText) over a toolgate chain. The model is the SDK's mock from
// 'ai/test', scripted, so this runs without an API key: it sends bad args, reads the refusal, fixes
// them, then asks for a refund that waits for the SDK's own approval flow.

import { aiSdkTools, toolgateContext } from '@toolgate/ai-sdk';
import { createDispatcher, defineTool } from '@toolgate/core';
import { canonicalChain } from '@toolgate/middleware';
import { generateText, isStepCount, type ModelMessage } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';

const lookup = defineTool({
  name: 'lookup_order',
  description: 'Look up an order by id.',
  inputSchema: { type: 'object', properties: { orderId: { type: 'string' } }, required: ['orderId'] },
  execute: (args: { orderId: string }) => ({ orderId: args.orderId, total: 42 }),
});
const refund = defineTool({
  name: 'refund_order',
  description: 'Refund an order.',
  inputSchema: { type: 'object', properties: { orderId: { type: 'string' } }, required: ['orderId'] },
  checkIn: 'always',
  execute: (args: { orderId: string }) => `refunded ${args.orderId}`,
});

const dispatcher = createDispatcher({
  tools: [lookup, refund],
  chain: canonicalChain({ checkInKey: 'example-key-change-me-in-production' }),
});
const tools = aiSdkTools(dispatcher);
// Identity rides the SDK's own tool context, never the model's arguments.
const toolsContext = toolgateContext(tools, { tenant: 'acme', principal: 'ann' });

// A scripted model: each turn is the next move, given the last tool result it read.
const moves: ((lastRead: string) => { call: [string, object] } | { say: string })[] = [
  () => ({ call: ['lookup_order', { orderId: 17 }] }),
  () => ({ call: ['lookup_order', { orderId: 'A-17' }] }),
  () => ({ call: ['refund_order', { orderId: 'A-17' }] }),
  (lastRead) => ({ say: `Done: ${lastRead}` }),
];
const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 1, text: 1, reasoning: 0 },
};
let turn = 0;
const model = new MockLanguageModelV4({
  doGenerate: async ({ prompt }) => {
    const results = prompt.flatMap((m) => (m.role === 'tool' ? m.content : []));
    const output = results.at(-1);
    const lastRead =
      output?.type === 'tool-result' && output.output.type === 'text' ? output.output.value : '';
    if (lastRead !== '') console.log(`model read: ${lastRead}`);
    const move = moves[turn++]!(lastRead);
    if ('say' in move)
      return {
        content: [{ type: 'text', text: move.say }],
        finishReason: { unified: 'stop', raw: undefined },
        usage,
        warnings: [],
      };
    const [toolName, input] = move.call;
    return {
      content: [{ type: 'tool-call', toolCallId: `call-${turn}`, toolName, input: JSON.stringify(input) }],
      finishReason: { unified: 'tool-calls', raw: undefined },
      usage,
      warnings: [],
    };
  },
});

const messages: ModelMessage[] = [{ role: 'user', content: 'Refund order A-17.' }];
const first = await generateText({ model, tools, toolsContext, messages, stopWhen: isStepCount(5) });
messages.push(...first.responseMessages);
const approval = first.content.find((part) => part.type === 'tool-approval-request');
console.log(`approval requested for: ${approval?.toolCall.toolName}`);

// A person approves in the app; the SDK runs the tool, and toolgate's check-in takes that approval.
messages.push({
  role: 'tool',
  content: [{ type: 'tool-approval-response', approvalId: approval!.approvalId, approved: true }],
});
const second = await generateText({ model, tools, toolsContext, messages, stopWhen: isStepCount(5) });
console.log(second.text);
