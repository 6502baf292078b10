import { html } from 'hono/html';
import type { CheckInScreen } from '@toolgate/inbox';
import { inMemoryArtifacts } from '@toolgate/middleware';
import { createSigner, inMemoryStandingGrants } from '@toolgate/core';
import { ACME, deployment, GLOBEX, KEY, TOKENS, type Deployment } from './fixtures';

const ORIGIN = 'http://inbox.test';

/** Signs in through the form like a browser: pre-session cookie, CSRF token, then the session cookie. */
async function signIn(d: Deployment, token: string, origin = ORIGIN) {
  const page = await d.inbox.request(`${origin}/inbox/sign-in`);
  const pre = page.headers.get('set-cookie')!.split(';')[0]!;
  const csrf = /name="_csrf" value="([^"]+)"/.exec(await page.text())![1]!;
  const response = await d.inbox.request(`${origin}/inbox/sign-in`, {
    method: 'POST',
    headers: { cookie: pre, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ _csrf: csrf, token }).toString(),
  });
  const setCookie = response.headers.get('set-cookie') ?? '';
  const cookie = setCookie.split(';')[0]!;
  const get = (path: string) => d.inbox.request(`${origin}/inbox${path}`, { headers: { cookie } });
  const post = (path: string, form: Record<string, string>) =>
    d.inbox.request(`${origin}/inbox${path}`, {
      method: 'POST',
      headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(form).toString(),
    });
  return { response, setCookie, cookie, get, post };
}

const csrfOf = (page: string) => /name="_csrf" value="([^"]+)"/.exec(page)![1]!;

describe('pages: sign-in and cookies', () => {
  it('sends a person without a session to sign in', async () => {
    const d = deployment();
    const response = await d.inbox.request(`${ORIGIN}/inbox/`);
    expect(response.status).toBe(303);
    expect(response.headers.get('location')).toBe('/inbox/sign-in');
  });

  it('signs in with a token: the cookie is HttpOnly, SameSite=Strict, scoped to the inbox, Secure only over TLS', async () => {
    const d = deployment();
    const plain = await signIn(d, TOKENS.ana);
    expect(plain.response.status).toBe(303);
    expect(plain.setCookie).toMatch(/HttpOnly/);
    expect(plain.setCookie).toMatch(/SameSite=Strict/);
    expect(plain.setCookie).toMatch(/Path=\/inbox/);
    expect(plain.setCookie).not.toMatch(/Secure/);
    expect(plain.cookie).not.toContain(TOKENS.ana);
    const tls = await signIn(d, TOKENS.ana, 'https://inbox.test');
    expect(tls.setCookie).toMatch(/Secure/);
    const list = await plain.get('/');
    expect(list.status).toBe(200);
    expect(await list.text()).toContain('Ana');
  });

  it('refuses a wrong token and a sign-in form posted without its CSRF token', async () => {
    const d = deployment();
    const wrong = await signIn(d, 'not-an-approver-token-000');
    expect(wrong.response.status).toBe(401);
    expect(wrong.setCookie).not.toMatch(/toolgate_inbox=/);
    const forged = await d.inbox.request(`${ORIGIN}/inbox/sign-in`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: TOKENS.ana }).toString(),
    });
    expect(forged.status).toBe(403);
    expect(forged.headers.get('set-cookie') ?? '').not.toMatch(/toolgate_inbox=/);
  });

  it('a tampered session cookie is no session', async () => {
    const d = deployment();
    const { cookie } = await signIn(d, TOKENS.ana);
    const value = cookie.split('=')[1]!;
    const flipped = `${value.slice(0, 20)}${value[20] === 'A' ? 'B' : 'A'}${value.slice(21)}`;
    const response = await d.inbox.request(`${ORIGIN}/inbox/`, {
      headers: { cookie: `toolgate_inbox=${flipped}` },
    });
    expect(response.status).toBe(303);
  });

  it('signs out only with the CSRF token', async () => {
    const d = deployment();
    const s = await signIn(d, TOKENS.ana);
    const page = await (await s.get('/')).text();
    expect((await s.post('/sign-out', {})).status).toBe(403);
    const out = await s.post('/sign-out', { _csrf: csrfOf(page) });
    expect(out.status).toBe(303);
    expect(out.headers.get('set-cookie')).toMatch(/toolgate_inbox=;/);
  });
});

describe('pages: headers', () => {
  it('every page carries a CSP with no inline script, and anti-framing and no-sniff headers', async () => {
    const d = deployment();
    const s = await signIn(d, TOKENS.ana);
    for (const response of [await s.get('/'), await d.inbox.request(`${ORIGIN}/inbox/sign-in`)]) {
      const csp = response.headers.get('content-security-policy')!;
      expect(csp).toContain("script-src 'self'");
      expect(csp).toContain("default-src 'none'");
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).not.toContain('unsafe-inline');
      expect(csp).not.toContain('unsafe-eval');
      expect(response.headers.get('x-content-type-options')).toBe('nosniff');
      expect(response.headers.get('x-frame-options')).toBe('DENY');
      expect(response.headers.get('referrer-policy')).toBe('same-origin');
      const page = await response.text();
      // No inline script or style anywhere: one script file, one stylesheet.
      expect(page.match(/<script/g)).toHaveLength(1);
      expect(page).toContain('<script src="/inbox/static/inbox.js" defer></script>');
      expect(page).not.toMatch(/\sstyle=|<style|\son[a-z]+=/i);
    }
    const script = await d.inbox.request(`${ORIGIN}/inbox/static/inbox.js`);
    expect(script.headers.get('content-type')).toMatch(/^text\/javascript/);
    expect(await script.text()).toContain('EventSource');
  });
});

describe('pages: hostile arguments are shown, inert', () => {
  const RTL = 'invoice\u202Efdp.exe';
  const HUGE = `start-${'0123456789'.repeat(10_240)}-end`;
  const hostile = {
    orderId: '<script>alert(1)</script>',
    amount: 12,
    memo: `javascript:alert(document.cookie) ${RTL} "quoted" 'single' <img src=x onerror=alert(1)>`,
    huge: HUGE,
  };

  it('escapes every value, marks bidi overrides, never links, and shows 100 KB values in full', async () => {
    const d = deployment();
    // additionalProperties: the refund schema would refuse 'huge', so use the open note tool.
    const paused = await d.pause(ACME, hostile, 'send_note');
    const s = await signIn(d, TOKENS.ana);
    const response = await s.get(`/check-ins/${paused.checkIn.id}`);
    expect(response.status).toBe(200);
    const page = await response.text();
    expect(page).not.toContain('<script>alert(1)');
    expect(page).not.toContain('<img src=x');
    expect(page).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(page).not.toMatch(/href="javascript:/i);
    expect(page).not.toContain('\u202E');
    expect(page).toContain('[U+202E]');
    expect(page).toContain('invisible or direction-changing characters');
    expect(page).toContain(HUGE);
    expect(page).toMatch(/<details class="fold">/);
    // The editable JSON carries the override as an escape, not the character.
    expect(page).toContain('\\u202e');
  });
});

describe('pages: the list', () => {
  it("shows each call's arguments, who asked for how many, filters and pages, all escaped", async () => {
    const d = deployment();
    await d.pause({ tenant: 'acme', principal: 'human<b>' }, { orderId: '<script>x</script>', amount: 7 });
    for (let i = 0; i < 60; i++)
      await d.pause({ tenant: 'acme', principal: 'bot' }, { orderId: `f-${i}`, amount: 1 });
    const ana = await signIn(d, TOKENS.ana);
    const first = await (await ana.get('/')).text();
    expect(first).toContain('Page 1 of 2 (61 waiting)');
    expect(first).toContain('bot <span class="muted">· acme</span>\n          (60)');
    expect(first).toContain('human&lt;b&gt;');
    expect(first).not.toContain('<script>x');
    const theirs = await (await ana.get('/?principal=human%3Cb%3E')).text();
    expect(theirs).toContain('orderId: &quot;&lt;script&gt;x&lt;/script&gt;&quot;, amount: 7');
    expect(theirs).not.toContain('f-59');
    const second = await (await ana.get('/?page=2')).text();
    expect(second).toContain('Page 2 of 2');
    const live = await (await ana.get('/fragments/live?principal=bot&page=2')).text();
    expect(live).toContain('Page 2 of 2 (60 waiting)');
  });
});

describe('pages: forms', () => {
  it("a POST without the CSRF token, or with another session's, is refused and changes nothing", async () => {
    const d = deployment();
    const paused = await d.pause(ACME, { orderId: 'o-1', amount: 40 });
    const ana = await signIn(d, TOKENS.ana);
    const other = await signIn(d, TOKENS.ana);
    const otherCsrf = csrfOf(await (await other.get('/')).text());
    const path = `/check-ins/${paused.checkIn.id}/approve`;
    expect((await ana.post(path, {})).status).toBe(403);
    expect((await ana.post(path, { _csrf: 'x'.repeat(43) })).status).toBe(403);
    expect((await ana.post(path, { _csrf: otherCsrf })).status).toBe(403);
    expect(d.ran).toEqual([]);
    expect((await d.checkIns.get(paused.checkIn.id))?.decision).toBeUndefined();
  });

  it('a cross-site POST carrying a valid session and CSRF token is refused by where it came from', async () => {
    const d = deployment({ origins: ['https://gateway.example'] });
    const paused = await d.pause(ACME, { orderId: 'o-1', amount: 40 });
    const ana = await signIn(d, TOKENS.ana);
    const csrf = csrfOf(await (await ana.get('/')).text());
    const path = `${ORIGIN}/inbox/check-ins/${paused.checkIn.id}/approve`;
    const postFrom = (headers: Record<string, string>) =>
      d.inbox.request(path, {
        method: 'POST',
        headers: { cookie: ana.cookie, 'content-type': 'application/x-www-form-urlencoded', ...headers },
        body: new URLSearchParams({ _csrf: csrf }).toString(),
      });
    for (const headers of [
      { 'sec-fetch-site': 'cross-site', origin: ORIGIN },
      { 'sec-fetch-site': 'same-site' },
      { origin: 'https://evil.example' },
      { origin: 'null' },
      { origin: 'http://inbox.test.evil.example' },
    ]) {
      const refused = await postFrom(headers);
      expect(refused.status).toBe(403);
      expect(await refused.json()).toMatchObject({ error: 'cross_origin' });
    }
    expect(d.ran).toEqual([]);
    expect((await d.checkIns.get(paused.checkIn.id))?.decision).toBeUndefined();
    // The inbox's own origin, and one it was told it is served from (a TLS proxy in front), may post.
    expect((await postFrom({ origin: 'https://gateway.example' })).status).toBe(200);
    expect((await d.checkIns.get(paused.checkIn.id))?.decision).toMatchObject({ approved: true });
    const next = await d.pause(ACME, { orderId: 'o-2', amount: 41 });
    const own = await d.inbox.request(`${ORIGIN}/inbox/check-ins/${next.checkIn.id}/approve`, {
      method: 'POST',
      headers: {
        cookie: ana.cookie,
        'content-type': 'application/x-www-form-urlencoded',
        'sec-fetch-site': 'same-origin',
        origin: ORIGIN,
      },
      body: new URLSearchParams({ _csrf: csrf }).toString(),
    });
    expect(own.status).toBe(200);
  });

  it('approve, approve with changes and decline through the forms', async () => {
    const d = deployment();
    const ana = await signIn(d, TOKENS.ana);
    const [a, b, c] = [
      await d.pause(ACME, { orderId: 'o-1', amount: 40 }),
      await d.pause(ACME, { orderId: 'o-2', amount: 400 }),
      await d.pause(ACME, { orderId: 'o-3', amount: 4 }),
    ];
    const csrf = csrfOf(await (await ana.get(`/check-ins/${a.checkIn.id}`)).text());
    const approved = await ana.post(`/check-ins/${a.checkIn.id}/approve`, { _csrf: csrf, note: 'fine' });
    expect(await approved.text()).toContain('Approved. The call ran.');
    const changed = await ana.post(`/check-ins/${b.checkIn.id}/approve`, {
      _csrf: csrf,
      args: JSON.stringify({ orderId: 'o-2', amount: 100 }),
    });
    expect(await changed.text()).toContain('Approved with changes by ana@acme');
    const declined = await ana.post(`/check-ins/${c.checkIn.id}/decline`, {
      _csrf: csrf,
      reason: 'duplicate',
    });
    expect(await declined.text()).toContain('Declined. The caller reads your reason.');
    expect(d.ran).toEqual([
      { orderId: 'o-1', amount: 40 },
      { orderId: 'o-2', amount: 100 },
    ]);
    const badJson = await ana.post(
      `/check-ins/${(await d.pause(ACME, { orderId: 'o-4', amount: 1 })).checkIn.id}/approve`,
      {
        _csrf: csrf,
        args: '{"amount": ',
      },
    );
    expect(badJson.status).toBe(400);
    expect(await badJson.text()).toContain('not valid JSON');
  });

  it("another tenant's check-in page reads exactly like an unknown one", async () => {
    const d = deployment();
    const paused = await d.pause(GLOBEX, { orderId: 'g-1', amount: 40 });
    const ana = await signIn(d, TOKENS.ana);
    const foreign = await ana.get(`/check-ins/${paused.checkIn.id}`);
    const unknown = await ana.get('/check-ins/chk_unknown000000000000');
    expect([foreign.status, unknown.status]).toEqual([404, 404]);
    expect(await foreign.text()).toBe(await unknown.text());
    const csrf = csrfOf(await (await ana.get('/')).text());
    expect((await ana.post(`/check-ins/${paused.checkIn.id}/approve`, { _csrf: csrf })).status).toBe(404);
    expect(d.ran).toEqual([]);
    expect(await (await ana.get('/')).text()).not.toContain(paused.checkIn.id);
  });
});

describe("pages: the tool's screen and a changed definition", () => {
  it('renders a registered screen with inline props, escaping what it interpolates', async () => {
    const seen: unknown[] = [];
    const screen: CheckInScreen = (props) => {
      seen.push(props);
      return html`<div class="note-preview">${(props as { title: string }).title}</div>`;
    };
    const d = deployment({ components: { 'note-preview': screen } });
    const paused = await d.pause(ACME, { text: 'hello' }, 'send_note');
    const page = await (await (await signIn(d, TOKENS.ana)).get(`/check-ins/${paused.checkIn.id}`)).text();
    expect(page).toContain('<div class="note-preview">Note &lt;b&gt;preview&lt;/b&gt;</div>');
    expect(seen).toEqual([{ title: 'Note <b>preview</b>' }]);
  });

  it('shows a plain string from a screen as text, and a failing or missing screen as a warning', async () => {
    const d1 = deployment({ components: { 'note-preview': () => '<b>bold</b>' } });
    const p1 = await d1.pause(ACME, {}, 'send_note');
    const page1 = await (await (await signIn(d1, TOKENS.ana)).get(`/check-ins/${p1.checkIn.id}`)).text();
    expect(page1).toContain('&lt;b&gt;bold&lt;/b&gt;');
    const d2 = deployment({
      components: {
        'note-preview': () => {
          throw new Error('secret stack');
        },
      },
    });
    const p2 = await d2.pause(ACME, {}, 'send_note');
    const page2 = await (await (await signIn(d2, TOKENS.ana)).get(`/check-ins/${p2.checkIn.id}`)).text();
    expect(page2).toContain('could not be shown');
    expect(page2).not.toContain('secret stack');
    const d3 = deployment();
    const p3 = await d3.pause(ACME, {}, 'send_note');
    const page3 = await (await (await signIn(d3, TOKENS.ana)).get(`/check-ins/${p3.checkIn.id}`)).text();
    expect(page3).toContain('a screen this inbox does not have');
  });

  it('resolves propsRef in the artifact store, in the scope of the call', async () => {
    const artifacts = inMemoryArtifacts();
    const ref = await artifacts.put(ACME, { kind: 'screen/props', data: { title: 'from <the> store' } });
    const elsewhere = await artifacts.put(GLOBEX, { kind: 'screen/props', data: { title: 'globex only' } });
    const d = deployment({
      artifacts,
      components: {
        'note-preview': (props) => html`<p class="from-store">${(props as { title: string }).title}</p>`,
      },
    });
    const paused = await d.pause(ACME, {}, 'send_note');
    // As a tool declaring a propsRef raises it: the same request, signed by the chains' key.
    const signer = createSigner(KEY);
    const put = async (id: string, propsRef: string) => {
      const { signature: _old, ...unsigned } = {
        ...paused.checkIn,
        id,
        component: { id: 'note-preview', propsRef },
      };
      await d.checkIns.put({ ...unsigned, signature: await signer.sign(unsigned) });
    };
    await put('chk_withref0000000000000', ref);
    await put('chk_otherscope00000000000', elsewhere);
    const ana = await signIn(d, TOKENS.ana);
    const page = await (await ana.get('/check-ins/chk_withref0000000000000')).text();
    expect(page).toContain('<p class="from-store">from &lt;the&gt; store</p>');
    const other = await (await ana.get('/check-ins/chk_otherscope00000000000')).text();
    expect(other).not.toContain('globex only');
    expect(other).toContain('no longer available');
  });

  it('shows the definition diff when a pinned tool changed', async () => {
    const d = deployment({
      pinDiffs: (request) =>
        request.toolName === 'issue_refund'
          ? {
              before: { name: 'issue_refund', description: 'Refunds an order' },
              after: { name: 'issue_refund', description: 'Refunds an order <and emails the CFO>' },
              pinnedAt: '2030-01-01T00:00:00.000Z',
            }
          : undefined,
    });
    const paused = await d.pause(ACME, { orderId: 'o-1', amount: 3 });
    const page = await (await (await signIn(d, TOKENS.ana)).get(`/check-ins/${paused.checkIn.id}`)).text();
    expect(page).toContain("This tool's definition changed since it was pinned");
    expect(page).toContain('<span class="removed">-   &quot;description&quot;: &quot;Refunds an order&quot;');
    expect(page).toContain(
      '<span class="added">+   &quot;description&quot;: &quot;Refunds an order &lt;and emails the CFO&gt;&quot;',
    );
  });
});

describe('pages: live updates', () => {
  it('streams a check-ins event to a signed-in page, and refuses a stranger', async () => {
    const d = deployment();
    await d.pause(ACME, { orderId: 'o-1', amount: 3 });
    expect((await d.inbox.request(`${ORIGIN}/inbox/events`)).status).toBe(401);
    const s = await signIn(d, TOKENS.ana);
    const controller = new AbortController();
    const response = await d.inbox.request(`${ORIGIN}/inbox/events`, {
      headers: { cookie: s.cookie },
      signal: controller.signal,
    });
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const reader = response.body!.getReader();
    const { value } = await reader.read();
    expect(new TextDecoder().decode(value)).toContain('event: check-ins');
    await reader.cancel();
    controller.abort();
    const fragment = await (await s.get('/fragments/live')).text();
    expect(fragment).toMatch(/^<div id="live">/);
    expect(fragment).toContain('issue_refund');
  });
});

describe('pages: a standing grant the host cannot record', () => {
  it('is not made through the form, and a revocation through the form stands and says it was not recorded', async () => {
    const grants = inMemoryStandingGrants();
    let down = true;
    const d = deployment({
      grants,
      definitionOf: () => 'def',
      onGrant: async () => {
        if (down) throw new Error('audit store down');
      },
    });
    const ana = await signIn(d, TOKENS.ana);
    const first = await d.pause(ACME, { orderId: 'o-31', amount: 31 });
    const csrf = csrfOf(await (await ana.get(`/check-ins/${first.checkIn.id}`)).text());
    const form = { _csrf: csrf, grant: 'on', grant_uses: '3', grant_hours: '1' };
    const refused = await ana.post(`/check-ins/${first.checkIn.id}/approve`, form);
    expect(refused.status).toBe(200);
    const page = await refused.text();
    expect(page).toContain('the standing grant was not made: it could not be recorded.');
    expect(page).not.toContain('Standing grant grt_');
    expect(await grants.list()).toEqual([]);
    expect(d.ran).toEqual([{ orderId: 'o-31', amount: 31 }]);

    down = false;
    const second = await d.pause(ACME, { orderId: 'o-32', amount: 32 });
    expect(await (await ana.post(`/check-ins/${second.checkIn.id}/approve`, form)).text()).toContain(
      'Standing grant grt_',
    );
    const [grant] = await grants.list();
    down = true;
    const revoked = await ana.post(`/grants/${grant!.id}/revoke`, { _csrf: csrf });
    expect(revoked.status).toBe(200);
    expect(await revoked.text()).toContain('The grant is revoked, but its revocation could not be recorded.');
    expect(await grants.get(grant!.id)).toMatchObject({ revoked: true });
    // Recorded or not, a revoke that has nothing left to do goes back to the list.
    expect((await ana.post(`/grants/${grant!.id}/revoke`, { _csrf: csrf })).status).toBe(303);
  });
});
