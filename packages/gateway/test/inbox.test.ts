// Check-ins decided in the gateway's inbox (/inbox, its JSON API, approvers from the configuration),
// against a real gateway process and a real stdio upstream, driven by the SDK client: an approval
// during the hold runs the call; after the hold, the identical retry runs once on the grant and a
// replay pauses again; a decline's reason reaches the model; approve with changes narrows a call and
// never widens it past policy.

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

const TOKENS = {
  BOT_TOKEN: 'bot-token-0123456789abcdef-0123456789',
  ANA_TOKEN: 'ana-approver-token-0123456789-0123456789',
  GIA_TOKEN: 'gia-approver-token-0123456789-0123456789',
};
const env = { ...TOKENS, TOOLGATE_CHECKIN_KEY: CHECKIN_KEY };
const HOLD_MS = 1500;

function config(dir: TempDir): string {
  return `auth:
  tokens:
    - { token: "\${env:BOT_TOKEN}", identity: { tenant: acme, principal: support-bot } }
    - { token: "\${env:ANA_TOKEN}", identity: { tenant: acme, principal: ana, roles: [approver] } }
    - { token: "\${env:GIA_TOKEN}", identity: { tenant: globex, principal: gia, roles: [approver] } }
checkIns: { key: "\${env:TOOLGATE_CHECKIN_KEY}", hold: ${HOLD_MS}ms }
upstreams:
  shop:
    command: [node, ${JSON.stringify(fixtureServer)}]
    env: { RUN_LOG: ${JSON.stringify(`${dir.path}/runs.log`)} }
    prefix: shop_
policy:
  rules:
    - { name: refund-cap, tools: [shop_refund], when: "args.amount > 1000.0", effect: deny, reason: "Offer at most 1,000" }
    - { name: big-refunds-ask, tools: [shop_refund], when: "args.amount > 100.0", effect: ask, reason: refunds over 100 need a supervisor }
  default: allow
tenants:
  acme: { upstreams: [shop] }
  globex: { upstreams: [shop] }
`;
}

interface CheckInJson {
  id: string;
  toolName: string;
  args: Record<string, unknown>;
  identity: { tenant?: string; principal?: string };
  state: string;
  decision?: { approved: boolean; by: string; reason?: string; args?: Record<string, unknown> };
}

const refusalOf = (result: unknown) =>
  (result as { _meta?: Record<string, unknown> })._meta?.['io.toolgate/refusal'] as
    { gate: string; code: string; retryable: boolean; checkInId?: string } | undefined;

describe('the inbox in a gateway process', () => {
  let dir: TempDir;
  let gateway: GatewayProcess;
  let inbox: string;

  beforeAll(async () => {
    dir = tempDir();
    gateway = await startGateway(dir.write('toolgate.yaml', config(dir)), env);
    inbox = new URL('/inbox', gateway.url).href;
  });
  afterAll(async () => {
    await gateway?.stop();
    dir?.remove();
  });

  const api = async (token: string, path: string, body?: unknown) => {
    const response = await fetch(`${inbox}/api/check-ins${path}`, {
      method: body === undefined ? 'GET' : 'POST',
      headers: {
        authorization: `Bearer ${token}`,
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    return { status: response.status, json: (await response.json()) as Record<string, unknown> };
  };
  const approve = (id: string, body: Record<string, unknown> = {}) =>
    api(TOKENS.ANA_TOKEN, `/${id}/approve`, body);
  const decline = (id: string, reason: string) => api(TOKENS.ANA_TOKEN, `/${id}/decline`, { reason });

  /** The pending check-in for these args, as the approver's list shows it once the call paused. */
  async function pendingFor(args: Record<string, unknown>): Promise<CheckInJson> {
    for (let tries = 0; tries < 100; tries++) {
      const listed = (await api(TOKENS.ANA_TOKEN, '')).json['checkIns'] as CheckInJson[];
      const found = listed.find((c) => JSON.stringify(c.args) === JSON.stringify(args));
      if (found !== undefined) return found;
      await new Promise((done) => setTimeout(done, 50));
    }
    throw new Error('the check-in never appeared in the inbox');
  }

  const refunds = () => dir.runs().filter((tool) => tool === 'refund').length;

  it('mounts the inbox: approvers of the tenant only; a caller without the role is refused', async () => {
    const page = await fetch(`${inbox}/sign-in`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect((await api(TOKENS.BOT_TOKEN, '')).status).toBe(401);
    expect((await api('not-a-token-at-all-000000', '')).status).toBe(401);
    expect((await api(TOKENS.ANA_TOKEN, '')).status).toBe(200);
  });

  it('runs the call when an approver approves in the inbox during the hold', async () => {
    const client = await connectClient(gateway.url, TOKENS.BOT_TOKEN);
    try {
      const args = { amount: 500, order: 'o-hold' };
      const call = client.callTool({ name: 'shop_refund', arguments: args });
      const checkIn = await pendingFor(args);
      expect(checkIn).toMatchObject({
        toolName: 'shop_refund',
        identity: { tenant: 'acme', principal: 'support-bot' },
      });
      // Another tenant's approver cannot see or decide it.
      expect((await api(TOKENS.GIA_TOKEN, `/${checkIn.id}`)).status).toBe(404);
      expect((await api(TOKENS.GIA_TOKEN, `/${checkIn.id}/approve`, {})).status).toBe(404);
      expect(((await api(TOKENS.GIA_TOKEN, '')).json['checkIns'] as unknown[]).length).toBe(0);

      expect((await approve(checkIn.id, { note: 'ok' })).status).toBe(200);
      const result = await call;
      expect(result.isError).toBeFalsy();
      expect(textOf(result)).toBe('refunded 500 on o-hold');
      expect(refunds()).toBe(1);
      // Decided once: a second approval is refused.
      expect((await approve(checkIn.id)).status).toBe(409);
    } finally {
      await client.close();
    }
    const line = await gateway.waitForLog((l) => l['msg'] === 'call' && l['checkIn'] === 'inbox');
    expect(line).toMatchObject({ kind: 'result', approvedBy: ['ana'] });
  });

  it('after the hold: CHECKIN_PENDING; the approval is a grant the identical retry uses once; a replay pauses again', async () => {
    const client = await connectClient(gateway.url, TOKENS.BOT_TOKEN);
    const before = refunds();
    try {
      const args = { amount: 400, order: 'o-grant' };
      const first = await client.callTool({ name: 'shop_refund', arguments: args });
      const pending = refusalOf(first);
      expect(pending).toMatchObject({ gate: 'check-in', code: 'CHECKIN_PENDING', retryable: true });
      expect(refunds()).toBe(before);

      expect((await approve(pending!.checkInId!)).status).toBe(200);
      // Other args are not covered by the grant.
      const other = await client.callTool({
        name: 'shop_refund',
        arguments: { amount: 401, order: 'o-grant' },
      });
      expect(refusalOf(other)).toMatchObject({ code: 'CHECKIN_PENDING' });
      expect(refunds()).toBe(before);

      const retry = await client.callTool({ name: 'shop_refund', arguments: args });
      expect(textOf(retry)).toBe('refunded 400 on o-grant');
      expect(refunds()).toBe(before + 1);

      const replay = await client.callTool({ name: 'shop_refund', arguments: args });
      expect(refusalOf(replay)).toMatchObject({ code: 'CHECKIN_PENDING' });
      expect(refusalOf(replay)!.checkInId).not.toBe(pending!.checkInId);
      expect(refunds()).toBe(before + 1);
    } finally {
      await client.close();
    }
  });

  it('gives the model the approver’s reason when they decline, during the hold or after it (once)', async () => {
    const client = await connectClient(gateway.url, TOKENS.BOT_TOKEN);
    const before = refunds();
    try {
      const args = { amount: 300, order: 'o-decline' };
      const call = client.callTool({ name: 'shop_refund', arguments: args });
      const checkIn = await pendingFor(args);
      expect((await decline(checkIn.id, 'the order was already refunded')).status).toBe(200);
      const declined = await call;
      expect(declined.isError).toBe(true);
      expect(textOf(declined)).toContain('the order was already refunded');

      const later = { amount: 301, order: 'o-decline' };
      const first = await client.callTool({ name: 'shop_refund', arguments: later });
      expect(refusalOf(first)).toMatchObject({ code: 'CHECKIN_PENDING' });
      await decline(refusalOf(first)!.checkInId!, 'refund to the original card only');
      const retry = await client.callTool({ name: 'shop_refund', arguments: later });
      expect(retry.isError).toBe(true);
      expect(textOf(retry)).toContain('refund to the original card only');
      expect(refusalOf(retry)?.code).not.toBe('CHECKIN_PENDING');
      // Told once: the next identical call asks a person again.
      const again = await client.callTool({ name: 'shop_refund', arguments: later });
      expect(refusalOf(again)).toMatchObject({ code: 'CHECKIN_PENDING' });
    } finally {
      await client.close();
    }
    expect(refunds()).toBe(before);
  });

  it('approve with changes runs the narrowed args through the chain; a widened call is refused by policy', async () => {
    const client = await connectClient(gateway.url, TOKENS.BOT_TOKEN);
    const before = refunds();
    try {
      const asked = { amount: 500, order: 'o-narrow' };
      const call = client.callTool({ name: 'shop_refund', arguments: asked });
      const checkIn = await pendingFor(asked);
      // Args that do not fit the tool's schema are refused before anything is recorded.
      const bad = await approve(checkIn.id, { args: { amount: 'lots', order: 'o-narrow' } });
      expect(bad.status).toBe(400);
      expect((await api(TOKENS.ANA_TOKEN, `/${checkIn.id}`)).json['checkIn']).not.toHaveProperty('decision');
      expect((await approve(checkIn.id, { args: { amount: 80, order: 'o-narrow' } })).status).toBe(200);
      expect(textOf(await call)).toBe('refunded 80 on o-narrow');
      expect(refunds()).toBe(before + 1);

      const widened = { amount: 600, order: 'o-widen' };
      const second = client.callTool({ name: 'shop_refund', arguments: widened });
      const other = await pendingFor(widened);
      expect((await approve(other.id, { args: { amount: 5000, order: 'o-widen' } })).status).toBe(200);
      const refused = await second;
      expect(refusalOf(refused)).toMatchObject({ gate: 'policy', code: 'POLICY_DENIED' });
      expect(textOf(refused)).toContain("policy rule 'refund-cap'");
      expect(refunds()).toBe(before + 1);

      // As a grant: the model's identical retry runs the approver's narrowed args, once.
      const later = { amount: 700, order: 'o-later' };
      const first = await client.callTool({ name: 'shop_refund', arguments: later });
      expect(refusalOf(first)).toMatchObject({ code: 'CHECKIN_PENDING' });
      await approve(refusalOf(first)!.checkInId!, { args: { amount: 90, order: 'o-later' } });
      expect(textOf(await client.callTool({ name: 'shop_refund', arguments: later }))).toBe(
        'refunded 90 on o-later',
      );
      expect(refunds()).toBe(before + 2);
      expect(refusalOf(await client.callTool({ name: 'shop_refund', arguments: later }))).toMatchObject({
        code: 'CHECKIN_PENDING',
      });
      expect(refunds()).toBe(before + 2);
    } finally {
      await client.close();
    }
  });
});

describe('the inbox webhook', () => {
  it('posts each new check-in once, with signed links to the public address and no argument value', async () => {
    const { createServer } = await import('node:http');
    const received: { text: string; blocks: unknown[] }[] = [];
    const receiver = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => {
        received.push(JSON.parse(body) as { text: string; blocks: unknown[] });
        res.end('ok');
      });
    });
    await new Promise<void>((done) => receiver.listen(0, '127.0.0.1', done));
    const port = (receiver.address() as { port: number }).port;
    const dir = tempDir();
    let gateway: GatewayProcess | undefined;
    try {
      const text = config(dir).replace(
        'tenants:',
        `listen: { publicUrl: "https://gateway.example" }
inbox: { webhook: { url: "http://127.0.0.1:${port}/hook", by: "slack #refunds" } }
tenants:`,
      );
      gateway = await startGateway(dir.write('toolgate.yaml', text), env);
      const client = await connectClient(gateway.url, TOKENS.BOT_TOKEN);
      try {
        const paused = await client.callTool({
          name: 'shop_refund',
          arguments: { amount: 777, order: 'secret-order-9' },
        });
        expect(refusalOf(paused)).toMatchObject({ code: 'CHECKIN_PENDING' });
      } finally {
        await client.close();
      }
      for (let tries = 0; tries < 100 && received.length === 0; tries++)
        await new Promise((done) => setTimeout(done, 50));
      expect(received).toHaveLength(1);
      const message = JSON.stringify(received[0]);
      expect(received[0]!.text).toContain('support-bot (acme) asks to run shop_refund');
      expect(message).toMatch(/https:\/\/gateway\.example\/inbox\/[^"]+/);
      expect(message).not.toContain('777');
      expect(message).not.toContain('secret-order-9');
    } finally {
      await gateway?.stop();
      receiver.close();
      dir.remove();
    }
  });

  it('refuses a webhook without a public address for its links', async () => {
    const { runCli } = await import('@toolgate/gateway');
    const dir = tempDir();
    try {
      dir.write(
        'toolgate.yaml',
        config(dir).replace('tenants:', 'inbox: { webhook: "http://127.0.0.1:9/hook" }\ntenants:'),
      );
      const err: string[] = [];
      const code = await runCli(['check'], {
        out: () => undefined,
        err: (line) => err.push(line),
        env,
        cwd: dir.path,
      });
      expect(code).toBe(1);
      expect(err.join('\n')).toMatch(
        /toolgate\.yaml:\d+:\d+: inbox\.webhook: the webhook's links need the inbox's public address\. Fix: set listen\.publicUrl/,
      );
    } finally {
      dir.remove();
    }
  });
});
