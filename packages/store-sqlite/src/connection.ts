// One better-sqlite3 connection per store, opened on first use rather than in the factory, so a locked
// or corrupt file never throws where the store is built: every operation rejects instead, and the
// next operation tries to open the file again.

import Database from 'better-sqlite3';
import { SqliteStoreError, storeError } from './errors';
import { migrate } from './schema';

export type SqliteDatabase = Database.Database;

interface SharedOptions {
  /** Milliseconds since the epoch; injectable for deterministic tests. */
  readonly now?: () => number;
  /** How long a write waits for another connection's lock before rejecting. Default 1000. */
  readonly busyTimeoutMs?: number;
}

/** Where a store keeps its data: a file path (or `':memory:'`), or a database you opened yourself. */
export type SqliteStoreOptions = SharedOptions &
  (
    | { readonly path: string; readonly database?: never }
    | {
        /** Keeps its own pragmas; the store only adds its tables and never closes it. */
        readonly database: SqliteDatabase;
        readonly path?: never;
      }
  );

const DEFAULT_BUSY_TIMEOUT_MS = 1000;

export class Connection<S> {
  readonly path: string;
  readonly now: () => number;
  readonly #source: SqliteStoreOptions;
  readonly #prepare: (db: SqliteDatabase) => S;
  #open: { readonly db: SqliteDatabase; readonly statements: S } | undefined;
  #closed = false;

  constructor(
    readonly store: string,
    options: SqliteStoreOptions,
    prepare: (db: SqliteDatabase) => S,
  ) {
    if (typeof options !== 'object' || options === null) {
      throw new TypeError(
        `${store}: expected { path } or { database }; got ${options === null ? 'null' : typeof options}.`,
      );
    }
    const hasPath = options.path !== undefined;
    const hasDatabase = options.database !== undefined;
    if (hasPath === hasDatabase) {
      throw new TypeError(
        `${store}: pass exactly one of 'path' (a file or ':memory:') and 'database' (an open better-sqlite3 Database).`,
      );
    }
    if (hasPath && (typeof options.path !== 'string' || options.path === '')) {
      throw new TypeError(`${store}: 'path' must be a non-empty string: a file path or ':memory:'.`);
    }
    if (hasDatabase && typeof options.database?.prepare !== 'function') {
      throw new TypeError(`${store}: 'database' must be an open better-sqlite3 Database.`);
    }
    const busy = options.busyTimeoutMs;
    if (busy !== undefined && !(Number.isInteger(busy) && busy >= 0)) {
      throw new TypeError(`${store}: 'busyTimeoutMs' must be a non-negative integer of milliseconds.`);
    }
    this.path = options.path ?? options.database!.name;
    this.now = options.now ?? Date.now;
    this.#source = options;
    this.#prepare = prepare;
  }

  /** Runs `work` on the open connection; any failure becomes a `SqliteStoreError` saying what `action` was. */
  use<T>(action: string, work: (statements: S, db: SqliteDatabase) => T): T {
    const { db, statements } = this.#connect();
    try {
      return work(statements, db);
    } catch (error) {
      throw storeError(this.store, this.path, action, error);
    }
  }

  /** Closes the database if this store opened it; later operations reject. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    const open = this.#open;
    this.#open = undefined;
    if (open !== undefined && this.#source.database === undefined) open.db.close();
  }

  #connect(): { readonly db: SqliteDatabase; readonly statements: S } {
    if (this.#closed) {
      throw new SqliteStoreError(
        this.store,
        this.path,
        'ERR_STORE_CLOSED',
        `${this.store} (${this.path}): the store is closed.`,
      );
    }
    if (this.#open !== undefined) return this.#open;
    const given = this.#source.database;
    let db: SqliteDatabase | undefined;
    try {
      db = given ?? this.#openFile(this.#source.path!);
      migrate(db);
      this.#open = { db, statements: this.#prepare(db) };
      return this.#open;
    } catch (error) {
      if (given === undefined && db?.open === true) db.close();
      throw storeError(this.store, this.path, 'open the database', error);
    }
  }

  #openFile(path: string): SqliteDatabase {
    const db = new Database(path, { timeout: this.#source.busyTimeoutMs ?? DEFAULT_BUSY_TIMEOUT_MS });
    try {
      if (!db.memory) {
        // WAL lets readers run beside a writer, so a slow UI listing never blocks a consume.
        db.pragma('journal_mode = WAL');
        // better-sqlite3 builds with NORMAL under WAL, where a power cut can undo a commit
        // and hand an already-consumed approval back as pending.
        db.pragma('synchronous = FULL');
      }
      return db;
    } catch (error) {
      db.close();
      throw error;
    }
  }
}
