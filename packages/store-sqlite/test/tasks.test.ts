// MCP tasks in SQLite: the store laws on a file and in memory, and two stores on one file (two
// gateway processes) seeing each other's tasks and ending a task once between them, their leases
// included; a task written before leases is never ended as stale.

import { DatabaseSync as Database } from 'node:sqlite';
import type { StaleTaskEnding, TaskRecord } from '@toolgate/core';
import { describeTaskRecordStoreConformance } from '@toolgate/testing/jest';
import { sqliteTaskRecords } from '@toolgate/store-sqlite';
import { migrate, MIGRATIONS } from '../src/schema';
import { tempDir } from './support';

let tmp: ReturnType<typeof tempDir>;
let files = 0;
beforeAll(() => (tmp = tempDir()));
afterAll(() => tmp.cleanup());
const freshFile = () => tmp.file(`tasks-${(files += 1)}.db`);

describeTaskRecordStoreConformance(
  'sqliteTaskRecords on a file',
  () => sqliteTaskRecords({ path: freshFile() }),
  {
    close: (store) => store.close(),
  },
);
describeTaskRecordStoreConformance(
  'sqliteTaskRecords in memory',
  () => sqliteTaskRecords({ path: ':memory:' }),
  {
    close: (store) => store.close(),
  },
);

it('two stores on one file: a task created by one is read, answered and cancelled by the other; a result after that is refused', async () => {
  const file = freshFile();
  const running = sqliteTaskRecords({ path: file });
  const other = sqliteTaskRecords({ path: file });
  try {
    const at = new Date().toISOString();
    await running.create({
      id: 'task-1',
      tenant: 'acme',
      principal: 'bot',
      status: 'input_required',
      createdAt: at,
      lastUpdatedAt: at,
      ttlMs: 60_000,
      checkInId: 'chk_1',
    });
    expect(await other.get('task-1')).toMatchObject({ status: 'input_required', checkInId: 'chk_1' });
    expect(await other.respond('task-1', { approval: { action: 'accept' } })).toBe(true);
    expect(await running.takeResponses('task-1')).toEqual({ approval: { action: 'accept' } });
    const [cancelled, completed] = await Promise.all([
      other.update('task-1', { status: 'cancelled', lastUpdatedAt: at }),
      running.update('task-1', { status: 'completed', lastUpdatedAt: at, result: { content: [] } }),
    ]);
    expect([cancelled, completed].filter(Boolean)).toHaveLength(1);
    const ended = (await running.get('task-1'))!.status;
    expect(await other.update('task-1', { status: 'failed', lastUpdatedAt: at })).toBe(false);
    expect((await other.get('task-1'))!.status).toBe(ended);
  } finally {
    running.close();
    other.close();
  }
});

describe('leases on one file shared by two stores', () => {
  const at = new Date().toISOString();
  const bot = { tenant: 'acme', principal: 'bot' };
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

  it("one store's renewal is what the other reads; both ending a stale task end it once; its runner's result does not reopen it", async () => {
    const file = freshFile();
    const running = sqliteTaskRecords({ path: file });
    const other = sqliteTaskRecords({ path: file });
    try {
      await running.create(working('kept', 1_000));
      await running.create(working('lost', 1_000));
      await running.renew(['kept'], 8_000);
      expect((await other.get('kept'))?.renewedAt).toBe(8_000);
      const counts = await Promise.all([
        other.endStale(bot, 5_000, lost),
        running.endStale(bot, 5_000, lost),
        other.endStale(bot, 5_000, lost),
      ]);
      expect(counts.reduce((sum, count) => sum + count, 0)).toBe(1);
      expect((await running.get('kept'))?.status).toBe('working');
      expect(await running.get('lost')).toMatchObject({ status: 'failed', error: lost.error });
      expect(await running.update('lost', { status: 'completed', lastUpdatedAt: at, result: {} })).toBe(
        false,
      );
      await running.renew(['lost'], 9_000);
      expect(await other.get('lost')).toMatchObject({ status: 'failed', renewedAt: 1_000 });
    } finally {
      running.close();
      other.close();
    }
  });

  it('a task written to a file before leases existed is never ended as stale after the upgrade', async () => {
    const file = freshFile();
    const old = new Database(file);
    migrate(
      old,
      MIGRATIONS.slice(
        0,
        MIGRATIONS.findIndex((sql) => sql.includes('renewed_ms')),
      ),
    );
    const legacy = working('legacy');
    old
      .prepare(
        `INSERT INTO toolgate_tasks (id, tenant, principal, status, created_ms, expires_ms, record) VALUES (?, ?, ?, 'working', ?, ?, ?)`,
      )
      .run(
        legacy.id,
        bot.tenant,
        bot.principal,
        Date.parse(at),
        Date.parse(at) + 60_000,
        JSON.stringify(legacy),
      );
    old.close();
    const store = sqliteTaskRecords({ path: file });
    try {
      expect(await store.endStale(bot, Number.MAX_SAFE_INTEGER, lost)).toBe(0);
      expect(await store.get('legacy')).toEqual(legacy);
      expect(await store.countLive(bot)).toBe(1);
    } finally {
      store.close();
    }
  });
});
