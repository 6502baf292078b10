// A hand-written tool loop on the OpenAI SDK, governed by a toolgate chain, and the same tools answering
// an Anthropic tool_use turn. The "model" is a scripted HTTP responder, so this runs without an API key.

import type { MessageParam } from '@anthropic-ai/sdk/resources/messages';
import { createDispatcher, defineTool } from '@toolgate/core';
import { canonicalChain } from '@toolgate/middleware';
import { dispatchAnthropicToolUses, dispatchOpenAIToolCalls, toOpenAITools } from '@toolgate/providers';
import OpenAI from 'openai';
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';

const weather = defineTool({
  name: 'get_weather',
  description: 'Current weather for a city.',
  inputSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  execute: (args: { city: string }) => `${args.city}: 18°C, clear`,
});
const dispatcher = createDispatcher({ tools: [weather], chain: canonicalChain() });
const identity = { tenant: 'acme', principal: 'ann' };

// The scripted model: first two tool calls (one with broken JSON), then a final answer.
const replies = [
  [
    { id: 'c1', type: 'function', function: { name: 'get_weather', arguments: '{"city": "Oslo"' } },
    { id: 'c2', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Lima"}' } },
  ],
  null,
];
let turn = 0;
const fetch = async (): Promise<Response> => {
  const toolCalls = replies[turn++];
  const message = toolCalls
    ? { role: 'assistant', content: null, tool_calls: toolCalls }
    : { role: 'assistant', content: 'Lima is clear.' };
  const body = {
    id: 'x',
    object: 'chat.completion',
    created: 0,
    model: 'scripted',
    choices: [{ index: 0, finish_reason: 'stop', message }],
  };
  return new Response(JSON.stringify(body), { headers: { 'content-type': 'application/json' } });
};
const openai = new OpenAI({ apiKey: 'not-needed', fetch });

const messages: ChatCompletionMessageParam[] = [{ role: 'user', content: 'Weather in Oslo and Lima?' }];
for (;;) {
  const response = await openai.chat.completions.create({
    model: 'scripted',
    messages,
    tools: toOpenAITools(dispatcher),
  });
  const message = response.choices[0]!.message;
  messages.push(message);
  if (!message.tool_calls?.length) break;
  const batch = await dispatchOpenAIToolCalls(dispatcher, message.tool_calls, { identity });
  for (const reply of batch.messages) console.log(`openai ${reply.tool_call_id}: ${String(reply.content)}`);
  messages.push(...batch.messages);
}
console.log(`openai final: ${String(messages.at(-1)?.content)}`);

// Anthropic: one assistant turn's tool_use blocks become one user message of tool_result blocks.
const assistant: MessageParam = {
  role: 'assistant',
  content: [{ type: 'tool_use', id: 'tu1', name: 'get_weather', input: { town: 'Oslo' } }],
};
const { message } = await dispatchAnthropicToolUses(dispatcher, assistant.content as unknown[], { identity });
console.log(
  `anthropic tu1 (is_error: ${String(message.content[0]?.is_error)}): ${message.content[0]?.content}`,
);
