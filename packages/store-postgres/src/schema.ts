// The schema, versioned in code: entry i brings a database from version i to i + 1, and
// `toolgate_migrations` records each version applied. Append new entries; never edit a shipped one,
// so any older database upgrades by replaying only what it lacks. All of it runs in one transaction
// under an advisory lock, so several instances starting at once migrate exactly once.

import type { Pool, PoolClient } from 'pg';

/** One migration: SQL for the tables prefixed by `t` (a quoted schema and a dot, or nothing). */
export type Migration = (t: string) => string;

export const MIGRATIONS: readonly Migration[] = [
  (t) => `
  CREATE TABLE ${t}toolgate_check_ins (
    seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    tenant TEXT,
    tool_name TEXT NOT NULL,
    state TEXT NOT NULL CHECK (state IN ('pending', 'consumed', 'revoked')),
    expires_ms BIGINT NOT NULL,
    request JSON NOT NULL,
    receipt JSON
  );
  CREATE INDEX toolgate_check_ins_by_tenant ON ${t}toolgate_check_ins (tenant, seq);
  CREATE INDEX toolgate_check_ins_by_tool ON ${t}toolgate_check_ins (tool_name, seq);
  CREATE INDEX toolgate_check_ins_by_state ON ${t}toolgate_check_ins (state, seq);
  CREATE INDEX toolgate_check_ins_by_expiry ON ${t}toolgate_check_ins (expires_ms);

  CREATE TABLE ${t}toolgate_artifacts (
    seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    ref TEXT NOT NULL UNIQUE,
    tenant TEXT NOT NULL,
    principal TEXT NOT NULL,
    conversation TEXT NOT NULL,
    kind TEXT NOT NULL,
    created_ms BIGINT NOT NULL,
    expires_ms BIGINT,
    meta JSON,
    data_json JSON,
    data_bytes BYTEA,
    content_type TEXT,
    CHECK ((data_json IS NULL) <> (data_bytes IS NULL))
  );
  CREATE INDEX toolgate_artifacts_by_scope ON ${t}toolgate_artifacts (tenant, principal, conversation, kind, created_ms);
  CREATE INDEX toolgate_artifacts_by_expiry ON ${t}toolgate_artifacts (expires_ms) WHERE expires_ms IS NOT NULL;
  `,
  // A person's decision on a check-in, recorded once, and the columns an inbox and a gateway filter by.
  (t) => `
  ALTER TABLE ${t}toolgate_check_ins
    ADD COLUMN principal TEXT,
    ADD COLUMN args_digest TEXT,
    ADD COLUMN decision JSON;
  UPDATE ${t}toolgate_check_ins SET
    principal = request -> 'identity' ->> 'principal',
    args_digest = request ->> 'argsDigest';
  CREATE INDEX toolgate_check_ins_by_principal ON ${t}toolgate_check_ins (tenant, principal, seq);
  CREATE INDEX toolgate_check_ins_by_digest ON ${t}toolgate_check_ins (args_digest, seq);
  `,
  // Pinned tool definitions and server identities of MCP upstreams.
  (t) => `
  CREATE TABLE ${t}toolgate_pins (
    source TEXT NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('tool', 'server')),
    name TEXT NOT NULL,
    digest TEXT NOT NULL,
    definition JSON NOT NULL,
    pinned_at TEXT NOT NULL,
    changed_digest TEXT,
    changed_definition JSON,
    changed_at TEXT,
    PRIMARY KEY (source, kind, name)
  );
  `,
  // The audit log (@toolgate/audit): records as written (JSON keeps their text), and the head row an
  // append locks; seq 0 there means the log is empty.
  (t) => `
  CREATE TABLE ${t}toolgate_audit (
    seq BIGINT PRIMARY KEY,
    at TIMESTAMPTZ NOT NULL,
    tenant TEXT,
    tool TEXT,
    kind TEXT NOT NULL,
    hash TEXT NOT NULL,
    record JSON NOT NULL
  );
  CREATE INDEX toolgate_audit_by_tenant ON ${t}toolgate_audit (tenant, seq);
  CREATE INDEX toolgate_audit_by_at ON ${t}toolgate_audit (at);

  CREATE TABLE ${t}toolgate_audit_head (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    seq BIGINT NOT NULL,
    hash TEXT NOT NULL
  );
  INSERT INTO ${t}toolgate_audit_head (id, seq, hash) VALUES (1, 0, '');
  `,
  // Standing grants (their use count is the single-use point), and the nonces of spent requestStates.
  (t) => `
  CREATE TABLE ${t}toolgate_grants (
    id TEXT PRIMARY KEY,
    tenant TEXT,
    principal TEXT,
    tool_name TEXT NOT NULL,
    max_uses INTEGER,
    uses INTEGER NOT NULL DEFAULT 0,
    expires_ms BIGINT NOT NULL,
    revoked BOOLEAN NOT NULL DEFAULT false,
    created_ms BIGINT NOT NULL,
    grant_json JSON NOT NULL
  );
  CREATE INDEX toolgate_grants_by_caller ON ${t}toolgate_grants (tenant, principal, tool_name);

  CREATE TABLE ${t}toolgate_spent_states (
    nonce TEXT PRIMARY KEY,
    expires_ms BIGINT NOT NULL
  );
  CREATE INDEX toolgate_spent_states_by_expiry ON ${t}toolgate_spent_states (expires_ms);
  `,
  // MCP tasks, so any process behind a balancer answers tasks/get, tasks/update and tasks/cancel.
  (t) => `
  CREATE TABLE ${t}toolgate_tasks (
    id TEXT PRIMARY KEY,
    tenant TEXT,
    principal TEXT,
    status TEXT NOT NULL CHECK (status IN ('working', 'input_required', 'completed', 'failed', 'cancelled')),
    created_ms BIGINT NOT NULL,
    expires_ms BIGINT NOT NULL,
    record TEXT NOT NULL,
    responses TEXT
  );
  CREATE INDEX toolgate_tasks_by_owner ON ${t}toolgate_tasks (tenant, principal, created_ms);
  CREATE INDEX toolgate_tasks_by_expiry ON ${t}toolgate_tasks (expires_ms);
  `,
  // A task's lease: when its running process last renewed it (NULL: created before leases, never stale).
  (t) => `
  ALTER TABLE ${t}toolgate_tasks ADD COLUMN renewed_ms BIGINT;
  `,
  // The audit log is read by seq only: an index on it is written by every append and read by nothing.
  (t) => `
  DROP INDEX ${t}toolgate_audit_by_tenant;
  DROP INDEX ${t}toolgate_audit_by_at;
  `,
];

/** `"schema".` for a schema name, or nothing for the connection's current schema. */
export const prefixOf = (schema: string | undefined): string =>
  schema === undefined ? '' : `"${schema.replaceAll('"', '""')}".`;

// The advisory lock's first key is the same for every toolgate store; the second is the schema's hash.
const LOCK_SPACE = 0x746f6f6c;

/**
 * Brings the tables in `schema` (or the current schema) to the newest version in `migrations`;
 * refuses a database written by a newer schema, leaving it as it was.
 */
export async function migrate(
  pool: Pool,
  schema: string | undefined,
  migrations: readonly Migration[] = MIGRATIONS,
): Promise<void> {
  const t = prefixOf(schema);
  const newest = migrations.length;
  const client = await pool.connect();
  // A checked-out client has no error listener; a dropped connection must not crash the process.
  const onError = () => undefined;
  client.on('error', onError);
  let broken: unknown;
  try {
    await client.query('BEGIN');
    await client.query(`SELECT pg_advisory_xact_lock($1, hashtext(coalesce($2, current_schema(), '')))`, [
      LOCK_SPACE,
      schema ?? null,
    ]);
    if (schema !== undefined) await client.query(`CREATE SCHEMA IF NOT EXISTS ${t.slice(0, -1)}`);
    await client.query(
      `CREATE TABLE IF NOT EXISTS ${t}toolgate_migrations (
         version INTEGER PRIMARY KEY,
         applied_at TIMESTAMPTZ NOT NULL DEFAULT now()
       )`,
    );
    const current = await currentVersion(client, t);
    if (current > newest) {
      throw new Error(
        `the database has schema version ${current}, newer than this @toolgate/store-postgres knows (${newest}); upgrade the package or use another schema`,
      );
    }
    for (let version = current; version < newest; version++) {
      await client.query(migrations[version]!(t));
      await client.query(`INSERT INTO ${t}toolgate_migrations (version) VALUES ($1)`, [version + 1]);
    }
    await client.query('COMMIT');
  } catch (error) {
    broken = error;
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.off('error', onError);
    // A client that failed mid-transaction is discarded rather than handed to the next caller.
    client.release(broken instanceof Error ? broken : undefined);
  }
}

async function currentVersion(client: PoolClient, t: string): Promise<number> {
  const result = await client.query<{ version: number | null }>(
    `SELECT max(version) AS version FROM ${t}toolgate_migrations`,
  );
  return result.rows[0]?.version ?? 0;
}
