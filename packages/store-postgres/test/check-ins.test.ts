import pg from 'pg';
import type { CheckInReceipt } from '@toolgate/core';
import { postgresCheckIns, PostgresStoreError, type PostgresCheckInStore } from '@toolgate/store-postgres';
import { describePostgres, manualClock, postgresUrl, request, schemas, T0 } from './support';

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

describePostgres('postgresCheckIns', () => {
  const schema = schemas('check_ins');
  let clock: ReturnType<typeof manualClock>;
  let name: string;
  const open: PostgresCheckInStore[] = [];
  const store = (extra: { retainMs?: number; statementTimeoutMs?: number } = {}) => {
    const created = postgresCheckIns({
      connectionString: postgresUrl(),
      schema: name,
      now: clock.read,
      ...extra,
    });
    open.push(created);
    return created;
  };

  beforeEach(() => {
    clock = manualClock();
    name = schema.next();
  });
  afterEach(async () => {
    for (const s of open.splice(0)) await s.close();
  });

  describe('put and get', () => {
    it('returns a stored request exactly as it was put, pending and without a receipt', async () => {
      const checkIns = store();
      const req = request({
        evidence: { lines: [1, 2], text: 'Zoë \u0000 “q”' },
        receipts: [receipt('chk_e')],
      });
      await checkIns.put(req);
      expect(await checkIns.get(req.id)).toStrictEqual({ request: req, state: 'pending' });
    });

    it('answers undefined for an id it never stored, or one that is not a string', async () => {
      const checkIns = store();
      await checkIns.put(request());
      expect(await checkIns.get('chk_unknown')).toBeUndefined();
      expect(await checkIns.get(42 as never)).toBeUndefined();
    });

    it('refuses a second put of the same id, saying so, and keeps the first request', async () => {
      const checkIns = store();
      const first = request();
      await checkIns.put(first);
      const second = { ...first, question: 'Something else?' };
      const failure = checkIns.put(second);
      await expect(failure).rejects.toThrow(/postgresCheckIns: could not store check-in .*already stored/);
      await expect(failure).rejects.toMatchObject({ code: '23505', retryable: false });
      expect((await checkIns.get(first.id))?.request.question).toBe(first.question);
    });

    it('refuses a request whose expiresAt is not a date, or that has no id', async () => {
      const checkIns = store();
      const req = request({ expiresAt: 'soon' });
      await expect(checkIns.put(req)).rejects.toThrow(TypeError);
      await expect(checkIns.put({ ...req, id: '' })).rejects.toThrow(/non-empty string/);
      await expect(checkIns.put(undefined as never)).rejects.toThrow(TypeError);
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
      expect(await checkIns.get(req.id)).toStrictEqual({
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
      expect(await checkIns.get(req.id)).toStrictEqual({ request: req, state: 'consumed' });
    });

    it('answers false for an unknown id, or one that is not a string', async () => {
      const checkIns = store();
      expect(await checkIns.consume('chk_unknown')).toBe(false);
      expect(await checkIns.consume(undefined as never)).toBe(false);
      expect(await checkIns.revoke(undefined as never)).toBe(false);
    });

    it("judges expiry by the store's clock, not the server's: expired at expiresAt, and left pending", async () => {
      const checkIns = store();
      // Expiry is in 2030 by the server's clock; the store's clock says it has passed.
      const req = request({ expiresAt: new Date(T0 + 1000).toISOString() });
      await checkIns.put(req);
      clock.tick(999);
      const other = request({ expiresAt: new Date(T0 + 1000).toISOString() });
      await checkIns.put(other);
      expect(await checkIns.consume(other.id)).toBe(true);
      clock.tick(1);
      expect(await checkIns.consume(req.id, receipt(req.id))).toBe(false);
      expect(await checkIns.get(req.id)).toStrictEqual({ request: req, state: 'pending' });
    });

    it('lets exactly one of several stores, each with its own pool, consume an approval', async () => {
      const req = request();
      await store().put(req);
      const stores = Array.from({ length: 6 }, () => store());
      const answers = await Promise.all(
        stores.flatMap((s) => [s.consume(req.id, receipt(req.id)), s.consume(req.id)]),
      );
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
      expect(await checkIns.list({ state: 'consumed' })).toStrictEqual([
        { request: req, state: 'consumed', receipt: receipt(req.id) },
      ]);
    });

    it('stops at the limit', async () => {
      const { checkIns, a, b } = await seeded();
      expect(ids(await checkIns.list({ limit: 2 }))).toEqual([a.id, b.id]);
      expect(await checkIns.list({ limit: 0 })).toEqual([]);
    });

    it('refuses a limit that is not a non-negative integer, and a filter value that is not a string', async () => {
      const checkIns = store();
      await expect(checkIns.list({ limit: -1 })).rejects.toThrow(/limit/);
      await expect(checkIns.list({ limit: 1.5 })).rejects.toThrow(/limit/);
      await expect(checkIns.list({ tenant: 7 as never })).rejects.toThrow(/'tenant' must be a string/);
      await expect(checkIns.list(null as never)).rejects.toThrow(/filter must be an object/);
    });
  });

  describe('sweep', () => {
    it('deletes only records whose request expired more than retainMs ago', async () => {
      const checkIns = store({ retainMs: 10_000 });
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

  describe('sharing', () => {
    it('keeps requests and their state across closing the store and opening another', async () => {
      const first = store();
      const consumed = request();
      const pending = request();
      await first.put(consumed);
      await first.put(pending);
      await first.consume(consumed.id, receipt(consumed.id));
      await first.close();

      const second = store();
      expect(await second.get(consumed.id)).toStrictEqual({
        request: consumed,
        state: 'consumed',
        receipt: receipt(consumed.id),
      });
      expect(await second.consume(consumed.id)).toBe(false);
      expect(await second.consume(pending.id)).toBe(true);
    });

    it('uses a pool it is given and leaves it open on close', async () => {
      const pool = new pg.Pool({ connectionString: postgresUrl(), max: 2 });
      try {
        const checkIns = postgresCheckIns({ pool, schema: name, now: clock.read });
        const req = request();
        await checkIns.put(req);
        await checkIns.close();
        const { rows } = await pool.query(`SELECT state FROM "${name}".toolgate_check_ins WHERE id = $1`, [
          req.id,
        ]);
        expect(rows).toEqual([{ state: 'pending' }]);
        await expect(checkIns.get(req.id)).rejects.toMatchObject({ code: 'ERR_STORE_CLOSED' });
      } finally {
        await pool.end();
      }
    });

    it("uses the connection's current schema when given none", async () => {
      const pool = new pg.Pool({
        connectionString: postgresUrl(),
        max: 1,
        options: `-c search_path=${name}`,
      });
      try {
        await pool.query(`CREATE SCHEMA "${name}"`);
        const checkIns = postgresCheckIns({ pool, now: clock.read });
        const req = request();
        await checkIns.put(req);
        const { rows } = await schema.admin().query(`SELECT id FROM "${name}".toolgate_check_ins`);
        expect(rows).toEqual([{ id: req.id }]);
      } finally {
        await pool.end();
      }
    });
  });

  describe('failures', () => {
    it('rejects every operation after close, naming the store', async () => {
      const checkIns = store();
      await checkIns.close();
      const failure = checkIns.get('chk_any');
      await expect(failure).rejects.toBeInstanceOf(PostgresStoreError);
      await expect(failure).rejects.toMatchObject({ code: 'ERR_STORE_CLOSED', store: 'postgresCheckIns' });
      await checkIns.close();
    });

    it('builds while the server is unreachable, then rejects each operation as retryable without naming the password', async () => {
      // A port nothing listens on: the server refuses the connection at once.
      const url = 'postgres://toolgate:hunter2-secret@127.0.0.1:1/toolgate';
      const checkIns = postgresCheckIns({ connectionString: url, connectTimeoutMs: 1000 });
      open.push(checkIns);
      for (const attempt of [
        checkIns.put(request()),
        checkIns.get('chk_any'),
        checkIns.consume('chk_any'),
        checkIns.list(),
      ]) {
        const error = (await attempt.then(
          () => undefined,
          (e: unknown) => e,
        )) as PostgresStoreError;
        expect(error).toMatchObject({
          name: 'PostgresStoreError',
          store: 'postgresCheckIns',
          retryable: true,
        });
        expect(error.message).toMatch(
          /^postgresCheckIns: could not prepare the database: the server cannot be reached/,
        );
        expect(JSON.stringify({ ...error, message: error.message })).not.toMatch(/hunter2|toolgate:/);
      }
    });

    it('rejects a consume stuck on a locked row once the statement timeout passes, retryably, leaving it pending', async () => {
      const checkIns = store({ statementTimeoutMs: 100 });
      const req = request();
      await checkIns.put(req);
      const admin = await schema.admin().connect();
      try {
        await admin.query('BEGIN');
        await admin.query(`SELECT id FROM "${name}".toolgate_check_ins WHERE id = $1 FOR UPDATE`, [req.id]);
        await expect(checkIns.consume(req.id, receipt(req.id))).rejects.toMatchObject({
          name: 'PostgresStoreError',
          code: '57014',
          retryable: true,
        });
        await admin.query('ROLLBACK');
      } finally {
        admin.release();
      }
      expect((await checkIns.get(req.id))?.state).toBe('pending');
      expect(await checkIns.consume(req.id)).toBe(true);
    });

    it('builds on a key=value connection string and never repeats its password', async () => {
      const checkIns = postgresCheckIns({
        connectionString: "host=127.0.0.1 port=1 user=app password='hunter2 secret' dbname=x",
        connectTimeoutMs: 1000,
      });
      open.push(checkIns);
      const error = (await checkIns.list().then(
        () => undefined,
        (e: unknown) => e,
      )) as PostgresStoreError;
      expect(error).toMatchObject({ name: 'PostgresStoreError', retryable: true });
      expect(error.message).not.toMatch(/hunter2/);
    });

    it('refuses options that name no server or two, and bad numbers, at build', () => {
      expect(() => postgresCheckIns({} as never)).toThrow(/exactly one of 'connectionString'.*'pool'/);
      expect(() => postgresCheckIns(undefined as never)).toThrow(
        /expected \{ connectionString \} or \{ pool \}/,
      );
      expect(() =>
        postgresCheckIns({ connectionString: 'postgres://x', pool: new pg.Pool() } as never),
      ).toThrow(/exactly one/);
      expect(() => postgresCheckIns({ connectionString: '' })).toThrow(/non-empty/);
      expect(() => postgresCheckIns({ pool: {} as never })).toThrow(/pg Pool/);
      expect(() => postgresCheckIns({ connectionString: 'postgres://x', retainMs: -1 })).toThrow(/retainMs/);
      expect(() => postgresCheckIns({ connectionString: 'postgres://x', now: 5 as never })).toThrow(/'now'/);
      expect(() => postgresCheckIns({ connectionString: 'postgres://x', maxConnections: 0 })).toThrow(
        /maxConnections/,
      );
      expect(() => postgresCheckIns({ connectionString: 'postgres://x', statementTimeoutMs: 0 })).toThrow(
        /statementTimeoutMs/,
      );
      expect(() => postgresCheckIns({ connectionString: 'postgres://x', connectTimeoutMs: 1.5 })).toThrow(
        /connectTimeoutMs/,
      );
      expect(() =>
        postgresCheckIns({ connectionString: 'postgres://x', schema: 'a"; DROP TABLE x; --' }),
      ).toThrow(/'schema' must be a plain identifier/);
    });
  });
});
