// What every LimitStore must do, whatever keeps the buckets: take up to the limit and no more (also
// under many parallel consumes), take all of a call's charges or none, give back on refund, keep
// buckets apart, refill over the window, and serve a real limits gate.

import { expect } from '@jest/globals';
import { createDispatcher } from '@toolgate/core';
import { canonicalChain, type LimitCharge, type LimitStore } from '@toolgate/middleware';
import type { FixedClock } from '../clock';
import { seededIds } from '../ids';
import { mockTool } from '../mock-tool';

export interface LimitStoreLawContext {
  readonly store: LimitStore;
  readonly clock: FixedClock;
  /** Lets `ms` pass for the store: moves the clock, and for a store on its own clock also waits. */
  readonly wait: (ms: number) => Promise<void>;
}

export interface LimitStoreLaw {
  readonly title: string;
  readonly check: (context: LimitStoreLawContext) => Promise<void>;
}

const HOUR = 3_600_000;
// A store on its own clock sees time pass while a law runs; a minute of slack covers a slow machine.
const SLACK_MS = 60_000;

function charge(rule: string, key: string, limit: number, amount = 1, windowMs = HOUR): LimitCharge {
  return { rule, key, amount, limit, windowMs };
}

async function takeAll(store: LimitStore, now: number, charges: readonly LimitCharge[], times: number) {
  const answers = [];
  for (let i = 0; i < times; i++) answers.push(await store.consume(charges, now));
  return answers;
}

export const LIMIT_STORE_LAWS: readonly LimitStoreLaw[] = [
  {
    title: 'takes up to the limit in a window, then refuses with the time until one more fits',
    async check({ store, clock }) {
      const calls = [charge('calls', '["acme"]', 3)];
      const answers = await takeAll(store, clock.now(), calls, 4);
      expect(answers.slice(0, 3)).toEqual([{ allowed: true }, { allowed: true }, { allowed: true }]);
      const refused = answers[3]!;
      expect(refused).toMatchObject({ allowed: false, index: 0 });
      // One call frees up every window / limit = 20 minutes.
      const wait = (refused as { retryAfterMs: number }).retryAfterMs;
      expect(wait).toBeLessThanOrEqual(HOUR / 3);
      expect(wait).toBeGreaterThan(HOUR / 3 - SLACK_MS);
    },
  },
  {
    title: 'takes a budget charge by its amount, and refuses one that does not fit what is left',
    async check({ store, clock }) {
      const now = clock.now();
      expect(await store.consume([charge('spend', 'k', 10, 4)], now)).toEqual({ allowed: true });
      expect(await store.consume([charge('spend', 'k', 10, 4)], now)).toEqual({ allowed: true });
      expect(await store.consume([charge('spend', 'k', 10, 4)], now)).toMatchObject({ allowed: false });
      expect(await store.consume([charge('spend', 'k', 10, 2)], now)).toEqual({ allowed: true });
      expect(await store.consume([charge('spend', 'k', 10, 1)], now)).toMatchObject({ allowed: false });
    },
  },
  {
    title: 'takes all of a call’s charges or none: a refusal leaves the charges that fitted untaken',
    async check({ store, clock }) {
      const now = clock.now();
      const wide = charge('wide', 'k', 5);
      const narrow = charge('narrow', 'k', 1);
      expect(await store.consume([wide, narrow], now)).toEqual({ allowed: true });
      expect(await store.consume([wide, narrow], now)).toMatchObject({ allowed: false, index: 1 });
      // 'wide' gave one of five to the first call only.
      const answers = await takeAll(store, now, [wide], 5);
      expect(answers.map((a) => a.allowed)).toEqual([true, true, true, true, false]);
    },
  },
  {
    title: 'names the charge that frees up last when several do not fit',
    async check({ store, clock }) {
      const now = clock.now();
      const soon = charge('soon', 'k', 60, 1, HOUR); // one more fits in a minute
      const late = charge('late', 'k', 1, 1, HOUR); // one more fits in an hour
      expect(await store.consume([soon], now)).toEqual({ allowed: true });
      await takeAll(store, now, [soon], 59);
      expect(await store.consume([late], now)).toEqual({ allowed: true });
      const refused = await store.consume([soon, late], now);
      expect(refused).toMatchObject({ allowed: false, index: 1 });
      expect((refused as { retryAfterMs: number }).retryAfterMs).toBeGreaterThan(HOUR - SLACK_MS);
    },
  },
  {
    title: 'a refund gives back what was taken, and never more than a full bucket',
    async check({ store, clock }) {
      const now = clock.now();
      const calls = charge('calls', 'k', 2);
      await takeAll(store, now, [calls], 2);
      expect(await store.consume([calls], now)).toMatchObject({ allowed: false });
      await store.refund([calls], now);
      expect(await store.consume([calls], now)).toEqual({ allowed: true });
      expect(await store.consume([calls], now)).toMatchObject({ allowed: false });

      // Refunding more than was ever taken leaves a full bucket, not a bigger one.
      const other = charge('calls', 'other', 2);
      await store.consume([other], now);
      await store.refund([{ ...other, amount: 50 }], now);
      await store.refund([charge('calls', 'never-charged', 2, 9)], now);
      const answers = await takeAll(store, now, [other], 3);
      expect(answers.map((a) => a.allowed)).toEqual([true, true, false]);
      expect(await store.consume([charge('calls', 'never-charged', 2)], now)).toEqual({ allowed: true });
    },
  },
  {
    title: 'keeps each rule and each key in a bucket of its own, whatever characters the key holds',
    async check({ store, clock }) {
      const now = clock.now();
      const keys = ['["acme"]', '["acme "]', '[null]', '["a\\nb"]', '["ünï ✓"]', '["acme","x"]'];
      for (const key of keys) {
        expect(await store.consume([charge('calls', key, 1)], now)).toEqual({ allowed: true });
        expect(await store.consume([charge('other-rule', key, 1)], now)).toEqual({ allowed: true });
      }
      for (const key of keys) {
        expect(await store.consume([charge('calls', key, 1)], now)).toMatchObject({ allowed: false });
      }
    },
  },
  {
    title: 'a bucket refills over its window: waiting the time it names lets the call fit',
    async check({ store, clock, wait }) {
      const calls = charge('refill', 'k', 2, 1, 2_000);
      await takeAll(store, clock.now(), [calls], 2);
      const refused = await store.consume([calls], clock.now());
      expect(refused).toMatchObject({ allowed: false, index: 0 });
      const retryAfterMs = (refused as { retryAfterMs: number }).retryAfterMs;
      expect(retryAfterMs).toBeLessThanOrEqual(1_000);
      await wait(retryAfterMs);
      expect(await store.consume([calls], clock.now())).toEqual({ allowed: true });
    },
  },
  {
    title: 'under 200 parallel consumes against a limit of 50, exactly 50 are allowed',
    async check({ store, clock }) {
      const calls = [charge('burst', 'k', 50)];
      const answers = await Promise.all(
        Array.from({ length: 200 }, () => Promise.resolve(store.consume(calls, clock.now()))),
      );
      expect(answers.filter((a) => a.allowed)).toHaveLength(50);
    },
  },
  {
    title: 'serves the limits gate: the tenant’s third call is refused, another tenant’s runs',
    async check({ store, clock }) {
      const tool = mockTool({ name: 'search' });
      const dispatcher = createDispatcher({
        tools: [tool],
        chain: canonicalChain({
          limits: { store, limits: [{ name: 'tenant-calls', per: 'tenant', calls: 2, windowMs: HOUR }] },
        }),
        callIds: seededIds('limits'),
        clock: clock.now,
      });
      const acme = { identity: { tenant: 'acme' } };
      const call = { toolName: 'search', args: {} };
      expect((await dispatcher.dispatch(call, acme)).kind).toBe('result');
      expect((await dispatcher.dispatch(call, acme)).kind).toBe('result');
      const third = await dispatcher.dispatch(call, acme);
      expect(third).toMatchObject({ kind: 'refused', gate: 'limits', code: 'RATE_LIMITED', retryable: true });
      expect(third.content).toContain("'tenant-calls'");
      expect((await dispatcher.dispatch(call, { identity: { tenant: 'globex' } })).kind).toBe('result');
      expect(tool.callCount).toBe(3);
    },
  },
];
