// Standing grants beyond one store object: a grant outlives the store that made it, and two
// processes racing for its last uses (each running `raceForGrant`) take exactly its limit.

import { describe, expect, it } from '@jest/globals';
import type { StandingGrant, StandingGrantStore } from '@toolgate/core';
import { RACED_NONCES, type GrantRaceCounts } from '../grant-race';

export interface StandingGrantPlaceOptions<S extends StandingGrantStore> {
  /** A place no other test uses: a file, a schema, a key prefix. */
  readonly place: () => string;
  /** A store on `place`; more than one may be open on the same place. */
  readonly open: (place: string) => S;
  readonly close: (store: S) => void | Promise<void>;
}

export interface StandingGrantRaceOptions<S extends StandingGrantStore> extends StandingGrantPlaceOptions<S> {
  /** Runs `raceForGrant` in a separate process on `place` for grant `id`; answers its counts. */
  readonly race: (place: string, id: string) => Promise<GrantRaceCounts>;
}

const grant = (id: string, maxUses: number): StandingGrant => ({
  id,
  tenant: 'acme',
  principal: 'bot',
  toolName: 'refund',
  asker: 'check-in',
  chainId: 'c1',
  bounds: { amount: { atMost: 10 } },
  maxUses,
  uses: 0,
  expiresAt: new Date(Date.now() + 3_600_000).toISOString(),
  definitionDigest: 'a'.repeat(64),
  fromCheckIn: 'chk_x',
  createdBy: 'ana',
  createdAt: new Date().toISOString(),
});

/** Registers a test that a grant and its count survive closing the store and opening another. */
export function describeStandingGrantReopen<S extends StandingGrantStore>(
  name: string,
  options: StandingGrantPlaceOptions<S>,
): void {
  describe(name, () => {
    it('a grant and its count survive closing the store and opening another on the same place', async () => {
      const place = options.place();
      const first = options.open(place);
      await first.create(grant('grt_restart1', 2));
      expect(await first.use('grt_restart1')).toBe(true);
      await options.close(first);
      const second = options.open(place);
      expect((await second.get('grt_restart1'))?.uses).toBe(1);
      expect(await second.use('grt_restart1')).toBe(true);
      expect(await second.use('grt_restart1')).toBe(false);
      expect(await second.revoke('grt_restart1')).toBe(true);
      await options.close(second);
    });
  });
}

/** Registers a test racing two processes for the last uses of one grant and the same nonces. */
export function describeStandingGrantRace<S extends StandingGrantStore>(
  name: string,
  options: StandingGrantRaceOptions<S>,
): void {
  describe(name, () => {
    it('two processes racing for the last uses of a grant take exactly the limit between them', async () => {
      const place = options.place();
      const store = options.open(place);
      await store.create(grant('grt_race1', 7));
      const [a, b] = await Promise.all([options.race(place, 'grt_race1'), options.race(place, 'grt_race1')]);
      expect(a.used + b.used).toBe(7);
      expect((await store.get('grt_race1'))?.uses).toBe(7);
      // Both processes spent the same nonces: each went to exactly one of them.
      expect(a.spent + b.spent).toBe(RACED_NONCES);
      await options.close(store);
    });
  });
}
