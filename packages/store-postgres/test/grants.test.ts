// Standing grants and spent requestStates in PostgreSQL: the store laws (their racing uses run over
// a pool of connections), grants that outlive the store that made them, and two processes racing
// for the last uses of one grant and for the same requestState nonces.

import type { GrantRaceCounts } from '@toolgate/testing';
import {
  describeSpentStateStoreConformance,
  describeStandingGrantRace,
  describeStandingGrantReopen,
  describeStandingGrantStoreConformance,
} from '@toolgate/testing/jest';
import { postgresSpentStates, postgresStandingGrants } from '@toolgate/store-postgres';
import { describePostgres, postgresUrl, runFixture, schemas } from './support';

describePostgres('PostgreSQL grants', () => {
  const schema = schemas('grants');

  describeStandingGrantStoreConformance(
    'postgresStandingGrants',
    ({ now }) => postgresStandingGrants({ connectionString: postgresUrl(), schema: schema.next(), now }),
    { close: (store) => store.close() },
  );
  describeSpentStateStoreConformance(
    'postgresSpentStates',
    ({ now }) => postgresSpentStates({ connectionString: postgresUrl(), schema: schema.next(), now }),
    { close: (store) => store.close() },
  );

  const inSchema = {
    place: () => schema.next(),
    open: (name: string) => postgresStandingGrants({ connectionString: postgresUrl(), schema: name }),
    close: (store: ReturnType<typeof postgresStandingGrants>) => store.close(),
  };
  describeStandingGrantReopen('postgresStandingGrants across restarts', inSchema);
  describeStandingGrantRace('postgresStandingGrants across processes', {
    ...inSchema,
    race: async (name, id) => (await runFixture('grant-racer', [postgresUrl(), name, id])) as GrantRaceCounts,
  });
});
