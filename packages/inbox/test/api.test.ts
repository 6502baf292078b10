import { awaitDecision, digestOf, type CheckInRequest } from '@toolgate/core';
import { fixedClock } from '@toolgate/testing';
import { ajvValidator } from '@toolgate/middleware';
import { ACME, deployment, GLOBEX, KEY, TOKENS, type Deployment } from './fixtures';

const REFUND = { orderId: 'o-1', amount: 500 };

async function json(response: Response): Promise<Record<string, any>> {
  return (await response.json()) as Record<string, any>;
}

describe('JSON API: authentication', () => {
  it('refuses every route without an approver token, and says how to authenticate', async () => {
    const d = deployment();
    const paused = await d.pause(ACME, REFUND);
    const id = paused.checkIn.id;
    for (const [path, body] of [
      ['/check-ins', undefined],
      [`/check-ins/${id}`, undefined],
      [`/check-ins/${id}/approve`, {}],
      [`/check-ins/${id}/decline`, {}],
    ] as const) {
      for (const token of [undefined, 'not-a-token-at-all-0000']) {
        const response = await d.api(path, { ...(token ? { token } : {}), ...(body ? { body } : {}) });
        expect(response.status).toBe(401);
        expect(response.headers.get('www-authenticate')).toContain('Bearer');
      }
    }
    expect(d.ran).toEqual([]);
    expect((await d.checkIns.get(id))?.decision).toBeUndefined();
  });
});

describe('JSON API: GET /api/check-ins', () => {
  it('pages instead of cutting, filters by tenant, tool and principal, and a flood hides nobody', async () => {
    const clock = fixedClock();
    const d = deployment({ now: clock.now });
    const real = await d.pause({ tenant: 'acme', principal: 'ana-agent' }, { orderId: 'real', amount: 5 });
    for (let i = 0; i < 250; i++) {
      clock.advance(10);
      await d.pause({ tenant: 'acme', principal: 'bot' }, { orderId: `flood-${i}`, amount: 1 });
    }
    await d.pause(GLOBEX, { orderId: 'g-1', amount: 30 });

    const seen = new Set<string>();
    let pages = 0;
    for (let page = 1; ; page++) {
      const body = await json(await d.api(`/check-ins?page=${page}`, { token: TOKENS.ana }));
      expect(body['total']).toBe(251);
      pages = body['pages'];
      for (const c of body['checkIns']) seen.add(c.id);
      if (page >= pages) break;
    }
    expect(pages).toBe(Math.ceil(251 / 50));
    expect(seen.size).toBe(251);
    expect(seen.has(real.checkIn.id)).toBe(true);

    // The first page names every principal waiting, with counts: the real one is one filter away.
    const first = await json(await d.api('/check-ins', { token: TOKENS.ana }));
    expect(first['byPrincipal']).toEqual([
      { tenant: 'acme', principal: 'bot', count: 250 },
      { tenant: 'acme', principal: 'ana-agent', count: 1 },
    ]);
    const theirs = await json(await d.api('/check-ins?principal=ana-agent', { token: TOKENS.ana }));
    expect(theirs['checkIns'].map((c: CheckInRequest) => c.id)).toEqual([real.checkIn.id]);
    expect(theirs['checkIns'][0]['argsSummary']).toBe('orderId: "real", amount: 5');

    const byTool = await json(await d.api('/check-ins?tool=send_note', { token: TOKENS.ana }));
    expect(byTool['total']).toBe(0);
    // Another tenant's filter shows an approver nothing, not even a count.
    const foreign = await json(await d.api('/check-ins?tenant=globex', { token: TOKENS.ana }));
    expect(foreign).toMatchObject({ checkIns: [], total: 0, byPrincipal: [] });
    const root = await json(await d.api('/check-ins?tenant=globex', { token: TOKENS.root }));
    expect(root['total']).toBe(1);
  });

  it("lists only the approver's tenants' pending check-ins, newest first, without signatures", async () => {
    const clock = fixedClock();
    const d = deployment({ now: clock.now });
    const first = await d.pause(ACME, REFUND);
    clock.advance(1000);
    const second = await d.pause(ACME, { orderId: 'o-2', amount: 20 });
    clock.advance(1000);
    const other = await d.pause(GLOBEX, { orderId: 'g-1', amount: 30 });

    const ana = await json(await d.api('/check-ins', { token: TOKENS.ana }));
    expect(ana['checkIns'].map((c: CheckInRequest) => c.id)).toEqual([second.checkIn.id, first.checkIn.id]);
    expect(ana['checkIns'][0]).toMatchObject({
      toolName: 'issue_refund',
      identity: ACME,
      review: { orderId: 'o-2', amount: 20 },
      state: 'pending',
      expired: false,
    });
    expect(ana['checkIns'][0]).not.toHaveProperty('signature');

    const bo = await json(await d.api('/check-ins', { token: TOKENS.bo }));
    expect(bo['checkIns'].map((c: CheckInRequest) => c.id)).toEqual([other.checkIn.id]);
    const all = await json(await d.api('/check-ins', { token: TOKENS.root }));
    expect(all['checkIns']).toHaveLength(3);
  });

  it('lists decided check-ins with ?decided=true', async () => {
    const d = deployment({ carry: false });
    const paused = await d.pause(ACME, REFUND);
    await d.api(`/check-ins/${paused.checkIn.id}/approve`, { token: TOKENS.ana, body: { note: 'ok' } });
    expect((await json(await d.api('/check-ins', { token: TOKENS.ana })))['checkIns']).toEqual([]);
    const decided = await json(await d.api('/check-ins?decided=true', { token: TOKENS.ana }));
    expect(decided['checkIns'][0]).toMatchObject({
      id: paused.checkIn.id,
      decision: { approved: true, by: 'ana@acme', note: 'ok' },
    });
  });

  it('leaves out a record whose signature this deployment did not make', async () => {
    const d = deployment();
    const paused = await d.pause(ACME, REFUND);
    const forged = { ...paused.checkIn, id: 'chk_forged0000000000000', args: { orderId: 'o-1', amount: 1 } };
    await d.checkIns.put(forged);
    const listed = await json(await d.api('/check-ins', { token: TOKENS.ana }));
    expect(listed['checkIns'].map((c: CheckInRequest) => c.id)).toEqual([paused.checkIn.id]);
    expect((await d.api(`/check-ins/${forged.id}`, { token: TOKENS.ana })).status).toBe(404);
    expect((await d.api(`/check-ins/${forged.id}/approve`, { token: TOKENS.ana, body: {} })).status).toBe(
      404,
    );
  });
});

describe('JSON API: GET /api/check-ins/:id', () => {
  it('shows a check-in in full to its tenant, and another tenant cannot tell it exists', async () => {
    const d = deployment();
    const paused = await d.pause(ACME, REFUND);
    const own = await d.api(`/check-ins/${paused.checkIn.id}`, { token: TOKENS.ana });
    expect(own.status).toBe(200);
    expect((await json(own))['checkIn']).toMatchObject({
      id: paused.checkIn.id,
      args: REFUND,
      argsDigest: paused.checkIn.argsDigest,
      evidence: { order: 'o-1', rule: 'every refund needs a person' },
    });
    const foreign = await d.api(`/check-ins/${paused.checkIn.id}`, { token: TOKENS.bo });
    const unknown = await d.api('/check-ins/chk_doesnotexist000000000', { token: TOKENS.bo });
    const junk = await d.api('/check-ins/%3Cscript%3E', { token: TOKENS.bo });
    expect([foreign.status, unknown.status, junk.status]).toEqual([404, 404, 404]);
    const bodies = [await foreign.text(), await unknown.text(), await junk.text()];
    expect(new Set(bodies).size).toBe(1);
  });
});

describe('JSON API: POST /api/check-ins/:id/approve', () => {
  it('approves: the call runs once, and the answer says so', async () => {
    const d = deployment();
    const paused = await d.pause(ACME, REFUND);
    const response = await d.api(`/check-ins/${paused.checkIn.id}/approve`, {
      token: TOKENS.ana,
      body: { note: 'customer sent photos' },
    });
    expect(response.status).toBe(200);
    const body = await json(response);
    expect(body['outcome']).toEqual({ kind: 'result', ran: true });
    expect(body['checkIn']).toMatchObject({
      state: 'consumed',
      decision: { approved: true, by: 'ana@acme', note: 'customer sent photos' },
      receipt: { by: 'ana@acme', argsDigest: paused.checkIn.argsDigest },
    });
    expect(d.ran).toEqual([REFUND]);

    const again = await d.api(`/check-ins/${paused.checkIn.id}/approve`, { token: TOKENS.ana, body: {} });
    expect(again.status).toBe(409);
    expect(await json(again)).toMatchObject({ error: 'already_decided' });
    expect(d.ran).toHaveLength(1);
  });

  it('approves with narrower args: they run, and the receipt records the asked and the approved digests', async () => {
    const d = deployment();
    const paused = await d.pause(ACME, REFUND);
    const narrowed = { orderId: 'o-1', amount: 120 };
    const body = await json(
      await d.api(`/check-ins/${paused.checkIn.id}/approve`, { token: TOKENS.ana, body: { args: narrowed } }),
    );
    expect(body['outcome']).toEqual({ kind: 'result', ran: true });
    expect(d.ran).toEqual([narrowed]);
    expect(body['checkIn']['decision']).toMatchObject({ approved: true, args: narrowed });
    expect(body['checkIn']['receipt']).toMatchObject({
      askedArgsDigest: paused.checkIn.argsDigest,
      argsDigest: await digestOf(narrowed),
    });
  });

  it('approves with wider args than policy allows: refused by policy, nothing runs', async () => {
    const d = deployment();
    const paused = await d.pause(ACME, REFUND);
    const body = await json(
      await d.api(`/check-ins/${paused.checkIn.id}/approve`, {
        token: TOKENS.ana,
        body: { args: { orderId: 'o-1', amount: 5000 } },
      }),
    );
    expect(body['outcome']).toMatchObject({
      kind: 'refused',
      ran: false,
      gate: 'refund-cap',
      code: 'POLICY_DENIED',
    });
    expect(d.ran).toEqual([]);
    expect(body['checkIn']['state']).toBe('revoked');
  });

  it('approves with args the schema refuses: refused by validate-args, naming the path, nothing runs', async () => {
    const d = deployment();
    const paused = await d.pause(ACME, REFUND);
    const body = await json(
      await d.api(`/check-ins/${paused.checkIn.id}/approve`, {
        token: TOKENS.ana,
        body: { args: { orderId: 'o-1', amount: 'a lot' } },
      }),
    );
    expect(body['outcome']).toMatchObject({ kind: 'refused', gate: 'validate-args' });
    expect(body['outcome'].reason).toContain('amount');
    expect(body['outcome'].reason).not.toContain('a lot');
    expect(d.ran).toEqual([]);
  });

  it("with checkArgs, refuses changed args that do not fit the tool's schema before recording anything", async () => {
    const validator = ajvValidator();
    const d: Deployment = deployment({
      checkArgs: (request, args) => {
        const tool = d.dispatcher.tools.get(request.toolName)!;
        const result = validator.compile(tool.schema.inputSchema)(args);
        return result.valid ? [] : result.problems.map((p) => `'${p.path}' ${p.expected}`);
      },
    });
    const paused = await d.pause(ACME, REFUND);
    const path = `/check-ins/${paused.checkIn.id}/approve`;
    const refused = await d.api(path, {
      token: TOKENS.ana,
      body: { args: { orderId: 'o-1', amount: 'lots' } },
    });
    expect(refused.status).toBe(400);
    expect((await json(refused))['message']).toMatch(/'amount' must be number.*Nothing was recorded/);
    expect((await d.checkIns.get(paused.checkIn.id))?.decision).toBeUndefined();
    const fixed = await d.api(path, { token: TOKENS.ana, body: { args: { orderId: 'o-1', amount: 60 } } });
    expect((await json(fixed))['outcome']).toEqual({ kind: 'result', ran: true });
    expect(d.ran).toEqual([{ orderId: 'o-1', amount: 60 }]);
  });

  it('refuses a malformed body before anything is recorded', async () => {
    const d = deployment();
    const paused = await d.pause(ACME, REFUND);
    const path = `/check-ins/${paused.checkIn.id}/approve`;
    const cases: Array<{ body: unknown; headers?: Record<string, string> }> = [
      { body: { args: [1, 2] } },
      { body: { args: 'amount=5' } },
      { body: { note: 42 } },
      { body: { note: 'x'.repeat(2001) } },
      { body: '[1]' },
      { body: '{not json' },
      { body: 'note=hi', headers: { 'content-type': 'application/x-www-form-urlencoded' } },
    ];
    for (const { body, headers } of cases) {
      const response = await d.api(path, { token: TOKENS.ana, body, ...(headers ? { headers } : {}) });
      expect(response.status).toBe(400);
      expect((await json(response))['error']).toBe('bad_request');
    }
    expect((await d.checkIns.get(paused.checkIn.id))?.decision).toBeUndefined();
    expect(d.ran).toEqual([]);
  });

  it("cannot approve another tenant's check-in, and cannot tell it exists", async () => {
    const d = deployment();
    const paused = await d.pause(ACME, REFUND);
    const response = await d.api(`/check-ins/${paused.checkIn.id}/approve`, { token: TOKENS.bo, body: {} });
    expect(response.status).toBe(404);
    const unknown = await d.api('/check-ins/chk_doesnotexist000000000/approve', {
      token: TOKENS.bo,
      body: {},
    });
    expect(await response.text()).toBe(await unknown.text());
    expect((await d.checkIns.get(paused.checkIn.id))?.decision).toBeUndefined();
    expect(d.ran).toEqual([]);
  });

  it('two approvers clicking at once: one decision is kept, the other is told, and the call runs once', async () => {
    const d = deployment();
    const paused = await d.pause(ACME, REFUND);
    const path = `/check-ins/${paused.checkIn.id}/approve`;
    const responses = await Promise.all([
      d.api(path, { token: TOKENS.ana, body: { note: 'ana' } }),
      d.api(path, { token: TOKENS.root, body: { note: 'ops' } }),
      d.api(`/check-ins/${paused.checkIn.id}/decline`, { token: TOKENS.root, body: { reason: 'no' } }),
    ]);
    const statuses = responses.map((r) => r.status).sort();
    expect(statuses).toEqual([200, 409, 409]);
    const losers = await Promise.all(responses.filter((r) => r.status === 409).map(json));
    for (const loser of losers) expect(loser['error']).toBe('already_decided');
    expect(d.ran.length).toBeLessThanOrEqual(1);
    const record = await d.checkIns.get(paused.checkIn.id);
    expect(record?.state).toBe('consumed');
    expect(d.ran).toHaveLength(record?.decision?.approved ? 1 : 0);
  });

  it('refuses an expired check-in', async () => {
    const clock = fixedClock();
    const d = deployment({ now: clock.now });
    const paused = await d.pause(ACME, REFUND);
    clock.advance(16 * 60_000);
    const response = await d.api(`/check-ins/${paused.checkIn.id}/approve`, { token: TOKENS.ana, body: {} });
    expect(response.status).toBe(409);
    expect((await json(response))['error']).toBe('expired');
    expect(d.ran).toEqual([]);
  });

  it('without carryOut, records the decision for the holder, who carries it out through the resume', async () => {
    const d = deployment({ carry: false });
    const paused = await d.pause(ACME, REFUND);
    const waiting = awaitDecision(d.checkIns, paused.checkIn.id, { pollMs: 5 });
    const body = await json(
      await d.api(`/check-ins/${paused.checkIn.id}/approve`, {
        token: TOKENS.ana,
        body: { args: { orderId: 'o-1', amount: 90 } },
      }),
    );
    expect(body).not.toHaveProperty('outcome');
    expect(body['checkIn']['state']).toBe('pending');
    const record = await waiting;
    expect(record?.decision).toMatchObject({
      approved: true,
      by: 'ana@acme',
      args: { orderId: 'o-1', amount: 90 },
    });
    expect(d.ran).toEqual([]);
  });
});

describe('JSON API: POST /api/check-ins/:id/decline', () => {
  it('declines: nothing runs, and the model reads the reason', async () => {
    const d = deployment();
    const paused = await d.pause(ACME, REFUND);
    const response = await d.api(`/check-ins/${paused.checkIn.id}/decline`, {
      token: TOKENS.ana,
      body: { reason: 'the order was never paid' },
    });
    const body = await json(response);
    expect(response.status).toBe(200);
    expect(body['outcome']).toMatchObject({ kind: 'refused', code: 'CHECKIN_DECLINED' });
    const read: string = body['outcome'].reason;
    expect(read).toContain('the order was never paid');
    expect(read).toContain('ana@acme');
    expect(d.ran).toEqual([]);
  });

  it('takes a JSON body whatever its content type, as a script sends it', async () => {
    const d = deployment();
    const paused = await d.pause(ACME, REFUND);
    const response = await d.inbox.request(
      `http://inbox.test/inbox/api/check-ins/${paused.checkIn.id}/decline`,
      {
        method: 'POST',
        headers: { authorization: `Bearer ${TOKENS.ana}` },
        body: JSON.stringify({ reason: 'sent as text/plain' }),
      },
    );
    expect(response.status).toBe(200);
    expect((await json(response))['checkIn']['decision']).toMatchObject({ reason: 'sent as text/plain' });
  });

  it('declines without a reason with a default the model can read', async () => {
    const d = deployment({ carry: false });
    const paused = await d.pause(ACME, REFUND);
    const body = await json(
      await d.api(`/check-ins/${paused.checkIn.id}/decline`, { token: TOKENS.ana, method: 'POST' }),
    );
    expect(body['checkIn']['decision']).toMatchObject({
      approved: false,
      reason: 'a person declined this call',
    });
  });
});

describe('JSON API: a signed-in browser session', () => {
  it('must send its CSRF token on a POST; a bearer token need not', async () => {
    const d = deployment();
    const paused = await d.pause(ACME, REFUND);
    const signInPage = await d.inbox.request('http://inbox.test/inbox/sign-in');
    const pre = signInPage.headers.get('set-cookie')!.split(';')[0]!;
    const csrf = /name="_csrf" value="([^"]+)"/.exec(await signInPage.text())![1]!;
    const signedIn = await d.inbox.request('http://inbox.test/inbox/sign-in', {
      method: 'POST',
      headers: { cookie: pre, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ _csrf: csrf, token: TOKENS.ana }).toString(),
    });
    const session = signedIn.headers.get('set-cookie')!.split(';')[0]!;
    const path = `/check-ins/${paused.checkIn.id}/approve`;
    const forged = await d.api(path, { headers: { cookie: session }, body: {} });
    expect(forged.status).toBe(403);
    expect(d.ran).toEqual([]);
    expect((await d.api(`/check-ins/${paused.checkIn.id}`, { headers: { cookie: session } })).status).toBe(
      200,
    );
    expect(KEY.length).toBeGreaterThanOrEqual(32);
  });
});
