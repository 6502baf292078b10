// One node:sqlite connection per store, opened on first use rather than in the factory, so a locked
// or corrupt file never throws where the store is built: every operation rejects instead, and the
// next operation tries to open the file again.

import type { DatabaseSync } from 'node:sqlite';
import { SqliteStoreError, storeError } from './errors';
import { migrate } from './schema';

/** A database opened with Node's built-in `node:sqlite` (`new DatabaseSync(path)`). */
export type SqliteDatabase = DatabaseSync;

/**
 * Node's built-in SQLite, loaded on first use: importing this package costs nothing (and warns
 * nothing, where Node still flags the module experimental) until a store opens a file, and a Node
 * without `node:sqlite` fails that open with a reason instead of failing every import.
 */
export function sqlite(): typeof import('node:sqlite') {
  const loaded = process.getBuiltinModule?.('node:sqlite') as typeof import('node:sqlite') | undefined;
  if (loaded === undefined) {
    throw new Error(
      `this Node (${process.version}) has no built-in node:sqlite; @toolgate/store-sqlite needs Node 22.13 or later`,
    );
  }
  return loaded;
}

/**
 * Runs `work` in one transaction: BEGIN (IMMEDIATE takes the write lock first), COMMIT when it
 * returns, ROLLBACK when it throws. Inside a transaction already open on `db` it runs under a
 * savepoint instead, so a caller's own transaction stays whole.
 */
export function transaction<T>(
  db: SqliteDatabase,
  work: () => T,
  mode: 'deferred' | 'immediate' = 'deferred',
): T {
  const nested = db.isTransaction;
  db.exec(nested ? 'SAVEPOINT toolgate' : mode === 'immediate' ? 'BEGIN IMMEDIATE' : 'BEGIN');
  let result: T;
  try {
    result = work();
  } catch (error) {
    // A failed COMMIT or a busy BEGIN may have ended the transaction already; only roll back one still open.
    if (db.isTransaction) db.exec(nested ? 'ROLLBACK TO toolgate; RELEASE toolgate' : 'ROLLBACK');
    throw error;
  }
  try {
    db.exec(nested ? 'RELEASE toolgate' : 'COMMIT');
  } catch (error) {
    if (!nested && db.isTransaction) db.exec('ROLLBACK');
    throw error;
  }
  return result;
}

interface SharedOptions {
  /** Milliseconds since the epoch; injectable for deterministic tests. */
  readonly now?: () => number;
  /** How long a write waits for another connection's lock before rejecting. Default 5000. */
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

// Processes that open one file at once (gateways started together) wait out each other's migrations.
const DEFAULT_BUSY_TIMEOUT_MS = 5000;

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
        `${store}: pass exactly one of 'path' (a file or ':memory:') and 'database' (an open node:sqlite DatabaseSync).`,
      );
    }
    if (hasPath && (typeof options.path !== 'string' || options.path === '')) {
      throw new TypeError(`${store}: 'path' must be a non-empty string: a file path or ':memory:'.`);
    }
    if (hasDatabase && typeof options.database?.prepare !== 'function') {
      throw new TypeError(`${store}: 'database' must be an open node:sqlite DatabaseSync.`);
    }
    const busy = options.busyTimeoutMs;
    if (busy !== undefined && !(Number.isInteger(busy) && busy >= 0)) {
      throw new TypeError(`${store}: 'busyTimeoutMs' must be a non-negative integer of milliseconds.`);
    }
    this.path = options.path ?? options.database!.location() ?? ':memory:';
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
      if (given === undefined && db?.isOpen === true) db.close();
      throw storeError(this.store, this.path, 'open the database', error);
    }
  }

  #openFile(path: string): SqliteDatabase {
    const db = new (sqlite().DatabaseSync)(path);
    try {
      // A PRAGMA rather than the constructor's `timeout`, which older Node 22 releases lack.
      db.exec(`PRAGMA busy_timeout = ${this.#source.busyTimeoutMs ?? DEFAULT_BUSY_TIMEOUT_MS}`);
      if (db.location() !== null) {
        // WAL lets readers run beside a writer, so a slow UI listing never blocks a consume.
        db.exec('PRAGMA journal_mode = WAL');
        // Under WAL, NORMAL lets a power cut undo a commit and hand an already-consumed approval
        // back as pending.
        db.exec('PRAGMA synchronous = FULL');
      }
      return db;
    } catch (error) {
      db.close();
      throw error;
    }
  }
}
