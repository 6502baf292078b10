// Roots through the gateway: off unless an upstream is configured with `roots: relay`, because a
// 2025-11-25 server may keep one caller's roots as the sandbox of every caller it serves. With
// `relay`, the calling client answers its own call's question.

import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ListRootsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { createGateway, type Gateway } from '../src/gateway';
import { authYaml, connectClient, textOf, tempDir, type TempDir } from './helpers';

const BOT = 'bot-token-0123456789abcdef-0123456789';
const asker = join(__dirname, 'fixtures', 'roots-asker.mjs');

describe('roots through the gateway', () => {
  let dir: TempDir;
  let gateway: Gateway;
  let client: Client;
  let asked = 0;

  beforeAll(async () => {
    dir = tempDir();
    const file = dir.write(
      'toolgate.yaml',
      `${authYaml({ BOT: { token: BOT, principal: 'dev-bot' } })}upstreams:
  plain:
    command: [node, ${JSON.stringify(asker)}]
    prefix: plain_
  relayed:
    command: [node, ${JSON.stringify(asker)}]
    prefix: relayed_
    roots: relay
tenants:
  acme: { upstreams: [plain, relayed] }
`,
    );
    gateway = await createGateway(file, { port: 0, env: { BOT }, log: () => {}, watch: false });
    client = await connectClient(gateway.url, BOT, {
      name: 'roots-client',
      capabilities: { roots: { listChanged: true } },
      handlers: (client) =>
        client.setRequestHandler(ListRootsRequestSchema, async () => {
          asked += 1;
          return { roots: [{ uri: 'file:///home/dev/project', name: 'project' }] };
        }),
    });
  }, 30_000);

  afterAll(async () => {
    await client?.close();
    await gateway?.close();
    dir?.remove();
  });

  it('offers an upstream no roots by default, and never asks the client', async () => {
    const result = await client.callTool({ name: 'plain_where', arguments: {} });

    expect(textOf(result)).toMatch(/^offered: false; error: /);
    expect(asked).toBe(0);
  });

  it("relays a `roots: relay` upstream's question to the calling client", async () => {
    const result = await client.callTool({ name: 'relayed_where', arguments: {} });

    expect(textOf(result)).toBe('offered: true; roots: file:///home/dev/project');
    expect(asked).toBe(1);
  });
});
