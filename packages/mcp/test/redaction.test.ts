// A served tool's credential never reaches the MCP client: not in the text, not in
// structuredContent, not in an error, in no form a serializer gives it, in no message on the wire.

import fc from 'fast-check';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { CallToolResult, JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { defineTool, type Tool } from '@toolgate/core';
import { canonicalChain } from '@toolgate/middleware';
import { mcpServe } from '@toolgate/mcp';
import { fcOptions, leaksOf, PROPERTY_TIMEOUT_MS } from '../../../test-support/hardening';

const ESCAPED = ['"', '\\', '/', '\n', '\u0001', '\u00e9', '\u2028', '\u{1f511}'];
const secretArb = fc
  .string({
    unit: fc.oneof(
      { arbitrary: fc.constantFrom(...'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789'), weight: 3 },
      { arbitrary: fc.constantFrom(...ESCAPED), weight: 1 },
    ),
    minLength: 16,
    maxLength: 28,
  })
  .map((body) => `sk_live_${body}`);

type Echo = 'object' | 'nested-json' | 'text' | 'throws' | 'throws-json';

function echoingTool(how: Echo): Tool {
  return defineTool({
    name: 'upstream',
    description: 'Calls an upstream that echoes the authorization it was sent.',
    inputSchema: { type: 'object', properties: {} },
    needs: { kind: 'api_key', service: 'upstream' },
    execute: (_args, ctx) => {
      const key = String(ctx.credential?.reveal());
      switch (how) {
        case 'object':
          return { upstream: key, headers: [{ authorization: `Bearer ${key}` }] };
        case 'nested-json':
          return { body: JSON.stringify({ echo: { key } }) };
        case 'text':
          return `authorized with ${key}`;
        case 'throws':
          throw new Error(`upstream rejected ${key}`);
        case 'throws-json':
          throw new Error(`upstream said ${JSON.stringify({ error: { key } })}`);
      }
    },
  });
}

/** Serves one tool through a canonical chain that resolves `secret`, and records every wire message. */
async function serveAndCall(secret: string, how: Echo) {
  const served = mcpServe([echoingTool(how)], {
    name: 'redaction',
    version: '1.0.0',
    chain: canonicalChain({ credentials: { resolve: () => ({ kind: 'api_key', value: secret }) } }),
  });
  const [clientEnd, serverEnd] = InMemoryTransport.createLinkedPair();
  const wire: JSONRPCMessage[] = [];
  const send = serverEnd.send.bind(serverEnd);
  serverEnd.send = (message, options) => {
    wire.push(message);
    return send(message, options);
  };
  await served.connect(serverEnd);
  const client = new Client({ name: 'probe', version: '1.0.0' });
  await client.connect(clientEnd);
  try {
    const result = (await client.callTool({ name: 'upstream', arguments: {} })) as CallToolResult;
    return { result, wire };
  } finally {
    await client.close();
    await served.close();
  }
}

describe('what a served tool echoes of its credential', () => {
  it('structuredContent carries the redacted value, not the secret', async () => {
    const secret = 'sk_live_"QUOTE\\SECRET';

    const { result } = await serveAndCall(secret, 'object');

    expect(result.structuredContent).toEqual({
      upstream: '[redacted]',
      headers: [{ authorization: 'Bearer [redacted]' }],
    });
    expect(result.content).toEqual([{ type: 'text', text: JSON.stringify(result.structuredContent) }]);
  });

  it('a secret inside a JSON string inside the result is redacted too', async () => {
    const { result } = await serveAndCall('sk_live_"QUOTE\\SECRET', 'nested-json');

    expect(JSON.stringify(result)).not.toMatch(/QUOTE|SECRET/);
    expect(result.structuredContent).toEqual({ body: '{"echo":{"key":"[redacted]"}}' });
  });

  it('an error that quotes the secret as JSON reaches the client redacted', async () => {
    const { result } = await serveAndCall('sk_live_"QUOTE\\SECRET', 'throws-json');

    expect(result.isError).toBe(true);
    expect(JSON.stringify(result)).not.toMatch(/QUOTE|SECRET/);
  });

  it(
    'no secret, whatever characters it holds, appears in the result or any message on the wire',
    async () => {
      await fc.assert(
        fc.asyncProperty(
          secretArb,
          fc.constantFrom<Echo>('object', 'nested-json', 'text', 'throws', 'throws-json'),
          async (secret, how) => {
            const { result, wire } = await serveAndCall(secret, how);

            expect(leaksOf([secret], { result, wire })).toEqual([]);
            expect(leaksOf([secret], { wireText: wire.map((m) => JSON.stringify(m)) })).toEqual([]);
          },
        ),
        fcOptions(17, { numRuns: 200 }),
      );
    },
    PROPERTY_TIMEOUT_MS,
  );
});

describe('a credential echoed as a number, as bytes or encoded', () => {
  const PAN = '4111111111111111';
  const SECRET_KEY = 'sk_live/ENCODED+0123456789';

  async function callEchoing(secret: string, execute: (key: string) => unknown) {
    const tool = defineTool({
      name: 'upstream',
      description: 'Calls an upstream that echoes what it was sent.',
      inputSchema: { type: 'object', properties: {} },
      needs: { kind: 'api_key', service: 'upstream' },
      execute: (_args, ctx) => execute(String(ctx.credential?.reveal())),
    });
    const served = mcpServe([tool], {
      name: 'redaction',
      version: '1.0.0',
      chain: canonicalChain({ credentials: { resolve: () => ({ kind: 'api_key', value: secret }) } }),
    });
    const [clientEnd, serverEnd] = InMemoryTransport.createLinkedPair();
    const wire: string[] = [];
    const send = serverEnd.send.bind(serverEnd);
    serverEnd.send = (message, options) => {
      wire.push(JSON.stringify(message));
      return send(message, options);
    };
    await served.connect(serverEnd);
    const client = new Client({ name: 'probe', version: '1.0.0' });
    await client.connect(clientEnd);
    try {
      const result = (await client.callTool({ name: 'upstream', arguments: {} })) as CallToolResult;
      return { result, wire: wire.join('\n') };
    } finally {
      await client.close();
      await served.close();
    }
  }

  it('a numeric secret echoed as a JSON number is redacted in structuredContent, as in the text', async () => {
    const { result, wire } = await callEchoing(PAN, (key) => ({ card: { pan: Number(key), last4: 1111 } }));

    expect(result.structuredContent).toEqual({ card: { pan: '[redacted]', last4: 1111 } });
    expect(result.content).toEqual([{ type: 'text', text: JSON.stringify(result.structuredContent) }]);
    expect(wire).not.toContain(PAN);
  });

  it('a secret in a Buffer or a typed array crosses the wire as [redacted], not as its bytes', async () => {
    const { result, wire } = await callEchoing(SECRET_KEY, (key) => ({
      raw: Buffer.from(`Bearer ${key}`),
      view: new TextEncoder().encode(key),
    }));
    const bytes = [...new TextEncoder().encode(SECRET_KEY)].join(',');

    expect(result.structuredContent).toEqual({ raw: '[redacted]', view: '[redacted]' });
    expect(wire).not.toContain(bytes);
    expect(wire).not.toContain(SECRET_KEY);
  });

  it('base64, Basic, hex and lowercase %xx forms of the secret reach the client as [redacted]', async () => {
    const { result, wire } = await callEchoing(SECRET_KEY, (key) => ({
      basic: `Basic ${Buffer.from(`svc:${key}`).toString('base64')}`,
      b64url: Buffer.from(key).toString('base64url'),
      hex: Buffer.from(key).toString('hex'),
      url: `https://api.example/?k=${encodeURIComponent(`${key}/x`).replace(/%[0-9A-F]{2}/g, (e) => e.toLowerCase())}`,
    }));

    expect(result.structuredContent).toEqual({
      basic: 'Basic [redacted]',
      b64url: '[redacted]',
      hex: '[redacted]',
      url: 'https://api.example/?k=[redacted]%2fx',
    });
    for (const encoded of ['base64', 'base64url', 'hex'] as const) {
      expect(wire).not.toContain(Buffer.from(SECRET_KEY).toString(encoded).slice(0, 16));
    }
  });
});
