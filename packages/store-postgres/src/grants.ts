// Standing grants and spent requestStates in PostgreSQL, shared by every gateway process on the
// database: a use is one conditional UPDATE (uses below the limit, not revoked, not expired), which
// row locking makes atomic, and a spend is one INSERT … ON CONFLICT DO NOTHING.

import type { SpentStateStore, StandingGrant, StandingGrantFilter, StandingGrantStore } from '@toolgate/core';
import { Connection, type PostgresStoreOptions } from './connection';
import { prefixOf } from './schema';

export type PostgresStandingGrantsOptions = PostgresStoreOptions;
export type PostgresSpentStatesOptions = PostgresStoreOptions;

export interface PostgresStandingGrantStore extends StandingGrantStore {
  /** Ends the pool if the store made it; a pool passed in stays open. */
  close(): Promise<void>;
}

export interface PostgresSpentStateStore extends SpentStateStore {
  /** Ends the pool if the store made it; a pool passed in stays open. */
  close(): Promise<void>;
}

interface Row {
  readonly uses: number;
  readonly revoked: boolean;
  readonly grant_json: StandingGrant;
}

// The row's counters are the truth; the JSON keeps everything else as created.
const grantOf = (row: Row): StandingGrant => ({
  ...row.grant_json,
  uses: row.uses,
  ...(row.revoked ? { revoked: true } : {}),
});

/**
 * Standing grants in PostgreSQL, beside the check-ins.
 *
 * ```ts
 * const grants = postgresStandingGrants({ connectionString: process.env.DATABASE_URL! });
 * ```
 */
export function postgresStandingGrants(options: PostgresStandingGrantsOptions): PostgresStandingGrantStore {
  const connection = new Connection('postgresStandingGrants', options);
  const t = prefixOf(connection.schema);
  return {
    async create(grant) {
      await connection.use(`create grant '${grant.id}'`, (pool) =>
        pool.query(
          `INSERT INTO ${t}toolgate_grants (id, tenant, principal, tool_name, max_uses, uses, expires_ms, revoked, created_ms, grant_json)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10::json)`,
          [
            grant.id,
            grant.tenant ?? null,
            grant.principal ?? null,
            grant.toolName,
            grant.maxUses ?? null,
            grant.uses,
            Date.parse(grant.expiresAt),
            grant.revoked === true,
            Date.parse(grant.createdAt),
            JSON.stringify(grant),
          ],
        ),
      );
    },
    async get(id) {
      const { rows } = await connection.use(`read grant '${id}'`, (pool) =>
        pool.query<Row>(`SELECT uses, revoked, grant_json FROM ${t}toolgate_grants WHERE id = $1`, [id]),
      );
      return rows[0] === undefined ? undefined : grantOf(rows[0]);
    },
    async list(filter: StandingGrantFilter = {}) {
      const { rows } = await connection.use('list grants', (pool) =>
        pool.query<Row>(
          `SELECT uses, revoked, grant_json FROM ${t}toolgate_grants
           WHERE ($1::text IS NULL OR tenant = $1) AND ($2::text IS NULL OR principal = $2)
             AND ($3::text IS NULL OR tool_name = $3)
             AND ($4::boolean IS NULL OR (NOT revoked AND expires_ms > $5 AND (max_uses IS NULL OR uses < max_uses)) = $4)
           ORDER BY created_ms DESC, id COLLATE "C"`,
          [
            filter.tenant ?? null,
            filter.principal ?? null,
            filter.toolName ?? null,
            filter.active ?? null,
            connection.now(),
          ],
        ),
      );
      return rows.map(grantOf);
    },
    async use(id) {
      const { rowCount } = await connection.use(`use grant '${id}'`, (pool) =>
        pool.query(
          `UPDATE ${t}toolgate_grants SET uses = uses + 1
           WHERE id = $1 AND NOT revoked AND expires_ms > $2 AND (max_uses IS NULL OR uses < max_uses)`,
          [id, connection.now()],
        ),
      );
      return rowCount === 1;
    },
    async revoke(id) {
      const { rowCount } = await connection.use(`revoke grant '${id}'`, (pool) =>
        pool.query(`UPDATE ${t}toolgate_grants SET revoked = true WHERE id = $1 AND NOT revoked`, [id]),
      );
      return rowCount === 1;
    },
    close() {
      return connection.close();
    },
  };
}

// Expired nonces are deleted now and then, not on every spend.
const PRUNE_EVERY = 256;

/**
 * Spent requestState nonces in PostgreSQL: every gateway process on the database refuses a state
 * another one has already spent.
 */
export function postgresSpentStates(options: PostgresSpentStatesOptions): PostgresSpentStateStore {
  const connection = new Connection('postgresSpentStates', options);
  const t = prefixOf(connection.schema);
  let spends = 0;
  return {
    async spend(nonce, expiresAt) {
      if (typeof nonce !== 'string' || nonce === '') return false;
      return connection.use('spend a requestState', async (pool) => {
        if ((spends += 1) % PRUNE_EVERY === 0)
          await pool.query(`DELETE FROM ${t}toolgate_spent_states WHERE expires_ms <= $1`, [
            connection.now(),
          ]);
        const { rowCount } = await pool.query(
          `INSERT INTO ${t}toolgate_spent_states (nonce, expires_ms) VALUES ($1, $2) ON CONFLICT (nonce) DO NOTHING`,
          [nonce, expiresAt],
        );
        return rowCount === 1;
      });
    },
    close() {
      return connection.close();
    },
  };
}
