// Standing grants and spent requestStates in SQLite: they survive a restart, and processes sharing
// the file agree on them, because a use is one conditional UPDATE (uses below the limit, not
// revoked, not expired) and a spend is one INSERT that a second spend of the same nonce conflicts with.

import type { SpentStateStore, StandingGrant, StandingGrantFilter, StandingGrantStore } from '@toolgate/core';
import { Connection, type SqliteDatabase, type SqliteStoreOptions } from './connection';

export type SqliteStandingGrantsOptions = SqliteStoreOptions;
export type SqliteSpentStatesOptions = SqliteStoreOptions;

export interface SqliteStandingGrantStore extends StandingGrantStore {
  /** Closes the database if the store opened it. */
  close(): void;
}

export interface SqliteSpentStateStore extends SpentStateStore {
  /** Closes the database if the store opened it. */
  close(): void;
}

interface Row {
  readonly uses: number;
  readonly revoked: number;
  readonly grant_json: string;
}

// The row's counters are the truth; the JSON keeps everything else as created.
function grantOf(row: Row): StandingGrant {
  const grant = JSON.parse(row.grant_json) as StandingGrant;
  return { ...grant, uses: row.uses, ...(row.revoked === 1 ? { revoked: true } : {}) };
}

function prepareGrants(db: SqliteDatabase) {
  return {
    insert: db.prepare(
      `INSERT INTO toolgate_grants (id, tenant, principal, tool_name, max_uses, uses, expires_ms, revoked, created_ms, grant_json)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    get: db.prepare(`SELECT uses, revoked, grant_json FROM toolgate_grants WHERE id = ?`),
    list: db.prepare(
      `SELECT uses, revoked, grant_json FROM toolgate_grants
       WHERE (?1 IS NULL OR tenant = ?1) AND (?2 IS NULL OR principal = ?2) AND (?3 IS NULL OR tool_name = ?3)
         AND (?4 IS NULL OR (revoked = 0 AND expires_ms > ?5 AND (max_uses IS NULL OR uses < max_uses)) = ?4)
       ORDER BY created_ms DESC, id`,
    ),
    use: db.prepare(
      `UPDATE toolgate_grants SET uses = uses + 1
       WHERE id = ? AND revoked = 0 AND expires_ms > ? AND (max_uses IS NULL OR uses < max_uses)`,
    ),
    revoke: db.prepare(`UPDATE toolgate_grants SET revoked = 1 WHERE id = ? AND revoked = 0`),
  };
}

/**
 * Standing grants in SQLite (Node's built-in node:sqlite), beside the check-ins in the same file.
 *
 * ```ts
 * const grants = sqliteStandingGrants({ path: './toolgate.db' });
 * ```
 */
export function sqliteStandingGrants(options: SqliteStandingGrantsOptions): SqliteStandingGrantStore {
  const connection = new Connection('sqliteStandingGrants', options, prepareGrants);
  return {
    async create(grant) {
      connection.use(`create grant '${grant.id}'`, (s) =>
        s.insert.run(
          grant.id,
          grant.tenant ?? null,
          grant.principal ?? null,
          grant.toolName,
          grant.maxUses ?? null,
          grant.uses,
          Date.parse(grant.expiresAt),
          grant.revoked === true ? 1 : 0,
          Date.parse(grant.createdAt),
          JSON.stringify(grant),
        ),
      );
    },
    async get(id) {
      const row = connection.use(`read grant '${id}'`, (s) => s.get.get(id) as Row | undefined);
      return row === undefined ? undefined : grantOf(row);
    },
    async list(filter: StandingGrantFilter = {}) {
      const rows = connection.use(
        'list grants',
        (s) =>
          s.list.all(
            filter.tenant ?? null,
            filter.principal ?? null,
            filter.toolName ?? null,
            filter.active === undefined ? null : filter.active ? 1 : 0,
            connection.now(),
          ) as unknown as Row[],
      );
      return rows.map(grantOf);
    },
    async use(id) {
      return connection.use(`use grant '${id}'`, (s) => s.use.run(id, connection.now()).changes === 1);
    },
    async revoke(id) {
      return connection.use(`revoke grant '${id}'`, (s) => s.revoke.run(id).changes === 1);
    },
    close() {
      connection.close();
    },
  };
}

function prepareSpent(db: SqliteDatabase) {
  return {
    spend: db.prepare(
      `INSERT INTO toolgate_spent_states (nonce, expires_ms) VALUES (?, ?) ON CONFLICT (nonce) DO NOTHING`,
    ),
    prune: db.prepare(`DELETE FROM toolgate_spent_states WHERE expires_ms <= ?`),
  };
}

// Expired nonces are deleted now and then, not on every spend.
const PRUNE_EVERY = 256;

/**
 * Spent requestState nonces in SQLite: every gateway process on the file refuses a state another
 * one has already spent.
 */
export function sqliteSpentStates(options: SqliteSpentStatesOptions): SqliteSpentStateStore {
  const connection = new Connection('sqliteSpentStates', options, prepareSpent);
  let spends = 0;
  return {
    async spend(nonce, expiresAt) {
      if (typeof nonce !== 'string' || nonce === '') return false;
      return connection.use('spend a requestState', (s) => {
        if ((spends += 1) % PRUNE_EVERY === 0) s.prune.run(connection.now());
        return s.spend.run(nonce, expiresAt).changes === 1;
      });
    },
    close() {
      connection.close();
    },
  };
}
