// A PinStore in PostgreSQL, shared by every process on the database: a new tool is pinned by one
// INSERT … ON CONFLICT DO NOTHING, so of all the processes seeing it first exactly one pins it, and
// a pin moves only through accept's conditional UPDATE on the reviewed digest.

import { pinMatches, type PinKind, type PinRecord, type PinStore } from '@toolgate/core';
import { Connection, type PostgresStoreOptions } from './connection';
import { prefixOf } from './schema';

export type PostgresPinsOptions = PostgresStoreOptions;

export interface PostgresPinStore extends PinStore {
  /** Ends the pool if the store made it; a pool passed in stays open. */
  close(): Promise<void>;
}

const STORE = 'postgresPins';

interface Row {
  readonly source: string;
  readonly kind: PinKind;
  readonly name: string;
  readonly digest: string;
  readonly definition: Record<string, unknown>;
  readonly pinned_at: string;
  readonly changed_digest: string | null;
  readonly changed_definition: Record<string, unknown> | null;
  readonly changed_at: string | null;
}

function recordOf(row: Row): PinRecord {
  const base = {
    source: row.source,
    kind: row.kind,
    name: row.name,
    digest: row.digest,
    definition: row.definition,
    pinnedAt: row.pinned_at,
  };
  return row.changed_digest === null
    ? base
    : {
        ...base,
        changed: { digest: row.changed_digest, definition: row.changed_definition!, seenAt: row.changed_at! },
      };
}

/**
 * Pins in PostgreSQL, beside the check-ins and artifacts.
 *
 * ```ts
 * const pins = postgresPins({ connectionString: process.env.DATABASE_URL! });
 * mcpClient({ name: 'docs', url: 'https://docs.example/mcp', pins });
 * ```
 */
export function postgresPins(options: PostgresPinsOptions): PostgresPinStore {
  const connection = new Connection(STORE, options);
  const t = prefixOf(connection.schema);
  return {
    async observe(seen, at) {
      const key = [seen.source, seen.kind, seen.name];
      const definition = JSON.stringify(seen.definition);
      return connection.use(`pin '${seen.source}/${seen.name}'`, async (pool) => {
        const inserted = await pool.query<Row>(
          `INSERT INTO ${t}toolgate_pins (source, kind, name, digest, definition, pinned_at)
           VALUES ($1, $2, $3, $4, $5::json, $6) ON CONFLICT DO NOTHING RETURNING *`,
          [...key, seen.digest, definition, at],
        );
        if (inserted.rows[0] !== undefined) return { record: recordOf(inserted.rows[0]), pinned: true };
        // The pinned digest is never touched here: only what is served beside it.
        const updated = await pool.query<Row>(
          `UPDATE ${t}toolgate_pins SET
             changed_digest = CASE WHEN digest = $4 THEN NULL WHEN changed_digest = $4 THEN changed_digest ELSE $4 END,
             changed_definition = CASE WHEN digest = $4 THEN NULL WHEN changed_digest = $4 THEN changed_definition ELSE $5::json END,
             changed_at = CASE WHEN digest = $4 THEN NULL WHEN changed_digest = $4 THEN changed_at ELSE $6 END
           WHERE source = $1 AND kind = $2 AND name = $3 RETURNING *`,
          [...key, seen.digest, definition, at],
        );
        return { record: recordOf(updated.rows[0]!), pinned: false };
      });
    },
    async get(source, kind, name) {
      const { rows } = await connection.use(`read pin '${source}/${name}'`, (pool) =>
        pool.query<Row>(`SELECT * FROM ${t}toolgate_pins WHERE source = $1 AND kind = $2 AND name = $3`, [
          source,
          kind,
          name,
        ]),
      );
      return rows[0] === undefined ? undefined : recordOf(rows[0]);
    },
    async accept(source, kind, name, digest, at) {
      const { rowCount } = await connection.use(`accept pin '${source}/${name}'`, (pool) =>
        pool.query(
          `UPDATE ${t}toolgate_pins SET digest = changed_digest, definition = changed_definition, pinned_at = $5,
             changed_digest = NULL, changed_definition = NULL, changed_at = NULL
           WHERE source = $1 AND kind = $2 AND name = $3 AND changed_digest = $4`,
          [source, kind, name, digest, at],
        ),
      );
      return rowCount === 1;
    },
    async list(filter = {}) {
      const { rows } = await connection.use('list pins', (pool) =>
        pool.query<Row>(
          `SELECT * FROM ${t}toolgate_pins ORDER BY source COLLATE "C", kind COLLATE "C", name COLLATE "C"`,
        ),
      );
      return rows.map(recordOf).filter((record) => pinMatches(record, filter));
    },
    close() {
      return connection.close();
    },
  };
}
