// The deferred sync of sqliteAuditStore and the head it remembers: with `syncIntervalMs` the WAL file
// is fsynced in the thread pool once the interval is up (commits made meanwhile get a sync of their
// own), and an append seals against the head its last commit left, so a second writer on the file
// costs a reseal, never a fork.

import fs from 'node:fs';
import { DatabaseSync as Database } from 'node:sqlite';
import { createDispatcher, type AuditRecord } from '@toolgate/core';
import { canonicalChain } from '@toolgate/middleware';
import { mockTool } from '@toolgate/testing';
import { auditLog, verifyAuditLog } from '@toolgate/audit';
import { sqliteAuditStore, type SqliteAuditStore } from '@toolgate/store-sqlite';
import { DIGEST_KEY, PRIVATE_PEM, PUBLIC_PEM } from '../../../test-support/audit-fixtures';
import { tempDir } from './support';

const rows = (path: string) => {
  const db = new Database(path, { readOnly: true });
  const all = db.prepare('SELECT record FROM toolgate_audit ORDER BY seq').all() as { record: string }[];
  db.close();
  return all.map((row) => JSON.parse(row.record) as AuditRecord);
};

const until = async (check: () => boolean, ms = 3000) => {
  const end = Date.now() + ms;
  while (!check() && Date.now() < end) await new Promise((done) => setTimeout(done, 10));
  return check();
};

describe('sqliteAuditStore: deferred sync and the remembered head', () => {
  let tmp: ReturnType<typeof tempDir>;
  const stores: SqliteAuditStore[] = [];
  beforeEach(() => (tmp = tempDir()));
  afterEach(() => {
    jest.restoreAllMocks();
    for (const store of stores.splice(0)) store.close();
    tmp.cleanup();
  });

  function logOn(path: string, syncIntervalMs?: number) {
    const store = sqliteAuditStore({ path, ...(syncIntervalMs !== undefined ? { syncIntervalMs } : {}) });
    stores.push(store);
    const audit = auditLog({ store, signingKey: PRIVATE_PEM, digestKey: DIGEST_KEY, durability: 'batch' });
    const tool = mockTool({ name: 'refund', result: { ok: true } });
    return {
      store,
      audit,
      dispatcher: audit.attach(createDispatcher({ tools: [tool], chain: canonicalChain() })),
    };
  }

  it('fsyncs the WAL file once the interval is up, and again for commits made while that sync ran', async () => {
    const path = tmp.file('audit.db');
    const synced: number[] = [];
    const held: (() => void)[] = [];
    const open = jest.spyOn(fs, 'open');
    jest.spyOn(fs, 'fsync').mockImplementation(((
      fd: number,
      done: (error: NodeJS.ErrnoException | null) => void,
    ) => {
      synced.push(fd);
      held.push(() => done(null));
    }) as typeof fs.fsync);
    const { audit, dispatcher } = logOn(path, 60);
    await dispatcher.dispatch({ toolName: 'refund', args: { amount: 1 } });
    await audit.flush();
    // Not at the commit: only once the interval is up.
    expect(synced).toHaveLength(0);
    expect(await until(() => synced.length === 1)).toBe(true);
    expect(open.mock.calls.filter(([file]) => String(file) === `${path}-wal`)).toHaveLength(1);

    // A commit while the first fsync is still running: no second fsync beside it…
    await dispatcher.dispatch({ toolName: 'refund', args: { amount: 2 } });
    await audit.flush();
    await new Promise((done) => setTimeout(done, 150));
    expect(synced).toHaveLength(1);
    // …but one of its own once the first is done.
    held.shift()!();
    expect(await until(() => synced.length === 2)).toBe(true);
    held.shift()!();
    // Idle: no sync without a commit.
    await new Promise((done) => setTimeout(done, 200));
    expect(synced).toHaveLength(2);
    expect(rows(path).map((record) => record.seq)).toEqual([1, 2]);
  });

  it('never fsyncs a store opened without an interval (every commit synced)', async () => {
    const fsync = jest.spyOn(fs, 'fsync');
    const { audit, dispatcher } = logOn(tmp.file('audit.db'));
    await dispatcher.dispatch({ toolName: 'refund', args: { amount: 1 } });
    await audit.flush();
    await new Promise((done) => setTimeout(done, 100));
    expect(fsync).not.toHaveBeenCalled();
  });

  it('two logs writing one file in turn keep one chain: a stale remembered head is resealed, not forked', async () => {
    const path = tmp.file('audit.db');
    const a = logOn(path);
    const b = logOn(path);
    for (let round = 0; round < 4; round++) {
      await a.dispatcher.dispatch({ toolName: 'refund', args: { amount: round } });
      await a.audit.flush();
      await b.dispatcher.dispatch({ toolName: 'refund', args: { amount: round + 100 } });
      await b.audit.flush();
    }
    const records = rows(path);
    expect(records.map((record) => record.seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    for (let i = 1; i < records.length; i++) expect(records[i]!.prevHash).toBe(records[i - 1]!.hash);
    expect(await verifyAuditLog(records, PUBLIC_PEM)).toEqual({ ok: true, count: 8 });
  });
});
