// What every TaskRecordStore must do: keep a task as created, change only a task that has not ended
// (so a cancel and a result racing from two processes end it once), keep the owner's answers for the
// running process until it takes them (once), list and count by exact owner, and sweep ended tasks
// past their TTL or beyond the owner's cap while never dropping one that runs.

import { expect } from '@jest/globals';
import type { TaskRecord, TaskRecordStore } from '@toolgate/core';

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
