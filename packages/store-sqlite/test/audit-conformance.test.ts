// The AuditStore laws from @toolgate/testing, run against sqliteAuditStore on a file and in memory.

import { describeAuditStoreConformance } from '@toolgate/testing/jest';
import { sqliteAuditStore } from '@toolgate/store-sqlite';
import { tempDir } from './support';

let tmp: ReturnType<typeof tempDir>;
let files = 0;
beforeAll(() => (tmp = tempDir()));
afterAll(() => tmp.cleanup());

describeAuditStoreConformance(
  'sqliteAuditStore on a file',
  () => sqliteAuditStore({ path: tmp.file(`audit-${(files += 1)}.db`) }),
  { close: (store) => store.close() },
);

describeAuditStoreConformance('sqliteAuditStore in memory', () => sqliteAuditStore({ path: ':memory:' }), {
  close: (store) => store.close(),
});
