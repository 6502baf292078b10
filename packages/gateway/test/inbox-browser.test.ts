// The inbox at a running `toolgate gateway`, in a real headless Chromium (Debian's `chromium`, driven
// by playwright-core): a person signs in at the gateway's own /inbox (its forms pass the gateway's
// Origin rule, which guards /mcp only), sees the held call with its arguments, and approves, declines,
// approves with changes, or approves with a standing grant; each time the held SDK call returns and
// the tool runs once. A cross-site page's forged POST is refused by the inbox itself.

import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { describeWithChromium, openChromium, type OpenBrowser } from '../../../test-support/browser';
import {
  CHECKIN_KEY,
  connectClient,
  fixtureServer,
  startGateway,
  tempDir,
  textOf,
  until,
  type GatewayProcess,
  type TempDir,
} from './helpers';

const describeBrowser = describeWithChromium('gateway browser tests');

jest.setTimeout(120_000);

const TOKENS = {
  BOT_TOKEN: 'bot-token-0123456789abcdef-0123456789',
  ANA_TOKEN: 'ana-approver-token-0123456789-0123456789',
  GIA_TOKEN: 'gia-approver-token-0123456789-0123456789',
};
// Held calls wait long enough for a person in the browser.
const HOLD = '40s';

function config(dir: TempDir): string {
  return `auth:
  tokens:
    - { token: "\${env:BOT_TOKEN}", identity: { tenant: acme, principal: support-bot } }
    - { token: "\${env:ANA_TOKEN}", identity: { tenant: acme, principal: ana, roles: [approver] } }
    - { token: "\${env:GIA_TOKEN}", identity: { tenant: globex, principal: gia, roles: [approver] } }
checkIns: { key: "\${env:TOOLGATE_CHECKIN_KEY}", hold: ${HOLD} }
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

const refusalOf = (result: unknown) =>
  (result as { _meta?: Record<string, unknown> })._meta?.['io.toolgate/refusal'] as
    { code: string; checkInId?: string } | undefined;

describeBrowser('the inbox at a running gateway, in Chromium', () => {
  let dir: TempDir;
  let gateway: GatewayProcess;
  let origin: string;
  let client: Client;
  let context: BrowserContext;
  let browser: OpenBrowser<BrowserContext>;
  let elsewhere: Server;
  const problems: string[] = [];

  beforeAll(async () => {
    dir = tempDir();
    gateway = await startGateway(dir.write('toolgate.yaml', config(dir)), {
      ...TOKENS,
      TOOLGATE_CHECKIN_KEY: CHECKIN_KEY,
    });
    origin = new URL(gateway.url).origin;
    client = await connectClient(gateway.url, TOKENS.BOT_TOKEN);
    browser = await openChromium(chromium);
    context = browser.context;
  });

  afterAll(async () => {
    await browser?.close();
    await client?.close();
    await gateway?.stop();
    if (elsewhere !== undefined) await new Promise((done) => elsewhere.close(done));
    dir?.remove();
  });

  const refunds = () => dir.runs().filter((tool) => tool === 'refund').length;

  async function openPage(): Promise<Page> {
    const page = await context.newPage();
    page.on('console', (message) => {
      if (/Content Security Policy|Refused to/i.test(message.text())) problems.push(message.text());
    });
    page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
    return page;
  }

  async function signIn(page: Page, token: string) {
    await context.clearCookies();
    await page.goto(`${origin}/inbox/`);
    await page.waitForURL(`${origin}/inbox/sign-in`);
    await page.fill('input[name=token]', token);
    await page.click('button[type=submit]');
    await page.waitForURL(`${origin}/inbox/`);
  }

  /** Starts a held call and opens its check-in from the list, where its arguments' summary shows. */
  async function heldCall(page: Page, args: { amount: number; order: string }) {
    const call = client.callTool({ name: 'shop_refund', arguments: args });
    const row = page.locator('tr[data-check-in]', { hasText: `"${args.order}"` });
    for (let tries = 0; tries < 100 && (await row.count()) === 0; tries++) {
      await page.goto(`${origin}/inbox/`);
      if ((await row.count()) === 0) await new Promise((done) => setTimeout(done, 100));
    }
    expect(await row.textContent()).toContain(`amount: ${args.amount}`);
    await row.locator('a').click();
    await page.waitForURL(/\/inbox\/check-ins\/chk_/);
    const shown = await page.textContent('table.args');
    expect(shown).toContain(args.order);
    expect(shown).toContain(String(args.amount));
    // Wrapped: an async function returning the promise itself would wait for the call to end.
    return { call };
  }

  it('signs in at the gateway (the form post passes), approves: the held call returns, the tool ran once', async () => {
    const page = await openPage();
    await signIn(page, TOKENS.ANA_TOKEN);
    const before = refunds();
    const { call } = await heldCall(page, { amount: 500, order: 'o-approve' });
    await page.fill('form.approve textarea[name=note]', 'photos checked');
    await page.click('form.approve button');
    await page.waitForSelector('text=Your approval is recorded');
    const result = await call;
    expect(textOf(result)).toBe('refunded 500 on o-approve');
    expect(refunds()).toBe(before + 1);
    await page.close();
  });

  it('declines: the held call returns the reason, and the tool does not run', async () => {
    const page = await openPage();
    await signIn(page, TOKENS.ANA_TOKEN);
    const before = refunds();
    const { call } = await heldCall(page, { amount: 300, order: 'o-decline' });
    await page.fill('form.decline textarea[name=reason]', 'already refunded last week');
    await page.click('form.decline button');
    await page.waitForSelector('text=Your decision is recorded');
    const result = await call;
    expect(textOf(result)).toContain('already refunded last week');
    expect(refunds()).toBe(before);
    await page.close();
  });

  it('approves with changes: the narrowed call runs once', async () => {
    const page = await openPage();
    await signIn(page, TOKENS.ANA_TOKEN);
    const before = refunds();
    const { call } = await heldCall(page, { amount: 800, order: 'o-narrow' });
    const edited = (await page.inputValue('form.change textarea[name=args]')).replace('800', '300');
    await page.fill('form.change textarea[name=args]', edited);
    await page.click('form.change button');
    await page.waitForSelector('text=Your approval is recorded');
    expect(textOf(await call)).toBe('refunded 300 on o-narrow');
    expect(refunds()).toBe(before + 1);
    await page.close();
  });

  it('approves with a standing grant: covered calls run without asking, others still ask; revocable', async () => {
    const page = await openPage();
    await signIn(page, TOKENS.ANA_TOKEN);
    const before = refunds();
    const { call } = await heldCall(page, { amount: 400, order: 'o-grant' });
    await page.selectOption('form.grant select[name="bound:amount"]', 'atMost');
    await page.fill('form.grant input[name=grant_uses]', '2');
    await page.click('form.grant button');
    await page.waitForSelector('text=Standing grant');
    expect(textOf(await call)).toBe('refunded 400 on o-grant');
    expect(refunds()).toBe(before + 1);

    // Within the bounds (same order, at most 400): run at once, through the whole chain.
    for (const amount of [150, 399])
      expect(
        textOf(await client.callTool({ name: 'shop_refund', arguments: { amount, order: 'o-grant' } })),
      ).toBe(`refunded ${amount} on o-grant`);
    expect(refunds()).toBe(before + 3);
    // The process writes its log lines at the end of a turn, so the last one may trail the result.
    const grantUses = () =>
      gateway.logs().filter((line) => line['msg'] === 'call' && line['checkIn'] === 'standing-grant');
    const used = await until(
      async () => (grantUses().length >= 2 ? grantUses() : undefined),
      'two calls on the standing grant in the log',
    );
    expect(used).toHaveLength(2);
    expect(used.every((line) => typeof line['grantId'] === 'string')).toBe(true);

    // Used up, wider, or another order: asked again (a short declared timeout ends the hold at once).
    const quick = { 'io.toolgate/timeoutMs': 2_500 };
    for (const args of [
      { amount: 200, order: 'o-grant' },
      { amount: 401, order: 'o-grant' },
      { amount: 150, order: 'o-other' },
    ])
      expect(
        refusalOf(await client.callTool({ name: 'shop_refund', arguments: args, _meta: quick }))?.code,
      ).toBe('CHECKIN_PENDING');
    expect(refunds()).toBe(before + 3);

    await page.goto(`${origin}/inbox/grants`);
    const grant = page.locator('tr[data-grant]');
    expect(await grant.textContent()).toContain('2 of 2');
    expect(await grant.textContent()).toContain('amount ≤ 400');
    await grant.locator('button').click();
    await page.waitForURL(`${origin}/inbox/grants`);
    expect(await page.locator('tr[data-grant]').textContent()).toContain('revoked');
    await page.close();
  });

  it("refuses a cross-site page's forged POST (the inbox's own same-origin check), and decides nothing", async () => {
    const page = await openPage();
    await signIn(page, TOKENS.ANA_TOKEN);
    const csrf = await page.getAttribute('input[name=_csrf]', 'value');
    const quick = { 'io.toolgate/timeoutMs': 2_500 };
    const pending = refusalOf(
      await client.callTool({
        name: 'shop_refund',
        arguments: { amount: 700, order: 'o-forged' },
        _meta: quick,
      }),
    );
    const id = pending!.checkInId!;
    // Another site (localhost is not 127.0.0.1) that posts a form to the inbox, CSRF token and all.
    const target = `${origin}/inbox/check-ins/${id}/approve`;
    elsewhere = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(
        `<form method="post" action="${target}"><input name="_csrf" value="${csrf}"><button>go</button></form>`,
      );
    });
    await new Promise<void>((done) => elsewhere.listen(0, '127.0.0.1', done));
    const evil = `http://localhost:${(elsewhere.address() as AddressInfo).port}/`;
    await page.goto(evil);
    const [response] = await Promise.all([page.waitForResponse(target), page.click('button')]);
    expect(response.status()).toBe(403);
    const api = await fetch(`${origin}/inbox/api/check-ins/${id}`, {
      headers: { authorization: `Bearer ${TOKENS.ANA_TOKEN}` },
    });
    expect(((await api.json()) as { checkIn: { decision?: unknown } }).checkIn.decision).toBeUndefined();
    await page.close();
  });

  it("shows an approver of another tenant nothing of acme's, and lets them decide nothing", async () => {
    const page = await openPage();
    await signIn(page, TOKENS.GIA_TOKEN);
    const quick = { 'io.toolgate/timeoutMs': 2_500 };
    const pending = refusalOf(
      await client.callTool({
        name: 'shop_refund',
        arguments: { amount: 650, order: 'o-acme' },
        _meta: quick,
      }),
    );
    await page.goto(`${origin}/inbox/`);
    expect(await page.locator('tr[data-check-in]', { hasText: 'o-acme' }).count()).toBe(0);
    const foreign = await page.goto(`${origin}/inbox/check-ins/${pending!.checkInId}`);
    expect(foreign?.status()).toBe(404);
    await page.goto(`${origin}/inbox/grants`);
    expect(await page.locator('tr[data-grant]').count()).toBe(0);
    await page.close();
  });

  it('saw no CSP violation or script error on any page', () => {
    expect(problems).toEqual([]);
  });
});
