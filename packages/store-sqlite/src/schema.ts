// The schema, versioned in code: entry i brings a database from `user_version` i to i + 1. Append new
// entries; never edit a shipped one, so any older file opens by replaying only what it lacks.

import { transaction, type SqliteDatabase } from './connection';

export const MIGRATIONS: readonly string[] = [
  `
  CREATE TABLE toolgate_check_ins (
    seq INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    tenant TEXT,
    tool_name TEXT NOT NULL,
    state TEXT NOT NULL CHECK (state IN ('pending', 'consumed', 'revoked')),
    expires_ms INTEGER NOT NULL,
    request TEXT NOT NULL,
    receipt TEXT
  ) STRICT;
  CREATE INDEX toolgate_check_ins_by_tenant ON toolgate_check_ins (tenant, seq);
  CREATE INDEX toolgate_check_ins_by_tool ON toolgate_check_ins (tool_name, seq);
  CREATE INDEX toolgate_check_ins_by_state ON toolgate_check_ins (state, seq);
  CREATE INDEX toolgate_check_ins_by_expiry ON toolgate_check_ins (expires_ms);

  CREATE TABLE toolgate_artifacts (
    seq INTEGER PRIMARY KEY,
    ref TEXT NOT NULL UNIQUE,
    tenant TEXT NOT NULL,
    principal TEXT NOT NULL,
    conversation TEXT NOT NULL,
    kind TEXT NOT NULL,
    created_ms INTEGER NOT NULL,
    expires_ms INTEGER,
    meta TEXT,
    data_json TEXT,
    data_blob BLOB,
    content_type TEXT,
    CHECK ((data_json IS NULL) <> (data_blob IS NULL))
  ) STRICT;
  CREATE INDEX toolgate_artifacts_by_scope ON toolgate_artifacts (tenant, principal, conversation, kind, created_ms);
  CREATE INDEX toolgate_artifacts_by_expiry ON toolgate_artifacts (expires_ms) WHERE expires_ms IS NOT NULL;
  `,
  // A person's decision on a check-in, recorded once, and the columns an inbox and a gateway filter by.
  `
  ALTER TABLE toolgate_check_ins ADD COLUMN principal TEXT;
  ALTER TABLE toolgate_check_ins ADD COLUMN args_digest TEXT;
  ALTER TABLE toolgate_check_ins ADD COLUMN decision TEXT;
  UPDATE toolgate_check_ins SET
    principal = json_extract(request, '$.identity.principal'),
    args_digest = json_extract(request, '$.argsDigest');
  CREATE INDEX toolgate_check_ins_by_principal ON toolgate_check_ins (tenant, principal, seq);
  CREATE INDEX toolgate_check_ins_by_digest ON toolgate_check_ins (args_digest, seq);
  `,
  // Pinned tool definitions and server identities of MCP upstreams.
  `
  CREATE TABLE toolgate_pins (
    source TEXT NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('tool', 'server')),
    name TEXT NOT NULL,
    digest TEXT NOT NULL,
    definition TEXT NOT NULL,
    pinned_at TEXT NOT NULL,
    changed_digest TEXT,
    changed_definition TEXT,
    changed_at TEXT,
    PRIMARY KEY (source, kind, name)
  ) STRICT;
  `,
  // The audit log (@toolgate/audit): records as written, and the head the next append continues.
  `
  CREATE TABLE toolgate_audit (
    seq INTEGER PRIMARY KEY,
    at TEXT NOT NULL,
    tenant TEXT,
    tool TEXT,
    kind TEXT NOT NULL,
    hash TEXT NOT NULL,
    record TEXT NOT NULL
  ) STRICT;
  CREATE INDEX toolgate_audit_by_tenant ON toolgate_audit (tenant, seq);
  CREATE INDEX toolgate_audit_by_at ON toolgate_audit (at);

  CREATE TABLE toolgate_audit_head (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    seq INTEGER NOT NULL,
    hash TEXT NOT NULL
  ) STRICT;
  `,
  // Standing grants (their use count is the single-use point), and the nonces of spent requestStates.
  `
  CREATE TABLE toolgate_grants (
    id TEXT PRIMARY KEY,
    tenant TEXT,
    principal TEXT,
    tool_name TEXT NOT NULL,
    max_uses INTEGER,
    uses INTEGER NOT NULL DEFAULT 0,
    expires_ms INTEGER NOT NULL,
    revoked INTEGER NOT NULL DEFAULT 0,
    created_ms INTEGER NOT NULL,
    grant_json TEXT NOT NULL
  ) STRICT;
  CREATE INDEX toolgate_grants_by_caller ON toolgate_grants (tenant, principal, tool_name);

  CREATE TABLE toolgate_spent_states (
    nonce TEXT PRIMARY KEY,
    expires_ms INTEGER NOT NULL
  ) STRICT;
  CREATE INDEX toolgate_spent_states_by_expiry ON toolgate_spent_states (expires_ms);
  `,
  // MCP tasks, so any process behind a balancer answers tasks/get, tasks/update and tasks/cancel.
  `
  CREATE TABLE toolgate_tasks (
    id TEXT PRIMARY KEY,
    tenant TEXT,
    principal TEXT,
    status TEXT NOT NULL CHECK (status IN ('working', 'input_required', 'completed', 'failed', 'cancelled')),
    created_ms INTEGER NOT NULL,
    expires_ms INTEGER NOT NULL,
    record TEXT NOT NULL,
    responses TEXT
  ) STRICT;
  CREATE INDEX toolgate_tasks_by_owner ON toolgate_tasks (tenant, principal, created_ms);
  CREATE INDEX toolgate_tasks_by_expiry ON toolgate_tasks (expires_ms);
  `,
  // A task's lease: when its running process last renewed it (NULL: created before leases, never stale).
  `
  ALTER TABLE toolgate_tasks ADD COLUMN renewed_ms INTEGER;
  `,
  // The audit log is read by seq only: an index on it is a page more written by every commit and read by nothing.
  `
  DROP INDEX toolgate_audit_by_tenant;
  DROP INDEX toolgate_audit_by_at;
  `,
];

const userVersion = (db: SqliteDatabase): number =>
  (db.prepare('PRAGMA user_version').get() as { user_version: number }).user_version;

/** Brings `db` to the newest schema in `migrations`; refuses a file written by a newer schema. */
export function migrate(db: SqliteDatabase, migrations: readonly string[] = MIGRATIONS): void {
  const newest = migrations.length;
  const check = (version: number) => {
    if (version > newest) {
      throw new Error(
        `the file has schema version ${version}, newer than this @toolgate/store-sqlite knows (${newest}); upgrade the package or use another file`,
      );
    }
  };
  const before = userVersion(db);
  check(before);
  if (before === newest) return;
  // IMMEDIATE takes the write lock first, so two processes opening an old file migrate it once.
  transaction(
    db,
    () => {
      const current = userVersion(db);
      check(current);
      for (let version = current; version < newest; version++) db.exec(migrations[version]!);
      db.exec(`PRAGMA user_version = ${newest}`);
    },
    'immediate',
  );
}
