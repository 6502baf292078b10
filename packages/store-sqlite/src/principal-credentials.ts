// Per-principal credentials as sealed blobs: one row per (credential name, tenant, principal). The
// store never sees a secret: the gateway seals each value (AES-256-GCM, bound to its row's key)
// before it is written and opens it after it is read. Its table is created here, beside the
// migrated ones, so it needs no schema version of its own.

import { Connection, type SqliteDatabase, type SqliteStoreOptions } from './connection';

export type SqlitePrincipalCredentialsOptions = SqliteStoreOptions;

/** One stored credential, without its value. */
export interface PrincipalCredentialEntry {
  readonly name: string;
  readonly tenant: string;
  readonly principal: string;
  readonly updatedAt: string;
}

export interface SqlitePrincipalCredentialStore {
  /** The sealed value, or undefined when the principal has none. */
  get(name: string, tenant: string, principal: string): Promise<string | undefined>;
  /** Stores (or replaces) a sealed value. */
  set(name: string, tenant: string, principal: string, sealed: string): Promise<void>;
  /** Whether there was one to delete. */
  delete(name: string, tenant: string, principal: string): Promise<boolean>;
  /** What is stored for `name`, optionally of one tenant; never a value. */
  list(name: string, tenant?: string): Promise<PrincipalCredentialEntry[]>;
  close(): void;
}

const STORE = 'sqlitePrincipalCredentials';

interface Row {
  readonly name: string;
  readonly tenant: string;
  readonly principal: string;
  readonly sealed: string;
  readonly updated_at: string;
}

function prepare(db: SqliteDatabase) {
  db.exec(`CREATE TABLE IF NOT EXISTS toolgate_principal_credentials (
    name TEXT NOT NULL,
    tenant TEXT NOT NULL,
    principal TEXT NOT NULL,
    sealed TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (name, tenant, principal)
  )`);
  return {
    get: db.prepare(
      `SELECT sealed FROM toolgate_principal_credentials WHERE name = ? AND tenant = ? AND principal = ?`,
    ),
    set: db.prepare(
      `INSERT INTO toolgate_principal_credentials (name, tenant, principal, sealed, updated_at) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (name, tenant, principal) DO UPDATE SET sealed = excluded.sealed, updated_at = excluded.updated_at`,
    ),
    delete: db.prepare(
      `DELETE FROM toolgate_principal_credentials WHERE name = ? AND tenant = ? AND principal = ?`,
    ),
    list: db.prepare(
      `SELECT name, tenant, principal, updated_at FROM toolgate_principal_credentials WHERE name = ? ORDER BY tenant, principal`,
    ),
  };
}

/** Sealed per-principal credentials in SQLite (Node's built-in node:sqlite). */
export function sqlitePrincipalCredentials(
  options: SqlitePrincipalCredentialsOptions,
): SqlitePrincipalCredentialStore {
  const connection = new Connection(STORE, options, prepare);
  return {
    async get(name, tenant, principal) {
      const row = connection.use(
        `read credential '${name}'`,
        (s) => s.get.get(name, tenant, principal) as Pick<Row, 'sealed'> | undefined,
      );
      return row?.sealed;
    },
    async set(name, tenant, principal, sealed) {
      connection.use(`store credential '${name}'`, (s) =>
        s.set.run(name, tenant, principal, sealed, new Date(connection.now()).toISOString()),
      );
    },
    async delete(name, tenant, principal) {
      return connection.use(
        `delete credential '${name}'`,
        (s) => s.delete.run(name, tenant, principal).changes === 1,
      );
    },
    async list(name, tenant) {
      const rows = connection.use(
        `list credential '${name}'`,
        (s) => s.list.all(name) as unknown as Omit<Row, 'sealed'>[],
      );
      return rows
        .filter((row) => tenant === undefined || row.tenant === tenant)
        .map((row) => ({
          name: row.name,
          tenant: row.tenant,
          principal: row.principal,
          updatedAt: row.updated_at,
        }));
    },
    close() {
      connection.close();
    },
  };
}
