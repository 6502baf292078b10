// Load: four processes make 2,000 calls each for one tenant whose limit, kept in one Redis, is 1,000
// calls per day. Exactly 1,000 run, whichever process makes them.

import { describeRedis, lastJson, prefixes, startFixture } from './support';

const PROCESSES = 4;
const CALLS = 2_000;
const IN_FLIGHT = 16;
const LIMIT = 1_000;

describeRedis('load on Redis limits', () => {
  const prefix = prefixes('load');

  it(`${PROCESSES} processes × ${CALLS} calls against one tenant limit of ${LIMIT} per window let exactly ${LIMIT} run`, async () => {
    const shared = prefix.next();
    const tallies = (await Promise.all(
      Array.from({ length: PROCESSES }, () =>
        lastJson(startFixture('load', [shared, String(CALLS), String(IN_FLIGHT), String(LIMIT)])),
      ),
    )) as Record<string, number>[];
    const total = (key: string) => tallies.reduce((sum, tally) => sum + (tally[key] ?? 0), 0);
    // Each process's tally shows in the failure message, and only there.
    expect({ ran: total('result'), tallies }).toMatchObject({ ran: LIMIT });
    expect(total('refused RATE_LIMITED')).toBe(PROCESSES * CALLS - LIMIT);
    for (const tally of tallies) {
      // Every call either ran or was refused by the limit: nothing failed, nothing else refused.
      const { ms: _ms, result = 0, 'refused RATE_LIMITED': limited = 0, ...other } = tally;
      expect(other).toEqual({});
      expect(result + limited).toBe(CALLS);
    }
  }, 300_000);
});
