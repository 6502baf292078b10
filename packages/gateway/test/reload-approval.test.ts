// `reload.requireApproval: weakening` end to end through `toolgate gateway`: a configuration file
// edited to weaken security waits in the inbox as an operator check-in showing what weakens; the
// serving configuration keeps serving until an operator approves it there (then it is applied), and
// stays when the operator declines or nobody decides in time. A reload that weakens nothing applies
// at once. Each outcome is an event and, on a SQLite store (Node 22.13+), an audit record.

import { writeFileSync } from 'node:fs';
import type { AuditRecord } from '@toolgate/core';
import { sqliteAuditStore } from '@toolgate/store-sqlite';
import {
  authYaml,
  callerFetch,
  CHECKIN_KEY,
  connectClient,
  fixtureServer,
  runToolgate,
  startGateway,
  tempDir,
  shopUpstream,
  textOf,
  tokenEnv,
  type GatewayProcess,
  type TempDir,
} from './helpers';

const CALLERS = {
  BOT: { token: 'reload-bot-token-0123456789abcdef-012345', principal: 'bot' },
  ANA: { token: 'reload-ana-approver-0123456789abcdef-0123', principal: 'ana', roles: ['approver'] },
  OLGA: { token: 'reload-olga-operator-0123456789abcdef-012', principal: 'olga', roles: ['operator'] },
};
const TOKENS = tokenEnv(CALLERS);
const hasSqlite = process.getBuiltinModule?.('node:sqlite') !== undefined;

function config(dir: TempDir, denyRefunds: boolean): string {
  return `${authYaml(CALLERS)}${hasSqlite ? 'stores: { state: "sqlite:./state.db" }\naudit: { signingKey: "${file:./audit-key.pem}" }\n' : ''}checkIns: { key: "\${env:KEY}", hold: 200ms, ttl: 3s }
reload: { requireApproval: weakening }
upstreams:
${shopUpstream(dir)}${denyRefunds ? 'policy: [{ name: no-refunds, tools: [refund], effect: deny, reason: refunds are paused }]\n' : ''}tenants: { acme: { upstreams: [shop] } }
`;
}

describe('a weakening reload waits for an operator in the inbox', () => {
  let dir: TempDir;
  let gateway: GatewayProcess;
  let file: string;

  beforeAll(async () => {
    dir = tempDir();
    const { generateKeyPairSync } = await import('node:crypto');
    const { privateKey } = generateKeyPairSync('ed25519');
    dir.write('audit-key.pem', privateKey.export({ type: 'pkcs8', format: 'pem' }) as string);
    file = dir.write('toolgate.yaml', config(dir, true));
    gateway = await startGateway(file, { ...TOKENS, KEY: CHECKIN_KEY });
  }, 60_000);
  afterAll(async () => {
    await gateway?.stop();
    dir?.remove();
  });

  const api = async (token: string, path: string, body?: unknown) => {
    const response = await callerFetch(gateway.url, token, `/inbox/api${path}`, { body });
    return { status: response.status, json: (await response.json()) as Record<string, unknown> };
  };
  const refund = async () => {
    const bot = await connectClient(gateway.url, TOKENS.BOT);
    try {
      const result = await bot.callTool({ name: 'refund', arguments: { amount: 5, order: 'W-1' } });
      return (result._meta?.['io.toolgate/refusal'] as { code: string } | undefined)?.code ?? textOf(result);
    } finally {
      await bot.close();
    }
  };
  let seen = 0;
  /** The next log line named `msg` after those already seen. */
  const next = async (msg: string) => {
    const line = await gateway.waitForLog(
      (entry) => entry['msg'] === msg && gateway.logs().indexOf(entry) >= seen,
    );
    seen = gateway.logs().indexOf(line) + 1;
    return line;
  };
  const edit = (denyRefunds: boolean) => writeFileSync(file, config(dir, denyRefunds));
  const auditKinds = async (): Promise<string[]> => {
    const store = sqliteAuditStore({ path: `${dir.path}/state.db` });
    try {
      return (await store.read(0, 1000)).map((record: AuditRecord) => record.kind);
    } finally {
      store.close();
    }
  };

  it('holds the weakening edit, shows it to operators only, and applies it once an operator approves', async () => {
    expect(await refund()).toBe('POLICY_DENIED');
    seen = gateway.logs().length;
    edit(false);
    const heldLine = await next('reload.held');
    const checkInId = String(heldLine['checkInId']);
    expect(heldLine['weakens']).toEqual(["policy: rule 'no-refunds' (deny) removed"]);
    // The old configuration keeps serving while it waits.
    expect(await refund()).toBe('POLICY_DENIED');
    // The operator's status page lists it among the reloads, not applied.
    const status = await (
      await fetch(new URL('/inbox/status', gateway.url), {
        headers: { authorization: `Bearer ${TOKENS.OLGA}` },
      })
    ).text();
    expect(status).toContain('waits for an operator in the inbox');

    // A tenant's approver sees it exactly as an unknown check-in; an operator sees what weakens.
    expect((await api(TOKENS.ANA, `/check-ins/${checkInId}`)).status).toBe(404);
    const listed = (await api(TOKENS.ANA, '/check-ins')).json['checkIns'] as { id: string }[];
    expect(listed.map((checkIn) => checkIn.id)).not.toContain(checkInId);
    const shown = await api(TOKENS.OLGA, `/check-ins/${checkInId}`);
    expect(shown.status).toBe(200);
    expect(shown.json['checkIn']).toMatchObject({
      toolName: 'gateway.reload',
      args: { file: 'toolgate.yaml', weakens: ["policy: rule 'no-refunds' (deny) removed"] },
    });

    expect(
      (await api(TOKENS.OLGA, `/check-ins/${checkInId}/approve`, { note: 'refunds resume' })).status,
    ).toBe(200);
    const applied = await next('reload');
    expect(applied).toMatchObject({
      approvedBy: 'olga',
      checkInId,
      weakens: ["policy: rule 'no-refunds' (deny) removed"],
    });
    expect(await refund()).toMatch(/^refunded 5 on W-1/);
  });

  it('applies a reload that weakens nothing at once', async () => {
    seen = gateway.logs().length;
    edit(true);
    const applied = await next('reload');
    expect(applied['weakens']).toBeUndefined();
    expect(await refund()).toBe('POLICY_DENIED');
  });

  it('keeps the serving configuration when the operator declines', async () => {
    seen = gateway.logs().length;
    edit(false);
    const checkInId = String((await next('reload.held'))['checkInId']);
    expect(
      (await api(TOKENS.OLGA, `/check-ins/${checkInId}/decline`, { reason: 'not during the audit' })).status,
    ).toBe(200);
    expect(await next('reload.declined')).toMatchObject({ checkInId, by: 'olga' });
    expect(await refund()).toBe('POLICY_DENIED');
  });

  it('keeps the serving configuration when nobody decides before the check-in expires', async () => {
    seen = gateway.logs().length;
    // The same weakening edit again, after a decline: asked anew, since the file was written again.
    edit(true);
    await next('reload');
    edit(false);
    const checkInId = String((await next('reload.held'))['checkInId']);
    expect(await next('reload.expired')).toMatchObject({ checkInId });
    expect(await refund()).toBe('POLICY_DENIED');
    if (hasSqlite) {
      const kinds = await auditKinds();
      for (const kind of [
        'config.reload-held',
        'config.reload-approved',
        'config.reload-declined',
        'config.reload-expired',
      ])
        expect(kinds).toContain(kind);
      expect(kinds.filter((kind) => kind === 'config.reload-held')).toHaveLength(3);
    }
  }, 30_000);
});

describe('reload.requireApproval: weakening without an inbox', () => {
  it('is refused by `toolgate check`, at the key, with the fix', async () => {
    const dir = tempDir();
    try {
      const file = dir.write(
        'toolgate.yaml',
        `auth: { tokens: [{ token: "\${env:BOT}", identity: { tenant: acme, principal: bot } }] }
reload: { requireApproval: weakening }
upstreams: { shop: { command: [node, ${JSON.stringify(fixtureServer)}] } }
tenants: { acme: { upstreams: [shop] } }
`,
      );
      const checked = await runToolgate(['check', '--config', file], { BOT: TOKENS.BOT });
      expect(checked.code).toBe(1);
      expect(checked.stderr).toContain(
        `${file}:2:28: reload.requireApproval: a reload that weakens security waits for an operator in the inbox, and this configuration has no inbox`,
      );
      expect(checked.stderr).toContain('add checkIns');
    } finally {
      dir.remove();
    }
  });
});
