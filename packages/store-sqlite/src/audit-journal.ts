// A process's audit journal: a small SQLite file of its own that holds records between their commit
// window and the store's commit. It is held under an exclusive lock for the life of the process
// (no shared-memory index, no lock taken per write), which makes a write a few page writes to its
// WAL; the lock also tells processes apart: each takes the first file no live process holds, and the
// lock goes with the process, so a restarted one finds what a crashed one left.

import type { AuditJournal, AuditJournalEntry } from '@toolgate/core';
import type { DatabaseSync } from 'node:sqlite';
import { existsSync } from 'node:fs';
import { sqlite } from './connection';
import { SqliteStoreError, storeError } from './errors';

export interface SqliteAuditJournalOptions {
  /** The journal's file, beside the store's (e.g. `./toolgate.db-audit-journal`). */
  readonly path: string;
  /** How many processes may journal at once: each holds one of `path`, `path.2`, … `path.N`. Default 16. */
  readonly slots?: number;
}

export interface SqliteAuditJournal extends AuditJournal {
  /** The file this process holds. */
  readonly path: string;
}

const STORE = 'sqliteAuditJournal';
const DEFAULT_SLOTS = 16;

const slotPath = (path: string, slot: number) => (slot === 1 ? path : `${path}.${slot}`);

/** SQLITE_BUSY (5), extended or not: another connection holds the lock. */
const isBusy = (error: unknown) => ((error as { errcode?: number } | undefined)?.errcode ?? 0) % 256 === 5;

/** Opens `file` and takes its lock for good; undefined when another process holds it. */
function take(file: string): DatabaseSync | undefined {
  const db = new (sqlite().DatabaseSync)(file);
  try {
    // Another process's lock is an answer (take the next file), not something to wait for.
    db.exec('PRAGMA busy_timeout = 0');
    // A new file only: a window's few entries rewrite fewer bytes of small pages (a quarter less CPU a write).
    db.exec('PRAGMA page_size = 1024');
    // Before WAL is entered, so SQLite keeps the WAL index in this process's memory, never in a file.
    db.exec('PRAGMA locking_mode = EXCLUSIVE');
    db.exec('PRAGMA journal_mode = WAL');
    // A commit survives the process without an fsync; checkpoints sync.
    db.exec('PRAGMA synchronous = NORMAL');
    db.exec(
      'CREATE TABLE IF NOT EXISTS toolgate_audit_journal (id INTEGER PRIMARY KEY, fields TEXT NOT NULL) STRICT',
    );
    // Takes the exclusive lock now, and holds it until close.
    db.exec('BEGIN EXCLUSIVE; COMMIT');
    return db;
  } catch (error) {
    db.close();
    if (isBusy(error)) return undefined;
    throw error;
  }
}

const rowsOf = (db: DatabaseSync) =>
  db.prepare('SELECT id, fields FROM toolgate_audit_journal ORDER BY id').all() as unknown as {
    id: number;
    fields: string;
  }[];

/**
 * A journal for `auditLog({ journal })` in SQLite: each process takes the first of `path`, `path.2`, …
 * that no live process holds, and moves into it what the others no process holds were left with.
 * Synchronous: it throws (a `SqliteStoreError`) when no file can be taken.
 *
 * ```ts
 * const journal = sqliteAuditJournal({ path: './toolgate.db-audit-journal' });
 * const audit = auditLog({ store, signingKey, digestKey, durability: 'batch', journal });
 * ```
 */
export function sqliteAuditJournal(options: SqliteAuditJournalOptions): SqliteAuditJournal {
  if (
    typeof options !== 'object' ||
    options === null ||
    typeof options.path !== 'string' ||
    options.path === ''
  ) {
    throw new TypeError(`${STORE}: expected { path }, the journal's file.`);
  }
  if (options.path === ':memory:') {
    throw new TypeError(`${STORE}: 'path' must be a file: a journal in memory does not outlive the process.`);
  }
  const slots = options.slots ?? DEFAULT_SLOTS;
  if (!(Number.isInteger(slots) && slots >= 1 && slots <= 1024)) {
    throw new TypeError(`${STORE}: 'slots' must be an integer from 1 to 1024.`);
  }
  let db: DatabaseSync | undefined;
  let held = 0;
  for (let slot = 1; slot <= slots && db === undefined; slot++) {
    try {
      db = take(slotPath(options.path, slot));
    } catch (error) {
      throw storeError(STORE, slotPath(options.path, slot), 'open the journal', error);
    }
    if (db !== undefined) held = slot;
  }
  if (db === undefined) {
    throw new SqliteStoreError(
      STORE,
      options.path,
      'SQLITE_BUSY',
      `${STORE} (${options.path}): all ${slots} journal files are held by other processes; raise 'slots' or stop one.`,
    );
  }
  const path = slotPath(options.path, held);
  const own = db;
  const insert = own.prepare('INSERT INTO toolgate_audit_journal (fields) VALUES (?)');
  const releaseThrough = own.prepare('DELETE FROM toolgate_audit_journal WHERE id <= ?');
  // Without a WHERE clause SQLite drops the table's pages at once instead of row by row.
  const releaseAll = own.prepare('DELETE FROM toolgate_audit_journal');
  /** The id of the newest entry written. */
  let newest = 0;

  // What processes no longer running left in the other files comes here: written here first, then
  // deleted there, so a crash between the two leaves a copy (which the log drops, finding it stored)
  // rather than nothing.
  for (let slot = 1; slot <= slots; slot++) {
    const file = slotPath(options.path, slot);
    if (slot === held || !existsSync(file)) continue;
    let other: DatabaseSync | undefined;
    try {
      other = take(file);
      if (other === undefined) continue;
      const rows = rowsOf(other);
      if (rows.length === 0) continue;
      own.exec('BEGIN');
      for (const row of rows) insert.run(row.fields);
      own.exec('COMMIT');
      other.exec('DELETE FROM toolgate_audit_journal');
    } catch (error) {
      if (own.isTransaction) own.exec('ROLLBACK');
      other?.close();
      own.close();
      throw storeError(STORE, file, 'take over what a stopped process left', error);
    } finally {
      if (other?.isOpen === true) other.close();
    }
  }
  const left: readonly AuditJournalEntry[] = rowsOf(own).map((row) => ({ id: row.id, text: row.fields }));
  newest = left.at(-1)?.id ?? 0;
  let closed = false;
  const use = <T>(action: string, work: () => T): T => {
    if (closed)
      throw new SqliteStoreError(
        STORE,
        path,
        'ERR_STORE_CLOSED',
        `${STORE} (${path}): the journal is closed.`,
      );
    try {
      return work();
    } catch (error) {
      if (own.isTransaction) own.exec('ROLLBACK');
      throw storeError(STORE, path, action, error);
    }
  };
  return {
    path,
    left: () => left,
    write: (texts) =>
      use('write journal entries', () => {
        own.exec('BEGIN');
        let last = 0;
        for (const text of texts) last = Number(insert.run(text).lastInsertRowid);
        own.exec('COMMIT');
        newest = last;
        return last;
      }),
    release: (id) => {
      use('release journal entries', () => {
        if (id < newest) {
          releaseThrough.run(id);
          return;
        }
        releaseAll.run();
        // An empty table numbers its next row 1 again.
        newest = 0;
      });
    },
    close() {
      if (closed) return;
      closed = true;
      own.close();
    },
  };
}
