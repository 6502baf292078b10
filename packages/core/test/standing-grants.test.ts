// Standing grants: bounds never wider than the call shown (refused at creation), what a grant
// covers (caller, tool, asker, chain, definition, args within bounds), and the store's single-use
// counting under a race, expiry and revocation.

import {
  grantBounds,
  grantCovers,
  inMemoryStandingGrants,
  standingGrantFor,
  withinBounds,
  type CheckInRequest,
} from '@toolgate/core';

const NOW = Date.parse('2026-12-04T12:00:00Z');
const HOUR = 3_600_000;

function request(review: Record<string, unknown>, over: Partial<CheckInRequest> = {}): CheckInRequest {
  return {
    id: 'chk_1',
    asker: 'policy',
    toolName: 'refund',
    toolCallId: 'call_1',
    args: review,
    review,
    argsDigest: 'd',
    chainId: 'chain-a',
    question: 'ok?',
    identity: { tenant: 'acme', principal: 'bot' },
    createdAt: new Date(NOW).toISOString(),
    expiresAt: new Date(NOW + HOUR).toISOString(),
    signature: 's',
    ...over,
  };
}

const shown = { amount: 500, order: 'o-1', to: ['a@x', 'b@x'] };

describe('grantBounds: never wider than the call shown', () => {
  it('accepts equal, at most the shown number, and one of the shown values', () => {
    expect(grantBounds(shown, { amount: { atMost: 500 }, to: { oneOf: ['a@x'] } })).toEqual({
      bounds: { amount: { atMost: 500 }, order: { equals: 'o-1' }, to: { oneOf: ['a@x'] } },
    });
    expect(grantBounds(shown, undefined)).toEqual({
      bounds: { amount: { equals: 500 }, order: { equals: 'o-1' }, to: { equals: ['a@x', 'b@x'] } },
    });
  });

  it.each([
    [{ amount: { atMost: 501 } }, /wider than the 500 shown/],
    [{ amount: { equals: 499 } }, /must equal the value shown/],
    [{ order: { oneOf: ['o-1', 'o-2'] } }, /did not have/],
    [{ to: { oneOf: ['c@x'] } }, /did not have/],
    [{ order: { atMost: 3 } }, /not a number/],
    [{ extra: { equals: 1 } }, /not an argument/],
    [{ amount: { atMost: 1, equals: 1 } }, /exactly one/],
    [{ amount: { atMost: 'NaN' } }, /must be a number/],
    [{ amount: { oneOf: [] } }, /non-empty/],
    [[1], /must be an object/],
  ])('refuses %j', (bounds, problem) => {
    const checked = grantBounds(shown, bounds);
    expect('problems' in checked && checked.problems.join('; ')).toMatch(problem);
  });
});

describe('withinBounds and grantCovers', () => {
  const bounds = { amount: { atMost: 500 }, order: { equals: 'o-1' }, to: { oneOf: ['a@x', 'b@x'] } };

  it('covers narrower calls only, argument by argument', () => {
    expect(withinBounds(bounds, { amount: 20, order: 'o-1', to: ['b@x'] })).toBe(true);
    expect(withinBounds(bounds, { amount: 20, order: 'o-1', to: 'a@x' })).toBe(true);
    expect(withinBounds(bounds, { amount: 501, order: 'o-1', to: ['a@x'] })).toBe(false);
    expect(withinBounds(bounds, { amount: -5, order: 'o-1', to: ['a@x'] })).toBe(false);
    expect(withinBounds(bounds, { amount: '20', order: 'o-1', to: ['a@x'] })).toBe(false);
    expect(withinBounds(bounds, { amount: 20, order: 'o-2', to: ['a@x'] })).toBe(false);
    expect(withinBounds(bounds, { amount: 20, order: 'o-1', to: ['a@x', 'c@x'] })).toBe(false);
    expect(withinBounds(bounds, { amount: 20, order: 'o-1', to: [] })).toBe(false);
    expect(withinBounds(bounds, { amount: 20, order: 'o-1' })).toBe(false);
    expect(withinBounds(bounds, { amount: 20, order: 'o-1', to: ['a@x'], memo: 'x' })).toBe(false);
  });

  it('binds the caller, tool, asker, chain and definition; voids on a changed definition', () => {
    const grant = standingGrantFor(request(shown), {
      bounds,
      maxUses: 3,
      expiresAt: new Date(NOW + HOUR).toISOString(),
      definitionDigest: 'def-1',
      createdBy: 'ana',
      now: NOW,
    });
    const call = request({ amount: 100, order: 'o-1', to: ['a@x'] }, { id: 'chk_2' });
    expect(grantCovers(grant, call, 'def-1', NOW)).toBe(true);
    expect(grantCovers(grant, call, 'def-2', NOW)).toBe(false);
    expect(grantCovers(grant, call, undefined, NOW)).toBe(false);
    expect(grantCovers(grant, call, 'def-1', NOW + HOUR)).toBe(false);
    for (const other of [
      { identity: { tenant: 'acme', principal: 'someone' } },
      { identity: { tenant: 'globex', principal: 'bot' } },
      { toolName: 'refund_all' },
      { asker: 'other-gate' },
      { chainId: 'chain-b' },
      { toolSource: 'elsewhere' },
    ])
      expect(grantCovers(grant, { ...call, ...other }, 'def-1', NOW)).toBe(false);
  });

  it('refuses to create a grant that would widen, or with no future end or bad count', () => {
    const base = {
      expiresAt: new Date(NOW + HOUR).toISOString(),
      definitionDigest: 'd',
      createdBy: 'ana',
      now: NOW,
    };
    expect(() => standingGrantFor(request(shown), { ...base, bounds: { amount: { atMost: 1e9 } } })).toThrow(
      /wider/,
    );
    expect(() =>
      standingGrantFor(request(shown), { ...base, expiresAt: new Date(NOW - 1).toISOString() }),
    ).toThrow(/future/);
    expect(() => standingGrantFor(request(shown), { ...base, maxUses: 0 })).toThrow(/positive/);
  });
});

describe('inMemoryStandingGrants', () => {
  it('counts uses atomically: N uses, however many race; then none; revoked and expired answer none', async () => {
    let now = NOW;
    const store = inMemoryStandingGrants({ now: () => now });
    const grant = standingGrantFor(request(shown), {
      maxUses: 2,
      expiresAt: new Date(NOW + HOUR).toISOString(),
      definitionDigest: 'd',
      createdBy: 'ana',
      now: NOW,
    });
    await store.create(grant);
    const raced = await Promise.all([1, 2, 3, 4, 5].map(() => store.use(grant.id)));
    expect(raced.filter(Boolean)).toHaveLength(2);
    expect((await store.get(grant.id))?.uses).toBe(2);
    expect(await store.list({ active: true })).toEqual([]);

    const open = { ...grant, id: 'grt_open', maxUses: undefined as unknown as number };
    delete (open as { maxUses?: number }).maxUses;
    await store.create(open);
    expect(await store.use('grt_open')).toBe(true);
    expect(await store.revoke('grt_open')).toBe(true);
    expect(await store.revoke('grt_open')).toBe(false);
    expect(await store.use('grt_open')).toBe(false);
    await store.create({ ...open, id: 'grt_late', revoked: false });
    now = NOW + HOUR;
    expect(await store.use('grt_late')).toBe(false);
    expect(await store.use('grt_unknown')).toBe(false);
  });
});
