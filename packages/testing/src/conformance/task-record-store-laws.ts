// What every TaskRecordStore must do: keep a task as created, change only a task that has not ended
// (so a cancel and a result racing from two processes end it once), keep the owner's answers for the
// running process until it takes them (once), list and count by exact owner, and sweep ended tasks
// past their TTL or beyond the owner's cap while never dropping one that runs. A store with a lease
// also renews running tasks and ends, once, those whose runner stopped renewing them.

import { expect } from '@jest/globals';
import type { StaleTaskEnding, TaskRecord, TaskRecordStore } from '@toolgate/core';

export interface TaskRecordStoreLaw {
  readonly title: string;
  readonly check: (context: { readonly store: TaskRecordStore }) => Promise<void>;
}

let counter = 0;
const bot = { tenant: 'acme', principal: 'support-bot' } as const;

function task(overrides: Partial<TaskRecord> = {}): TaskRecord {
  counter += 1;
  const at = new Date(Date.UTC(2026, 0, 1, 0, 0, counter)).toISOString();
  return {
    id: `task-law-${counter}-${Math.random().toString(36).slice(2, 10)}`,
    ...bot,
    status: 'input_required',
    statusMessage: 'waits for a person',
    createdAt: at,
    lastUpdatedAt: at,
    ttlMs: 60_000,
    ...overrides,
  };
}

const later = (record: TaskRecord) => new Date(Date.parse(record.createdAt) + 1000).toISOString();

export const TASK_RECORD_STORE_LAWS: readonly TaskRecordStoreLaw[] = [
  {
    title: 'keeps a task as created; an unknown id is undefined',
    async check({ store }) {
      const created = task({ tenant: null, principal: null });
      await store.create(created);
      expect(await store.get(created.id)).toEqual(created);
      expect(await store.get('no-such-task')).toBeUndefined();
      await expect(store.create(created)).rejects.toThrow();
    },
  },
  {
    title: 'a change shows only what its status shows, and keeps the check-in id',
    async check({ store }) {
      const created = task();
      await store.create(created);
      const asking = {
        approval: { method: 'elicitation/create', params: { mode: 'url', url: 'https://x/y' } },
      };
      expect(
        await store.update(created.id, {
          status: 'input_required',
          statusMessage: 'asks',
          lastUpdatedAt: later(created),
          inputRequests: asking,
          checkInId: 'chk_1',
        }),
      ).toBe(true);
      expect(await store.get(created.id)).toMatchObject({ inputRequests: asking, checkInId: 'chk_1' });
      expect(await store.update(created.id, { status: 'working', lastUpdatedAt: later(created) })).toBe(true);
      const working = await store.get(created.id);
      expect(working).toMatchObject({ status: 'working', checkInId: 'chk_1', lastUpdatedAt: later(created) });
      expect(working).not.toHaveProperty('inputRequests');
      expect(working).not.toHaveProperty('statusMessage');
    },
  },
  {
    title: 'an ended task never changes again, however many changes race to end it',
    async check({ store }) {
      const created = task({ status: 'working' });
      await store.create(created);
      const at = later(created);
      const outcomes = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          i % 2 === 0
            ? store.update(created.id, { status: 'cancelled', lastUpdatedAt: at })
            : store.update(created.id, {
                status: 'completed',
                lastUpdatedAt: at,
                result: { content: [{ type: 'text', text: `run ${i}` }] },
              }),
        ),
      );
      expect(outcomes.filter(Boolean)).toHaveLength(1);
      const ended = (await store.get(created.id))!;
      expect(['cancelled', 'completed']).toContain(ended.status);
      expect(await store.update(created.id, { status: 'working', lastUpdatedAt: at })).toBe(false);
      expect((await store.get(created.id))?.status).toBe(ended.status);
      expect(await store.update('no-such-task', { status: 'working', lastUpdatedAt: at })).toBe(false);
    },
  },
  {
    title:
      "keeps the owner's answers while input_required, hands them out once, and drops them when it moves on",
    async check({ store }) {
      const created = task();
      await store.create(created);
      const answer = { approval: { action: 'accept', content: { decision: 'approve' } } };
      expect(await store.respond(created.id, answer)).toBe(true);
      expect((await store.get(created.id))?.inputResponses).toEqual(answer);
      const taken = await Promise.all([store.takeResponses(created.id), store.takeResponses(created.id)]);
      expect(taken.filter((one) => one !== undefined)).toEqual([answer]);
      expect(await store.get(created.id)).not.toHaveProperty('inputResponses');
      await store.respond(created.id, answer);
      await store.update(created.id, { status: 'working', lastUpdatedAt: later(created) });
      expect(await store.takeResponses(created.id)).toBeUndefined();
      expect(await store.respond(created.id, answer)).toBe(false);
    },
  },
  {
    title: 'lists and counts by exact owner, newest first',
    async check({ store }) {
      const first = task({ status: 'working' });
      const second = task();
      const ended = task({ status: 'completed' });
      const eve = task({ principal: 'eve' });
      const globex = task({ tenant: 'globex' });
      const anonymous = task({ tenant: null, principal: null });
      for (const record of [first, second, ended, eve, globex, anonymous]) await store.create(record);
      expect((await store.list(bot)).map((record) => record.id)).toEqual([ended.id, second.id, first.id]);
      expect(await store.countLive(bot)).toBe(2);
      expect(await store.countLive({ tenant: 'acme', principal: 'eve' })).toBe(1);
      expect((await store.list({ tenant: null, principal: null })).map((record) => record.id)).toEqual([
        anonymous.id,
      ]);
      expect(await store.list({ tenant: 'acme', principal: null })).toEqual([]);
    },
  },
  {
    title: "sweeps ended tasks past their TTL and the owner's oldest ended beyond the cap, never a live one",
    async check({ store }) {
      const old = task({ status: 'working', ttlMs: 1 });
      await store.create(old);
      const kept = [task({ status: 'working' }), task({ status: 'working' }), task({ status: 'working' })];
      for (const record of kept) await store.create(record);
      const live = task({ status: 'working', ttlMs: 1 });
      await store.create(live);
      for (const record of [old, ...kept])
        await store.update(record.id, { status: 'completed', lastUpdatedAt: later(record) });
      const others = task({ principal: 'eve', status: 'completed' });
      await store.create(others);
      await store.sweep(bot, 2, Date.parse(kept[2]!.createdAt) + 10);
      expect(await store.get(old.id)).toBeUndefined();
      expect(await store.get(kept[0]!.id)).toBeUndefined();
      expect(await store.get(kept[1]!.id)).toBeDefined();
      expect(await store.get(kept[2]!.id)).toBeDefined();
      expect((await store.get(live.id))?.status).toBe('working');
      expect(await store.get(others.id)).toBeDefined();
    },
  },
];

const ending = (record: TaskRecord): StaleTaskEnding => ({
  statusMessage: 'The runner stopped.',
  lastUpdatedAt: later(record),
  error: { code: -32004, message: 'The runner stopped.' },
});

// The lease methods are optional on the interface; a store that claims a lease must have both.
function leased(store: TaskRecordStore): Required<Pick<TaskRecordStore, 'renew' | 'endStale'>> {
  const { renew, endStale } = store;
  if (renew === undefined || endStale === undefined)
    throw new Error(
      'the store has no lease (renew and endStale); pass { lease: false } to describeTaskRecordStoreConformance',
    );
  return { renew: renew.bind(store), endStale: endStale.bind(store) };
}

/** What a TaskRecordStore with a lease (`renew`, `endStale`) must also do. */
export const TASK_LEASE_LAWS: readonly TaskRecordStoreLaw[] = [
  {
    title: 'renew moves the renewal time of running tasks in one call, passing over ended and unknown ones',
    async check({ store }) {
      const { renew } = leased(store);
      const running = task({ status: 'working', renewedAt: 1_000 });
      const waiting = task({ renewedAt: 1_000 });
      const untouched = task({ status: 'working', renewedAt: 1_000 });
      const done = task({ status: 'completed', renewedAt: 1_000 });
      for (const record of [running, waiting, untouched, done]) await store.create(record);
      expect(await store.get(running.id)).toEqual(running);
      await renew([running.id, waiting.id, done.id, 'no-such-task'], 9_000);
      expect((await store.get(running.id))?.renewedAt).toBe(9_000);
      expect((await store.get(waiting.id))?.renewedAt).toBe(9_000);
      expect((await store.get(untouched.id))?.renewedAt).toBe(1_000);
      expect((await store.get(done.id))?.renewedAt).toBe(1_000);
      expect((await store.list(bot)).find((record) => record.id === running.id)?.renewedAt).toBe(9_000);
      await renew([], 10_000);
    },
  },
  {
    title:
      "endStale ends as failed only the owner's tasks not ended and not renewed since the time, never one without a renewal time",
    async check({ store }) {
      const { endStale } = leased(store);
      const asking = { approval: { method: 'elicitation/create', params: { mode: 'form' } } };
      const staleWorking = task({ status: 'working', renewedAt: 1_000 });
      const staleWaiting = task({ renewedAt: 1_000, inputRequests: asking, checkInId: 'chk_9' });
      const fresh = task({ status: 'working', renewedAt: 5_000 });
      const legacy = task({ status: 'working' });
      const done = task({ status: 'completed', renewedAt: 1_000, result: { content: [] } });
      const evesStale = task({ principal: 'eve', status: 'working', renewedAt: 1_000 });
      for (const record of [staleWorking, staleWaiting, fresh, legacy, done, evesStale])
        await store.create(record);
      expect(await store.respond(staleWaiting.id, { approval: { action: 'accept' } })).toBe(true);
      expect(await endStale(bot, 5_000, ending(staleWaiting))).toBe(2);
      for (const id of [staleWorking.id, staleWaiting.id]) {
        const ended = (await store.get(id))!;
        expect(ended).toMatchObject({
          status: 'failed',
          statusMessage: 'The runner stopped.',
          lastUpdatedAt: later(staleWaiting),
          error: { code: -32004, message: 'The runner stopped.' },
        });
        expect(ended).not.toHaveProperty('inputRequests');
        expect(ended).not.toHaveProperty('inputResponses');
      }
      expect((await store.get(staleWaiting.id))?.checkInId).toBe('chk_9');
      expect((await store.get(fresh.id))?.status).toBe('working');
      expect(await store.get(legacy.id)).toEqual(legacy);
      expect(await store.get(done.id)).toEqual(done);
      expect((await store.get(evesStale.id))?.status).toBe('working');
      expect(await store.countLive(bot)).toBe(2);
      // An ended task stays ended: a late result from its runner does not reopen it.
      expect(
        await store.update(staleWorking.id, {
          status: 'completed',
          lastUpdatedAt: later(staleWorking),
          result: { content: [] },
        }),
      ).toBe(false);
      expect((await store.get(staleWorking.id))?.status).toBe('failed');
      expect(await endStale(bot, 5_000, ending(staleWaiting))).toBe(0);
    },
  },
  {
    title: 'a renewal before endStale keeps the task live; endStale calls racing end a task once',
    async check({ store }) {
      const { renew, endStale } = leased(store);
      const renewed = task({ status: 'working', renewedAt: 1_000 });
      await store.create(renewed);
      await renew([renewed.id], 6_000);
      expect(await endStale(bot, 5_000, ending(renewed))).toBe(0);
      expect((await store.get(renewed.id))?.status).toBe('working');
      const stale = task({ status: 'working', renewedAt: 1_000 });
      await store.create(stale);
      const counts = await Promise.all(Array.from({ length: 10 }, () => endStale(bot, 5_000, ending(stale))));
      expect(counts.reduce((sum, count) => sum + count, 0)).toBe(1);
      expect((await store.get(stale.id))?.status).toBe('failed');
      const racing = task({ status: 'working', renewedAt: 1_000 });
      await store.create(racing);
      const [, ended] = await Promise.all([renew([racing.id], 6_000), endStale(bot, 5_000, ending(racing))]);
      // Whichever write came first decides, and the record agrees with it.
      expect((await store.get(racing.id))?.status).toBe(ended === 1 ? 'failed' : 'working');
    },
  },
];
