// Per-principal credentials as sealed blobs in PostgreSQL, shared by every gateway process on the
// database: one row per (credential name, tenant, principal). The store never sees a secret: the
// gateway seals each value (AES-256-GCM, bound to its row's key) before it is written and opens it
// after it is read. Its table is created here on first use, beside the migrated ones, so it needs no
// schema version of its own.

import { Connection, type PostgresStoreOptions } from './connection';
import { prefixOf } from './schema';

export type PostgresPrincipalCredentialsOptions = PostgresStoreOptions;

/** One stored credential, without its value. */
export interface PostgresPrincipalCredentialEntry {
  readonly name: string;
  readonly tenant: string;
  readonly principal: string;
  readonly updatedAt: string;
}

export interface PostgresPrincipalCredentialStore {
  /** The sealed value, or undefined when the principal has none. */
  get(name: string, tenant: string, principal: string): Promise<string | undefined>;
  /** Stores (or replaces) a sealed value. */
  set(name: string, tenant: string, principal: string, sealed: string): Promise<void>;
  /** Whether there was one to delete. */
  delete(name: string, tenant: string, principal: string): Promise<boolean>;
  /** What is stored for `name`, optionally of one tenant; never a value. */
  list(name: string, tenant?: string): Promise<PostgresPrincipalCredentialEntry[]>;
  /** Ends the pool if the store made it; a pool passed in stays open. */
  close(): Promise<void>;
}

const STORE = 'postgresPrincipalCredentials';

export function postgresPrincipalCredentials(
  options: PostgresPrincipalCredentialsOptions,
): PostgresPrincipalCredentialStore {
  const connection = new Connection(STORE, options);
  const t = prefixOf(connection.schema);
  let table: Promise<unknown> | undefined;
  const ready = (pool: Parameters<Parameters<typeof connection.use>[1]>[0]) => {
    table ??= pool
      .query(
        `CREATE TABLE IF NOT EXISTS ${t}toolgate_principal_credentials (
           name TEXT NOT NULL,
           tenant TEXT NOT NULL,
           principal TEXT NOT NULL,
           sealed TEXT NOT NULL,
           updated_at TIMESTAMPTZ NOT NULL,
           PRIMARY KEY (name, tenant, principal)
         )`,
      )
      .catch((error: unknown) => {
        table = undefined;
        throw error;
      });
    return table;
  };
  return {
    async get(name, tenant, principal) {
      const { rows } = await connection.use(`read credential '${name}'`, async (pool) => {
        await ready(pool);
        return pool.query<{ sealed: string }>(
          `SELECT sealed FROM ${t}toolgate_principal_credentials WHERE name = $1 AND tenant = $2 AND principal = $3`,
          [name, tenant, principal],
        );
      });
      return rows[0]?.sealed;
    },
    async set(name, tenant, principal, sealed) {
      await connection.use(`store credential '${name}'`, async (pool) => {
        await ready(pool);
        await pool.query(
          `INSERT INTO ${t}toolgate_principal_credentials (name, tenant, principal, sealed, updated_at)
           VALUES ($1, $2, $3, $4, $5)
           ON CONFLICT (name, tenant, principal) DO UPDATE SET sealed = EXCLUDED.sealed, updated_at = EXCLUDED.updated_at`,
          [name, tenant, principal, sealed, new Date(connection.now()).toISOString()],
        );
      });
    },
    async delete(name, tenant, principal) {
      const { rowCount } = await connection.use(`delete credential '${name}'`, async (pool) => {
        await ready(pool);
        return pool.query(
          `DELETE FROM ${t}toolgate_principal_credentials WHERE name = $1 AND tenant = $2 AND principal = $3`,
          [name, tenant, principal],
        );
      });
      return rowCount === 1;
    },
    async list(name, tenant) {
      const { rows } = await connection.use(`list credential '${name}'`, async (pool) => {
        await ready(pool);
        return pool.query<{ name: string; tenant: string; principal: string; updated_at: Date }>(
          `SELECT name, tenant, principal, updated_at FROM ${t}toolgate_principal_credentials
           WHERE name = $1 AND ($2::text IS NULL OR tenant = $2)
           ORDER BY tenant COLLATE "C", principal COLLATE "C"`,
          [name, tenant ?? null],
        );
      });
      return rows.map((row) => ({
        name: row.name,
        tenant: row.tenant,
        principal: row.principal,
        updatedAt: new Date(row.updated_at).toISOString(),
      }));
    },
    close() {
      return connection.close();
    },
  };
}
