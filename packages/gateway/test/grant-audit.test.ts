// A standing grant the audit log cannot record is not made (GATEWAY.md §6, §7): a real gateway
// process whose SQLite audit table refuses appends (a trigger, as a store that is down would) while
// an approver approves with a grant. The approval stands, no grant is stored, the identical call is
// asked about again, and the answer says why; with the log back a grant is made, `grant.created`
// written before its first `grant.used`. A revocation while the log is down stands and is reported.
// Runs where node:sqlite exists (Node 22.13+).

import { generateKeyPairSync } from 'node:crypto';
import type { AuditRecord } from '@toolgate/core';
import { sqliteAuditStore } from '@toolgate/store-sqlite';
import {
  authYaml,
  callerFetch,
  CHECKIN_KEY,
  connectClient,
  shopUpstream,
  startGateway,
  tempDir,
  textOf,
  tokenEnv,
  type GatewayProcess,
  type TempDir,
} from './helpers';

const CALLERS = {
  BOT: { token: 'grant-audit-bot-token-0123456789abcdef-0', principal: 'bot' },
  ANA: { token: 'grant-audit-ana-approver-0123456789abcdef', principal: 'ana', roles: ['approver'] },
};
const TOKENS = tokenEnv(CALLERS);
const sqlite = process.getBuiltinModule?.('node:sqlite') as typeof import('node:sqlite') | undefined;

type Refusal = { gate: string; code: string; checkInId?: string };
const refusalOf = (result: unknown) =>
  (result as { _meta?: Record<string, unknown> })._meta?.['io.toolgate/refusal'] as Refusal | undefined;

(sqlite !== undefined ? describe : describe.skip)('a standing grant while the audit log is down', () => {
  let dir: TempDir;
  let gateway: GatewayProcess;
  let db: import('node:sqlite').DatabaseSync;

  beforeAll(async () => {
    dir = tempDir();
    const { privateKey } = generateKeyPairSync('ed25519');
    dir.write('audit-key.pem', privateKey.export({ type: 'pkcs8', format: 'pem' }) as string);
    const configFile = dir.write(
      'toolgate.yaml',
      `${authYaml(CALLERS)}stores: { state: "sqlite:./state.db" }
checkIns: { key: "\${env:KEY}", hold: 200ms, ttl: 10m }
audit: { signingKey: "\${file:./audit-key.pem}", onAuditFailure: refuse }
upstreams:
${shopUpstream(dir)}    tools: { refund: { checkIn: always } }
tenants: { acme: { upstreams: [shop] } }
`,
    );
    gateway = await startGateway(configFile, { ...TOKENS, KEY: CHECKIN_KEY });
    db = new sqlite!.DatabaseSync(`${dir.path}/state.db`);
    db.exec('PRAGMA busy_timeout = 5000');
  }, 60_000);
  afterAll(async () => {
    db?.close();
    await gateway?.stop();
    dir?.remove();
  });

  // The store stays up for everything else; only the audit table refuses what is appended.
  const auditDown = () =>
    db.exec(`CREATE TRIGGER audit_down BEFORE INSERT ON toolgate_audit
      BEGIN SELECT RAISE(ABORT, 'audit store down'); END`);
  const auditBack = () => db.exec('DROP TRIGGER audit_down');

  const refunds = () => dir.runs().filter((tool) => tool === 'refund').length;
  const api = async (path: string, method = 'GET', body?: unknown) => {
    const response = await callerFetch(gateway.url, TOKENS.ANA, `/inbox/api${path}`, { method, body });
    return { status: response.status, json: (await response.json()) as Record<string, any> };
  };
  const auditRecords = async (): Promise<AuditRecord[]> => {
    const store = sqliteAuditStore({ path: `${dir.path}/state.db` });
    try {
      return await store.read(0, 1000);
    } finally {
      await store.close();
    }
  };
  const grantRecords = async () =>
    (await auditRecords()).filter((record) => record.kind.startsWith('grant.'));

  it('approving with a grant makes none; the call is asked about again; with the log back the grant is made and recorded before it is used', async () => {
    const order = `GA-${Date.now()}`;
    const args = { amount: 60, order };
    const bot = await connectClient(gateway.url, TOKENS.BOT);
    try {
      const held = refusalOf(await bot.callTool({ name: 'refund', arguments: args }));
      expect(held?.code).toBe('CHECKIN_PENDING');

      auditDown();
      let approved;
      try {
        approved = await api(`/check-ins/${held!.checkInId}/approve`, 'POST', {
          grant: { bounds: { amount: { atMost: 60 } }, uses: 5 },
        });
      } finally {
        auditBack();
      }
      expect(approved.status).toBe(200);
      expect(approved.json['checkIn']).toMatchObject({ decision: { approved: true, by: 'ana' } });
      expect(approved.json).not.toHaveProperty('grant');
      expect(approved.json['grantError']).toBe(
        'The approval is recorded, but the standing grant was not made: it could not be recorded.',
      );
      expect((await api('/grants')).json['grants']).toEqual([]);
      const unrecorded = await gateway.waitForLog((line) => line['event'] === 'grant.unrecorded');
      expect(unrecorded).toMatchObject({
        level: 'warn',
        change: 'created',
        by: 'ana',
        tool: 'refund',
        bounds: { amount: 'atMost', order: 'equals' },
      });

      // The approval runs the identical call once; the next identical call is asked about again.
      const before = refunds();
      expect(textOf(await bot.callTool({ name: 'refund', arguments: args }))).toMatch(/^refunded 60/);
      const again = refusalOf(await bot.callTool({ name: 'refund', arguments: args }));
      expect(again?.code).toBe('CHECKIN_PENDING');
      expect(refunds()).toBe(before + 1);
      expect(await grantRecords()).toEqual([]);

      // The log is back: the same approval makes the grant, recorded before its first use.
      const made = await api(`/check-ins/${again!.checkInId}/approve`, 'POST', {
        grant: { bounds: { amount: { atMost: 60 } }, uses: 5 },
      });
      const grant = made.json['grant'] as { id: string };
      expect(grant.id).toMatch(/^grt_/);
      expect(textOf(await bot.callTool({ name: 'refund', arguments: args }))).toMatch(/^refunded 60/);
      expect(textOf(await bot.callTool({ name: 'refund', arguments: args }))).toMatch(/^refunded 60/);
      expect(refunds()).toBe(before + 3);
      const records = await grantRecords();
      expect(records.map((record) => record.kind)).toEqual(['grant.created', 'grant.used']);
      expect(records[0]!.seq).toBeLessThan(records[1]!.seq);
      expect(records[0]!.rule).toContain(grant.id);
      expect(JSON.stringify(await auditRecords())).not.toContain(order);
      expect(JSON.stringify(gateway.logs())).not.toContain(order);
    } finally {
      await bot.close();
    }
  }, 60_000);

  it('a revocation while the log is down takes effect, is answered as unrecorded and logged', async () => {
    const order = `GR-${Date.now()}`;
    const args = { amount: 20, order };
    const bot = await connectClient(gateway.url, TOKENS.BOT);
    try {
      const held = refusalOf(await bot.callTool({ name: 'refund', arguments: args }));
      const made = await api(`/check-ins/${held!.checkInId}/approve`, 'POST', { grant: { uses: 5 } });
      const grant = made.json['grant'] as { id: string };
      expect(textOf(await bot.callTool({ name: 'refund', arguments: args }))).toMatch(/^refunded 20/);
      expect(textOf(await bot.callTool({ name: 'refund', arguments: args }))).toMatch(/^refunded 20/);

      auditDown();
      let revoked;
      try {
        revoked = await api(`/grants/${grant.id}`, 'DELETE');
      } finally {
        auditBack();
      }
      expect(revoked.status).toBe(200);
      expect(revoked.json['grant']).toMatchObject({ id: grant.id, revoked: true });
      expect(revoked.json['recordError']).toBe(
        'The grant is revoked, but its revocation could not be recorded.',
      );
      const line = await gateway.waitForLog(
        (entry) => entry['event'] === 'grant.unrecorded' && entry['grantId'] === grant.id,
      );
      expect(line).toMatchObject({ level: 'error', change: 'revoked', by: 'ana' });
      expect(typeof line['error']).toBe('string');
      expect(JSON.stringify(line)).not.toMatch(/audit store down|state\.db/);

      const before = refunds();
      expect(refusalOf(await bot.callTool({ name: 'refund', arguments: args }))?.code).toBe(
        'CHECKIN_PENDING',
      );
      expect(refunds()).toBe(before);
      const records = (await grantRecords()).filter((record) => record.rule?.includes(grant.id));
      expect(records.map((record) => record.kind)).toEqual(['grant.created', 'grant.used']);
    } finally {
      await bot.close();
    }
  }, 60_000);
});
