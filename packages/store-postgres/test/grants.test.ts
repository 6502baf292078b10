// Standing grants and spent requestStates in PostgreSQL: the store laws (their racing uses run over
// a pool of connections), grants that outlive the store that made them, and two processes racing
// for the last uses of one grant and for the same requestState nonces.

import {
  describeSpentStateStoreConformance,
  describeStandingGrantStoreConformance,
} from '@toolgate/testing/jest';
import type { StandingGrant } from '@toolgate/core';
import { postgresSpentStates, postgresStandingGrants } from '@toolgate/store-postgres';
import { describePostgres, postgresUrl, runFixture, schemas } from './support';

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

describePostgres('PostgreSQL grants', () => {
  const schema = schemas('grants');

  describeStandingGrantStoreConformance(
    'postgresStandingGrants',
    ({ now }) => postgresStandingGrants({ connectionString: postgresUrl(), schema: schema.next(), now }),
    { close: (store) => store.close() },
  );
  describeSpentStateStoreConformance(
    'postgresSpentStates',
    ({ now }) => postgresSpentStates({ connectionString: postgresUrl(), schema: schema.next(), now }),
    { close: (store) => store.close() },
  );

  it('a grant and its count survive closing the store and opening another', async () => {
    const name = schema.next();
    const first = postgresStandingGrants({ connectionString: postgresUrl(), schema: name });
    await first.create(grant('grt_restart1', 2));
    expect(await first.use('grt_restart1')).toBe(true);
    await first.close();
    const second = postgresStandingGrants({ connectionString: postgresUrl(), schema: name });
    expect((await second.get('grt_restart1'))?.uses).toBe(1);
    expect(await second.use('grt_restart1')).toBe(true);
    expect(await second.use('grt_restart1')).toBe(false);
    await second.close();
  });

  it('two processes racing for the last uses of a grant take exactly the limit between them', async () => {
    const name = schema.next();
    const store = postgresStandingGrants({ connectionString: postgresUrl(), schema: name });
    await store.create(grant('grt_race1', 7));
    const race = () =>
      runFixture('grant-racer', [postgresUrl(), name, 'grt_race1']) as Promise<{
        used: number;
        spent: number;
      }>;
    const [a, b] = await Promise.all([race(), race()]);
    expect(a.used + b.used).toBe(7);
    expect((await store.get('grt_race1'))?.uses).toBe(7);
    // Both processes spent the same 20 nonces: each went to exactly one of them.
    expect(a.spent + b.spent).toBe(20);
    await store.close();
  });
});
