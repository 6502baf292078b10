// The LimitStore laws from @toolgate/testing against the in-memory store, plus what only it does.

import { inMemoryLimits } from '@toolgate/middleware';
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
});
