import { fixedClock } from '@toolgate/testing';
import { ACME, deployment, GLOBEX } from './fixtures';

interface Posted {
  readonly url: string;
  readonly body: {
    text: string;
    blocks: Array<{ type: string; elements?: Array<{ url: string; text: { text: string } }> }>;
  };
  readonly headers: Record<string, string>;
}

function receiver(status = 200) {
  const posted: Posted[] = [];
  const fetch = (async (url: string, init: RequestInit) => {
    posted.push({
      url,
      body: JSON.parse(String(init.body)) as Posted['body'],
      headers: init.headers as Record<string, string>,
    });
    return new Response('ok', { status });
  }) as unknown as typeof globalThis.fetch;
  return { posted, fetch };
}

const buttons = (post: Posted) => post.body.blocks.find((b) => b.type === 'actions')!.elements!;

function webhookDeployment(status = 200, extra: { tenants?: readonly string[]; now?: () => number } = {}) {
  const r = receiver(status);
  const d = deployment({
    ...(extra.now !== undefined ? { now: extra.now } : {}),
    webhook: {
      url: 'https://hooks.example/T000/B000',
      publicUrl: 'http://inbox.test/inbox/',
      fetch: r.fetch,
      pollMs: 0,
      by: 'slack #refunds',
      headers: { 'x-team': 'support' },
      ...(extra.tenants !== undefined ? { tenants: extra.tenants } : {}),
    },
  });
  return { ...r, d };
}

async function linkPage(d: ReturnType<typeof deployment>, url: string) {
  const page = await d.inbox.request(url);
  const text = await page.text();
  const csrf = /name="_csrf" value="([^"]+)"/.exec(text)?.[1];
  const action = /<form method="post" action="([^"]+)"/.exec(text)?.[1];
  return { page, text, csrf, action };
}

const post = (d: ReturnType<typeof deployment>, action: string, form: Record<string, string>) =>
  d.inbox.request(`http://inbox.test${action}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(form).toString(),
  });

describe('webhook', () => {
  it('posts each new check-in once as a Slack message with approve and decline links, and no argument values', async () => {
    const { d, posted } = webhookDeployment();
    const paused = await d.pause(ACME, { orderId: 'secret-order-<9>', amount: 777 });
    expect(await d.inbox.deliverWebhook()).toBe(1);
    expect(await d.inbox.deliverWebhook()).toBe(0);
    expect(posted).toHaveLength(1);
    const [message] = posted;
    expect(message!.url).toBe('https://hooks.example/T000/B000');
    expect(message!.headers['x-team']).toBe('support');
    expect(message!.body.text).toContain('agent-7 (acme) asks to run issue_refund');
    const json = JSON.stringify(message!.body);
    expect(json).not.toContain('secret-order');
    expect(json).not.toContain('777');
    const [approve, decline, open] = buttons(message!);
    expect(approve!.url).toMatch(/^http:\/\/inbox\.test\/inbox\/links\/[\w-]+\.[\w-]+$/);
    expect(decline!.url).toMatch(/^http:\/\/inbox\.test\/inbox\/links\//);
    expect(open!.url).toBe(`http://inbox.test/inbox/check-ins/${paused.checkIn.id}`);
  });

  it("escapes Slack's markup in names a caller controls", async () => {
    const { d, posted } = webhookDeployment();
    await d.pause({ tenant: 'acme', principal: '<!channel> & co' }, { orderId: 'o', amount: 1 });
    await d.inbox.deliverWebhook();
    expect(posted[0]!.body.text).toContain('&lt;!channel&gt; &amp; co');
    expect(posted[0]!.body.text).not.toContain('<!channel>');
  });

  it('posts only the tenants it is given, and retries a failed post a few times', async () => {
    const { d, posted } = webhookDeployment(500, { tenants: ['globex'] });
    await d.pause(ACME, { orderId: 'o', amount: 1 });
    await d.pause(GLOBEX, { orderId: 'g', amount: 1 });
    for (let i = 0; i < 5; i++) await d.inbox.deliverWebhook();
    expect(posted).toHaveLength(3);
    expect(posted.every((p) => p.body.text.includes('globex'))).toBe(true);
  });

  it('an approve link opens the check-in; its form approves once, as the webhook, and the call runs once', async () => {
    const { d, posted } = webhookDeployment();
    const paused = await d.pause(ACME, { orderId: 'o-1', amount: 250 });
    await d.inbox.deliverWebhook();
    const [approve] = buttons(posted[0]!);
    const opened = await linkPage(d, approve!.url);
    expect(opened.page.status).toBe(200);
    expect(opened.text).toContain('o-1');
    expect(opened.text).not.toContain('>Decline</button>');
    // Opening the link decided nothing (a chat's link preview must not approve).
    expect((await d.checkIns.get(paused.checkIn.id))?.decision).toBeUndefined();
    expect((await post(d, opened.action!, {})).status).toBe(404);
    const done = await post(d, opened.action!, { _csrf: opened.csrf!, note: 'from slack' });
    expect(await done.text()).toContain('Approved. The call ran.');
    expect(d.ran).toEqual([{ orderId: 'o-1', amount: 250 }]);
    expect((await d.checkIns.get(paused.checkIn.id))?.decision).toMatchObject({
      by: 'slack #refunds',
      note: 'from slack',
    });
    const again = await post(d, opened.action!, { _csrf: opened.csrf! });
    expect(again.status).toBe(409);
    expect(d.ran).toHaveLength(1);
  });

  it('a decline link declines with the reason and cannot approve', async () => {
    const { d, posted } = webhookDeployment();
    const paused = await d.pause(ACME, { orderId: 'o-1', amount: 250 });
    await d.inbox.deliverWebhook();
    const [, decline] = buttons(posted[0]!);
    const opened = await linkPage(d, decline!.url);
    const approvePath = opened.action!.replace(/\/decline$/, '/approve');
    expect((await post(d, approvePath, { _csrf: opened.csrf! })).status).toBe(404);
    await post(d, opened.action!, { _csrf: opened.csrf!, reason: 'not this week' });
    expect((await d.checkIns.get(paused.checkIn.id))?.decision).toMatchObject({
      approved: false,
      reason: 'not this week',
    });
    expect(d.ran).toEqual([]);
  });

  it('a forged, altered or expired link is refused', async () => {
    const clock = fixedClock();
    const { d, posted } = webhookDeployment(200, { now: clock.now });
    await d.pause(ACME, { orderId: 'o-1', amount: 250 });
    await d.inbox.deliverWebhook();
    const [approve] = buttons(posted[0]!);
    const [payload, mac] = approve!.url.split('/links/')[1]!.split('.');
    const altered = `http://inbox.test/inbox/links/${payload}x.${mac}`;
    expect((await d.inbox.request(altered)).status).toBe(404);
    expect((await d.inbox.request('http://inbox.test/inbox/links/abc.def')).status).toBe(404);
    clock.advance(16 * 60_000);
    expect((await d.inbox.request(approve!.url)).status).toBe(404);
    expect(d.ran).toEqual([]);
  });
});
