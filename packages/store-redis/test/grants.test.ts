// Standing grants and spent requestStates on Redis: the store laws (racing uses go over one
// pipelined connection and over several clients), and two processes racing for one grant's last uses.

import {
  describeSpentStateStoreConformance,
  describeStandingGrantStoreConformance,
} from '@toolgate/testing/jest';
import type { StandingGrant } from '@toolgate/core';
import { redisSpentStates, redisStandingGrants } from '@toolgate/store-redis';
import { describeRedis, lastJson, prefixes, redisUrl, startFixture } from './support';

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

describeRedis('Redis grants', () => {
  const prefix = prefixes('grants');
  describeStandingGrantStoreConformance(
    'redisStandingGrants',
    ({ now }) => redisStandingGrants({ url: redisUrl(), prefix: prefix.next(), now }),
    { close: (store) => store.close() },
  );
  describeSpentStateStoreConformance(
    'redisSpentStates',
    ({ now }) => redisSpentStates({ url: redisUrl(), prefix: prefix.next(), now }),
    { close: (store) => store.close() },
  );

  it('two processes racing for the last uses of a grant take exactly the limit between them', async () => {
    const shared = prefix.next();
    const store = redisStandingGrants({ url: redisUrl(), prefix: shared });
    await store.create(grant('grt_race1', 7));
    const race = () =>
      lastJson(startFixture('grant-racer', [redisUrl(), shared, 'grt_race1'])) as Promise<{
        used: number;
        spent: number;
      }>;
    const [a, b] = await Promise.all([race(), race()]);
    expect(a.used + b.used).toBe(7);
    expect((await store.get('grt_race1'))?.uses).toBe(7);
    expect(a.spent + b.spent).toBe(20);
    await store.close();
  });
});
