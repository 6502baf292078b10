// What the person at an MCP client sees before approving a call: every argument, in full, shortest
// first, with nothing hidden or faked by the model's text; or, when that cannot be shown, a refusal
// the model reads and no question at all. Over real Streamable HTTP on 127.0.0.1 with the SDK client.

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  ElicitRequestSchema,
  type CallToolResult,
  type ElicitRequestFormParams,
} from '@modelcontextprotocol/sdk/types.js';
import { defineTool } from '@toolgate/core';
import { canonicalChain } from '@toolgate/middleware';
import { mcpServe, serveHttp, type HttpServing, type McpServed } from '@toolgate/mcp';

const KEY = 'elicit-test-check-in-key-0123456789abcdef';

interface World {
  readonly served: McpServed;
  readonly http: HttpServing;
  readonly client: Client;
  readonly asked: ElicitRequestFormParams[];
  readonly ran: Record<string, unknown>[];
  readonly chain: ReturnType<typeof canonicalChain>;
}

let world: World | undefined;

async function open(): Promise<World> {
  const ran: Record<string, unknown>[] = [];
  const transfer = defineTool({
    name: 'transfer',
    description: 'Sends money; a person approves each transfer.',
    inputSchema: {
      type: 'object',
      properties: { memo: { type: 'string' }, amount: { type: 'number' }, to: { type: 'string' } },
      additionalProperties: true,
    },
    checkIn: 'always',
    execute: (args) => {
      ran.push(args);
      return 'sent';
    },
  });
  const chain = canonicalChain({ checkInKey: KEY });
  const served = mcpServe([transfer], { name: 'bank', version: '1.0.0', chain });
  const http = await serveHttp(served);
  const asked: ElicitRequestFormParams[] = [];
  const client = new Client({ name: 'person', version: '1.0.0' }, { capabilities: { elicitation: {} } });
  client.setRequestHandler(ElicitRequestSchema, (request) => {
    asked.push(request.params as ElicitRequestFormParams);
    return { action: 'accept', content: { decision: 'approve' } };
  });
  await client.connect(new StreamableHTTPClientTransport(http.url));
  world = { served, http, client, asked, ran, chain };
  return world;
}

afterEach(async () => {
  if (world === undefined) return;
  await world.client.close();
  await world.http.close();
  await world.served.close();
  world = undefined;
});

const transfer = (client: Client, args: Record<string, unknown>) =>
  client.callTool({ name: 'transfer', arguments: args }) as Promise<CallToolResult>;

/** The value shown on an argument's line and its continuation lines, unfolded. */
function shownValue(message: string, key: string): string {
  const lines = message.split('\n');
  const start = lines.findIndex((line) => line.startsWith(`  ${key}: `));
  if (start === -1) throw new Error(`no line for '${key}'`);
  let value = lines[start]!.slice(`  ${key}: `.length);
  for (const line of lines.slice(start + 1)) {
    if (!line.startsWith('    ↳ ')) break;
    value += line.slice('    ↳ '.length);
  }
  return value;
}

describe('the approval form', () => {
  it('shows every argument in full, shortest first: a long memo cannot push amount and to out of view', async () => {
    const { client, asked, ran } = await open();
    const memo = `Quarterly settlement ${'lorem ipsum '.repeat(250)}end`;

    const result = await transfer(client, { memo, amount: 250_000, to: 'attacker-iban' });

    expect(result.isError).not.toBe(true);
    expect(asked).toHaveLength(1);
    const lines = asked[0]!.message.split('\n');
    expect(lines).toContain('Arguments (3), each shown in full: amount, to, memo');
    const amountAt = lines.indexOf('  amount: 250000');
    const toAt = lines.indexOf('  to: "attacker-iban"');
    const memoAt = lines.findIndex((line) => line.startsWith('  memo: '));
    expect(amountAt).toBeGreaterThan(0);
    expect(toAt).toBeGreaterThan(amountAt);
    expect(memoAt).toBeGreaterThan(toAt);
    // Folded, never cut: the memo reads back whole, and no line is longer than the fold.
    expect(shownValue(asked[0]!.message, 'memo')).toBe(JSON.stringify(memo));
    expect(Math.max(...lines.map((line) => line.length))).toBeLessThanOrEqual(106);
    expect(ran).toEqual([{ memo, amount: 250_000, to: 'attacker-iban' }]);
  });

  it('a value cannot fake another argument or hide text: newlines stay escaped, invisible characters are shown', async () => {
    const { client, asked } = await open();
    const memo = 'thanks\n  amount: 5\n  to: "my-own-account"\u202e\u200bnaeb\u2066';

    await transfer(client, { memo, amount: 250_000, to: 'attacker-iban' });

    const message = asked[0]!.message;
    expect(message.split('\n').filter((line) => line.startsWith('  amount: '))).toEqual(['  amount: 250000']);
    expect(message.split('\n').filter((line) => line.startsWith('  to: '))).toEqual([
      '  to: "attacker-iban"',
    ]);
    expect(message).not.toMatch(/[\u202e\u200b\u2066]/);
    expect(message).toContain('\\u202e\\u200bnaeb\\u2066');
  });

  it('lists every one of many arguments, nested values in full, and odd keys quoted', async () => {
    const { client, asked } = await open();
    const args: Record<string, unknown> = {
      amount: 1,
      to: 'x',
      'line\nbreak': 'k',
      nested: { deep: { list: [1, 2, 3] } },
    };
    for (let i = 0; i < 40; i++) args[`field${i}`] = `value ${i}`;

    await transfer(client, args);

    const message = asked[0]!.message;
    for (let i = 0; i < 40; i++) expect(message).toContain(`\n  field${i}: "value ${i}"`);
    expect(message).toContain('\n  "line\\nbreak": "k"');
    expect(message).toContain('\n  nested: {\n      "deep": {\n        "list": [');
    expect(message).toMatch(/^Arguments \(44\), each shown in full: /m);
  });

  it('refuses, without asking anyone or running the tool, when the arguments are too long to show in full', async () => {
    const { client, asked, ran, chain } = await open();

    const result = await transfer(client, { memo: 'x'.repeat(30_000), amount: 250_000, to: 'attacker-iban' });

    expect(result.isError).toBe(true);
    expect(result.content).toEqual([
      {
        type: 'text',
        text:
          "[check-in refused: 'transfer' needs a person's approval, but its arguments are too long to show in full in the MCP client's approval form (32,201 characters; at most 20,000). " +
          'Retrying with the same arguments will not help. Call it again with shorter arguments, or do the work in smaller calls.]',
      },
    ]);
    expect(asked).toHaveLength(0);
    expect(ran).toHaveLength(0);
    // Nobody can answer it now: the pending request is revoked, not left in an approval queue.
    const records = await chain.checkInStore!.list();
    expect(records.map((record) => record.state)).toEqual(['revoked']);
  });
});
