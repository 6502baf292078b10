// The AuditStore laws from @toolgate/testing, run against postgresAuditStore; every law gets a schema
// of its own, since the laws expect an empty log.

import pg from 'pg';
import { describeAuditStoreConformance } from '@toolgate/testing/jest';
import { postgresAuditStore } from '@toolgate/store-postgres';
import { describePostgres, postgresUrl, schemas } from './support';

describePostgres('PostgreSQL audit store', () => {
  const schema = schemas('audit_conformance');
  let shared: pg.Pool;
  beforeAll(() => {
    shared = new pg.Pool({ connectionString: postgresUrl(), max: 4 });
  });
  afterAll(() => shared.end());

  describeAuditStoreConformance(
    'postgresAuditStore on a connection string',
    () => postgresAuditStore({ connectionString: postgresUrl(), schema: schema.next() }),
    { close: (store) => store.close() },
  );

  describeAuditStoreConformance(
    'postgresAuditStore on a shared pool',
    () => postgresAuditStore({ pool: shared, schema: schema.next() }),
    { close: (store) => store.close() },
  );
});
