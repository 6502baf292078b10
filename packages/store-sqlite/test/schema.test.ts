import { DatabaseSync as Database } from 'node:sqlite';
import { sqliteArtifacts, sqliteCheckIns } from '@toolgate/store-sqlite';
import { migrate, MIGRATIONS } from '../src/schema';
import { request, tempDir } from './support';

const versionOf = (db: Database) =>
  (db.prepare('PRAGMA user_version').get() as { user_version: number }).user_version;
const tables = (db: Database) =>
  (
    db.prepare(`SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name`).all() as {
      name: string;
    }[]
  ).map((t) => t.name);

describe('schema migrations', () => {
  let tmp: ReturnType<typeof tempDir>;
  beforeEach(() => (tmp = tempDir()));
  afterEach(() => tmp.cleanup());

  it('brings a new file to the newest version', async () => {
    const path = tmp.file('new.db');
    const checkIns = sqliteCheckIns({ path });
    await checkIns.list();
    checkIns.close();
    const db = new Database(path);
    expect(versionOf(db)).toBe(MIGRATIONS.length);
    expect(tables(db)).toEqual([
      'toolgate_artifacts',
      'toolgate_audit',
      'toolgate_audit_head',
      'toolgate_check_ins',
      'toolgate_grants',
      'toolgate_pins',
      'toolgate_spent_states',
      'toolgate_tasks',
    ]);
    db.close();
  });

  it('adds its tables to an existing version-0 database and leaves the tables already there alone', async () => {
    const path = tmp.file('app.db');
    const app = new Database(path);
    app.exec(
      `CREATE TABLE orders (id INTEGER PRIMARY KEY, total INTEGER); INSERT INTO orders (total) VALUES (42);`,
    );
    app.close();

    const artifacts = sqliteArtifacts({ path });
    const ref = await artifacts.put({ tenant: 'acme' }, { kind: 'k', data: 1 });
    artifacts.close();

    const db = new Database(path);
    expect(db.prepare('SELECT total FROM orders').all()).toEqual([{ total: 42 }]);
    expect(db.prepare('SELECT ref FROM toolgate_artifacts').all()).toEqual([{ ref }]);
    expect(versionOf(db)).toBe(MIGRATIONS.length);
    db.close();
  });

  it('opens a file at the current version again without re-running a migration', async () => {
    const path = tmp.file('again.db');
    const first = sqliteCheckIns({ path });
    const req = request();
    await first.put(req);
    first.close();
    // A second run of the first migration would fail on CREATE TABLE, so opening proves it is skipped.
    const second = sqliteCheckIns({ path });
    expect((await second.get(req.id))?.state).toBe('pending');
    second.close();
  });

  it('replays only the migrations an older file lacks, keeping its data', () => {
    const db = new Database(':memory:');
    const v1 = `CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT NOT NULL);`;
    const v2 = `ALTER TABLE notes ADD COLUMN author TEXT NOT NULL DEFAULT 'unknown';`;
    migrate(db, [v1]);
    db.prepare('INSERT INTO notes (text) VALUES (?)').run('kept');
    migrate(db, [v1, v2]);
    expect(versionOf(db)).toBe(2);
    expect(db.prepare('SELECT text, author FROM notes').all()).toEqual([{ text: 'kept', author: 'unknown' }]);
    db.close();
  });

  it('rolls back a migration that fails, leaving the version and the schema as they were', () => {
    const db = new Database(':memory:');
    const v1 = `CREATE TABLE notes (id INTEGER PRIMARY KEY);`;
    migrate(db, [v1]);
    const broken = `CREATE TABLE extra (id INTEGER); INSERT INTO missing_table VALUES (1);`;
    expect(() => migrate(db, [v1, broken])).toThrow(/missing_table/);
    expect(versionOf(db)).toBe(1);
    expect(tables(db)).toEqual(['notes']);
    db.close();
  });

  it('refuses a file written by a newer schema, saying so, and leaves its version and tables as they were', async () => {
    const path = tmp.file('future.db');
    const future = new Database(path);
    future.exec(`PRAGMA user_version = ${MIGRATIONS.length + 1}`);
    future.close();

    const checkIns = sqliteCheckIns({ path });
    await expect(checkIns.put(request())).rejects.toThrow(
      new RegExp(
        `sqliteCheckIns \\(.*future\\.db\\): could not open the database: the file has schema version ${MIGRATIONS.length + 1}, newer than`,
      ),
    );
    checkIns.close();
    const db = new Database(path);
    expect(versionOf(db)).toBe(MIGRATIONS.length + 1);
    expect(tables(db)).toEqual([]);
    db.close();
  });

  it('upgrades a file written before decisions were recorded: its check-ins can be listed by principal and digest, and decided', async () => {
    const path = tmp.file('before-decisions.db');
    const old = new Database(path);
    migrate(old, MIGRATIONS.slice(0, 1));
    const req = request({ identity: { tenant: 'acme', principal: 'ana' }, argsDigest: 'e'.repeat(64) });
    old
      .prepare(
        `INSERT INTO toolgate_check_ins (id, tenant, tool_name, state, expires_ms, request) VALUES (?, ?, ?, 'pending', ?, ?)`,
      )
      .run(req.id, 'acme', req.toolName, Date.parse(req.expiresAt), JSON.stringify(req));
    old.close();

    const checkIns = sqliteCheckIns({ path, now: () => Date.parse(req.createdAt) });
    expect(
      (await checkIns.list({ principal: 'ana', argsDigest: 'e'.repeat(64), decided: false })).map(
        (r) => r.request.id,
      ),
    ).toEqual([req.id]);
    const decision = { approved: true as const, by: 'bo', decidedAt: req.createdAt };
    await expect(checkIns.decide(req.id, decision)).resolves.toBe(true);
    expect((await checkIns.get(req.id))?.decision).toEqual(decision);
    checkIns.close();
  });
  it('keeps no index on the audit log beside its seq, and drops the two an older file has, its records intact', () => {
    const path = tmp.file('audit-indexes.db');
    const indexes = (db: Database) =>
      (db.prepare(`PRAGMA index_list('toolgate_audit')`).all() as { name: string }[]).map((i) => i.name);
    const dropped = MIGRATIONS.findIndex((sql) => sql.includes('DROP INDEX toolgate_audit_by_tenant'));
    expect(dropped).toBeGreaterThan(0);
    const db = new Database(path);
    migrate(db, MIGRATIONS.slice(0, dropped));
    expect(indexes(db).sort()).toEqual(['toolgate_audit_by_at', 'toolgate_audit_by_tenant']);
    db.exec(
      `INSERT INTO toolgate_audit (seq, at, tenant, tool, kind, hash, record) VALUES (1, 't', 'acme', 'x', 'result', 'h', '{}')`,
    );
    migrate(db);
    expect(indexes(db)).toEqual([]);
    expect(db.prepare('SELECT seq, tenant FROM toolgate_audit').all()).toEqual([{ seq: 1, tenant: 'acme' }]);
    db.close();
  });
});
