// What every StandingGrantStore (and SpentStateStore) must do: keep a grant exactly as created,
// count uses atomically up to the limit (no two racing calls take the last use), stop answering
// once a grant is revoked or expired, filter lists, and spend a state's nonce exactly once.

import { expect } from '@jest/globals';
import type { SpentStateStore, StandingGrant, StandingGrantStore } from '@toolgate/core';
import type { FixedClock } from '../clock';

export interface StandingGrantStoreLaw {
  readonly title: string;
  readonly check: (context: {
    readonly store: StandingGrantStore;
    readonly clock: FixedClock;
  }) => Promise<void>;
}

export interface SpentStateStoreLaw {
  readonly title: string;
  readonly check: (context: { readonly store: SpentStateStore; readonly clock: FixedClock }) => Promise<void>;
}

let counter = 0;
const HOUR = 3_600_000;

/** A grant as the core would mint it, expiring an hour after `clock`'s now. */
function grant(clock: FixedClock, overrides: Partial<StandingGrant> = {}): StandingGrant {
  counter += 1;
  return {
    id: `grt_law${String(counter).padStart(8, '0')}${Math.random().toString(36).slice(2, 10)}`,
    tenant: 'acme',
    principal: 'support-bot',
    toolName: 'billing_refund',
    toolSource: 'mcp:billing',
    asker: 'check-in',
    chainId: 'chain01',
    bounds: { amount: { atMost: 500 }, currency: { equals: 'EUR' }, tags: { oneOf: ['a', 'b'] } },
    maxUses: 3,
    uses: 0,
    expiresAt: new Date(clock.now() + HOUR).toISOString(),
    definitionDigest: 'f'.repeat(64),
    fromCheckIn: 'chk_law0000000000000001',
    createdBy: 'ana',
    createdAt: clock.iso(),
    note: 'refunds up to 500 this week',
    ...overrides,
  };
}

export const STANDING_GRANT_STORE_LAWS: readonly StandingGrantStoreLaw[] = [
  {
    title: 'keeps a grant exactly as created; an unknown id reads as nothing; an id is created once',
    async check({ store, clock }) {
      const made = grant(clock);
      const bare = grant(clock, {});
      const { tenant: _t, principal: _p, toolSource: _s, maxUses: _m, note: _n, ...withoutOptional } = bare;
      await store.create(made);
      await store.create(withoutOptional);
      expect(await store.get(made.id)).toEqual(made);
      expect(await store.get(withoutOptional.id)).toEqual(withoutOptional);
      expect(await store.get('grt_unknown000000')).toBeUndefined();
      await expect(store.create({ ...made, toolName: 'other' })).rejects.toThrow();
      expect((await store.get(made.id))!.toolName).toBe('billing_refund');
    },
  },
  {
    title: 'counts uses up to the limit, then answers false and counts no further',
    async check({ store, clock }) {
      const made = grant(clock, { maxUses: 2 });
      await store.create(made);
      expect(await store.use(made.id)).toBe(true);
      expect((await store.get(made.id))!.uses).toBe(1);
      expect(await store.use(made.id)).toBe(true);
      expect(await store.use(made.id)).toBe(false);
      expect((await store.get(made.id))!.uses).toBe(2);
      expect(await store.use('grt_unknown000000')).toBe(false);
    },
  },
  {
    title: 'of 40 racing uses of a grant for 3 calls, exactly 3 succeed',
    async check({ store, clock }) {
      const made = grant(clock, { maxUses: 3 });
      await store.create(made);
      const answers = await Promise.all(Array.from({ length: 40 }, () => store.use(made.id)));
      expect(answers.filter(Boolean)).toHaveLength(3);
      expect((await store.get(made.id))!.uses).toBe(3);
    },
  },
  {
    title: 'a grant without a use limit answers until it expires, and not after',
    async check({ store, clock }) {
      const { maxUses: _m, ...unlimited } = grant(clock);
      await store.create(unlimited);
      for (let i = 0; i < 5; i++) expect(await store.use(unlimited.id)).toBe(true);
      clock.advance(HOUR - 1);
      expect(await store.use(unlimited.id)).toBe(true);
      clock.advance(1);
      expect(await store.use(unlimited.id)).toBe(false);
      expect((await store.get(unlimited.id))!.uses).toBe(6);
      expect(await store.list({ active: true })).toEqual([]);
      expect((await store.list({ active: false })).map((g) => g.id)).toEqual([unlimited.id]);
    },
  },
  {
    title: 'a revoked grant answers no call; revoking twice or an unknown id answers false',
    async check({ store, clock }) {
      const made = grant(clock);
      await store.create(made);
      expect(await store.revoke(made.id)).toBe(true);
      expect(await store.revoke(made.id)).toBe(false);
      expect(await store.use(made.id)).toBe(false);
      expect((await store.get(made.id))!.revoked).toBe(true);
      expect((await store.get(made.id))!.uses).toBe(0);
      expect(await store.revoke('grt_unknown000000')).toBe(false);
    },
  },
  {
    title: 'lists by tenant, principal, tool and activity',
    async check({ store, clock }) {
      const a = grant(clock);
      const b = grant(clock, { tenant: 'globex' });
      const c = grant(clock, { principal: 'ana' });
      const d = grant(clock, { toolName: 'fs_write_file' });
      const used = grant(clock, { maxUses: 1 });
      for (const g of [a, b, c, d, used]) await store.create(g);
      await store.use(used.id);
      const ids = async (filter: Parameters<StandingGrantStore['list']>[0]) =>
        (await store.list(filter)).map((g) => g.id).sort();
      expect(await ids({})).toEqual([a, b, c, d, used].map((g) => g.id).sort());
      expect(await ids({ tenant: 'globex' })).toEqual([b.id]);
      expect(await ids({ tenant: 'acme', principal: 'ana' })).toEqual([c.id]);
      expect(await ids({ toolName: 'fs_write_file' })).toEqual([d.id]);
      expect(
        await ids({ tenant: 'acme', principal: 'support-bot', toolName: 'billing_refund', active: true }),
      ).toEqual([a.id]);
      expect(await ids({ active: false })).toEqual([used.id]);
    },
  },
];

export const SPENT_STATE_STORE_LAWS: readonly SpentStateStoreLaw[] = [
  {
    title: 'spends a nonce once; other nonces are apart',
    async check({ store, clock }) {
      const until = clock.now() + HOUR;
      expect(await store.spend('nonce-a', until)).toBe(true);
      expect(await store.spend('nonce-a', until)).toBe(false);
      expect(await store.spend('nonce-b', until)).toBe(true);
      expect(await store.spend('', until)).toBe(false);
    },
  },
  {
    title: 'of 30 racing spends of one nonce, exactly one succeeds',
    async check({ store, clock }) {
      const until = clock.now() + HOUR;
      const answers = await Promise.all(Array.from({ length: 30 }, () => store.spend('nonce-race', until)));
      expect(answers.filter(Boolean)).toHaveLength(1);
    },
  },
  {
    title: 'a spent nonce stays spent until it would have expired',
    async check({ store, clock }) {
      const until = clock.now() + HOUR;
      expect(await store.spend('nonce-kept', until)).toBe(true);
      clock.advance(HOUR - 1);
      expect(await store.spend('nonce-other', clock.now() + HOUR)).toBe(true);
      expect(await store.spend('nonce-kept', until)).toBe(false);
    },
  },
];
