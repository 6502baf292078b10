// Standing grants and spent requestStates in SQLite: the store laws on a file and in memory, grants
// that outlive the store that made them, and uses raced by two processes on one file.

import type { GrantRaceCounts } from '@toolgate/testing';
import {
  describeSpentStateStoreConformance,
  describeStandingGrantRace,
  describeStandingGrantReopen,
  describeStandingGrantStoreConformance,
} from '@toolgate/testing/jest';
import { sqliteSpentStates, sqliteStandingGrants } from '@toolgate/store-sqlite';
import { runFixture, tempDir } from './support';

let tmp: ReturnType<typeof tempDir>;
let files = 0;
beforeAll(() => (tmp = tempDir()));
afterAll(() => tmp.cleanup());
const freshFile = () => tmp.file(`grants-${(files += 1)}.db`);

describeStandingGrantStoreConformance(
  'sqliteStandingGrants on a file',
  ({ now }) => sqliteStandingGrants({ path: freshFile(), now }),
  { close: (store) => store.close() },
);
describeStandingGrantStoreConformance(
  'sqliteStandingGrants in memory',
  ({ now }) => sqliteStandingGrants({ path: ':memory:', now }),
  { close: (store) => store.close() },
);
describeSpentStateStoreConformance(
  'sqliteSpentStates on a file',
  ({ now }) => sqliteSpentStates({ path: freshFile(), now }),
  { close: (store) => store.close() },
);

const onFile = {
  place: freshFile,
  open: (file: string) => sqliteStandingGrants({ path: file }),
  close: (store: ReturnType<typeof sqliteStandingGrants>) => store.close(),
};
describeStandingGrantReopen('sqliteStandingGrants across restarts', onFile);
describeStandingGrantRace('sqliteStandingGrants across processes', {
  ...onFile,
  // The racers' spent nonces go to a file of their own beside the grants.
  race: async (file, id) => (await runFixture('grant-racer', [file, id, `${file}.spent`])) as GrantRaceCounts,
});
