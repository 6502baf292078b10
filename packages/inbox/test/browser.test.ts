// The inbox in a real headless Chromium (Debian's `chromium`, driven by playwright-core): a person
// signs in, sees a paused call arrive live, approves, declines, narrows and tries to widen an amount,
// and the page stays inert under hostile arguments, forged posts and another tenant's ids.
// Screenshots of the list and a check-in page are written to test/artifacts/ (gitignored).

import { existsSync, mkdirSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { serve, type ServerType } from '@hono/node-server';
import { createSigner } from '@toolgate/core';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { describeWithChromium, openChromium, type OpenBrowser } from '../../../test-support/browser';
import { ACME, deployment, GLOBEX, KEY, TOKENS, type Deployment } from './fixtures';

const ARTIFACTS = join(__dirname, 'artifacts');
const describeBrowser = describeWithChromium('browser tests');

jest.setTimeout(90_000);

describeBrowser('the inbox in Chromium', () => {
  let d: Deployment;
  let server: ServerType;
  let origin: string;
  let context: BrowserContext;
  let browser: OpenBrowser<BrowserContext>;
  const problems: string[] = [];

  beforeAll(async () => {
    d = deployment({ pollMs: 100 });
    server = await new Promise<ServerType>((resolve) => {
      const s = serve({ fetch: d.inbox.fetch, hostname: '127.0.0.1', port: 0 }, () => resolve(s));
    });
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    mkdirSync(ARTIFACTS, { recursive: true });
    browser = await openChromium(chromium, { viewport: { width: 1200, height: 860 } });
    context = browser.context;
  });

  afterAll(async () => {
    await browser?.close();
    await new Promise((resolve) => server?.close(resolve));
    d?.inbox.close();
  });

  /** A fresh page that records CSP violations, script errors and dialogs (none may happen). */
  async function openPage(): Promise<Page> {
    const page = await context.newPage();
    page.on('console', (message) => {
      if (/Content Security Policy|Refused to/i.test(message.text())) problems.push(message.text());
    });
    page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
    page.on('dialog', async (dialog) => {
      problems.push(`dialog: ${dialog.message()}`);
      await dialog.dismiss();
    });
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

  async function openCheckIn(page: Page, id: string) {
    await page.goto(`${origin}/inbox/`);
    await page.click(`tr[data-check-in="${id}"] a`);
    await page.waitForURL(`${origin}/inbox/check-ins/${id}`);
  }

  it('signs in, and a paused call appears in the list live, without a reload', async () => {
    const page = await openPage();
    await signIn(page, TOKENS.ana);
    await page.waitForSelector('text=Nothing is waiting for your approval');
    const marker = await page.evaluate(() => {
      (window as unknown as { marker: number }).marker = 42;
      return 42;
    });
    const paused = await d.pause(ACME, { orderId: 'o-live', amount: 75 });
    const row = page.locator(`tr[data-check-in="${paused.checkIn.id}"]`);
    await row.waitFor({ timeout: 10_000 });
    await expect(row.textContent()).resolves.toContain('issue_refund');
    await expect(row.textContent()).resolves.toContain('agent-7');
    await expect(row.textContent()).resolves.toMatch(/min left/);
    // The same document: it was updated in place, not reloaded.
    expect(await page.evaluate(() => (window as unknown as { marker: number }).marker)).toBe(marker);
    await page.close();
  });

  it('approves with a note: the call runs once', async () => {
    const page = await openPage();
    await signIn(page, TOKENS.ana);
    const paused = await d.pause(ACME, { orderId: 'o-approve', amount: 250 });
    await openCheckIn(page, paused.checkIn.id);
    await page.fill('form.approve textarea[name=note]', 'photos checked');
    await page.click('form.approve button');
    await page.waitForSelector('text=Approved. The call ran.');
    expect(d.ran.filter((r) => r['orderId'] === 'o-approve')).toEqual([
      { orderId: 'o-approve', amount: 250 },
    ]);
    expect((await d.checkIns.get(paused.checkIn.id))?.receipt?.by).toBe('ana@acme');
    await page.close();
  });

  it('declines with the reason the model reads', async () => {
    const page = await openPage();
    await signIn(page, TOKENS.ana);
    const paused = await d.pause(ACME, { orderId: 'o-decline', amount: 90 });
    await openCheckIn(page, paused.checkIn.id);
    await page.fill('form.decline textarea[name=reason]', 'this order was already refunded');
    await page.click('form.decline button');
    await page.waitForSelector('text=Declined. The caller reads your reason.');
    expect(d.ran.filter((r) => r['orderId'] === 'o-decline')).toEqual([]);
    expect((await d.checkIns.get(paused.checkIn.id))?.decision).toMatchObject({
      approved: false,
      reason: 'this order was already refunded',
    });
    await page.close();
  });

  it('narrows an amount: the narrowed call runs; widening it is refused by policy', async () => {
    const page = await openPage();
    await signIn(page, TOKENS.ana);
    const narrow = await d.pause(ACME, { orderId: 'o-narrow', amount: 800 });
    await openCheckIn(page, narrow.checkIn.id);
    const edited = (await page.inputValue('form.change textarea[name=args]')).replace('800', '300');
    await page.fill('form.change textarea[name=args]', edited);
    await page.click('form.change button');
    await page.waitForSelector('text=Approved. The call ran.');
    expect(d.ran.filter((r) => r['orderId'] === 'o-narrow')).toEqual([{ orderId: 'o-narrow', amount: 300 }]);
    const receipt = (await d.checkIns.get(narrow.checkIn.id))?.receipt;
    expect(receipt?.askedArgsDigest).toBe(narrow.checkIn.argsDigest);
    expect(receipt?.argsDigest).not.toBe(narrow.checkIn.argsDigest);

    const widen = await d.pause(ACME, { orderId: 'o-widen', amount: 800 });
    await openCheckIn(page, widen.checkIn.id);
    const widened = (await page.inputValue('form.change textarea[name=args]')).replace('800', '8000');
    await page.fill('form.change textarea[name=args]', widened);
    await page.click('form.change button');
    await page.waitForSelector('text=refund-cap refused it');
    expect(await page.textContent('.notice')).toContain('a person cannot approve more');
    expect(d.ran.filter((r) => r['orderId'] === 'o-widen')).toEqual([]);
    await page.close();
  });

  it('renders an XSS payload inert: no script runs, nothing becomes a link, overrides are marked', async () => {
    const page = await openPage();
    await signIn(page, TOKENS.ana);
    const payload = {
      title: '<script>window.__xss = 1; alert(1)</script>',
      link: 'javascript:window.__xss=2',
      image: '<img src=x onerror="window.__xss=3">',
      rtl: 'report\u202Efdp.exe',
      big: 'A'.repeat(100 * 1024),
    };
    const paused = await d.pause(ACME, payload, 'send_note');
    await openCheckIn(page, paused.checkIn.id);
    await page.waitForSelector('table.args');
    expect(await page.evaluate(() => (window as unknown as { __xss?: number }).__xss)).toBeUndefined();
    expect(await page.locator('a[href^="javascript:"]').count()).toBe(0);
    expect(await page.locator('main img').count()).toBe(0);
    const text = await page.textContent('table.args');
    expect(text).toContain('<script>window.__xss = 1; alert(1)</script>');
    expect(text).toContain('[U+202E]');
    expect(text).not.toContain('\u202E');
    // The 100 KB value is folded, and all of it is there when unfolded.
    await page.click('details.fold summary');
    const big = await page.locator('details.fold pre').textContent();
    expect(big).toHaveLength(100 * 1024);
    await page.close();
  });

  it('refuses a forged POST without the CSRF token, from a signed-in browser', async () => {
    const page = await openPage();
    await signIn(page, TOKENS.ana);
    const paused = await d.pause(ACME, { orderId: 'o-forged', amount: 60 });
    await openCheckIn(page, paused.checkIn.id);
    const statuses = await page.evaluate(async (id) => {
      const form = new URLSearchParams({ note: 'forged' });
      const asForm = await fetch(`/inbox/check-ins/${id}/approve`, { method: 'POST', body: form });
      const asJson = await fetch(`/inbox/api/check-ins/${id}/approve`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{}',
      });
      return [asForm.status, asJson.status];
    }, paused.checkIn.id);
    expect(statuses).toEqual([403, 403]);
    expect((await d.checkIns.get(paused.checkIn.id))?.decision).toBeUndefined();
    expect(d.ran.filter((r) => r['orderId'] === 'o-forged')).toEqual([]);
    await page.close();
  });

  it("refuses another tenant's check-in, which reads like one that does not exist", async () => {
    const page = await openPage();
    await signIn(page, TOKENS.bo);
    const paused = await d.pause(ACME, { orderId: 'o-acme-only', amount: 60 });
    await page.reload();
    expect(await page.locator(`tr[data-check-in="${paused.checkIn.id}"]`).count()).toBe(0);
    const response = await page.goto(`${origin}/inbox/check-ins/${paused.checkIn.id}`);
    expect(response?.status()).toBe(404);
    const foreign = await page.textContent('main');
    const unknown = await page.goto(`${origin}/inbox/check-ins/chk_unknown000000000000`);
    expect(unknown?.status()).toBe(404);
    expect(await page.textContent('main')).toBe(foreign);
    await page.goto(`${origin}/inbox/`);
    const csrf = await page.getAttribute('input[name=_csrf]', 'value');
    const status = await page.evaluate(
      async ([id, token]) =>
        (
          await fetch(`/inbox/check-ins/${id}/approve`, {
            method: 'POST',
            body: new URLSearchParams({ _csrf: token! }),
          })
        ).status,
      [paused.checkIn.id, csrf] as const,
    );
    expect(status).toBe(404);
    expect((await d.checkIns.get(paused.checkIn.id))?.decision).toBeUndefined();
    await page.close();
  });

  it('keeps screenshots of the list and of a check-in page', async () => {
    const page = await openPage();
    await signIn(page, TOKENS.root);
    const refund = await d.pause(ACME, {
      orderId: 'ord_20931',
      amount: 480,
      memo: 'Arrived damaged; customer sent photos',
    });
    await d.pause(GLOBEX, { orderId: 'ord_77102', amount: 920 });
    await d.pause({ tenant: 'acme', principal: 'billing-bot' }, { orderId: 'ord_20988', amount: 35 });
    // One that expired, greyed in the list: the same request, re-signed with past times.
    const { signature: _signature, ...unsigned } = {
      ...refund.checkIn,
      id: 'chk_expiredexample000000',
      createdAt: new Date(Date.now() - 20 * 60_000).toISOString(),
      expiresAt: new Date(Date.now() - 5 * 60_000).toISOString(),
    };
    await d.checkIns.put({ ...unsigned, signature: await createSigner(KEY).sign(unsigned) });
    await page.goto(`${origin}/inbox/`);
    await page.waitForSelector('tr.expired');
    await page.screenshot({ path: join(ARTIFACTS, 'inbox-list.png'), fullPage: true });
    await openCheckIn(page, refund.checkIn.id);
    await page.screenshot({ path: join(ARTIFACTS, 'inbox-check-in.png'), fullPage: true });
    expect(existsSync(join(ARTIFACTS, 'inbox-list.png'))).toBe(true);
    expect(existsSync(join(ARTIFACTS, 'inbox-check-in.png'))).toBe(true);
    await page.close();
  });

  it('saw no CSP violation, script error or dialog on any page', () => {
    expect(problems).toEqual([]);
  });
});
