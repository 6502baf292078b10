// The store laws from @toolgate/testing, run against both PostgreSQL stores; every law gets a schema
// of its own, since the laws expect an empty store.

import pg from 'pg';
import {
  describeArtifactStoreConformance,
  describeCheckInStoreConformance,
  describePinStoreConformance,
} from '@toolgate/testing/jest';
import { postgresArtifacts, postgresCheckIns, postgresPins } from '@toolgate/store-postgres';
import { describePostgres, postgresUrl, schemas } from './support';

describePostgres('PostgreSQL stores', () => {
  const schema = schemas('conformance');
  let shared: pg.Pool;
  beforeAll(() => {
    shared = new pg.Pool({ connectionString: postgresUrl(), max: 4 });
  });
  afterAll(() => shared.end());

  describeCheckInStoreConformance(
    'postgresCheckIns on a connection string',
    ({ now }) => postgresCheckIns({ connectionString: postgresUrl(), schema: schema.next(), now }),
    { close: (store) => store.close() },
  );

  describeCheckInStoreConformance(
    'postgresCheckIns on a shared pool',
    ({ now }) => postgresCheckIns({ pool: shared, schema: schema.next(), now }),
    { close: (store) => store.close() },
  );

  describeArtifactStoreConformance(
    'postgresArtifacts',
    ({ now }) => postgresArtifacts({ connectionString: postgresUrl(), schema: schema.next(), now }),
    { close: (store) => store.close() },
  );

  describePinStoreConformance(
    'postgresPins',
    () => postgresPins({ connectionString: postgresUrl(), schema: schema.next() }),
    { close: (store) => store.close() },
  );
});
