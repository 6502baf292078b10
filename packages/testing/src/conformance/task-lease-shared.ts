// Task leases beyond one store object: two stores on one place (two gateway processes) read each
// other's renewals, end a stale task once between them whatever renewal races the ends, and never end
// as stale a task written before leases existed (a rolling upgrade).

import { describe, expect, it } from '@jest/globals';
import type { StaleTaskEnding, TaskRecord, TaskRecordStore } from '@toolgate/core';

/** A TaskRecordStore that keeps a lease: `renew` and `endStale`, optional on the interface, present. */
export type LeasedTaskRecordStore = TaskRecordStore & Required<Pick<TaskRecordStore, 'renew' | 'endStale'>>;

export interface TaskLeaseSharedOptions<S extends LeasedTaskRecordStore> {
  /** A place no other test uses: a file, a schema. */
  readonly place: () => string;
  /** A store on `place`; more than one may be open on the same place. */
  readonly open: (place: string) => S;
  readonly close: (store: S) => void | Promise<void>;
  /**
   * Writes `record` to a fresh `place` as a store from before leases did (no renewal time: a NULL
   * column), so that a store opened there afterwards reads it as written before the upgrade.
   */
  readonly writeWithoutRenewal: (place: string, record: TaskRecord) => void | Promise<void>;
}

const at = new Date().toISOString();
const bot = { tenant: 'acme', principal: 'bot' } as const;
const working = (id: string, renewedAt?: number): TaskRecord => ({
  id,
  ...bot,
  status: 'working',
  createdAt: at,
  lastUpdatedAt: at,
  ttlMs: 60_000,
  ...(renewedAt !== undefined ? { renewedAt } : {}),
});
const lost: StaleTaskEnding = {
  statusMessage: 'runner lost',
  lastUpdatedAt: at,
  error: { code: -32004, message: 'runner lost' },
};
// How many endStale calls race, alternating between the two stores.
const RACING_ENDS = 8;

/**
 * Registers tests of two stores on one place sharing task leases: a renewal by one is what the other
 * reads, a stale task is ended once between them and a renewal racing the ends either wins or comes
 * too late (never both), and a task written before leases (`writeWithoutRenewal`) is never ended.
 */
export function describeTaskLeaseShared<S extends LeasedTaskRecordStore>(
  name: string,
  options: TaskLeaseSharedOptions<S>,
): void {
  const openTwo = () => {
    const place = options.place();
    return { running: options.open(place), other: options.open(place) };
  };
  const endRacing = (running: S, other: S) =>
    Array.from({ length: RACING_ENDS }, (_, i) => (i % 2 === 0 ? other : running).endStale(bot, 5_000, lost));

  describe(name, () => {
    it("one store's renewal is what the other reads; both ending a stale task end it once; its runner's result does not reopen it", async () => {
      const { running, other } = openTwo();
      try {
        await running.create(working('kept', 1_000));
        await running.create(working('lost', 1_000));
        await running.renew(['kept'], 8_000);
        expect((await other.get('kept'))?.renewedAt).toBe(8_000);
        const counts = await Promise.all(endRacing(running, other));
        expect(counts.reduce((sum, count) => sum + count, 0)).toBe(1);
        expect((await running.get('kept'))?.status).toBe('working');
        expect(await running.get('lost')).toMatchObject({ status: 'failed', error: lost.error });
        expect(await running.update('lost', { status: 'completed', lastUpdatedAt: at, result: {} })).toBe(
          false,
        );
        await running.renew(['lost'], 9_000);
        expect(await other.get('lost')).toMatchObject({ status: 'failed', renewedAt: 1_000 });
      } finally {
        await options.close(running);
        await options.close(other);
      }
    });

    it('a renewal racing the ends either keeps the task running, renewed, or comes after its end and changes nothing; each ended task is counted once', async () => {
      const { running, other } = openTwo();
      try {
        // One renewal is issued before the ends and one after them; where calls truly interleave
        // (a pool of connections) either may win its race.
        await running.create(working('renewed-first', 1_000));
        await running.create(working('renewed-last', 1_000));
        const [, counts] = await Promise.all([
          running.renew(['renewed-first'], 9_000),
          Promise.all(endRacing(running, other)),
          running.renew(['renewed-last'], 9_000),
        ]);
        let failed = 0;
        for (const id of ['renewed-first', 'renewed-last']) {
          const task = await other.get(id);
          if (task?.status === 'failed') {
            failed += 1;
            expect(task).toMatchObject({ renewedAt: 1_000, error: lost.error });
          } else {
            expect(task).toMatchObject({ status: 'working', renewedAt: 9_000 });
            expect(task).not.toHaveProperty('error');
          }
        }
        expect(counts.reduce((sum, count) => sum + count, 0)).toBe(failed);
        expect(await running.countLive(bot)).toBe(2 - failed);
      } finally {
        await options.close(running);
        await options.close(other);
      }
    });

    it('a task written before leases existed is never ended as stale after the upgrade', async () => {
      const place = options.place();
      const legacy = working('legacy');
      await options.writeWithoutRenewal(place, legacy);
      const store = options.open(place);
      try {
        expect(await store.endStale(bot, Number.MAX_SAFE_INTEGER, lost)).toBe(0);
        expect(await store.get('legacy')).toEqual(legacy);
        expect(await store.countLive(bot)).toBe(1);
      } finally {
        await options.close(store);
      }
    });
  });
}
