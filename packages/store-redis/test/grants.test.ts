// Standing grants and spent requestStates on Redis: the store laws (racing uses go over one
// pipelined connection and over several clients), and two processes racing for one grant's last uses.

import type { GrantRaceCounts } from '@toolgate/testing';
import {
  describeSpentStateStoreConformance,
  describeStandingGrantRace,
  describeStandingGrantStoreConformance,
} from '@toolgate/testing/jest';
import { redisSpentStates, redisStandingGrants } from '@toolgate/store-redis';
import { describeRedis, lastJson, prefixes, redisUrl, startFixture } from './support';

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
  describeStandingGrantRace('redisStandingGrants across processes', {
    place: () => prefix.next(),
    open: (shared) => redisStandingGrants({ url: redisUrl(), prefix: shared }),
    close: (store) => store.close(),
    race: async (shared, id) =>
      (await lastJson(startFixture('grant-racer', [redisUrl(), shared, id]))) as GrantRaceCounts,
  });
});
