// Group commit on SQLite: with durability 'batch' and a store that syncs once a second, a process
// killed between commits loses only the records of its open window (committed records survive a
// process crash whether or not they were synced yet), and a log reopened on the file continues the
// chain; several processes batching into one file keep one chain.

import { DatabaseSync as Database } from 'node:sqlite';
import { createDispatcher, type AuditRecord } from '@toolgate/core';
import { canonicalChain } from '@toolgate/middleware';
import { mockTool } from '@toolgate/testing';
import { auditLog, verifyAuditLog } from '@toolgate/audit';
import { sqliteAuditStore } from '@toolgate/store-sqlite';
import { DIGEST_KEY, PRIVATE_PEM, PUBLIC_PEM } from '../../../test-support/audit-fixtures';
import { finished, lastJson, printed, startFixture, tempDir } from './support';

const rows = (path: string) => {
  const db = new Database(path, { readOnly: true });
  const all = db.prepare('SELECT record FROM toolgate_audit ORDER BY seq').all() as { record: string }[];
  db.close();
  return all.map((row) => JSON.parse(row.record) as AuditRecord);
};

describe("sqliteAuditStore under durability: 'batch'", () => {
  let tmp: ReturnType<typeof tempDir>;
  beforeEach(() => (tmp = tempDir()));
  afterEach(() => tmp.cleanup());

  it('a process killed between commits loses only its open window; reopened, the log continues and verifies', async () => {
    const path = tmp.file('audit.db');
    const run = await finished(startFixture('audit-crash', [path]));
    expect(run.status).toBeNull(); // killed, not exited
    expect(JSON.parse(run.stdout.trim())).toEqual({ answered: 7, pending: 3 });
    // The 4 committed before the window opened survive; the 3 of the open window are gone.
    const survived = rows(path);
    expect(survived.map((r) => r.seq)).toEqual([1, 2, 3, 4]);
    expect(await verifyAuditLog(survived, PUBLIC_PEM)).toEqual({ ok: true, count: 4 });

    const store = sqliteAuditStore({ path, syncIntervalMs: 1000 });
    const audit = auditLog({ store, signingKey: PRIVATE_PEM, digestKey: DIGEST_KEY, durability: 'batch' });
    const tool = mockTool({ name: 'refund', result: { ok: true } });
    const dispatcher = audit.attach(createDispatcher({ tools: [tool], chain: canonicalChain() }));
    await dispatcher.dispatch({ toolName: 'refund', args: { amount: 1 } });
    await dispatcher.dispatch({ toolName: 'refund', args: { amount: 2 } });
    await audit.close();
    store.close();
    const records = rows(path);
    expect(records.map((r) => r.seq)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(records[4]!.prevHash).toBe(records[3]!.hash);
    expect(await verifyAuditLog(records, PUBLIC_PEM)).toEqual({ ok: true, count: 6 });
  });

  it('keeps one valid chain when three processes batch into one file at once', async () => {
    const path = tmp.file('audit.db');
    const writers = ['w1', 'w2', 'w3'].map((name) =>
      startFixture('audit-writer', [path, name, '30', 'batch']),
    );
    const done = writers.map(finished);
    await Promise.all(writers.map((child) => printed(child, 'ready')));
    for (const child of writers) child.stdin.end('go\n');
    expect((await Promise.all(done)).map(lastJson)).toEqual(writers.map(() => ({ results: 30 })));
    const records = rows(path);
    // 30 calls and 3 records of actions per process.
    expect(records).toHaveLength(3 * 33);
    expect(await verifyAuditLog(records, PUBLIC_PEM)).toEqual({ ok: true, count: 99 });
    expect(records.filter((r) => r.signature !== '').length).toBeLessThan(99);
  });

  it("checks 'syncIntervalMs'", () => {
    expect(() => sqliteAuditStore({ path: tmp.file('a.db'), syncIntervalMs: 0 })).toThrow(
      /'syncIntervalMs' must be a positive integer/,
    );
  });
});
