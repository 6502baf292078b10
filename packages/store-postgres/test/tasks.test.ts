// MCP tasks in PostgreSQL: the store laws (their racing changes run over a pool of connections), and
// two stores on one schema (two gateway processes) sharing leases: a stale task is ended once between
// them, and a task written before leases is never ended as stale.

import pg from 'pg';
import type { StaleTaskEnding, TaskRecord } from '@toolgate/core';
import { describeTaskRecordStoreConformance } from '@toolgate/testing/jest';
import { postgresTaskRecords } from '@toolgate/store-postgres';
import { migrate, MIGRATIONS } from '../src/schema';
import { describePostgres, postgresUrl, schemas } from './support';

describePostgres('PostgreSQL tasks', () => {
  const schema = schemas('tasks');
  describeTaskRecordStoreConformance(
    'postgresTaskRecords',
    () => postgresTaskRecords({ connectionString: postgresUrl(), schema: schema.next() }),
    { close: (store) => store.close() },
  );

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

  it("two stores on one schema: one's renewal is what the other reads; both ending a stale task end it once; its runner's result does not reopen it", async () => {
    const name = schema.next();
    const running = postgresTaskRecords({ connectionString: postgresUrl(), schema: name });
    const other = postgresTaskRecords({ connectionString: postgresUrl(), schema: name });
    try {
      await running.create(working('kept', 1_000));
      await running.create(working('lost', 1_000));
      await running.renew(['kept'], 8_000);
      expect((await other.get('kept'))?.renewedAt).toBe(8_000);
      const counts = await Promise.all(
        Array.from({ length: 8 }, (_, i) => (i % 2 === 0 ? other : running).endStale(bot, 5_000, lost)),
      );
      expect(counts.reduce((sum, count) => sum + count, 0)).toBe(1);
      expect((await running.get('kept'))?.status).toBe('working');
      expect(await running.get('lost')).toMatchObject({ status: 'failed', error: lost.error });
      expect(await running.update('lost', { status: 'completed', lastUpdatedAt: at, result: {} })).toBe(
        false,
      );
      await running.renew(['lost'], 9_000);
      expect(await other.get('lost')).toMatchObject({ status: 'failed', renewedAt: 1_000 });
    } finally {
      await running.close();
      await other.close();
    }
  });

  it('a task written before leases existed is never ended as stale after the upgrade', async () => {
    const name = schema.next();
    const pool = new pg.Pool({ connectionString: postgresUrl(), max: 1 });
    const legacy = working('legacy');
    try {
      await migrate(
        pool,
        name,
        MIGRATIONS.slice(
          0,
          MIGRATIONS.findIndex((migration) => migration('').includes('renewed_ms')),
        ),
      );
      await pool.query(
        `INSERT INTO "${name}".toolgate_tasks (id, tenant, principal, status, created_ms, expires_ms, record)
         VALUES ($1, $2, $3, 'working', $4, $5, $6)`,
        [
          legacy.id,
          bot.tenant,
          bot.principal,
          Date.parse(at),
          Date.parse(at) + 60_000,
          JSON.stringify(legacy),
        ],
      );
    } finally {
      await pool.end();
    }
    const store = postgresTaskRecords({ connectionString: postgresUrl(), schema: name });
    try {
      expect(await store.endStale(bot, Number.MAX_SAFE_INTEGER, lost)).toBe(0);
      expect(await store.get('legacy')).toEqual(legacy);
      expect(await store.countLive(bot)).toBe(1);
    } finally {
      await store.close();
    }
  });
});
