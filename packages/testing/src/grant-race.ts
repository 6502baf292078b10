// One side of a race between processes for a standing grant's last uses and the same requestState
// nonces: a store's multi-process test starts two of these on one file, database or server.

import type { SpentStateStore, StandingGrantStore } from '@toolgate/core';

/** What one racer took: uses of the grant, and nonces it was first to spend. */
export interface GrantRaceCounts {
  readonly used: number;
  readonly spent: number;
}

/** The nonces every racer spends, so each one goes to exactly one of them. */
export const RACED_NONCES = 20;
/** More uses than any raced grant allows, so the racers run it out. */
export const RACED_USES = 30;

/**
 * Tries `RACED_USES` uses of grant `id` and spends `nonce-0` … `nonce-19`, all at once, so a store
 * over a connection pool interleaves its statements with the other racer's.
 */
export async function raceForGrant(
  grants: StandingGrantStore,
  spentStates: SpentStateStore,
  id: string,
): Promise<GrantRaceCounts> {
  const until = Date.now() + 3_600_000;
  const uses = await Promise.all(Array.from({ length: RACED_USES }, () => grants.use(id)));
  const spends = await Promise.all(
    Array.from({ length: RACED_NONCES }, (_, i) => spentStates.spend(`nonce-${i}`, until)),
  );
  return { used: uses.filter(Boolean).length, spent: spends.filter(Boolean).length };
}
