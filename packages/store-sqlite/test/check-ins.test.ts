import { DatabaseSync as Database } from 'node:sqlite';
import { writeFileSync } from 'node:fs';
import type { CheckInReceipt } from '@toolgate/core';
import { sqliteCheckIns, SqliteStoreError, type SqliteCheckInStore } from '@toolgate/store-sqlite';
import { manualClock, request, T0, tempDir } from './support';

const receipt = (requestId: string): CheckInReceipt => ({
  requestId,
  asker: 'check-in',
  by: 'ops@example.com',
  approvedAt: new Date(T0).toISOString(),
  argsDigest: 'd'.repeat(64),
  chainIdRaised: 'chain01',
  chainIdRun: 'chain01',
  signature: 'r'.repeat(64),
});

describe('sqliteCheckIns', () => {
  let tmp: ReturnType<typeof tempDir>;
  let clock: ReturnType<typeof manualClock>;
  const open: SqliteCheckInStore[] = [];
  const store = (
    path = tmp.file('toolgate.db'),
    extra: { retainMs?: number; busyTimeoutMs?: number } = {},
  ) => {
    const created = sqliteCheckIns({ path, now: clock.read, ...extra });
    open.push(created);
    return created;
  };

  beforeEach(() => {
    tmp = tempDir();
    clock = manualClock();
  });
  afterEach(() => {
    for (const s of open.splice(0)) s.close();
    tmp.cleanup();
  });

  describe('put and get', () => {
    it('returns a stored request exactly as it was put, pending and without a receipt', async () => {
      const checkIns = store();
      const req = request({ evidence: { lines: [1, 2] }, receipts: [receipt('chk_earlier')] });
      await checkIns.put(req);
      expect(await checkIns.get(req.id)).toEqual({ request: req, state: 'pending' });
    });

    it('answers undefined for an id it never stored', async () => {
      const checkIns = store();
      await checkIns.put(request());
      expect(await checkIns.get('chk_unknown')).toBeUndefined();
      expect(await checkIns.get(42 as never)).toBeUndefined();
    });

    it('refuses a second put of the same id and keeps the first request', async () => {
      const checkIns = store();
      const first = request();
      await checkIns.put(first);
      const second = { ...first, question: 'Something else?' };
      await expect(checkIns.put(second)).rejects.toThrow(/sqliteCheckIns .*already stored/);
      expect((await checkIns.get(first.id))?.request.question).toBe(first.question);
    });

    it('refuses a request whose expiresAt is not a date', async () => {
      const checkIns = store();
      const req = request({ expiresAt: 'soon' });
      await expect(checkIns.put(req)).rejects.toThrow(TypeError);
      expect(await checkIns.get(req.id)).toBeUndefined();
    });

    it('hands out copies, so changing a returned record changes nothing stored', async () => {
      const checkIns = store();
      const req = request();
      await checkIns.put(req);
      const record = await checkIns.get(req.id);
      (record!.request.args as Record<string, unknown>)['to'] = 'mallory@example.com';
      expect((await checkIns.get(req.id))?.request.args).toEqual({ to: 'a@example.com' });
    });
  });

  describe('consume', () => {
    it('answers true exactly once and stores the receipt', async () => {
      const checkIns = store();
      const req = request();
      await checkIns.put(req);
      expect(await checkIns.consume(req.id, receipt(req.id))).toBe(true);
      expect(await checkIns.consume(req.id, receipt(req.id))).toBe(false);
      expect(await checkIns.get(req.id)).toEqual({
        request: req,
        state: 'consumed',
        receipt: receipt(req.id),
      });
    });

    it('consumes without a receipt and then records none', async () => {
      const checkIns = store();
      const req = request();
      await checkIns.put(req);
      expect(await checkIns.consume(req.id)).toBe(true);
      expect(await checkIns.get(req.id)).toEqual({ request: req, state: 'consumed' });
    });

    it('answers false for an unknown id, or one that is not a string', async () => {
      const checkIns = store();
      expect(await checkIns.consume('chk_unknown')).toBe(false);
      expect(await checkIns.consume(undefined as never)).toBe(false);
      expect(await checkIns.revoke(undefined as never)).toBe(false);
    });

    it('answers false once the request has expired, and leaves it pending', async () => {
      const checkIns = store();
      const req = request({ expiresAt: new Date(T0 + 1000).toISOString() });
      await checkIns.put(req);
      clock.tick(1000);
      expect(await checkIns.consume(req.id, receipt(req.id))).toBe(false);
      expect(await checkIns.get(req.id)).toEqual({ request: req, state: 'pending' });
    });

    it('consumes a request one millisecond before it expires', async () => {
      const checkIns = store();
      const req = request({ expiresAt: new Date(T0 + 1000).toISOString() });
      await checkIns.put(req);
      clock.tick(999);
      expect(await checkIns.consume(req.id)).toBe(true);
    });

    it('lets exactly one of several stores on the same file consume an approval', async () => {
      const path = tmp.file('shared.db');
      const req = request();
      await store(path).put(req);
      const stores = Array.from({ length: 5 }, () => store(path));
      const answers = await Promise.all(stores.map((s) => s.consume(req.id, receipt(req.id))));
      expect(answers.filter(Boolean)).toHaveLength(1);
    });
  });

  describe('revoke', () => {
    it('revokes a pending request once, after which it cannot be consumed', async () => {
      const checkIns = store();
      const req = request();
      await checkIns.put(req);
      expect(await checkIns.revoke(req.id)).toBe(true);
      expect(await checkIns.revoke(req.id)).toBe(false);
      expect(await checkIns.consume(req.id)).toBe(false);
      expect((await checkIns.get(req.id))?.state).toBe('revoked');
    });

    it('does not revoke a consumed request or an unknown id', async () => {
      const checkIns = store();
      const req = request();
      await checkIns.put(req);
      await checkIns.consume(req.id);
      expect(await checkIns.revoke(req.id)).toBe(false);
      expect((await checkIns.get(req.id))?.state).toBe('consumed');
      expect(await checkIns.revoke('chk_unknown')).toBe(false);
    });
  });

  describe('list', () => {
    async function seeded() {
      const checkIns = store();
      const a = request({ toolName: 'send_email', identity: { tenant: 'acme' } });
      const b = request({ toolName: 'refund', identity: { tenant: 'acme' } });
      const c = request({ toolName: 'send_email', identity: { tenant: 'globex' } });
      const { identity: _none, ...d } = request({ toolName: 'send_email' });
      for (const r of [a, b, c, d]) await checkIns.put(r);
      await checkIns.consume(b.id);
      await checkIns.revoke(c.id);
      return { checkIns, a, b, c, d };
    }
    const ids = (records: { request: { id: string } }[]) => records.map((r) => r.request.id);

    it('lists every record in the order they were put when given no filter', async () => {
      const { checkIns, a, b, c, d } = await seeded();
      expect(ids(await checkIns.list())).toEqual([a.id, b.id, c.id, d.id]);
    });

    it('filters by tenant, tool and state, alone and together', async () => {
      const { checkIns, a, b, c, d } = await seeded();
      expect(ids(await checkIns.list({ tenant: 'acme' }))).toEqual([a.id, b.id]);
      expect(ids(await checkIns.list({ toolName: 'send_email' }))).toEqual([a.id, c.id, d.id]);
      expect(ids(await checkIns.list({ state: 'pending' }))).toEqual([a.id, d.id]);
      expect(ids(await checkIns.list({ state: 'revoked' }))).toEqual([c.id]);
      expect(ids(await checkIns.list({ tenant: 'acme', toolName: 'send_email', state: 'pending' }))).toEqual([
        a.id,
      ]);
      expect(await checkIns.list({ tenant: 'initech' })).toEqual([]);
    });

    it('returns whole records, receipts included', async () => {
      const checkIns = store();
      const req = request();
      await checkIns.put(req);
      await checkIns.consume(req.id, receipt(req.id));
      expect(await checkIns.list({ state: 'consumed' })).toEqual([
        { request: req, state: 'consumed', receipt: receipt(req.id) },
      ]);
    });

    it('stops at the limit', async () => {
      const { checkIns, a, b } = await seeded();
      expect(ids(await checkIns.list({ limit: 2 }))).toEqual([a.id, b.id]);
      expect(await checkIns.list({ limit: 0 })).toEqual([]);
    });

    it('refuses a limit that is not a non-negative integer', async () => {
      const checkIns = store();
      await expect(checkIns.list({ limit: -1 })).rejects.toThrow(/limit/);
      await expect(checkIns.list({ limit: 1.5 })).rejects.toThrow(/limit/);
    });
  });

  describe('sweep', () => {
    it('deletes only records whose request expired more than retainMs ago', async () => {
      const checkIns = store(undefined, { retainMs: 10_000 });
      const old = request({ expiresAt: new Date(T0 + 1000).toISOString() });
      const recent = request({ expiresAt: new Date(T0 + 5000).toISOString() });
      const live = request({ expiresAt: new Date(T0 + 60_000).toISOString() });
      for (const r of [old, recent, live]) await checkIns.put(r);
      await checkIns.consume(old.id);
      clock.tick(12_000);
      expect(await checkIns.sweep()).toBe(1);
      expect(await checkIns.get(old.id)).toBeUndefined();
      expect((await checkIns.get(recent.id))?.state).toBe('pending');
      expect((await checkIns.get(live.id))?.state).toBe('pending');
    });

    it('keeps records for seven days after expiry by default', async () => {
      const checkIns = store();
      const req = request({ expiresAt: new Date(T0).toISOString() });
      await checkIns.put(req);
      clock.tick(7 * 24 * 60 * 60 * 1000 - 1);
      expect(await checkIns.sweep()).toBe(0);
      clock.tick(1);
      expect(await checkIns.sweep()).toBe(1);
    });
  });

  describe('durability and sharing', () => {
    it('keeps requests and their state across closing and reopening the file', async () => {
      const path = tmp.file('restart.db');
      const first = store(path);
      const consumed = request();
      const pending = request();
      await first.put(consumed);
      await first.put(pending);
      await first.consume(consumed.id, receipt(consumed.id));
      first.close();

      const second = store(path);
      expect(await second.get(consumed.id)).toEqual({
        request: consumed,
        state: 'consumed',
        receipt: receipt(consumed.id),
      });
      expect(await second.consume(consumed.id)).toBe(false);
      expect(await second.consume(pending.id)).toBe(true);
    });

    it('puts a file in WAL mode', async () => {
      const path = tmp.file('wal.db');
      await store(path).put(request());
      const db = new Database(path, { readOnly: true });
      expect(db.prepare('PRAGMA journal_mode').get()).toEqual({ journal_mode: 'wal' });
      db.close();
    });

    it('works in memory', async () => {
      const checkIns = store(':memory:');
      const req = request();
      await checkIns.put(req);
      expect(await checkIns.consume(req.id)).toBe(true);
      expect(await checkIns.consume(req.id)).toBe(false);
    });

    it('uses a database it is given and leaves it open on close', async () => {
      const db = new Database(':memory:');
      const checkIns = sqliteCheckIns({ database: db, now: clock.read });
      const req = request();
      await checkIns.put(req);
      checkIns.close();
      expect(db.isOpen).toBe(true);
      expect(db.prepare('SELECT state FROM toolgate_check_ins WHERE id = ?').get(req.id)).toEqual({
        state: 'pending',
      });
      db.close();
    });
  });

  describe('failures', () => {
    it('rejects every operation after close, naming the store and the file', async () => {
      const path = tmp.file('closed.db');
      const checkIns = store(path);
      checkIns.close();
      const failure = checkIns.get('chk_any');
      await expect(failure).rejects.toBeInstanceOf(SqliteStoreError);
      await expect(failure).rejects.toMatchObject({
        code: 'ERR_STORE_CLOSED',
        store: 'sqliteCheckIns',
        path,
      });
    });

    it('builds on a corrupt file without throwing, then rejects each operation with a clear message', async () => {
      const path = tmp.file('corrupt.db');
      writeFileSync(
        path,
        'this is not a database, just text that is long enough to fill a header page'.repeat(20),
      );
      const checkIns = store(path);
      for (const attempt of [
        checkIns.put(request()),
        checkIns.get('chk_any'),
        checkIns.consume('chk_any'),
        checkIns.list(),
      ]) {
        await expect(attempt).rejects.toMatchObject({
          name: 'SqliteStoreError',
          code: 'SQLITE_NOTADB',
          path,
        });
      }
      await expect(checkIns.consume('chk_any')).rejects.toThrow(
        `sqliteCheckIns (${path}): could not open the database: the file is not a SQLite database or is corrupt.`,
      );
    });

    it('rejects with SQLITE_BUSY while another connection holds the write lock, and succeeds once it is released', async () => {
      const path = tmp.file('locked.db');
      const checkIns = store(path, { busyTimeoutMs: 20 });
      const req = request();
      await checkIns.put(req);
      const other = new Database(path);
      other.exec('BEGIN IMMEDIATE');
      await expect(checkIns.consume(req.id)).rejects.toThrow(
        /sqliteCheckIns .*could not consume check-in .*locked by another connection.*SQLITE_BUSY/,
      );
      expect((await checkIns.get(req.id))?.state).toBe('pending');
      other.exec('ROLLBACK');
      other.close();
      expect(await checkIns.consume(req.id)).toBe(true);
    });

    it('rejects when the file cannot be created', async () => {
      const path = tmp.file('missing-dir/toolgate.db');
      await expect(store(path).put(request())).rejects.toThrow(
        /sqliteCheckIns .*missing-dir.*could not open the database/,
      );
    });

    it('refuses options that name no database or two at build', () => {
      expect(() => sqliteCheckIns({} as never)).toThrow(/exactly one of 'path'.*'database'/);
      expect(() => sqliteCheckIns({ path: 'a.db', database: new Database(':memory:') } as never)).toThrow(
        /exactly one/,
      );
      expect(() => sqliteCheckIns({ path: '' })).toThrow(/non-empty/);
      expect(() => sqliteCheckIns({ path: ':memory:', retainMs: -1 })).toThrow(/retainMs/);
      expect(() => sqliteCheckIns({ path: ':memory:', busyTimeoutMs: 1.5 })).toThrow(/busyTimeoutMs/);
    });
  });
});
