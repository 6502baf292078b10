// One check-in per pending call, against a real gateway process and the SDK client: a model that
// retries a paused call three times makes one row in the inbox, and one approval runs the call once;
// `checkIns.maxPending` caps what one principal keeps waiting (CHECKIN_LIMIT) without touching
// another's; a client's declared timeout ends the hold before it gives up.

import {
  CHECKIN_KEY,
  connectClient,
  fixtureServer,
  gatewayPerSuite,
  startGateway,
  tempDir,
  textOf,
  type TempDir,
} from './helpers';

const TOKENS = {
  BOT_TOKEN: 'bot-token-0123456789abcdef-0123456789',
  OTHER_TOKEN: 'other-bot-token-0123456789ab-0123456789',
  ANA_TOKEN: 'ana-approver-token-0123456789-0123456789',
};

function config(dir: TempDir): string {
  return `auth:
  tokens:
    - { token: "\${env:BOT_TOKEN}", identity: { tenant: acme, principal: support-bot } }
    - { token: "\${env:OTHER_TOKEN}", identity: { tenant: acme, principal: billing-bot } }
    - { token: "\${env:ANA_TOKEN}", identity: { tenant: acme, principal: ana, roles: [approver] } }
checkIns: { key: "\${env:TOOLGATE_CHECKIN_KEY}", hold: 200ms, maxPending: 3 }
upstreams:
  shop:
    command: [node, ${JSON.stringify(fixtureServer)}]
    env: { RUN_LOG: ${JSON.stringify(`${dir.path}/runs.log`)} }
    prefix: shop_
policy:
  rules:
    - { name: big-refunds-ask, tools: [shop_refund], when: "args.amount > 100.0", effect: ask, reason: refunds over 100 need a supervisor }
  default: allow
tenants:
  acme: { upstreams: [shop] }
`;
}

const refusalOf = (result: unknown) =>
  (result as { _meta?: Record<string, unknown> })._meta?.['io.toolgate/refusal'] as
    { code: string; checkInId?: string } | undefined;

describe('one check-in per pending call, through a gateway process', () => {
  const suite = gatewayPerSuite(config, TOKENS);

  const api = async (path: string, body?: unknown) => {
    const response = await fetch(new URL(`/inbox/api/check-ins${path}`, suite.gateway.url), {
      method: body === undefined ? 'GET' : 'POST',
      headers: {
        authorization: `Bearer ${TOKENS.ANA_TOKEN}`,
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    return (await response.json()) as Record<string, any>;
  };
  const refunds = () => suite.dir.runs().filter((tool) => tool === 'refund').length;

  it('three retries make one row; one approval runs the call once; the cap refuses the fourth call', async () => {
    const bot = await connectClient(suite.gateway.url, TOKENS.BOT_TOKEN);
    const other = await connectClient(suite.gateway.url, TOKENS.OTHER_TOKEN);
    try {
      const args = { amount: 500, order: 'o-retry' };
      const ids = [];
      for (let attempt = 0; attempt < 3; attempt++) {
        const refusal = refusalOf(await bot.callTool({ name: 'shop_refund', arguments: args }));
        expect(refusal?.code).toBe('CHECKIN_PENDING');
        ids.push(refusal?.checkInId);
      }
      expect(new Set(ids).size).toBe(1);
      const listed = await api('');
      expect(listed['checkIns'].map((c: { id: string }) => c.id)).toEqual([ids[0]]);
      expect(listed['checkIns'][0]['argsSummary']).toBe('amount: 500, order: "o-retry"');

      // Two more distinct calls fill the cap of 3; a fourth is refused and never stored.
      for (const order of ['o-2', 'o-3'])
        expect(
          refusalOf(await bot.callTool({ name: 'shop_refund', arguments: { amount: 200, order } }))?.code,
        ).toBe('CHECKIN_PENDING');
      const over = await bot.callTool({ name: 'shop_refund', arguments: { amount: 200, order: 'o-4' } });
      expect(refusalOf(over)?.code).toBe('CHECKIN_LIMIT');
      expect(textOf(over)).not.toContain('o-4');
      expect((await api(''))['total']).toBe(3);
      // A retry of a waiting call still shares its check-in; another principal is not held back.
      expect(refusalOf(await bot.callTool({ name: 'shop_refund', arguments: args }))?.checkInId).toBe(ids[0]);
      expect(
        refusalOf(await other.callTool({ name: 'shop_refund', arguments: { amount: 300, order: 'o-b' } }))
          ?.code,
      ).toBe('CHECKIN_PENDING');

      await api(`/${ids[0]}/approve`, {});
      const before = refunds();
      expect(textOf(await bot.callTool({ name: 'shop_refund', arguments: args }))).toBe(
        'refunded 500 on o-retry',
      );
      expect(refunds()).toBe(before + 1);
      expect(refusalOf(await bot.callTool({ name: 'shop_refund', arguments: args }))?.code).toBe(
        'CHECKIN_PENDING',
      );
      expect(refunds()).toBe(before + 1);
    } finally {
      await Promise.all([bot.close(), other.close()]);
    }
  });

  it('refuses maxPending that is not a positive whole number, naming the line', async () => {
    const bad = tempDir();
    try {
      const file = bad.write('toolgate.yaml', config(bad).replace('maxPending: 3', 'maxPending: 0'));
      await expect(startGateway(file, { ...TOKENS, TOOLGATE_CHECKIN_KEY: CHECKIN_KEY })).rejects.toThrow(
        /maxPending/,
      );
    } finally {
      bad.remove();
    }
  });
});
