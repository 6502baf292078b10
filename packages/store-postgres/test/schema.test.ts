import pg from 'pg';
import { postgresArtifacts, postgresCheckIns } from '@toolgate/store-postgres';
import { migrate, MIGRATIONS, type Migration } from '../src/schema';
import { describePostgres, postgresUrl, request, schemas } from './support';

describePostgres('schema migrations', () => {
  const schema = schemas('schema');
  let pool: pg.Pool;
  beforeAll(() => {
    pool = new pg.Pool({ connectionString: postgresUrl(), max: 4 });
  });
  afterAll(() => pool.end());

  const versions = async (name: string) =>
    (await pool.query(`SELECT version FROM "${name}".toolgate_migrations ORDER BY version`)).rows.map(
      (row: { version: number }) => row.version,
    );
  const tables = async (name: string) =>
    (
      await pool.query(
        `SELECT table_name FROM information_schema.tables WHERE table_schema = $1 ORDER BY table_name`,
        [name],
      )
    ).rows.map((row: { table_name: string }) => row.table_name);

  it('creates the schema and brings it to the newest version on first use', async () => {
    const name = schema.next();
    const checkIns = postgresCheckIns({ connectionString: postgresUrl(), schema: name });
    await checkIns.list();
    await checkIns.close();
    expect(await versions(name)).toEqual(MIGRATIONS.map((_, i) => i + 1));
    expect(await tables(name)).toEqual([
      'toolgate_artifacts',
      'toolgate_audit',
      'toolgate_audit_head',
      'toolgate_check_ins',
      'toolgate_grants',
      'toolgate_migrations',
      'toolgate_pins',
      'toolgate_spent_states',
      'toolgate_tasks',
    ]);
  });

  it('migrates exactly once when eight instances, each with its own pool, start at the same time', async () => {
    const name = schema.next();
    const stores = Array.from({ length: 8 }, (_, i) =>
      i % 2 === 0
        ? postgresCheckIns({ connectionString: postgresUrl(), schema: name, maxConnections: 2 })
        : postgresArtifacts({ connectionString: postgresUrl(), schema: name, maxConnections: 2 }),
    );
    try {
      const answers = await Promise.allSettled(stores.map((s) => s.sweep()));
      expect(answers.map((a) => a.status)).toEqual(Array(8).fill('fulfilled'));
      expect(await versions(name)).toEqual(MIGRATIONS.map((_, i) => i + 1));
    } finally {
      await Promise.all(stores.map((s) => s.close()));
    }
  });

  it('runs several migrate calls at once on a fresh schema without an error or a second run', async () => {
    const name = schema.next();
    const pools = Array.from({ length: 6 }, () => new pg.Pool({ connectionString: postgresUrl(), max: 1 }));
    try {
      await Promise.all(pools.map((p) => migrate(p, name)));
      expect(await versions(name)).toEqual(MIGRATIONS.map((_, i) => i + 1));
    } finally {
      await Promise.all(pools.map((p) => p.end()));
    }
  });

  it('adds its tables beside the tables already in a schema and leaves those alone', async () => {
    const name = schema.next();
    await pool.query(`CREATE SCHEMA "${name}"`);
    await pool.query(`CREATE TABLE "${name}".orders (id SERIAL PRIMARY KEY, total INTEGER)`);
    await pool.query(`INSERT INTO "${name}".orders (total) VALUES (42)`);
    const artifacts = postgresArtifacts({ connectionString: postgresUrl(), schema: name });
    const ref = await artifacts.put({ tenant: 'acme' }, { kind: 'k', data: 1 });
    await artifacts.close();
    expect((await pool.query(`SELECT total FROM "${name}".orders`)).rows).toEqual([{ total: 42 }]);
    expect((await pool.query(`SELECT ref FROM "${name}".toolgate_artifacts`)).rows).toEqual([{ ref }]);
  });

  it('opens a schema at the current version again without re-running a migration', async () => {
    const name = schema.next();
    const first = postgresCheckIns({ connectionString: postgresUrl(), schema: name });
    const req = request();
    await first.put(req);
    await first.close();
    // A second run of the first migration would fail on CREATE TABLE, so opening proves it is skipped.
    const second = postgresCheckIns({ connectionString: postgresUrl(), schema: name });
    expect((await second.get(req.id))?.state).toBe('pending');
    await second.close();
    expect(await versions(name)).toEqual(MIGRATIONS.map((_, i) => i + 1));
  });

  it('replays only the migrations an older schema lacks, keeping its data', async () => {
    const name = schema.next();
    const v1: Migration = (t) => `CREATE TABLE ${t}notes (id SERIAL PRIMARY KEY, text TEXT NOT NULL)`;
    const v2: Migration = (t) => `ALTER TABLE ${t}notes ADD COLUMN author TEXT NOT NULL DEFAULT 'unknown'`;
    await migrate(pool, name, [v1]);
    await pool.query(`INSERT INTO "${name}".notes (text) VALUES ('kept')`);
    await migrate(pool, name, [v1, v2]);
    expect(await versions(name)).toEqual([1, 2]);
    expect((await pool.query(`SELECT text, author FROM "${name}".notes`)).rows).toEqual([
      { text: 'kept', author: 'unknown' },
    ]);
  });

  it('rolls back a migration that fails, leaving the version and the tables as they were', async () => {
    const name = schema.next();
    const v1: Migration = (t) => `CREATE TABLE ${t}notes (id SERIAL PRIMARY KEY)`;
    await migrate(pool, name, [v1]);
    const broken: Migration = (t) =>
      `CREATE TABLE ${t}extra (id INTEGER); INSERT INTO ${t}missing_table VALUES (1);`;
    await expect(migrate(pool, name, [v1, broken])).rejects.toThrow(/missing_table/);
    expect(await versions(name)).toEqual([1]);
    expect(await tables(name)).toEqual(['notes', 'toolgate_migrations']);
  });

  it('refuses a schema written by a newer version, saying so, and leaves it as it was', async () => {
    const name = schema.next();
    await migrate(pool, name);
    const future = MIGRATIONS.length + 1;
    await pool.query(`INSERT INTO "${name}".toolgate_migrations (version) VALUES ($1)`, [future]);

    const checkIns = postgresCheckIns({ connectionString: postgresUrl(), schema: name });
    const failure = checkIns.put(request());
    await expect(failure).rejects.toThrow(
      `postgresCheckIns: could not prepare the database: the database has schema version ${future}, newer than this @toolgate/store-postgres knows (${MIGRATIONS.length})`,
    );
    await expect(failure).rejects.toMatchObject({ retryable: false });
    await checkIns.close();
    expect(await versions(name)).toEqual([...MIGRATIONS.map((_, i) => i + 1), future]);
    expect((await pool.query(`SELECT count(*)::int AS n FROM "${name}".toolgate_check_ins`)).rows).toEqual([
      { n: 0 },
    ]);
  });

  it('upgrades a schema written before decisions were recorded: its check-ins can be listed by principal and digest, and decided', async () => {
    const name = schema.next();
    await migrate(pool, name, MIGRATIONS.slice(0, 1));
    const req = request({ identity: { tenant: 'acme', principal: 'ana' }, argsDigest: 'e'.repeat(64) });
    await pool.query(
      `INSERT INTO "${name}".toolgate_check_ins (id, tenant, tool_name, state, expires_ms, request) VALUES ($1, $2, $3, 'pending', $4, $5)`,
      [req.id, 'acme', req.toolName, Date.parse(req.expiresAt), JSON.stringify(req)],
    );
    const checkIns = postgresCheckIns({
      connectionString: postgresUrl(),
      schema: name,
      now: () => Date.parse(req.createdAt),
    });
    try {
      const listed = await checkIns.list({ principal: 'ana', argsDigest: 'e'.repeat(64), decided: false });
      expect(listed.map((r) => r.request.id)).toEqual([req.id]);
      const decision = { approved: true as const, by: 'bo', decidedAt: req.createdAt };
      await expect(checkIns.decide(req.id, decision)).resolves.toBe(true);
      expect((await checkIns.get(req.id))?.decision).toEqual(decision);
      expect(await versions(name)).toEqual(MIGRATIONS.map((_, i) => i + 1));
    } finally {
      await checkIns.close();
    }
  });
  it('keeps no index on the audit log beside its primary key, and drops the two an older schema has, its records intact', async () => {
    const name = schema.next();
    const indexes = async () =>
      (
        await pool.query(
          `SELECT indexname FROM pg_indexes WHERE schemaname = $1 AND tablename = 'toolgate_audit' ORDER BY indexname`,
          [name],
        )
      ).rows.map((row: { indexname: string }) => row.indexname);
    const dropped = MIGRATIONS.findIndex((m) => m('').includes('DROP INDEX toolgate_audit_by_tenant'));
    expect(dropped).toBeGreaterThan(0);
    await migrate(pool, name, MIGRATIONS.slice(0, dropped));
    expect(await indexes()).toEqual([
      'toolgate_audit_by_at',
      'toolgate_audit_by_tenant',
      'toolgate_audit_pkey',
    ]);
    await pool.query(
      `INSERT INTO "${name}".toolgate_audit (seq, at, tenant, tool, kind, hash, record) VALUES (1, '2026-12-05T10:00:00Z', 'acme', 'x', 'result', 'h', '{}')`,
    );
    await migrate(pool, name);
    expect(await indexes()).toEqual(['toolgate_audit_pkey']);
    expect((await pool.query(`SELECT seq, tenant FROM "${name}".toolgate_audit`)).rows).toEqual([
      { seq: '1', tenant: 'acme' },
    ]);
    expect(await versions(name)).toEqual(MIGRATIONS.map((_, i) => i + 1));
  });
});
