// A process's audit journal: the records between their commit window and the store's commit, in two
// files of the process's own, each written from its start on. A window is one pwrite() of its frames
// and a newline that ends what is read, a release one short frame after them, and once the store took
// all a file holds it starts over at 0: written in place, over pages the file already has, so a write
// changes no file size (no block to allocate, no truncation to wait for) and nothing is searched. A
// file past 1 MiB is left for the other once the store took all the other holds.
// Beside the two files, a small SQLite file is the journal's lock: held under an exclusive lock for
// the life of the process, it tells processes apart (each takes the first slot no live process
// holds) and goes with the process, so a restarted one finds what a crashed one left.

import type { AuditJournal, AuditJournalEntry } from '@toolgate/core';
import type { DatabaseSync } from 'node:sqlite';
import {
  closeSync,
  constants,
  existsSync,
  fdatasync,
  fdatasyncSync,
  ftruncateSync,
  openSync,
  readFileSync,
  writeSync,
} from 'node:fs';
import { sqlite } from './connection';
import { SqliteStoreError, storeError } from './errors';

export interface SqliteAuditJournalOptions {
  /** The journal's lock file, beside the store's (e.g. `./toolgate.db-audit-journal`); its entries go to `<path>.a` and `<path>.b`. */
  readonly path: string;
  /** How many processes may journal at once: each holds one of `path`, `path.2`, … `path.N`. Default 16. */
  readonly slots?: number;
}

export interface SqliteAuditJournal extends AuditJournal {
  /** The lock file this process holds (its entries are in `<path>.a` and `<path>.b`). */
  readonly path: string;
}

const STORE = 'sqliteAuditJournal';
const DEFAULT_SLOTS = 16;
/** A file this long is left for the other once the store took all the other holds. */
const ROTATE_BYTES = 1 << 20;
/** The most a write waits to reach the disk (fdatasync, off the event loop): what a power cut may lose. */
const SYNC_MS = 1000;

const slotPath = (path: string, slot: number) => (slot === 1 ? path : `${path}.${slot}`);
const entryFiles = (lock: string) => [`${lock}.a`, `${lock}.b`] as const;

/**
 * Opens an entry file for reading and writing, never through a symbolic link: a link put in its place
 * would have the journal write over (or cut short) whatever file it names.
 */
const openEntryFile = (file: string, create = false) =>
  openSync(file, constants.O_RDWR | (constants.O_NOFOLLOW ?? 0) | (create ? constants.O_CREAT : 0), 0o600);

/** SQLITE_BUSY (5), extended or not: another connection holds the lock. */
const isBusy = (error: unknown) => ((error as { errcode?: number } | undefined)?.errcode ?? 0) % 256 === 5;

/** Opens the lock file `file` and takes its lock for good; undefined when another process holds it. */
function take(file: string): DatabaseSync | undefined {
  const db = new (sqlite().DatabaseSync)(file);
  try {
    // Another process's lock is an answer (take the next file), not something to wait for.
    db.exec('PRAGMA busy_timeout = 0');
    // Before WAL is entered, so SQLite keeps the WAL index in this process's memory, never in a file.
    db.exec('PRAGMA locking_mode = EXCLUSIVE');
    db.exec('PRAGMA journal_mode = WAL');
    // Where journals of earlier versions kept their entries: read and emptied at a start, not written.
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

const tableTexts = (db: DatabaseSync) =>
  (db.prepare('SELECT fields FROM toolgate_audit_journal ORDER BY id').all() as { fields: string }[]).map(
    (row) => row.fields,
  );

/** An entry's header, `<id> <bytes>\n` with both numbers written to their full width: its text is encoded once, after it. */
const HEADER_BYTES = 27;
const header = (id: number, bytes: number) =>
  `${String(id).padStart(15, '0')} ${String(bytes).padStart(10, '0')}\n`;
/** The store took every entry up to `id`: `<id> r\n`. */
const releaseFrame = (id: number) => `${id} r\n`;
const HEADER = /^(\d{1,15}) (\d{1,10}|r)$/;

interface Read {
  readonly entries: AuditJournalEntry[];
  /** The highest id a release frame names; 0 when none. */
  readonly released: number;
  /** Where the last whole frame ends. */
  readonly end: number;
}

/**
 * The frames of a file's bytes, in order. Reading stops at the first frame that is not whole (the
 * tail of a write a power cut cut short) or whose id is out of order.
 */
function framesOf(bytes: Buffer): Read {
  const entries: AuditJournalEntry[] = [];
  let released = 0;
  let at = 0;
  let last = 0;
  while (at < bytes.length) {
    const newline = bytes.indexOf(10, at);
    if (newline < 0 || newline - at >= HEADER_BYTES) break;
    const header = HEADER.exec(bytes.toString('latin1', at, newline));
    if (header === null) break;
    const id = Number(header[1]);
    if (header[2] === 'r') {
      // It may name an entry of the other file.
      released = Math.max(released, id);
      at = newline + 1;
      continue;
    }
    const start = newline + 1;
    const stop = start + Number(header[2]);
    if (id <= last || stop >= bytes.length || bytes[stop] !== 10) break;
    entries.push({ id, text: bytes.toString('utf8', start, stop) });
    last = id;
    at = stop + 1;
  }
  return { entries, released, end: at };
}

/**
 * The frames of the entry file open at `fd`. What follows the last whole one (the line that ends them
 * and what an earlier round left past it, or a torn write) is cut off, so what is written next is
 * read after them.
 */
function readFrames(fd: number): Read {
  const bytes = readFileSync(fd);
  const read = framesOf(bytes);
  if (read.end < bytes.length) ftruncateSync(fd, read.end);
  return read;
}

/** What the entry files of lock file `lock` hold that the store did not take, in order. */
function unreleased(reads: readonly Read[]): AuditJournalEntry[] {
  const released = Math.max(0, ...reads.map((read) => read.released));
  return reads
    .flatMap((read) => read.entries)
    .filter((entry) => entry.id > released)
    .sort((a, b) => a.id - b.id);
}

/** Writes all of `bytes` into `fd`'s file at `position`. */
function writeAt(fd: number, bytes: Buffer, position: number): void {
  let done = 0;
  while (done < bytes.length) done += writeSync(fd, bytes, done, bytes.length - done, position + done);
}

/** What ends the frames of a file: a line that is not a frame. */
const END = Buffer.from('\n');

interface EntryFile {
  readonly path: string;
  readonly fd: number;
  /** Where its frames end: the next write's position. What lies past it is not read. */
  size: number;
  /** Written since its last sync. */
  dirty: boolean;
  /** The id of its newest entry; 0 when empty. */
  newest: number;
}

/**
 * A journal for `auditLog({ journal })`: each process takes the first of `path`, `path.2`, … that no
 * live process holds, and moves into its own files what processes no longer running left in theirs.
 * Synchronous: it throws (a `SqliteStoreError`) when no slot can be taken.
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
  let lock: DatabaseSync | undefined;
  let held = 0;
  for (let slot = 1; slot <= slots && lock === undefined; slot++) {
    try {
      lock = take(slotPath(options.path, slot));
    } catch (error) {
      throw storeError(STORE, slotPath(options.path, slot), 'open the journal', error);
    }
    if (lock !== undefined) held = slot;
  }
  if (lock === undefined) {
    throw new SqliteStoreError(
      STORE,
      options.path,
      'SQLITE_BUSY',
      `${STORE} (${options.path}): all ${slots} journal files are held by other processes; raise 'slots' or stop one.`,
    );
  }
  const path = slotPath(options.path, held);
  const files: EntryFile[] = [];
  const reads: Read[] = [];
  try {
    for (const file of entryFiles(path)) {
      const own: EntryFile = { path: file, fd: openEntryFile(file, true), size: 0, dirty: false, newest: 0 };
      files.push(own);
      const read = readFrames(own.fd);
      reads.push(read);
      own.size = read.end;
      own.newest = read.entries.at(-1)?.id ?? 0;
    }
  } catch (error) {
    for (const file of files) closeSync(file.fd);
    lock.close();
    throw storeError(STORE, path, 'read the journal', error);
  }
  const left = unreleased(reads);
  // The file written last is written on.
  let active = files[1]!.newest > files[0]!.newest ? 1 : 0;
  let nextId = Math.max(files[0]!.newest, files[1]!.newest) + 1;
  /** Every entry up to this id was released. */
  let released = Math.max(...reads.map((read) => read.released));
  let syncTimer: ReturnType<typeof setTimeout> | undefined;
  let closed = false;

  const write = (texts: readonly string[]): number => {
    const other = files[1 - active]!;
    if (files[active]!.size >= ROTATE_BYTES && other.newest <= released) {
      // Its frames are written over from the start; the end-of-frames line after them hides the rest.
      other.size = 0;
      other.newest = 0;
      active = 1 - active;
    }
    // Each entry: its header, its text, a newline; a UTF-16 unit is at most 3 bytes of UTF-8. Then END.
    let bound = 1;
    for (const text of texts) bound += HEADER_BYTES + 1 + text.length * 3;
    const bytes = Buffer.allocUnsafe(bound);
    let at = 0;
    for (const text of texts) {
      const length = bytes.write(text, at + HEADER_BYTES, 'utf8');
      bytes.write(header(nextId++, length), at, 'latin1');
      at += HEADER_BYTES + length;
      bytes[at++] = 10;
    }
    bytes[at] = 10;
    writeFrames(bytes.subarray(0, at + 1), 'write journal entries', () => (nextId -= texts.length));
    files[active]!.newest = nextId - 1;
    return nextId - 1;
  };

  /** Writes `bytes` (frames, then END) after the frames of the file written on; `undo` runs when they could not be. */
  const writeFrames = (bytes: Buffer, action: string, undo?: () => void): void => {
    const file = files[active]!;
    file.dirty = true;
    syncTimer ??= setTimeout(sync, SYNC_MS).unref();
    try {
      writeAt(file.fd, bytes, file.size);
    } catch (error) {
      // A part written (a full disk) is cut off, so the next write is read after what came before.
      undo?.();
      try {
        writeAt(file.fd, END, file.size);
      } catch {
        // Reading stops at a torn frame, and the start after cuts it off.
      }
      throw storeError(STORE, file.path, action, error);
    }
    file.size += bytes.length - END.length;
  };

  function sync() {
    syncTimer = undefined;
    for (const file of files) {
      if (!file.dirty) continue;
      file.dirty = false;
      fdatasync(file.fd, () => undefined);
    }
  }

  // What processes no longer running left (in their files or, from an earlier version, in their lock
  // file's table; this process's own table included) comes here: written here first, then emptied
  // there, so a crash between the two leaves a copy rather than nothing.
  for (let slot = 1; slot <= slots; slot++) {
    const file = slotPath(options.path, slot);
    if (slot !== held && !existsSync(file)) continue;
    let other: DatabaseSync | undefined;
    const theirFds: number[] = [];
    try {
      other = slot === held ? lock : take(file);
      if (other === undefined) continue;
      if (slot !== held) {
        for (const entryFile of entryFiles(file))
          if (existsSync(entryFile)) theirFds.push(openEntryFile(entryFile));
      }
      const theirs = theirFds.map(readFrames);
      const texts = [...tableTexts(other), ...unreleased(theirs).map((entry) => entry.text)];
      if (texts.length === 0) continue;
      const first = nextId;
      write(texts);
      texts.forEach((text, i) => left.push({ id: first + i, text }));
      other.exec('DELETE FROM toolgate_audit_journal');
      theirs.forEach((read, i) => {
        if (read.end > 0) ftruncateSync(theirFds[i]!, 0);
      });
    } catch (error) {
      if (other !== lock) other?.close();
      clearTimeout(syncTimer);
      for (const own of files) closeSync(own.fd);
      lock.close();
      throw storeError(STORE, file, 'take over what a stopped process left', error);
    } finally {
      for (const fd of theirFds) closeSync(fd);
      if (other !== lock && other?.isOpen === true) other.close();
    }
  }

  const use = <T>(work: () => T): T => {
    if (closed)
      throw new SqliteStoreError(
        STORE,
        path,
        'ERR_STORE_CLOSED',
        `${STORE} (${path}): the journal is closed.`,
      );
    return work();
  };
  return {
    path,
    left: () => left,
    write: (texts) => use(() => write(texts)),
    release: (id) =>
      use(() => {
        if (id <= released) return;
        released = id;
        // One short frame, so a start after a crash does not hand the log what the store took.
        if (released < nextId - 1)
          return writeFrames(Buffer.from(`${releaseFrame(released)}\n`), 'release journal entries');
        // The store took everything: both files start over (ids go on).
        for (const file of files) {
          if (file.size === 0) continue;
          try {
            writeAt(file.fd, END, 0);
          } catch (error) {
            throw storeError(STORE, file.path, 'release journal entries', error);
          }
          file.dirty = true;
          file.size = 0;
          file.newest = 0;
        }
      }),
    close() {
      if (closed) return;
      closed = true;
      clearTimeout(syncTimer);
      for (const file of files) {
        try {
          if (file.dirty) fdatasyncSync(file.fd);
        } catch {
          // What the page cache holds survives the process; only a power cut could lose it.
        } finally {
          closeSync(file.fd);
        }
      }
      lock.close();
    },
  };
}
