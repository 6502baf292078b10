// The store laws from @toolgate/testing, run against both SQLite stores, on a file and in memory.

import {
  describeArtifactStoreConformance,
  describeCheckInStoreConformance,
  describePinStoreConformance,
} from '@toolgate/testing/jest';
import { sqliteArtifacts, sqliteCheckIns, sqlitePins } from '@toolgate/store-sqlite';
import { tempDir } from './support';

let tmp: ReturnType<typeof tempDir>;
let files = 0;
beforeAll(() => (tmp = tempDir()));
afterAll(() => tmp.cleanup());
const freshFile = () => tmp.file(`conformance-${(files += 1)}.db`);

describeCheckInStoreConformance(
  'sqliteCheckIns on a file',
  ({ now }) => sqliteCheckIns({ path: freshFile(), now }),
  {
    close: (store) => store.close(),
  },
);

describeCheckInStoreConformance(
  'sqliteCheckIns in memory',
  ({ now }) => sqliteCheckIns({ path: ':memory:', now }),
  {
    close: (store) => store.close(),
  },
);

describeArtifactStoreConformance(
  'sqliteArtifacts on a file',
  ({ now }) => sqliteArtifacts({ path: freshFile(), now }),
  {
    close: (store) => store.close(),
  },
);

describeArtifactStoreConformance(
  'sqliteArtifacts in memory',
  ({ now }) => sqliteArtifacts({ path: ':memory:', now }),
  {
    close: (store) => store.close(),
  },
);

describePinStoreConformance('sqlitePins on a file', () => sqlitePins({ path: freshFile() }), {
  close: (store) => store.close(),
});
describePinStoreConformance('sqlitePins in memory', () => sqlitePins({ path: ':memory:' }), {
  close: (store) => store.close(),
});
