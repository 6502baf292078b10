// The LimitStore laws from @toolgate/testing against Redis; every law gets a key prefix of its own,
// since the laws expect an empty store. Redis keeps time by its own clock, so the refill law waits.

import { describeLimitStoreConformance } from '@toolgate/testing/jest';
import { redisLimits } from '@toolgate/store-redis';
import { describeRedis, prefixes, redisUrl } from './support';

describeRedis('Redis limits', () => {
  const prefix = prefixes('conformance');
  describeLimitStoreConformance(
    'redisLimits',
    () => redisLimits({ url: redisUrl(), prefix: prefix.next() }),
    {
      close: (store) => store.close(),
      ownClock: true,
    },
  );
});
