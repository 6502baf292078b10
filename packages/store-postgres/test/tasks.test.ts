// MCP tasks in PostgreSQL: the store laws (their racing changes run over a pool of connections), and
// two stores on one schema (two gateway processes) sharing leases: a stale task is ended once between
// them, and a task written before leases is never ended as stale.

import pg from 'pg';
import { storedTaskRow } from '@toolgate/core';
import { describeTaskLeaseShared, describeTaskRecordStoreConformance } from '@toolgate/testing/jest';
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

  describeTaskLeaseShared('leases on one schema shared by two stores', {
    place: () => schema.next(),
    open: (name) => postgresTaskRecords({ connectionString: postgresUrl(), schema: name }),
    close: (store) => store.close(),
    // A schema as a version before leases left it: migrated up to the renewal column, the row written by hand.
    async writeWithoutRenewal(name, record) {
      const { id, tenant, principal, status, createdMs, expiresMs, text } = storedTaskRow(record);
      const beforeLeases = MIGRATIONS.findIndex((migration) => migration('').includes('renewed_ms'));
      const pool = new pg.Pool({ connectionString: postgresUrl(), max: 1 });
      try {
        await migrate(pool, name, MIGRATIONS.slice(0, beforeLeases));
        await pool.query(
          `INSERT INTO "${name}".toolgate_tasks (id, tenant, principal, status, created_ms, expires_ms, record)
           VALUES ($1, $2, $3, $4, $5, $6, $7)`,
          [id, tenant, principal, status, createdMs, expiresMs, text],
        );
      } finally {
        await pool.end();
      }
    },
  });
});
