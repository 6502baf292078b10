// MCP tasks in PostgreSQL: the store laws (their racing changes run over a pool of connections).

import { describeTaskRecordStoreConformance } from '@toolgate/testing/jest';
import { postgresTaskRecords } from '@toolgate/store-postgres';
import { describePostgres, postgresUrl, schemas } from './support';

describePostgres('PostgreSQL tasks', () => {
  const schema = schemas('tasks');
  describeTaskRecordStoreConformance(
    'postgresTaskRecords',
    () => postgresTaskRecords({ connectionString: postgresUrl(), schema: schema.next() }),
    { close: (store) => store.close() },
  );
});
