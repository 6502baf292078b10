// A durable PinStore: pinned definitions survive a restart, and processes sharing the file pin a new
// tool once, because observe and accept each run in one IMMEDIATE transaction.

import {
  pinMatches,
  type PinFilter,
  type PinKind,
  type PinObservation,
  type PinRecord,
  type PinStore,
} from '@toolgate/core';
import { Connection, transaction, type SqliteDatabase, type SqliteStoreOptions } from './connection';

export type SqlitePinsOptions = SqliteStoreOptions;

export interface SqlitePinStore extends PinStore {
  /** Closes the database if the store opened it. */
  close(): void;
}

const STORE = 'sqlitePins';

interface Row {
  readonly source: string;
  readonly kind: PinKind;
  readonly name: string;
  readonly digest: string;
  readonly definition: string;
  readonly pinned_at: string;
  readonly changed_digest: string | null;
  readonly changed_definition: string | null;
  readonly changed_at: string | null;
}

function recordOf(row: Row): PinRecord {
  const base = {
    source: row.source,
    kind: row.kind,
    name: row.name,
    digest: row.digest,
    definition: JSON.parse(row.definition) as Record<string, unknown>,
    pinnedAt: row.pinned_at,
  };
  return row.changed_digest === null
    ? base
    : {
        ...base,
        changed: {
          digest: row.changed_digest,
          definition: JSON.parse(row.changed_definition!) as Record<string, unknown>,
          seenAt: row.changed_at!,
        },
      };
}

function prepare(db: SqliteDatabase) {
  const get = db.prepare(`SELECT * FROM toolgate_pins WHERE source = ? AND kind = ? AND name = ?`);
  const insert = db.prepare(
    `INSERT INTO toolgate_pins (source, kind, name, digest, definition, pinned_at) VALUES (?, ?, ?, ?, ?, ?)`,
  );
  const setChanged = db.prepare(
    `UPDATE toolgate_pins SET changed_digest = ?, changed_definition = ?, changed_at = ? WHERE source = ? AND kind = ? AND name = ?`,
  );
  const accept = db.prepare(
    `UPDATE toolgate_pins SET digest = changed_digest, definition = changed_definition, pinned_at = ?,
       changed_digest = NULL, changed_definition = NULL, changed_at = NULL
     WHERE source = ? AND kind = ? AND name = ? AND changed_digest = ?`,
  );
  return {
    get,
    observe: (seen: PinObservation, at: string): { record: PinRecord; pinned: boolean } =>
      transaction(
        db,
        () => {
          const key = [seen.source, seen.kind, seen.name] as const;
          const current = get.get(...key) as Row | undefined;
          if (current === undefined) {
            insert.run(...key, seen.digest, JSON.stringify(seen.definition), at);
            return { record: { ...seen, pinnedAt: at }, pinned: true };
          }
          if (current.digest === seen.digest) {
            if (current.changed_digest !== null) setChanged.run(null, null, null, ...key);
          } else if (current.changed_digest !== seen.digest) {
            setChanged.run(seen.digest, JSON.stringify(seen.definition), at, ...key);
          }
          return { record: recordOf(get.get(...key) as unknown as Row), pinned: false };
        },
        'immediate',
      ),
    accept,
    all: db.prepare(`SELECT * FROM toolgate_pins ORDER BY source, kind, name`),
  };
}

/**
 * Pins in SQLite (Node's built-in node:sqlite), beside the check-ins and artifacts in the same file if you like.
 *
 * ```ts
 * const pins = sqlitePins({ path: './toolgate.db' });
 * mcpClient({ name: 'docs', command: ['docs-mcp'], pins });
 * ```
 */
export function sqlitePins(options: SqlitePinsOptions): SqlitePinStore {
  const connection = new Connection(STORE, options, prepare);
  return {
    async observe(seen, at) {
      return connection.use(`pin '${seen.source}/${seen.name}'`, (s) => s.observe(seen, at));
    },
    async get(source, kind, name) {
      const row = connection.use(
        `read pin '${source}/${name}'`,
        (s) => s.get.get(source, kind, name) as Row | undefined,
      );
      return row === undefined ? undefined : recordOf(row);
    },
    async accept(source, kind, name, digest, at) {
      return connection.use(
        `accept pin '${source}/${name}'`,
        (s) => s.accept.run(at, source, kind, name, digest).changes === 1,
      );
    },
    async list(filter: PinFilter = {}) {
      const rows = connection.use('list pins', (s) => s.all.all() as unknown as Row[]);
      return rows.map(recordOf).filter((record) => pinMatches(record, filter));
    },
    close() {
      connection.close();
    },
  };
}
