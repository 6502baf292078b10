// Standing grants through the inbox's JSON API: made with an approval, refused (and nothing recorded)
// when they would widen the call shown, listed and revoked only by approvers of their tenant; another
// tenant's grant id reads exactly like an unknown one.

import { inMemoryStandingGrants, type StandingGrant } from '@toolgate/core';
import { ACME, deployment, GLOBEX, TOKENS } from './fixtures';

async function json(response: Response): Promise<Record<string, any>> {
  return (await response.json()) as Record<string, any>;
}

function withGrants() {
  const grants = inMemoryStandingGrants();
  const d = deployment({ grants, definitionOf: (request) => `def:${request.toolName}` });
  return { d, grants };
}

describe('standing grants in the inbox API', () => {
  it('makes a grant with an approval, bounded by the call shown; lists and revokes it', async () => {
    const { d, grants } = withGrants();
    const paused = await d.pause(ACME, { orderId: 'o-1', amount: 500 });
    const approved = await json(
      await d.api(`/check-ins/${paused.checkIn.id}/approve`, {
        token: TOKENS.ana,
        body: {
          note: 'ok',
          grant: {
            bounds: { amount: { atMost: 200 } },
            uses: 3,
            until: new Date(Date.now() + 3_600_000).toISOString(),
          },
        },
      }),
    );
    expect(approved['outcome']).toMatchObject({ kind: 'result' });
    const grant = approved['grant'] as StandingGrant;
    expect(grant).toMatchObject({
      tenant: 'acme',
      principal: ACME.principal,
      toolName: 'issue_refund',
      bounds: { amount: { atMost: 200 }, orderId: { equals: 'o-1' } },
      maxUses: 3,
      uses: 0,
      definitionDigest: 'def:issue_refund',
      fromCheckIn: paused.checkIn.id,
      createdBy: 'ana@acme',
    });
    expect(
      (await json(await d.api('/grants', { token: TOKENS.ana })))['grants'].map((g: StandingGrant) => g.id),
    ).toEqual([grant.id]);
    expect((await d.api(`/grants/${grant.id}`, { token: TOKENS.ana })).status).toBe(200);

    // Another tenant's approver sees nothing and revokes nothing: the same 404 as an unknown id.
    expect((await json(await d.api('/grants', { token: TOKENS.bo })))['grants']).toEqual([]);
    for (const id of [grant.id, 'grt_doesnotexist', '../check-ins']) {
      const read = await d.api(`/grants/${encodeURIComponent(id)}`, { token: TOKENS.bo });
      const revoke = await d.api(`/grants/${encodeURIComponent(id)}`, { token: TOKENS.bo, method: 'DELETE' });
      expect([read.status, revoke.status]).toEqual([404, 404]);
      expect(await json(revoke)).toEqual({
        error: 'not_found',
        message: 'There is no grant here that you may see.',
      });
    }
    expect((await grants.get(grant.id))?.revoked).toBeUndefined();

    const revoked = await d.api(`/grants/${grant.id}`, { token: TOKENS.ana, method: 'DELETE' });
    expect(revoked.status).toBe(200);
    expect((await json(revoked))['grant']).toMatchObject({ revoked: true });
    expect(await grants.use(grant.id)).toBe(false);
  });

  it('refuses a grant that would widen the call shown, and records neither it nor the approval', async () => {
    const { d, grants } = withGrants();
    const paused = await d.pause(ACME, { orderId: 'o-1', amount: 500 });
    for (const grant of [
      { bounds: { amount: { atMost: 5000 } }, uses: 2 },
      { bounds: { orderId: { oneOf: ['o-1', 'o-2'] } }, uses: 2 },
      { bounds: { memo: { equals: 'x' } }, uses: 2 },
      { uses: 0 },
      { uses: 2, until: '2001-01-01T00:00:00Z' },
      { uses: 2, until: new Date(Date.now() + 365 * 86_400_000).toISOString() },
      {},
    ]) {
      const response = await d.api(`/check-ins/${paused.checkIn.id}/approve`, {
        token: TOKENS.ana,
        body: { grant },
      });
      expect(response.status).toBe(400);
    }
    expect(d.ran).toEqual([]);
    expect((await d.checkIns.get(paused.checkIn.id))?.decision).toBeUndefined();
    expect(await grants.list()).toEqual([]);
  });

  it('bounds an approval with changes by the changed args, never the ones shown', async () => {
    const { d } = withGrants();
    const paused = await d.pause(ACME, { orderId: 'o-1', amount: 500 });
    const wider = await d.api(`/check-ins/${paused.checkIn.id}/approve`, {
      token: TOKENS.ana,
      body: {
        args: { orderId: 'o-1', amount: 100 },
        grant: { bounds: { amount: { atMost: 500 } }, uses: 1 },
      },
    });
    expect(wider.status).toBe(400);
    const narrow = await json(
      await d.api(`/check-ins/${paused.checkIn.id}/approve`, {
        token: TOKENS.ana,
        body: {
          args: { orderId: 'o-1', amount: 100 },
          grant: { bounds: { amount: { atMost: 100 } }, uses: 1 },
        },
      }),
    );
    expect(narrow['grant']).toMatchObject({ bounds: { amount: { atMost: 100 } } });
    expect(d.ran).toEqual([{ orderId: 'o-1', amount: 100 }]);
  });

  it('answers plainly when the inbox has no grant store', async () => {
    const d = deployment();
    const paused = await d.pause(GLOBEX, { orderId: 'g', amount: 1 });
    const response = await d.api(`/check-ins/${paused.checkIn.id}/approve`, {
      token: TOKENS.bo,
      body: { grant: { uses: 1 } },
    });
    expect(response.status).toBe(400);
    expect((await json(response))['message']).toMatch(/not enabled/);
    expect((await json(await d.api('/grants', { token: TOKENS.bo })))['grants']).toEqual([]);
  });

  it('keeps the approval and says so when the grant store fails', async () => {
    const grants = inMemoryStandingGrants();
    const d = deployment({
      grants: { ...grants, create: () => Promise.reject(new Error('disk full')) },
      definitionOf: () => 'def',
    });
    const paused = await d.pause(ACME, { orderId: 'o-9', amount: 9 });
    const response = await d.api(`/check-ins/${paused.checkIn.id}/approve`, {
      token: TOKENS.ana,
      body: { grant: { uses: 1 } },
    });
    expect(response.status).toBe(200);
    const body = await json(response);
    expect(body['grantError']).toMatch(/could not be saved/);
    expect(body).not.toHaveProperty('grant');
    expect(d.ran).toEqual([{ orderId: 'o-9', amount: 9 }]);
  });

  it('tells the host of a grant before storing it, and makes none the host cannot record', async () => {
    const grants = inMemoryStandingGrants();
    const created: string[] = [];
    let down = true;
    const told: Array<{ kind: string; storedYet: boolean }> = [];
    const d = deployment({
      grants: {
        ...grants,
        create: async (grant) => {
          created.push(grant.id);
          await grants.create(grant);
        },
      },
      definitionOf: (request) => `def:${request.toolName}`,
      onGrant: async (change) => {
        told.push({ kind: change.kind, storedYet: (await grants.get(change.grant.id)) !== undefined });
        if (down) throw new Error('audit store down at postgres://auditor:hunter2@db');
      },
    });
    const args = { orderId: 'o-secret-4471', amount: 40 };
    const approve = async () => {
      const paused = await d.pause(ACME, args);
      const response = await d.api(`/check-ins/${paused.checkIn.id}/approve`, {
        token: TOKENS.ana,
        body: { grant: { bounds: { amount: { atMost: 40 } }, uses: 5 } },
      });
      expect(response.status).toBe(200);
      return { paused, body: await json(response) };
    };

    const refused = await approve();
    // The approval stands and ran once; the grant was never stored, and the answer says why.
    expect(refused.body['checkIn']).toMatchObject({ decision: { approved: true, by: 'ana@acme' } });
    expect(refused.body['outcome']).toMatchObject({ kind: 'result' });
    expect(refused.body).not.toHaveProperty('grant');
    expect(refused.body['grantError']).toBe(
      'The approval is recorded, but the standing grant was not made: it could not be recorded.',
    );
    expect(JSON.stringify(refused.body['grantError'])).not.toMatch(/o-secret|hunter2|postgres/);
    expect(created).toEqual([]);
    expect(await grants.list()).toEqual([]);
    expect((await json(await d.api('/grants', { token: TOKENS.ana })))['grants']).toEqual([]);
    expect(d.ran).toEqual([args]);
    // The identical call later is asked about again: no grant answers it.
    const again = await d.dispatcher.dispatch({ toolName: 'issue_refund', args }, { identity: ACME });
    expect(again.kind).toBe('paused');

    down = false;
    const made = await approve();
    const grant = made.body['grant'] as StandingGrant;
    expect(grant.id).toMatch(/^grt_/);
    expect(created).toEqual([grant.id]);
    expect(await grants.get(grant.id)).toMatchObject({ uses: 0, maxUses: 5 });
    // Told first, stored after: a grant is never in force before the host has it.
    expect(told).toEqual([
      { kind: 'created', storedYet: false },
      { kind: 'created', storedYet: false },
    ]);
  });

  it('revokes a grant even when the host cannot record it, and says so', async () => {
    const grants = inMemoryStandingGrants();
    let down = false;
    const d = deployment({
      grants,
      definitionOf: () => 'def',
      onGrant: async (change) => {
        if (down && change.kind === 'revoked') throw new Error('audit store down');
      },
    });
    const paused = await d.pause(ACME, { orderId: 'o-5', amount: 5 });
    const approved = await json(
      await d.api(`/check-ins/${paused.checkIn.id}/approve`, {
        token: TOKENS.ana,
        body: { grant: { uses: 3 } },
      }),
    );
    const grant = approved['grant'] as StandingGrant;
    down = true;
    const revoked = await d.api(`/grants/${grant.id}`, { token: TOKENS.ana, method: 'DELETE' });
    expect(revoked.status).toBe(200);
    const body = await json(revoked);
    expect(body['grant']).toMatchObject({ id: grant.id, revoked: true });
    expect(body['recordError']).toBe('The grant is revoked, but its revocation could not be recorded.');
    expect(await grants.use(grant.id)).toBe(false);
    // Revoking it again changes nothing and has nothing left to record.
    const twice = await json(await d.api(`/grants/${grant.id}`, { token: TOKENS.ana, method: 'DELETE' }));
    expect(twice).not.toHaveProperty('recordError');
  });

  it('refuses options it cannot use when the app is built', () => {
    expect(() => deployment({ grants: inMemoryStandingGrants() })).toThrow(/definitionOf/);
    expect(() => deployment({ grants: {} as never, definitionOf: () => 'd' })).toThrow(/StandingGrantStore/);
    for (const origins of [['https://gateway.example/inbox'], ['null'], ['not a url'], 'https://a.example'])
      expect(() => deployment({ origins: origins as never })).toThrow(/'origins'/);
    expect(() => deployment({ origins: ['https://gateway.example'] })).not.toThrow();
  });
});
