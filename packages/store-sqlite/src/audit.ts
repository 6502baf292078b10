// A durable AuditStore: the log is one chain in the file whichever process appends. An append seals
// its records against the head it read, then commits inside BEGIN IMMEDIATE only if the head is still
// that one, and seals again if another writer moved it. The write lock is never held across the
// (asynchronous) seal: a node:sqlite write elsewhere in the process waits synchronously for the
// lock, and would then wait for a seal that cannot finish while the event loop is blocked.

import { close, fsync, open } from 'node:fs';
import {
  auditContinues,
  auditRowValues,
  type AuditHead,
  type AuditRecord,
  type AuditStore,
} from '@toolgate/core';
import { Connection, transaction, type SqliteDatabase, type SqliteStoreOptions } from './connection';
import { SqliteStoreError } from './errors';

export type SqliteAuditStoreOptions = SqliteStoreOptions & {
  /**
   * Milliseconds committed records may wait to reach the disk (an fsync) instead of each commit
   * waiting for it (`synchronous = NORMAL` between syncs, on a file the store opens itself). A crash
   * of the process loses no committed record either way; a power cut or an OS crash may lose those
   * committed in the last `syncIntervalMs`. Default: none, every commit is synced (`synchronous = FULL`).
   */
  readonly syncIntervalMs?: number;
};

export interface SqliteAuditStore extends AuditStore {
  /** Closes the database if the store opened it. */
  close(): void;
}

const STORE = 'sqliteAuditStore';
/** Seals per append before giving up when other writers keep moving the head. */
const MAX_ATTEMPTS = 50;

interface HeadRow {
  readonly seq: number;
  readonly hash: string;
}

function prepare(db: SqliteDatabase) {
  const head = db.prepare(`SELECT seq, hash FROM toolgate_audit_head WHERE id = 1`);
  // Positional parameters: binding an object by name costs a property lookup per column per row.
  const insert = db.prepare(
    `INSERT INTO toolgate_audit (seq, at, tenant, tool, kind, hash, record) VALUES (?, ?, ?, ?, ?, ?, ?)`,
  );
  // Each checks the head and moves it in one statement (no row changed: another writer moved it),
  // a statement less per commit than reading the head first.
  const moveHeadFrom = db.prepare(
    `UPDATE toolgate_audit_head SET seq = ?, hash = ? WHERE id = 1 AND seq = ? AND hash = ?`,
  );
  const firstHead = db.prepare(
    `INSERT INTO toolgate_audit_head (id, seq, hash) VALUES (1, ?, ?) ON CONFLICT (id) DO NOTHING`,
  );
  return {
    head,
    read: db.prepare(`SELECT seq, record FROM toolgate_audit WHERE seq > ? ORDER BY seq LIMIT ?`),
    /** Stores `records` and moves the head to `next` if it is still `expected`; false when another writer moved it. */
    commit: (expected: AuditHead | undefined, records: readonly AuditRecord[], next: AuditHead) =>
      transaction(
        db,
        () => {
          const moved =
            expected === undefined
              ? firstHead.run(next.seq, next.hash)
              : moveHeadFrom.run(next.seq, next.hash, expected.seq, expected.hash);
          if (Number(moved.changes) !== 1) return false;
          for (const record of records) insert.run(...auditRowValues(record));
          return true;
        },
        'immediate',
      ),
  };
}

/** A stored record; text that is no longer JSON is handed on as a record verification names, not an error. */
function recordOf(row: { seq: number; record: string }): AuditRecord {
  try {
    return JSON.parse(row.record) as AuditRecord;
  } catch {
    return { seq: row.seq } as AuditRecord;
  }
}

const headOf = (row: HeadRow | undefined): AuditHead | undefined =>
  row === undefined ? undefined : { seq: row.seq, hash: row.hash };

/**
 * The audit log in SQLite (Node's built-in node:sqlite), in WAL mode with `user_version` migrations: shared safely
 * by every process that opens the file.
 *
 * ```ts
 * const audit = auditLog({ store: sqliteAuditStore({ path: './toolgate.db' }), signingKey, digestKey });
 * ```
 */
export function sqliteAuditStore(options: SqliteAuditStoreOptions): SqliteAuditStore {
  const syncIntervalMs = options?.syncIntervalMs;
  if (syncIntervalMs !== undefined && !(Number.isInteger(syncIntervalMs) && syncIntervalMs > 0)) {
    throw new TypeError(`${STORE}: 'syncIntervalMs' must be a positive integer of milliseconds.`);
  }
  // A database the caller opened keeps its own pragmas.
  const deferSync = syncIntervalMs !== undefined && options.database === undefined;
  /** The WAL file an fsync brings to the disk (a file the store opened itself, under NORMAL). */
  let wal: string | undefined;
  const connection = new Connection(STORE, options, (db) => {
    const location = db.location();
    if (deferSync && location !== null) {
      db.exec('PRAGMA synchronous = NORMAL');
      wal = `${location}-wal`;
    }
    return prepare(db);
  });
  let syncedAt = Date.now();
  let syncTimer: ReturnType<typeof setTimeout> | undefined;
  /** An fsync of the WAL underway. */
  let syncing = false;
  /** A commit since the last fsync began: it needs one of its own. */
  let unsynced = false;
  /**
   * Brings every commit so far to the disk: an fsync of the WAL file, which holds every commit since
   * the last checkpoint (SQLite syncs the WAL and the database itself when it checkpoints under
   * NORMAL). In the thread pool, so the event loop neither copies pages nor waits for the disk.
   */
  const sync = () => {
    clearTimeout(syncTimer);
    syncTimer = undefined;
    syncedAt = Date.now();
    if (wal === undefined || syncing) return;
    syncing = true;
    unsynced = false;
    const done = () => {
      syncing = false;
      // Commits made while this fsync ran wait for the next interval, not for the next commit.
      if (unsynced) committed();
    };
    open(wal, 'r', (opened, fd) => {
      // No WAL file: nothing committed since the last checkpoint, which synced it.
      if (opened !== null) return done();
      fsync(fd, () => close(fd, done));
    });
  };
  /** After a commit under NORMAL: sync now when the interval is up, else once it is. */
  const committed = () => {
    if (!deferSync) return;
    unsynced = true;
    const due = syncedAt + syncIntervalMs! - Date.now();
    if (due <= 0) sync();
    else if (syncTimer === undefined) {
      syncTimer = setTimeout(sync, due);
      // A sync never keeps a process alive; close() syncs what is left.
      (syncTimer as { unref?: () => void }).unref?.();
    }
  };
  const readHead = () =>
    connection.use('read the audit head', (s) => headOf(s.head.get() as unknown as HeadRow | undefined));
  // One append at a time from this store, so its own appends never race each other for the head.
  let tail: Promise<unknown> = Promise.resolve();

  /**
   * The head this store's last append committed: the next append seals against it without reading
   * it first. The commit still checks it inside the transaction, so a head another process moved
   * costs one seal more, never a fork. Forgotten on any failure.
   */
  let committedHead: { readonly head: AuditHead | undefined } | undefined;

  async function appendOnce(seal: Parameters<AuditStore['append']>[0]): Promise<readonly AuditRecord[]> {
    for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
      const known = committedHead;
      committedHead = undefined;
      const head = known !== undefined ? known.head : readHead();
      const records = await seal(head);
      const next = auditContinues(STORE, head, records);
      if (records.length === 0 || next === undefined) {
        committedHead = known;
        return records;
      }
      const stored = connection.use('append audit records', (s) => s.commit(head, records, next));
      if (stored) {
        committedHead = { head: next };
        committed();
        return records;
      }
      // Another process took the head: a short, random pause spreads writers that keep colliding.
      await new Promise((resolve) => setTimeout(resolve, Math.random() * Math.min(attempt, 10)));
    }
    throw new SqliteStoreError(
      STORE,
      connection.path,
      'SQLITE_BUSY',
      `${STORE} (${connection.path}): could not append: other writers moved the head ${MAX_ATTEMPTS} times in a row. Retrying later may help.`,
    );
  }

  return {
    append(seal) {
      const turn = tail.then(() => appendOnce(seal));
      tail = turn.catch(() => undefined);
      return turn;
    },
    async head() {
      return readHead();
    },
    async read(after, limit) {
      if (!(Number.isSafeInteger(after) && Number.isSafeInteger(limit) && limit >= 0)) {
        throw new TypeError(`${STORE}: read(after, limit) takes integers, limit at least 0.`);
      }
      const rows = connection.use(
        'read audit records',
        (s) => s.read.all(after, limit) as unknown as { seq: number; record: string }[],
      );
      return rows.map(recordOf);
    },
    async ready() {
      readHead();
    },
    close() {
      if (syncTimer !== undefined || syncing) {
        clearTimeout(syncTimer);
        // At close, in this thread: under NORMAL a checkpoint syncs the WAL before it copies it.
        try {
          connection.use('sync the audit log to disk', (_, db) => db.exec('PRAGMA wal_checkpoint(PASSIVE)'));
        } catch {
          // Closing a store that cannot be used: there is nothing more it can sync.
        }
      }
      connection.close();
    },
  };
}
