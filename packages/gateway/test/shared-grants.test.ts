// Standing grants and requestStates shared by gateway processes on one state store (GATEWAY.md §6,
// §8 scale-out): a grant made in one process's inbox answers calls through another, its uses are
// counted once across both (racing calls never take more), revocation and restarts hold, every
// change is audited without argument values, and a requestState spent through one process is
// refused by the other. Runs on a SQLite file (Node 22.13+), and on PostgreSQL when
// TOOLGATE_POSTGRES_URL is set (`bash .ci/services/postgres.sh -- npx jest …`).

import { generateKeyPairSync, randomBytes } from 'node:crypto';
import {
  Client as V2Client,
  StreamableHTTPClientTransport as V2Transport,
} from '@modelcontextprotocol/client';
import type { AuditRecord } from '@toolgate/core';
import { postgresAuditStore, postgresCheckIns } from '@toolgate/store-postgres';
import { sqliteAuditStore } from '@toolgate/store-sqlite';
import {
  authYaml,
  callerFetch,
  CHECKIN_KEY,
  connectClient,
  startGateway,
  tempDir,
  shopUpstream,
  textOf,
  tokenEnv,
  type GatewayProcess,
  type TempDir,
} from './helpers';

const CALLERS = {
  BOT: { token: 'shared-bot-token-0123456789abcdef-01234', principal: 'bot' },
  ANA: { token: 'shared-ana-approver-0123456789abcdef-012', principal: 'ana', roles: ['approver'] },
  GUS: {
    token: 'shared-gus-approver-0123456789abcdef-012',
    tenant: 'globex',
    principal: 'gus',
    roles: ['approver'],
  },
};
const TOKENS = tokenEnv(CALLERS);
const hasSqlite = process.getBuiltinModule?.('node:sqlite') !== undefined;
const postgresUrl = process.env['TOOLGATE_POSTGRES_URL'] || undefined;

// On PostgreSQL the gateways get a schema of their own (through the connection's search_path), so
// this file's audit log, signed with its own key, never mixes with another test's.
const schema = `tg_shared_grants_${randomBytes(5).toString('hex')}`;
const inSchema = (url: string) =>
  `${url}${url.includes('?') ? '&' : '?'}options=${encodeURIComponent(`-c search_path=${schema}`)}`;

const backends: { name: string; state: (dir: TempDir) => string; run: boolean }[] = [
  { name: 'one SQLite file', state: () => 'sqlite:./state.db', run: hasSqlite },
  {
    name: 'one PostgreSQL database',
    state: () => inSchema(postgresUrl ?? ''),
    run: postgresUrl !== undefined,
  },
];

if (postgresUrl !== undefined)
  beforeAll(async () => {
    // The store creates the schema (and its tables) on first use; the gateways then find it on their search_path.
    const made = postgresCheckIns({ connectionString: postgresUrl, schema });
    await made.list({ limit: 1 });
    await made.close();
  });

type Refusal = { gate: string; code: string; checkInId?: string };
const refusalOf = (result: unknown) =>
  (result as { _meta?: Record<string, unknown> })._meta?.['io.toolgate/refusal'] as Refusal | undefined;

for (const backend of backends) {
  (backend.run ? describe : describe.skip)(`two gateway processes on ${backend.name}`, () => {
    let dir: TempDir;
    let gateways: GatewayProcess[] = [];
    let env: Record<string, string>;
    let configFile: string;

    beforeAll(async () => {
      dir = tempDir();
      const { privateKey } = generateKeyPairSync('ed25519');
      dir.write('audit-key.pem', privateKey.export({ type: 'pkcs8', format: 'pem' }) as string);
      configFile = dir.write(
        'toolgate.yaml',
        `${authYaml(CALLERS)}stores: { state: "\${env:STATE}" }
checkIns: { key: "\${env:KEY}", hold: 200ms, ttl: 10m }
audit: { signingKey: "\${file:./audit-key.pem}" }
upstreams:
${shopUpstream(dir)}    tools: { refund: { checkIn: always } }
tenants: { acme: { upstreams: [shop] }, globex: { upstreams: [shop] } }
`,
      );
      env = { ...TOKENS, KEY: CHECKIN_KEY, STATE: backend.state(dir) };
      gateways = await Promise.all([startGateway(configFile, env), startGateway(configFile, env)]);
    }, 90_000);
    afterAll(async () => {
      await Promise.all(gateways.map((gateway) => gateway.stop()));
      dir?.remove();
    });

    const refunds = () => dir.runs().filter((tool) => tool === 'refund').length;
    const api = async (
      gateway: GatewayProcess,
      token: string,
      path: string,
      method = 'GET',
      body?: unknown,
    ) => {
      const response = await callerFetch(gateway.url, token, `/inbox/api${path}`, { method, body });
      const text = await response.text();
      if (!text.startsWith('{'))
        throw new Error(
          `${method} ${path}: HTTP ${response.status} ${text}\n${JSON.stringify(gateway.logs().slice(-5))}`,
        );
      return { status: response.status, json: JSON.parse(text) as Record<string, unknown> };
    };
    const auditRecords = async (): Promise<AuditRecord[]> => {
      const store =
        postgresUrl !== undefined && backend.name.includes('PostgreSQL')
          ? postgresAuditStore({ connectionString: postgresUrl, schema })
          : sqliteAuditStore({ path: `${dir.path}/state.db` });
      try {
        const records: AuditRecord[] = [];
        for (
          let batch = await store.read(0, 500);
          batch.length > 0;
          batch = await store.read(records.at(-1)!.seq, 500)
        )
          records.push(...batch);
        return records;
      } finally {
        await store.close();
      }
    };
    /** A held call's check-in, approved through `approver` with a standing grant; the grant made. */
    const grantFrom = async (
      through: GatewayProcess,
      approver: GatewayProcess,
      args: Record<string, unknown>,
      grant: unknown,
    ) => {
      const bot = await connectClient(through.url, TOKENS.BOT);
      try {
        const held = refusalOf(await bot.callTool({ name: 'refund', arguments: args }));
        expect(held?.code).toBe('CHECKIN_PENDING');
        const approved = await api(approver, TOKENS.ANA, `/check-ins/${held!.checkInId}/approve`, 'POST', {
          grant,
        });
        expect(approved.status).toBe(200);
        return approved.json['grant'] as { id: string };
      } finally {
        await bot.close();
      }
    };

    it('a grant made in one inbox answers calls through both processes, counted once: of 5 racing calls within it, 3 run', async () => {
      const [a, b] = gateways as [GatewayProcess, GatewayProcess];
      const order = `G-${Date.now()}`;
      const grant = await grantFrom(
        a,
        b,
        { amount: 300, order },
        { bounds: { amount: { atMost: 300 } }, uses: 3 },
      );
      expect(grant.id).toMatch(/^grt_/);
      const before = refunds();
      const clients = await Promise.all([connectClient(a.url, TOKENS.BOT), connectClient(b.url, TOKENS.BOT)]);
      try {
        const answers = await Promise.all(
          [100, 150, 200, 250, 299].map((amount, i) =>
            clients[i % 2]!.callTool({ name: 'refund', arguments: { amount, order } }),
          ),
        );
        const ran = answers.filter((answer) => textOf(answer).startsWith('refunded '));
        expect(ran).toHaveLength(3);
        expect(answers.filter((answer) => refusalOf(answer)?.code === 'CHECKIN_PENDING')).toHaveLength(2);
        expect(refunds()).toBe(before + 3);
        // Outside the bounds (more than shown, another order): asked about, never run on the grant.
        expect(
          refusalOf(await clients[0]!.callTool({ name: 'refund', arguments: { amount: 301, order } }))?.code,
        ).toBe('CHECKIN_PENDING');
        expect(refunds()).toBe(before + 3);
      } finally {
        await Promise.all(clients.map((client) => client.close()));
      }
      const listed = await api(a, TOKENS.ANA, `/grants/${grant.id}`);
      expect(listed.json['grant']).toMatchObject({ uses: 3, maxUses: 3 });

      // Audited and told as events, with the bounds' shape and never the order number.
      const records = (await auditRecords()).filter((record) => JSON.stringify(record).includes(grant.id));
      expect(records.map((record) => record.kind).sort()).toEqual([
        'grant.created',
        'grant.used',
        'grant.used',
        'grant.used',
      ]);
      const created = records.find((record) => record.kind === 'grant.created')!;
      expect(created).toMatchObject({ tenant: 'acme', principal: 'bot', tool: 'refund', approver: 'ana' });
      expect(created.rule).toContain('amount atMost');
      expect(created.rule).toContain('3 calls');
      expect(JSON.stringify(records)).not.toContain(order);
      const event = await b.waitForLog(
        (line) => line['msg'] === 'grant.created' && line['grantId'] === grant.id,
      );
      expect(event).toMatchObject({ by: 'ana', bounds: { amount: 'atMost', order: 'equals' }, maxUses: 3 });
      const logs = JSON.stringify([...a.logs(), ...b.logs()]);
      expect(logs).toContain('"msg":"grant.used"');
      expect(logs).not.toContain(order);
    });

    it('an approver of another tenant reads and revokes a grant exactly as an unknown one; a revoke in one process stops the other', async () => {
      const [a, b] = gateways as [GatewayProcess, GatewayProcess];
      const order = `R-${Date.now()}`;
      const grant = await grantFrom(a, a, { amount: 50, order }, { uses: 10 });
      const unknown = await api(b, TOKENS.GUS, '/grants/grt_doesnotexist0000');
      const foreign = await api(b, TOKENS.GUS, `/grants/${grant.id}`);
      expect(foreign).toEqual(unknown);
      expect(foreign.status).toBe(404);
      expect(await api(b, TOKENS.GUS, `/grants/${grant.id}`, 'DELETE')).toEqual(
        await api(b, TOKENS.GUS, '/grants/grt_doesnotexist0000', 'DELETE'),
      );
      expect(((await api(b, TOKENS.GUS, '/grants')).json['grants'] as unknown[]).length).toBe(0);

      const bot = await connectClient(b.url, TOKENS.BOT);
      try {
        // The approval itself runs the identical retry once; the grant answers the next call.
        expect(textOf(await bot.callTool({ name: 'refund', arguments: { amount: 50, order } }))).toMatch(
          /^refunded 50/,
        );
        expect(textOf(await bot.callTool({ name: 'refund', arguments: { amount: 50, order } }))).toMatch(
          /^refunded 50/,
        );
        const revoked = await api(a, TOKENS.ANA, `/grants/${grant.id}`, 'DELETE');
        expect(revoked.json['grant']).toMatchObject({ revoked: true });
        const before = refunds();
        expect(
          refusalOf(await bot.callTool({ name: 'refund', arguments: { amount: 50, order } }))?.code,
        ).toBe('CHECKIN_PENDING');
        expect(refunds()).toBe(before);
      } finally {
        await bot.close();
      }
      const revokedRecord = (await auditRecords()).find(
        (record) => record.kind === 'grant.revoked' && JSON.stringify(record).includes(grant.id),
      );
      expect(revokedRecord).toMatchObject({ approver: 'ana', tool: 'refund' });
    });

    it('a requestState spent through one process is refused by the other, before and after the approval', async () => {
      const [a, b] = gateways as [GatewayProcess, GatewayProcess];
      const args = { amount: 70, order: `S-${Date.now()}` };
      const modern = async (gateway: GatewayProcess) => {
        const client = new V2Client(
          { name: 'shared-grants-test', version: '1.0.0' },
          {
            capabilities: { elicitation: { url: {} } },
            versionNegotiation: { mode: { pin: '2026-07-28' } },
            inputRequired: { autoFulfill: false },
          },
        );
        await client.connect(
          new V2Transport(new URL(gateway.url), {
            requestInit: { headers: { authorization: `Bearer ${TOKENS.BOT}` } },
          }),
        );
        return client;
      };
      type Asked = {
        resultType?: string;
        requestState?: string;
        inputRequests?: Record<string, { params: Record<string, unknown> }>;
      };
      const round = (client: V2Client, requestState?: string) =>
        client.callTool(
          {
            name: 'refund',
            arguments: args,
            ...(requestState !== undefined
              ? { requestState, inputResponses: { approval: { action: 'accept' } } }
              : {}),
          } as never,
          { allowInputRequired: true },
        ) as Promise<Asked & { isError?: boolean }>;
      const [onA, onB] = await Promise.all([modern(a), modern(b)]);
      const before = refunds();
      try {
        const first = await round(onA);
        expect(first.resultType).toBe('input_required');
        // Spent through A while nobody has decided: asked again, with a new state.
        const again = await round(onA, first.requestState!);
        expect(again.resultType).toBe('input_required');
        // Replayed through B: refused, not asked again.
        expect(refusalOf(await round(onB, first.requestState!))?.code).toBe('CHECKIN_STATE_INVALID');
        const url = String(again.inputRequests?.['approval']?.params['url']);
        const id = decodeURIComponent(url.slice(url.lastIndexOf('/') + 1));
        expect(
          (await api(b, TOKENS.ANA, `/check-ins/${encodeURIComponent(id)}/approve`, 'POST', {})).status,
        ).toBe(200);
        const ran = await round(onB, again.requestState!);
        expect(ran.isError).toBeFalsy();
        expect(refunds()).toBe(before + 1);
        expect(refusalOf(await round(onA, again.requestState!))?.code).toBe('CHECKIN_STATE_INVALID');
        expect(refunds()).toBe(before + 1);
      } finally {
        await Promise.all([onA.close(), onB.close()]);
      }
    });

    it('grants and their counts survive a restart of every process', async () => {
      const [a] = gateways as [GatewayProcess, GatewayProcess];
      const order = `P-${Date.now()}`;
      const grant = await grantFrom(a, a, { amount: 80, order }, { uses: 4 });
      const bot = await connectClient(a.url, TOKENS.BOT);
      await bot.callTool({ name: 'refund', arguments: { amount: 80, order } }); // the approval's own run
      expect(textOf(await bot.callTool({ name: 'refund', arguments: { amount: 80, order } }))).toMatch(
        /^refunded/,
      );
      await bot.close();
      await Promise.all(gateways.map((gateway) => gateway.stop()));
      gateways = [await startGateway(configFile, env)];
      const [restarted] = gateways as [GatewayProcess];
      expect((await api(restarted, TOKENS.ANA, `/grants/${grant.id}`)).json['grant']).toMatchObject({
        uses: 1,
      });
      const again = await connectClient(restarted.url, TOKENS.BOT);
      try {
        const before = refunds();
        expect(textOf(await again.callTool({ name: 'refund', arguments: { amount: 80, order } }))).toMatch(
          /^refunded/,
        );
        expect(refunds()).toBe(before + 1);
      } finally {
        await again.close();
      }
      expect((await api(restarted, TOKENS.ANA, `/grants/${grant.id}`)).json['grant']).toMatchObject({
        uses: 2,
      });
    }, 60_000);
  });
}
