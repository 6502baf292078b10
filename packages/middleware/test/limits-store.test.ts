// The LimitStore laws from @toolgate/testing against the in-memory store, plus what only it does.

import { inMemoryLimits, limitChargeProblem } from '@toolgate/middleware';
import { describeLimitStoreConformance } from '@toolgate/testing/jest';

describeLimitStoreConformance('inMemoryLimits', () => inMemoryLimits());

describe('inMemoryLimits', () => {
  it('forgets buckets that are full again, so idle keys do not pile up', async () => {
    const store = inMemoryLimits();
    const charge = { rule: 'r', amount: 1, limit: 10, windowMs: 1_000 };
    for (let i = 0; i < 100; i++) store.consume([{ ...charge, key: `k${i}` }], 0);
    expect(store.size).toBe(100);
    // Later, the periodic sweep drops every bucket whose window has passed.
    for (let i = 0; i < 1024; i++) store.consume([{ ...charge, key: 'busy', limit: 2_000 }], 10_000);
    expect(store.size).toBe(1);
  });

  it('a refund that empties the debt drops the key', () => {
    const store = inMemoryLimits();
    const charge = { rule: 'r', key: 'k', amount: 1, limit: 10, windowMs: 1_000 };
    store.consume([charge], 0);
    store.refund([charge], 0);
    expect(store.size).toBe(0);
  });

  it.each([
    [
      'an amount of 1e308',
      { amount: 1e308, limit: 1e308, windowMs: 1_000 },
      'limit must be a positive safe integer',
    ],
    [
      'a fractional amount',
      { amount: 0.5, limit: 10, windowMs: 1_000 },
      'amount must be a positive safe integer',
    ],
    ['an amount over the limit', { amount: 11, limit: 10, windowMs: 1_000 }, 'no larger than limit'],
    ['a window of 1e15 ms', { amount: 1, limit: 10, windowMs: 1e15 }, 'windowMs must be a whole number'],
    ['100 units per ms', { amount: 1, limit: 100_000, windowMs: 1_000 }, 'at most 20 units per millisecond'],
  ])('refuses a charge out of bounds (%s) and takes nothing', (_, bounds, message) => {
    const store = inMemoryLimits();
    expect(() => store.consume([{ rule: 'r', key: 'k', ...bounds }], 0)).toThrow(message);
    expect(store.size).toBe(0);
    expect(limitChargeProblem({ rule: 'r', key: 'k', ...bounds })).toContain(message);
  });
});
