// An upstream's JSON Schema 2020-12 through the gateway: tools whose schemas use $anchor, $defs and a
// recursive $dynamicRef are served and their arguments judged; a schema toolgate cannot compile is
// not silently dropped: `toolgate check` and /readyz name the tool, its upstream and why.

import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { createGateway, type Gateway } from '../src/gateway';
import { CHECKIN_KEY, cliIn, connectClient, tempDir, textOf, type TempDir } from './helpers';

const BOT = 'bot-token-0123456789abcdef-0123456789';
const schemas = join(__dirname, 'fixtures', 'schemas.mjs');

describe('JSON Schema 2020-12 from an upstream', () => {
  let dir: TempDir;
  let file: string;
  let gateway: Gateway;
  let client: Client;

  beforeAll(async () => {
    dir = tempDir();
    file = dir.write(
      'toolgate.yaml',
      `auth:
  tokens:
    - { token: "\${env:BOT}", identity: { tenant: acme, principal: support-bot } }
checkIns: { key: "${CHECKIN_KEY}" }
upstreams:
  maps:
    command: [node, ${JSON.stringify(schemas)}]
    prefix: maps_
tenants:
  acme: { upstreams: [maps] }
`,
    );
    gateway = await createGateway(file, { port: 0, env: { BOT }, log: () => undefined, watch: false });
    client = await connectClient(gateway.url, BOT);
  }, 30_000);

  afterAll(async () => {
    await client?.close();
    await gateway?.close();
    dir?.remove();
  });

  it('serves the tools whose schemas use $anchor and $dynamicRef, and judges their arguments', async () => {
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual(['maps_route', 'maps_tree']);

    const routed = await client.callTool({
      name: 'maps_route',
      arguments: { from: { city: 'Oslo' }, to: { city: 'Bergen' } },
    });
    expect(textOf(routed)).toBe('Oslo → Bergen');
    const counted = await client.callTool({
      name: 'maps_tree',
      arguments: { label: 'r', children: [{ label: 'a', children: [{ label: 'b' }] }] },
    });
    expect(textOf(counted)).toBe('3 node(s)');

    const refused = await client.callTool({
      name: 'maps_tree',
      arguments: { label: 'r', children: [{ label: 'a', children: [{ label: 7 }] }] },
    });
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toMatch(/children\.0\.children\.0\.label/);
  });

  it('names the tool it cannot compile, with its upstream and why, in /readyz', async () => {
    const ready = await gateway.readiness();
    expect(JSON.parse(JSON.stringify(ready))).toMatchObject({
      upstreams: {
        maps: {
          skipped: [
            {
              tool: 'odd',
              reason: expect.stringMatching(
                /^its inputSchema does not compile \("\$dynamicAnchor" at "#\/properties\/a"/,
              ),
            },
          ],
        },
      },
    });
  });

  it('and in toolgate check', async () => {
    const run = await cliIn(dir, { BOT })(['check', '--config', file]);
    expect(run.out).toMatch(
      /maps \(stdio\): connected, 2 tool\(s\)\n\s+not listed: odd: its inputSchema does not compile/,
    );
  });
});
