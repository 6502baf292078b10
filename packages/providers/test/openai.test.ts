// OpenAI Chat Completions formats, checked against the real `openai` SDK: its types at compile time, and
// its client (HTTP answered in-process) parsing the model's tool calls and sending our tool messages.

import { checkInApproved, createDispatcher, type CheckInRequest } from '@toolgate/core';
import { canonicalChain } from '@toolgate/middleware';
import {
  dispatchOpenAIToolCall,
  dispatchOpenAIToolCalls,
  dispatchToolUse,
  openAIToolMessage,
  toOpenAITools,
} from '@toolgate/providers';
import OpenAI from 'openai';
import type {
  ChatCompletionMessageParam,
  ChatCompletionMessageToolCall,
  ChatCompletionTool,
  ChatCompletionToolMessageParam,
} from 'openai/resources/chat/completions';
import { docsClient, KEY, scriptedFetch, SECRET, world } from './fixtures';

const ACME = { tenant: 'acme', principal: 'ann' };

const completion = (toolCalls: { id: string; name: string; arguments: string }[]) => ({
  id: 'chatcmpl-1',
  object: 'chat.completion',
  created: 0,
  model: 'gpt-test',
  choices: [
    {
      index: 0,
      finish_reason: 'tool_calls',
      logprobs: null,
      message: {
        role: 'assistant',
        content: null,
        refusal: null,
        tool_calls: toolCalls.map((c) => ({
          id: c.id,
          type: 'function',
          function: { name: c.name, arguments: c.arguments },
        })),
      },
    },
  ],
});

/** Asks the real client for a completion whose tool calls are `toolCalls`; returns the parsed message. */
async function modelTurn(toolCalls: { id: string; name: string; arguments: string }[]) {
  const http = scriptedFetch([completion(toolCalls), completion([])]);
  const client = new OpenAI({ apiKey: 'test', fetch: http.fetch, maxRetries: 0 });
  const response = await client.chat.completions.create({
    model: 'gpt-test',
    messages: [{ role: 'user', content: 'go' }],
    tools: toOpenAITools(world().dispatcher),
  });
  return { client, http, message: response.choices[0]!.message };
}

describe('OpenAI formats', () => {
  test('toOpenAITools gives function tools the SDK accepts, carrying each JSON schema', async () => {
    const { dispatcher } = world();
    const tools: ChatCompletionTool[] = toOpenAITools(dispatcher);
    expect(tools.map((t) => t.type === 'function' && t.function.name)).toEqual(
      dispatcher.schemas().map((s) => s.name),
    );
    const { http } = await modelTurn([]);
    expect(http.bodies[0]!['tools']).toEqual(JSON.parse(JSON.stringify(tools)));
    const echo = tools.find((t) => t.type === 'function' && t.function.name === 'echo')!;
    expect(echo.type === 'function' && echo.function.parameters).toEqual(
      dispatcher.schemas().find((s) => s.name === 'echo')!.inputSchema,
    );
  });

  test('a batch of tool calls answers each in order, as tool messages the SDK sends back', async () => {
    const { dispatcher, ran } = world();
    const { client, http, message } = await modelTurn([
      { id: 'c1', name: 'echo', arguments: '{"text":"hi"}' },
      { id: 'c2', name: 'echo', arguments: '{"text": 5}' },
      { id: 'c3', name: 'echo', arguments: '{"text": "unclosed' },
      { id: 'c4', name: 'no_such_tool', arguments: '{}' },
      { id: 'c5', name: 'delete_account', arguments: '{"id":"a1"}' },
    ]);
    const toolCalls: ChatCompletionMessageToolCall[] = message.tool_calls ?? [];
    const batch = await dispatchOpenAIToolCalls(dispatcher, toolCalls, { identity: ACME });
    const messages: ChatCompletionToolMessageParam[] = batch.messages;
    expect(messages.map((m) => m.tool_call_id)).toEqual(['c1', 'c2', 'c3', 'c4', 'c5']);
    expect(messages[0]!.content).toBe('hi');
    expect(messages[1]!.content).toMatch(/^\[validate-args refused: .*'text'/);
    expect(messages[2]!.content).toMatch(/^\[dispatch refused: the arguments for 'echo' were not valid JSON/);
    expect(messages[3]!.content).toMatch(
      /^\[dispatch refused: there is no tool named 'no_such_tool'.*Call one of: /,
    );
    expect(messages[4]!.content).toMatch(/^\[permission refused: .*only an admin may delete accounts/);
    expect(batch.outcomes.map((o) => o.kind)).toEqual(['result', 'refused', 'refused', 'refused', 'refused']);
    expect(ran['echo']).toEqual([{ text: 'hi' }]);
    expect(ran['delete_account']).toBeUndefined();

    const history: ChatCompletionMessageParam[] = [
      { role: 'user', content: 'go' },
      message,
      ...batch.messages,
    ];
    await client.chat.completions.create({ model: 'gpt-test', messages: history });
    expect((http.bodies[1]!['messages'] as unknown[]).slice(2)).toEqual(batch.messages);
  });

  test('malformed tool calls are refusals the model reads, never throws', async () => {
    const { dispatcher } = world();
    const odd = [
      { id: 'x1', type: 'function', function: { name: 'echo' } },
      { id: 'x2', type: 'function' },
      null,
      { id: 'x3', type: 'custom', custom: { name: 'echo', input: '{"text":"via custom"}' } },
    ] as never[];
    const batch = await dispatchOpenAIToolCalls(dispatcher, odd, { identity: ACME });
    expect(batch.messages.map((m) => m.content)).toEqual([
      expect.stringMatching(/were not valid JSON/),
      expect.stringMatching(/the requested tool name is not valid/),
      expect.stringMatching(/the requested tool name is not valid/),
      'via custom',
    ]);
    expect((await dispatchOpenAIToolCalls(dispatcher, undefined)).messages).toEqual([]);
  });

  test('a paused call answers with the check-in text; onPause gets the signed request and a later resume gives the final message', async () => {
    const { dispatcher, ran } = world();
    const pending: CheckInRequest[] = [];
    const { message, outcome } = await dispatchOpenAIToolCall(
      dispatcher,
      { id: 'p1', type: 'function', function: { name: 'refund', arguments: '{"amount":30}' } },
      {
        identity: ACME,
        onPause: (request) => {
          pending.push(request);
          return undefined;
        },
      },
    );
    expect(message).toEqual({
      role: 'tool',
      tool_call_id: 'p1',
      content: "[check-in paused: waiting for a human to approve 'refund'.]",
    });
    expect(outcome.kind).toBe('paused');
    expect(pending[0]).toMatchObject({ toolName: 'refund', toolCallId: 'p1', identity: ACME });
    expect(ran['refund']).toBeUndefined();
    const resumed = await dispatcher.resume(pending[0]!, checkInApproved({ by: 'ops' }));
    expect(openAIToolMessage(resumed)).toEqual({ role: 'tool', tool_call_id: 'p1', content: 'refunded 30' });

    const inline = await dispatchOpenAIToolCalls(
      dispatcher,
      [{ id: 'p2', type: 'function', function: { name: 'refund', arguments: '{"amount":7}' } }],
      { identity: ACME, onPause: () => checkInApproved({ by: 'supervisor' }) },
    );
    expect(inline.messages[0]!.content).toBe('refunded 7');
    expect(inline.paused).toEqual([]);
  });

  test('an onPause that throws leaves the call paused, never approved', async () => {
    const { dispatcher, ran } = world();
    const batch = await dispatchOpenAIToolCalls(
      dispatcher,
      [{ id: 't1', type: 'function', function: { name: 'refund', arguments: '{"amount":3}' } }],
      {
        identity: ACME,
        onPause: () => {
          throw new Error('approval service down');
        },
      },
    );
    expect(batch.messages[0]!.content).toBe("[check-in paused: waiting for a human to approve 'refund'.]");
    expect(batch.paused).toHaveLength(1);
    expect(ran['refund']).toBeUndefined();
  });

  test('a credential reaches the tool but never the tool message', async () => {
    const { dispatcher, ran } = world();
    const { message } = await dispatchToolUse(
      dispatcher,
      { id: 'k1', type: 'function', function: { name: 'charge', arguments: '{"cents":500}' } },
      { identity: ACME },
    );
    expect(ran['charge']).toEqual([{ cents: 500 }]);
    expect(message.content).toBe('charged 500 with [redacted]');
    expect(JSON.stringify(message)).not.toContain(SECRET);
  });

  test('an oversized result is refused with the narrowing hint', async () => {
    const { dispatcher } = world();
    const { message } = await dispatchOpenAIToolCall(
      dispatcher,
      { id: 's1', type: 'function', function: { name: 'search', arguments: '{"limit":100}' } },
      { identity: ACME },
    );
    expect(message.content).toMatch(/^\[result-ceiling refused: .*1,000 characters.*200.*'limit'/);
  });

  test('a tool imported over MCP keeps its source', async () => {
    const client = await docsClient();
    try {
      const dispatcher = createDispatcher({
        tools: await client.tools(),
        chain: canonicalChain({ checkInKey: KEY }),
      });
      const { message, outcome } = await dispatchOpenAIToolCall(dispatcher, {
        id: 'm1',
        type: 'function',
        function: { name: 'lookup', arguments: '{"q":"refunds"}' },
      });
      expect(message.content).toBe('doc for refunds');
      expect(outcome).toMatchObject({ kind: 'result', toolSource: 'docs' });
    } finally {
      await client.close();
    }
  });
});
