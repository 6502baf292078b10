// Both protocol revisions through `toolgate gateway` on its one /mcp endpoint: a 2026-07-28 client
// (SDK v2, no session) and a 2025-11-25 client (SDK 1.x, a session) are each served their tenant's
// tools through the tenant's chain, and every call is logged once with who called.

import { readFileSync } from 'node:fs';
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import {
  Client as V2Client,
  StreamableHTTPClientTransport as V2Transport,
} from '@modelcontextprotocol/client';
import {
  CHECKIN_KEY,
  connectClient,
  fixtureServer,
  referenceServer,
  startGateway,
  tempDir,
  textOf,
  type GatewayProcess,
  type TempDir,
} from './helpers';

const TOKENS = {
  ACME_TOKEN: 'acme-token-0123456789abcdef-0123456789',
  GLOBEX_TOKEN: 'globex-token-0123456789abcdef-01234567',
};
const MODERN = '2026-07-28';

function config(dir: TempDir): string {
  return `auth:
  tokens:
    - { token: "\${env:ACME_TOKEN}", identity: { tenant: acme, principal: support-bot } }
    - { token: "\${env:GLOBEX_TOKEN}", identity: { tenant: globex, principal: ana } }
checkIns: { key: "\${env:TOOLGATE_CHECKIN_KEY}", hold: 200ms }
upstreams:
  shop:
    command: [node, ${JSON.stringify(fixtureServer)}]
    env: { RUN_LOG: ${JSON.stringify(`${dir.path}/runs.log`)} }
    prefix: shop_
    tools: { refund: { checkIn: always } }
  everything:
    command: [node, ${JSON.stringify(referenceServer('everything'))}]
    prefix: ev_
  other:
    command: [node, ${JSON.stringify(fixtureServer)}]
    prefix: other_
    include: [echo]
tenants:
  acme: { upstreams: [shop, everything] }
  globex: { upstreams: [other] }
`;
}

const modernClient = async (url: string, token: string) => {
  const client = new V2Client(
    { name: 'modern', version: '1.0.0' },
    { versionNegotiation: { mode: { pin: MODERN } } },
  );
  await client.connect(
    new V2Transport(new URL(url), { requestInit: { headers: { authorization: `Bearer ${token}` } } }),
  );
  return client;
};

describe('toolgate gateway serves 2026-07-28 and 2025-11-25 on one endpoint', () => {
  let dir: TempDir;
  let gateway: GatewayProcess;
  const runs = () => {
    try {
      return readFileSync(`${dir.path}/runs.log`, 'utf8').split('\n').filter(Boolean);
    } catch {
      return [];
    }
  };

  beforeAll(async () => {
    dir = tempDir();
    gateway = await startGateway(dir.write('toolgate.yaml', config(dir)), {
      ...TOKENS,
      TOOLGATE_CHECKIN_KEY: CHECKIN_KEY,
    });
  });
  afterAll(async () => {
    await gateway?.stop();
    dir?.remove();
  });

  it("serves a 2026-07-28 client its tenant's tools, statelessly, through the tenant's chain", async () => {
    const acme = await modernClient(gateway.url, TOKENS.ACME_TOKEN);
    const globex = await modernClient(gateway.url, TOKENS.GLOBEX_TOKEN);
    try {
      const acmeTools = (await acme.listTools()).tools.map((tool) => tool.name).sort();
      const globexTools = (await globex.listTools()).tools.map((tool) => tool.name).sort();
      expect(acmeTools).toEqual(expect.arrayContaining(['shop_echo', 'shop_refund']));
      expect(acmeTools.some((name) => name.startsWith('other_'))).toBe(false);
      expect(globexTools).toEqual(['other_echo']);

      const echoed = await acme.callTool({ name: 'shop_echo', arguments: { text: 'modern hello' } });
      expect(textOf(echoed)).toBe('modern hello');
      // Another tenant's tool is not this caller's to run.
      const foreign = await globex.callTool({ name: 'shop_echo', arguments: { text: 'not yours' } });
      expect(foreign.isError).toBe(true);
      expect(runs()).toEqual(['echo']);
      const line = await gateway.waitForLog(
        (l) => l['msg'] === 'call' && l['tool'] === 'shop_echo' && l['kind'] === 'result',
      );
      expect(line).toMatchObject({ tenant: 'acme', principal: 'support-bot', upstream: 'shop', ran: true });
      expect(JSON.stringify(gateway.logs())).not.toContain('modern hello');
    } finally {
      await acme.close();
      await globex.close();
    }
  });

  it('holds a paused call for the inbox and answers CHECKIN_PENDING to a 2026-07-28 client, running nothing', async () => {
    const acme = await modernClient(gateway.url, TOKENS.ACME_TOKEN);
    try {
      const before = runs().length;
      const paused = await acme.callTool({ name: 'shop_refund', arguments: { amount: 5, order: 'A-1' } });
      expect(paused.isError).toBe(true);
      expect(paused._meta?.['io.toolgate/refusal']).toMatchObject({
        code: 'CHECKIN_PENDING',
        retryable: true,
      });
      expect(runs()).toHaveLength(before);
    } finally {
      await acme.close();
    }
  });

  it("lists an upstream's tools with their execution (2025-11-25) and icons (both revisions) as the upstream lists them", async () => {
    const direct = new V1Client({ name: 'direct', version: '1.0.0' });
    await direct.connect(
      new StdioClientTransport({ command: 'node', args: [referenceServer('everything')] }),
    );
    const modern = await modernClient(gateway.url, TOKENS.ACME_TOKEN);
    const legacy = await connectClient(gateway.url, TOKENS.ACME_TOKEN);
    try {
      const upstream = (await direct.listTools()).tools;
      const carried = upstream.filter((tool) => tool.execution !== undefined || tool.icons !== undefined);
      expect(carried.length).toBeGreaterThan(0);
      for (const client of [modern, legacy]) {
        const listed = new Map(
          ((await client.listTools()).tools as Record<string, unknown>[]).map((tool) => [tool['name'], tool]),
        );
        for (const tool of carried) {
          const through = listed.get(`ev_${tool.name}`);
          expect(through).toBeDefined();
          // 2026-07-28 moved tasks to an extension: its Tool has no `execution`, the SDK drops it there.
          if (client === legacy) expect(through!['execution']).toEqual(tool.execution);
          expect(through!['icons']).toEqual(tool.icons);
        }
      }
    } finally {
      await direct.close();
      await modern.close();
      await legacy.close();
    }
  });

  it('still serves a 2025-11-25 client in a session on the same endpoint', async () => {
    const client = await connectClient(gateway.url, TOKENS.GLOBEX_TOKEN);
    try {
      expect(client.getServerVersion()?.name).toBe('toolgate-gateway');
      expect(textOf(await client.callTool({ name: 'other_echo', arguments: { text: 'legacy' } }))).toBe(
        'legacy',
      );
    } finally {
      await client.close();
    }
  });

  it('refuses a 2026-07-28 request without a token with 401, before any MCP handling', async () => {
    const response = await fetch(gateway.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': MODERN,
        'mcp-method': 'server/discover',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'server/discover', params: {} }),
    });
    expect(response.status).toBe(401);
  });
});
