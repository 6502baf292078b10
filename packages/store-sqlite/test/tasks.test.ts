// MCP tasks in SQLite: the store laws on a file and in memory, and two stores on one file (two
// gateway processes) seeing each other's tasks and ending a task once between them, their leases
// included; a task written before leases is never ended as stale.

import { DatabaseSync as Database } from 'node:sqlite';
import { storedTaskRow } from '@toolgate/core';
import { describeTaskLeaseShared, describeTaskRecordStoreConformance } from '@toolgate/testing/jest';
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

describeTaskLeaseShared('leases on one file shared by two stores', {
  place: freshFile,
  open: (file) => sqliteTaskRecords({ path: file }),
  close: (store) => store.close(),
  // A file as a version before leases left it: migrated up to the renewal column, the row written by hand.
  writeWithoutRenewal(file, record) {
    const { id, tenant, principal, status, createdMs, expiresMs, text } = storedTaskRow(record);
    const beforeLeases = MIGRATIONS.findIndex((sql) => sql.includes('renewed_ms'));
    const old = new Database(file);
    try {
      migrate(old, MIGRATIONS.slice(0, beforeLeases));
      old
        .prepare(
          `INSERT INTO toolgate_tasks (id, tenant, principal, status, created_ms, expires_ms, record) VALUES (?, ?, ?, ?, ?, ?, ?)`,
        )
        .run(id, tenant, principal, status, createdMs, expiresMs, text);
    } finally {
      old.close();
    }
  },
});
