// Standing grants and spent requestStates in SQLite: the store laws on a file and in memory, grants
// that outlive the store that made them, and uses raced by two processes on one file.

import {
  describeSpentStateStoreConformance,
  describeStandingGrantStoreConformance,
} from '@toolgate/testing/jest';
import type { StandingGrant } from '@toolgate/core';
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

const grant = (id: string, maxUses: number): StandingGrant => ({
  id,
  tenant: 'acme',
  principal: 'bot',
  toolName: 'refund',
  asker: 'check-in',
  chainId: 'c1',
  bounds: { amount: { atMost: 10 } },
  maxUses,
  uses: 0,
  expiresAt: new Date(Date.now() + 3_600_000).toISOString(),
  definitionDigest: 'a'.repeat(64),
  fromCheckIn: 'chk_x',
  createdBy: 'ana',
  createdAt: new Date().toISOString(),
});

describe('sqliteStandingGrants across restarts and processes', () => {
  it('a grant and its count survive closing the store and opening the file again', async () => {
    const file = freshFile();
    const first = sqliteStandingGrants({ path: file });
    await first.create(grant('grt_restart1', 2));
    expect(await first.use('grt_restart1')).toBe(true);
    first.close();
    const second = sqliteStandingGrants({ path: file });
    expect((await second.get('grt_restart1'))?.uses).toBe(1);
    expect(await second.use('grt_restart1')).toBe(true);
    expect(await second.use('grt_restart1')).toBe(false);
    expect(await second.revoke('grt_restart1')).toBe(true);
    second.close();
  });

  it('two processes racing for the last uses of a grant take exactly the limit between them', async () => {
    const file = freshFile();
    const store = sqliteStandingGrants({ path: file });
    await store.create(grant('grt_race1', 7));
    const spentFile = freshFile();
    const [a, b] = await Promise.all([
      racer(file, 'grt_race1', spentFile),
      racer(file, 'grt_race1', spentFile),
    ]);
    expect(a.used + b.used).toBe(7);
    expect((await store.get('grt_race1'))?.uses).toBe(7);
    // Each process spent the same 20 nonces: each nonce went to exactly one of them.
    expect(a.spent + b.spent).toBe(20);
    store.close();
  });
});

/** A separate Node process that tries 30 uses of `id` and spends 20 shared nonces; answers its counts. */
const racer = async (file: string, id: string, spentFile: string) =>
  (await runFixture('grant-racer', [file, id, spentFile])) as { used: number; spent: number };
