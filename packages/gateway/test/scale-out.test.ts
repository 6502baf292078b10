// Scale out: gateway processes with one configuration, PostgreSQL for state and Redis for limits,
// behave as one. Needs real servers: `bash .ci/services/postgres.sh -- bash .ci/services/redis.sh --
// npx jest packages/gateway/test/scale-out.test.ts` (skipped with a note without them).

import { randomUUID } from 'node:crypto';
import { postgresCheckIns } from '@toolgate/store-postgres';
import {
  CHECKIN_KEY,
  connectClient,
  fixtureServer,
  startGateway,
  tempDir,
  textOf,
  type GatewayProcess,
  type TempDir,
} from './helpers';

const postgresUrl = process.env['TOOLGATE_POSTGRES_URL'];
const redisUrl = process.env['TOOLGATE_REDIS_URL'];
const run = postgresUrl !== undefined && redisUrl !== undefined ? describe : describe.skip;
if (postgresUrl === undefined || redisUrl === undefined)
  console.warn(
    'scale-out tests skipped: set TOOLGATE_POSTGRES_URL and TOOLGATE_REDIS_URL (bash .ci/services/postgres.sh -- bash .ci/services/redis.sh -- …)',
  );

const TOKEN = 'scale-out-token-0123456789abcdef-0123456789';
const APPROVER = 'scale-out-approver-0123456789abcdef';

run('three gateway processes on one PostgreSQL and one Redis', () => {
  let dir: TempDir;
  let gateways: GatewayProcess[] = [];
  // Each run counts in its own buckets, so a rerun against the same Redis starts fresh.
  const limitName = `calls-${randomUUID().slice(0, 8)}`;

  beforeAll(async () => {
    dir = tempDir();
    const file = dir.write(
      'toolgate.yaml',
      `auth:
  tokens:
    - { token: "\${env:TOKEN}", identity: { tenant: acme, principal: bot } }
    - { token: "\${env:APPROVER}", identity: { tenant: acme, principal: ana, roles: [approver, operator] } }
stores: { state: "\${env:PG}", limits: "\${env:REDIS}" }
checkIns: { key: "\${env:KEY}", hold: 200ms }
upstreams:
  shop:
    command: [node, ${JSON.stringify(fixtureServer)}]
    env: { RUN_LOG: ${JSON.stringify(`${dir.path}/runs.log`)} }
    tools: { refund: { checkIn: always } }
limits: [{ name: ${limitName}, per: tenant, calls: 4, window: 1h, tools: [echo] }]
tenants: { acme: { upstreams: [shop] } }
`,
    );
    const env = { TOKEN, APPROVER, PG: postgresUrl!, REDIS: redisUrl!, KEY: CHECKIN_KEY };
    gateways = await Promise.all([startGateway(file, env), startGateway(file, env), startGateway(file, env)]);
  }, 90_000);
  afterAll(async () => {
    await Promise.all(gateways.map((gateway) => gateway.stop()));
    dir?.remove();
  });

  it('counts a limit once across processes: the fifth call, through any of them, is refused', async () => {
    const clients = await Promise.all(gateways.map((gateway) => connectClient(gateway.url, TOKEN)));
    try {
      const texts: string[] = [];
      for (let call = 0; call < 6; call++) {
        const result = await clients[call % 3]!.callTool({
          name: 'echo',
          arguments: { text: `call ${call}` },
        });
        texts.push(textOf(result));
      }
      expect(texts.slice(0, 4)).toEqual(['call 0', 'call 1', 'call 2', 'call 3']);
      expect(texts[4]).toMatch(/^\[limits refused: /);
      expect(texts[5]).toMatch(/^\[limits refused: /);
      expect(dir.runs().filter((tool) => tool === 'echo')).toHaveLength(4);
      // The rate counts echo only: another tool still runs.
      expect(textOf(await clients[0]!.callTool({ name: 'big', arguments: { chars: 3 } }))).toBe('xxx');
    } finally {
      await Promise.all(clients.map((client) => client.close()));
    }
  });

  it('keeps a paused call in the shared store, where every process (and the inbox) finds it', async () => {
    const client = await connectClient(gateways[0]!.url, TOKEN);
    try {
      const result = await client.callTool({ name: 'refund', arguments: { amount: 10, order: 'S-1' } });
      const refusal = result._meta?.['io.toolgate/refusal'] as { code: string; checkInId: string };
      expect(refusal.code).toBe('CHECKIN_PENDING');
      const store = postgresCheckIns({ connectionString: postgresUrl! });
      try {
        const record = await store.get(refusal.checkInId);
        expect(record).toMatchObject({
          state: 'pending',
          request: { toolName: 'refund', identity: { tenant: 'acme', principal: 'bot' } },
        });
      } finally {
        await store.close();
      }
    } finally {
      await client.close();
    }
  });

  it('pauses a call through one process, takes the approval in another’s inbox, runs the grant once through a third', async () => {
    const [first, second, third] = gateways;
    const args = { amount: 42, order: `S-${randomUUID().slice(0, 8)}` };
    const one = await connectClient(first!.url, TOKEN);
    const three = await connectClient(third!.url, TOKEN);
    try {
      const paused = await one.callTool({ name: 'refund', arguments: args });
      const { checkInId } = paused._meta?.['io.toolgate/refusal'] as { checkInId: string };
      const approved = await fetch(new URL(`/inbox/api/check-ins/${checkInId}/approve`, second!.url), {
        method: 'POST',
        headers: { authorization: `Bearer ${APPROVER}`, 'content-type': 'application/json' },
        body: JSON.stringify({ note: 'ok' }),
      });
      expect(approved.status).toBe(200);
      const refunds = () => dir.runs().filter((tool) => tool === 'refund').length;
      const before = refunds();
      // Two identical retries race through two processes: the grant runs the call once.
      const [a, b] = await Promise.all([
        three.callTool({ name: 'refund', arguments: args }),
        one.callTool({ name: 'refund', arguments: args }),
      ]);
      const ran = [a, b].filter((result) => textOf(result) === `refunded 42 on ${args.order}`);
      expect(ran).toHaveLength(1);
      expect(refunds()).toBe(before + 1);
    } finally {
      await Promise.all([one.close(), three.close()]);
    }
  });

  it('reports PostgreSQL and Redis on /readyz of every process', async () => {
    for (const gateway of gateways) {
      const ready = await fetch(new URL('/readyz', gateway.url), {
        headers: { authorization: `Bearer ${APPROVER}` },
      });
      const body = (await ready.json()) as Record<string, unknown>;
      expect(body['stores']).toEqual({
        state: { kind: 'postgres', ok: true },
        limits: { kind: 'redis', ok: true },
      });
    }
  });
});
