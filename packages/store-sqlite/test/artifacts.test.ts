import { DatabaseSync as Database } from 'node:sqlite';
import { writeFileSync } from 'node:fs';
import { isArtifactRef, type ArtifactScope } from '@toolgate/core';
import { sqliteArtifacts, sqliteCheckIns, type SqliteArtifactStore } from '@toolgate/store-sqlite';
import { manualClock, request, T0, tempDir } from './support';

const SCOPE: ArtifactScope = { tenant: 'acme', principal: 'ann', conversation: 'c1' };

describe('sqliteArtifacts', () => {
  let tmp: ReturnType<typeof tempDir>;
  let clock: ReturnType<typeof manualClock>;
  const open: { close(): void }[] = [];
  const store = (path = tmp.file('toolgate.db'), extra: { maxList?: number } = {}): SqliteArtifactStore => {
    const created = sqliteArtifacts({ path, now: clock.read, ...extra });
    open.push(created);
    return created;
  };
  const rowCount = (path: string) => {
    const db = new Database(path, { readOnly: true });
    const { n } = db.prepare('SELECT count(*) AS n FROM toolgate_artifacts').get() as { n: number };
    db.close();
    return n;
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
    it('answers an art_ ref that reads back the data and meta in the same scope', async () => {
      const artifacts = store();
      const data = { rows: [{ id: 1, name: 'Ada' }], total: 1, note: null };
      const ref = await artifacts.put(SCOPE, { kind: 'table', data, meta: { title: 'Customers' } });
      expect(isArtifactRef(ref)).toBe(true);
      expect(await artifacts.get(SCOPE, ref)).toEqual({
        meta: { ref, kind: 'table', createdAt: new Date(T0).toISOString(), meta: { title: 'Customers' } },
        data,
      });
    });

    it('keeps strings, numbers, booleans and null as JSON', async () => {
      const artifacts = store();
      for (const data of ['text', 42, false, null, []]) {
        const ref = await artifacts.put(SCOPE, { kind: 'value', data });
        expect((await artifacts.get(SCOPE, ref))?.data).toEqual(data);
      }
    });

    it('gives every put a fresh ref', async () => {
      const artifacts = store();
      const refs = await Promise.all([1, 2, 3].map((n) => artifacts.put(SCOPE, { kind: 'n', data: n })));
      expect(new Set(refs).size).toBe(3);
    });

    it('answers undefined for an unknown ref and for a value that is not a ref', async () => {
      const artifacts = store();
      await artifacts.put(SCOPE, { kind: 'table', data: 1 });
      expect(await artifacts.get(SCOPE, 'art_0000000000000000000000')).toBeUndefined();
      expect(await artifacts.get(SCOPE, 42 as never)).toBeUndefined();
    });

    it('answers a ref from another scope exactly like an unknown ref, whichever field differs', async () => {
      const artifacts = store();
      const ref = await artifacts.put(SCOPE, { kind: 'table', data: { secret: true } });
      const unknown = await artifacts.get(SCOPE, 'art_0000000000000000000000');
      for (const other of [
        { ...SCOPE, tenant: 'globex' },
        { ...SCOPE, principal: 'bob' },
        { ...SCOPE, conversation: 'c2' },
        { tenant: 'acme', principal: 'ann' },
        {},
      ]) {
        expect(await artifacts.get(other, ref)).toEqual(unknown);
      }
    });

    it('treats an absent scope field and an empty one as the same scope, as the in-memory store does', async () => {
      const artifacts = store();
      const absent = await artifacts.put({ tenant: 'acme' }, { kind: 'k', data: 1 });
      const empty = await artifacts.put({ tenant: 'acme', principal: '' }, { kind: 'k', data: 2 });
      expect((await artifacts.get({ tenant: 'acme', principal: '' }, absent))?.data).toBe(1);
      expect((await artifacts.get({ tenant: 'acme' }, empty))?.data).toBe(2);
      expect(await artifacts.get({ tenant: 'acme', principal: 'ann' }, absent)).toBeUndefined();
    });

    it('reads an artifact stored in the empty scope only from the empty scope', async () => {
      const artifacts = store();
      const ref = await artifacts.put({}, { kind: 'k', data: 'x' });
      expect((await artifacts.get({}, ref))?.data).toBe('x');
      expect(await artifacts.get({ tenant: 'acme' }, ref)).toBeUndefined();
    });
  });

  describe('binary data', () => {
    it('keeps a Uint8Array as bytes, with application/octet-stream by default', async () => {
      const artifacts = store();
      const bytes = new Uint8Array([0, 1, 2, 254, 255]);
      const ref = await artifacts.put(SCOPE, { kind: 'file', data: bytes });
      const stored = await artifacts.get(SCOPE, ref);
      expect(stored?.data).toEqual(bytes);
      expect(Object.getPrototypeOf(stored?.data)).toBe(Uint8Array.prototype);
      expect(stored?.meta.meta).toEqual({ contentType: 'application/octet-stream' });
    });

    it('keeps the content type given in meta', async () => {
      const artifacts = store();
      const ref = await artifacts.put(SCOPE, {
        kind: 'image',
        data: new Uint8Array([137, 80, 78, 71]),
        meta: { contentType: 'image/png', name: 'a.png' },
      });
      expect((await artifacts.get(SCOPE, ref))?.meta.meta).toEqual({
        contentType: 'image/png',
        name: 'a.png',
      });
      expect((await artifacts.list(SCOPE, 'image'))[0]?.meta).toEqual({
        contentType: 'image/png',
        name: 'a.png',
      });
    });

    it('refuses other binary shapes that JSON would silently empty', async () => {
      const artifacts = store();
      await expect(artifacts.put(SCOPE, { kind: 'file', data: new ArrayBuffer(4) })).rejects.toThrow(
        /Uint8Array/,
      );
      await expect(artifacts.put(SCOPE, { kind: 'file', data: new Float32Array(2) })).rejects.toThrow(
        /Uint8Array/,
      );
    });
  });

  describe('ttl', () => {
    it('serves an artifact until its ttl runs out and never after', async () => {
      const artifacts = store();
      const ref = await artifacts.put(SCOPE, { kind: 'table', data: 1, ttlMs: 1000 });
      clock.tick(999);
      expect((await artifacts.get(SCOPE, ref))?.meta.expiresAt).toBe(new Date(T0 + 1000).toISOString());
      expect(await artifacts.list(SCOPE, 'table')).toHaveLength(1);
      clock.tick(1);
      expect(await artifacts.get(SCOPE, ref)).toBeUndefined();
      expect(await artifacts.list(SCOPE, 'table')).toEqual([]);
    });

    it('sweeps expired artifacts on demand and on put, keeping live ones', async () => {
      const path = tmp.file('sweep.db');
      const artifacts = store(path);
      await artifacts.put(SCOPE, { kind: 'k', data: 1, ttlMs: 100 });
      await artifacts.put(SCOPE, { kind: 'k', data: 2, ttlMs: 100 });
      const forever = await artifacts.put(SCOPE, { kind: 'k', data: 3 });
      clock.tick(100);
      expect(await artifacts.sweep()).toBe(2);
      expect(rowCount(path)).toBe(1);
      await artifacts.put(SCOPE, { kind: 'k', data: 4, ttlMs: 100 });
      clock.tick(100);
      await artifacts.put(SCOPE, { kind: 'k', data: 5 });
      expect(rowCount(path)).toBe(2);
      expect((await artifacts.get(SCOPE, forever))?.data).toBe(3);
    });

    it('refuses a ttl that is not a positive number, storing nothing', async () => {
      const path = tmp.file('ttl.db');
      const artifacts = store(path);
      for (const ttlMs of [0, -5, Number.NaN, Number.POSITIVE_INFINITY]) {
        await expect(artifacts.put(SCOPE, { kind: 'k', data: 1, ttlMs })).rejects.toThrow(/ttlMs/);
      }
      expect(await artifacts.list(SCOPE, 'k')).toEqual([]);
    });
  });

  describe('list', () => {
    it('lists live artifacts of one kind in one scope, newest first, without data', async () => {
      const artifacts = store();
      const first = await artifacts.put(SCOPE, { kind: 'table', data: 1 });
      clock.tick(10);
      await artifacts.put(SCOPE, { kind: 'chart', data: 2 });
      await artifacts.put({ ...SCOPE, tenant: 'globex' }, { kind: 'table', data: 3 });
      const second = await artifacts.put(SCOPE, { kind: 'table', data: 4, meta: { rows: 4 } });
      expect(await artifacts.list(SCOPE, 'table')).toEqual([
        { ref: second, kind: 'table', createdAt: new Date(T0 + 10).toISOString(), meta: { rows: 4 } },
        { ref: first, kind: 'table', createdAt: new Date(T0).toISOString() },
      ]);
    });

    it('orders artifacts put in the same millisecond by when they were put', async () => {
      const artifacts = store();
      const refs: string[] = [];
      for (let i = 0; i < 4; i++) refs.push(await artifacts.put(SCOPE, { kind: 'k', data: i }));
      expect((await artifacts.list(SCOPE, 'k')).map((m) => m.ref)).toEqual(refs.reverse());
    });

    it('answers at most 10 by default, the limit asked for, and never more than maxList', async () => {
      const artifacts = store(undefined, { maxList: 12 });
      for (let i = 0; i < 15; i++) await artifacts.put(SCOPE, { kind: 'k', data: i });
      expect(await artifacts.list(SCOPE, 'k')).toHaveLength(10);
      expect(await artifacts.list(SCOPE, 'k', 3)).toHaveLength(3);
      expect(await artifacts.list(SCOPE, 'k', 1000)).toHaveLength(12);
      expect(await artifacts.list(SCOPE, 'k', 0)).toEqual([]);
    });

    it('caps a list at 100 unless told otherwise', async () => {
      const db = new Database(':memory:');
      const artifacts = sqliteArtifacts({ database: db, now: clock.read });
      for (let i = 0; i < 105; i++) await artifacts.put(SCOPE, { kind: 'k', data: i });
      expect(await artifacts.list(SCOPE, 'k', 500)).toHaveLength(100);
      db.close();
    });

    it('lists nothing for a negative or non-numeric limit, and truncates a fractional one', async () => {
      const artifacts = store();
      for (let i = 0; i < 3; i++) await artifacts.put(SCOPE, { kind: 'k', data: i });
      expect(await artifacts.list(SCOPE, 'k', -1)).toEqual([]);
      expect(await artifacts.list(SCOPE, 'k', Number.NaN)).toEqual([]);
      expect(await artifacts.list(SCOPE, 'k', 2.9)).toHaveLength(2);
    });
  });

  describe('bad input', () => {
    it('refuses data that is not JSON-serializable, storing nothing', async () => {
      const artifacts = store();
      const cycle: Record<string, unknown> = {};
      cycle['self'] = cycle;
      for (const data of [10n, cycle, undefined, () => 1]) {
        await expect(artifacts.put(SCOPE, { kind: 'k', data })).rejects.toThrow(
          /sqliteArtifacts: the artifact's data must be JSON-serializable/,
        );
      }
      expect(await artifacts.list(SCOPE, 'k')).toEqual([]);
    });

    it('refuses an empty kind, a meta that is not an object and a scope field that is not a string', async () => {
      const artifacts = store();
      await expect(artifacts.put(SCOPE, { kind: ' ', data: 1 })).rejects.toThrow(/kind/);
      await expect(artifacts.put(SCOPE, { kind: 'k', data: 1, meta: [] as never })).rejects.toThrow(/meta/);
      await expect(artifacts.put({ tenant: 7 } as never, { kind: 'k', data: 1 })).rejects.toThrow(/tenant/);
    });
  });

  describe('durability and failures', () => {
    it('keeps artifacts across closing and reopening the file', async () => {
      const path = tmp.file('restart.db');
      const first = store(path);
      const ref = await first.put(SCOPE, { kind: 'table', data: { a: 1 }, ttlMs: 60_000 });
      first.close();
      expect((await store(path).get(SCOPE, ref))?.data).toEqual({ a: 1 });
    });

    it('shares one file with a check-in store', async () => {
      const path = tmp.file('shared.db');
      const checkIns = sqliteCheckIns({ path, now: clock.read });
      open.push(checkIns);
      const artifacts = store(path);
      const req = request();
      await checkIns.put(req);
      const ref = await artifacts.put(SCOPE, { kind: 'k', data: 'x' });
      expect((await checkIns.get(req.id))?.state).toBe('pending');
      expect((await artifacts.get(SCOPE, ref))?.data).toBe('x');
    });

    it('rejects on a corrupt file with a message naming the store and the file', async () => {
      const path = tmp.file('corrupt.db');
      writeFileSync(path, Buffer.alloc(8192, 7));
      const artifacts = store(path);
      await expect(artifacts.put(SCOPE, { kind: 'k', data: 1 })).rejects.toThrow(
        `sqliteArtifacts (${path}): could not open the database`,
      );
      await expect(artifacts.get(SCOPE, 'art_0000000000000000000000')).rejects.toMatchObject({
        code: 'SQLITE_NOTADB',
      });
      await expect(artifacts.list(SCOPE, 'k')).rejects.toMatchObject({ store: 'sqliteArtifacts', path });
    });

    it('rejects a put with SQLITE_BUSY while another connection holds the write lock', async () => {
      const path = tmp.file('locked.db');
      const artifacts = sqliteArtifacts({ path, now: clock.read, busyTimeoutMs: 20 });
      open.push(artifacts);
      await artifacts.list(SCOPE, 'k');
      const other = new Database(path);
      other.exec('BEGIN IMMEDIATE');
      await expect(artifacts.put(SCOPE, { kind: 'k', data: 1 })).rejects.toMatchObject({
        code: 'SQLITE_BUSY',
      });
      other.exec('ROLLBACK');
      other.close();
      expect(await artifacts.list(SCOPE, 'k')).toEqual([]);
    });

    it('refuses a maxList that is not a positive integer at build', () => {
      expect(() => sqliteArtifacts({ path: ':memory:', maxList: 0 })).toThrow(/maxList/);
    });
  });
});
