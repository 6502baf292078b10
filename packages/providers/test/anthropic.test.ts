// Anthropic Messages formats, checked against the real `@anthropic-ai/sdk`: its types at compile time,
// and its client (HTTP answered in-process) parsing tool_use blocks and sending our tool_result message.

import Anthropic from '@anthropic-ai/sdk';
import type { MessageParam, Tool, ToolResultBlockParam } from '@anthropic-ai/sdk/resources/messages';
import { checkInApproved, createDispatcher, type CheckInRequest } from '@toolgate/core';
import { canonicalChain } from '@toolgate/middleware';
import {
  anthropicToolResult,
  dispatchAnthropicToolUse,
  dispatchAnthropicToolUses,
  dispatchToolUse,
  toAnthropicTools,
} from '@toolgate/providers';
import { docsClient, KEY, scriptedFetch, SECRET, world } from './fixtures';

const ACME = { tenant: 'acme', principal: 'ann' };

const reply = (blocks: unknown[]) => ({
  id: 'msg_1',
  type: 'message',
  role: 'assistant',
  model: 'claude-test',
  content: blocks,
  stop_reason: 'tool_use',
  stop_sequence: null,
  usage: { input_tokens: 1, output_tokens: 1 },
});

const use = (id: string, name: string, input: unknown) => ({ type: 'tool_use', id, name, input });

async function modelTurn(blocks: unknown[]) {
  const http = scriptedFetch([reply(blocks), reply([{ type: 'text', text: 'done' }])]);
  const client = new Anthropic({ apiKey: 'test', fetch: http.fetch, maxRetries: 0 });
  const response = await client.messages.create({
    model: 'claude-test',
    max_tokens: 100,
    messages: [{ role: 'user', content: 'go' }],
    tools: toAnthropicTools(world().dispatcher),
  });
  return { client, http, response };
}

describe('Anthropic formats', () => {
  test('toAnthropicTools gives custom tools the SDK accepts, with an object input_schema', async () => {
    const { dispatcher } = world();
    const tools: Tool[] = toAnthropicTools(dispatcher);
    expect(tools.map((t) => t.name)).toEqual(dispatcher.schemas().map((s) => s.name));
    expect(tools.find((t) => t.name === 'echo')!.input_schema).toEqual(
      dispatcher.schemas().find((s) => s.name === 'echo')!.inputSchema,
    );
    const { http } = await modelTurn([]);
    expect(http.bodies[0]!['tools']).toEqual(JSON.parse(JSON.stringify(tools)));
  });

  test('every tool_use of a turn is answered in one user message; refusals and failures carry is_error', async () => {
    const { dispatcher, ran } = world();
    const { client, http, response } = await modelTurn([
      { type: 'text', text: 'Let me try.' },
      use('u1', 'echo', { text: 'hi' }),
      use('u2', 'echo', { text: 5 }),
      use('u3', 'no_such_tool', {}),
      use('u4', 'delete_account', { id: 'a1' }),
    ]);
    const batch = await dispatchAnthropicToolUses(dispatcher, response.content, { identity: ACME });
    const results: ToolResultBlockParam[] = batch.message.content;
    expect(results.map((r) => [r.tool_use_id, r.is_error ?? false])).toEqual([
      ['u1', false],
      ['u2', true],
      ['u3', true],
      ['u4', true],
    ]);
    expect(results[0]!.content).toBe('hi');
    expect(results[1]!.content).toMatch(/^\[validate-args refused: .*'text'/);
    expect(results[2]!.content).toMatch(/^\[dispatch refused: there is no tool named 'no_such_tool'/);
    expect(results[3]!.content).toMatch(/^\[permission refused: .*only an admin may delete accounts/);
    expect(ran['echo']).toEqual([{ text: 'hi' }]);

    const history: MessageParam[] = [
      { role: 'user', content: 'go' },
      { role: 'assistant', content: response.content },
      batch.message,
    ];
    await client.messages.create({ model: 'claude-test', max_tokens: 100, messages: history });
    expect((http.bodies[1]!['messages'] as unknown[])[2]).toEqual(batch.message);
  });

  test('a tool that throws is a failed result with is_error, and malformed blocks are refusals, never throws', async () => {
    const { dispatcher } = world();
    const odd = await dispatchAnthropicToolUses(
      dispatcher,
      [use('o1', 'echo', 'not an object'), use('o2', 'echo', null), { type: 'tool_use' }, 'junk', null],
      { identity: ACME },
    );
    expect(odd.message.content.map((r) => [r.content, r.is_error])).toEqual([
      [expect.stringMatching(/were not valid JSON/), true],
      [expect.stringMatching(/must be a JSON object, not null/), true],
      [expect.stringMatching(/the requested tool name is not valid/), true],
    ]);
    const failing = createDispatcher({
      tools: [
        {
          schema: { name: 'boom', description: 'Fails.', inputSchema: { type: 'object' } },
          execute: () => {
            throw new Error('disk full');
          },
        },
      ],
      chain: canonicalChain(),
    });
    const { result, outcome } = await dispatchToolUse(failing, {
      type: 'tool_use',
      id: 'b1',
      name: 'boom',
      input: {},
    });
    expect(outcome.kind).toBe('failed');
    expect(result).toEqual({
      type: 'tool_result',
      tool_use_id: 'b1',
      content: "['boom' failed: disk full.]",
      is_error: true,
    });
  });

  test('a paused call answers with the check-in text, not an error; a later resume gives the final result', async () => {
    const { dispatcher, ran } = world();
    const pending: CheckInRequest[] = [];
    const { result } = await dispatchAnthropicToolUse(
      dispatcher,
      { type: 'tool_use', id: 'p1', name: 'transfer', input: { amount: 500 } },
      {
        identity: ACME,
        onPause: (request) => {
          pending.push(request);
          return undefined;
        },
      },
    );
    expect(result).toEqual({
      type: 'tool_result',
      tool_use_id: 'p1',
      content: "[check-in paused: waiting for a human to approve 'transfer'.]",
    });
    expect(ran['transfer']).toBeUndefined();
    const resumed = await dispatcher.resume(pending[0]!, checkInApproved({ by: 'ops' }));
    expect(anthropicToolResult(resumed)).toEqual({
      type: 'tool_result',
      tool_use_id: 'p1',
      content: 'transferred 500',
    });
    const small = await dispatchAnthropicToolUses(dispatcher, [use('p2', 'transfer', { amount: 5 })], {
      identity: ACME,
    });
    expect(small.message.content[0]!.content).toBe('transferred 5');
  });

  test('a credential reaches the tool but never the tool_result; an oversized result is refused', async () => {
    const { dispatcher, ran } = world();
    const batch = await dispatchAnthropicToolUses(
      dispatcher,
      [use('k1', 'charge', { cents: 500 }), use('s1', 'search', { limit: 100 })],
      { identity: ACME },
    );
    expect(ran['charge']).toEqual([{ cents: 500 }]);
    expect(JSON.stringify(batch.message)).not.toContain(SECRET);
    expect(batch.message.content[0]!.content).toBe('charged 500 with [redacted]');
    expect(batch.message.content[1]).toMatchObject({
      content: expect.stringMatching(/^\[result-ceiling refused: .*'limit'/),
      is_error: true,
    });
  });

  test('a tool imported over MCP keeps its source', async () => {
    const client = await docsClient();
    try {
      const dispatcher = createDispatcher({
        tools: await client.tools(),
        chain: canonicalChain({ checkInKey: KEY }),
      });
      const { result, outcome } = await dispatchAnthropicToolUse(dispatcher, {
        type: 'tool_use',
        id: 'm1',
        name: 'lookup',
        input: { q: 'refunds' },
      });
      expect(result.content).toBe('doc for refunds');
      expect(outcome).toMatchObject({ kind: 'result', toolSource: 'docs' });
    } finally {
      await client.close();
    }
  });
});
