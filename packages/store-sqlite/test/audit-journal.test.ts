// The audit journal: two append-only files per process, beside a SQLite file that is its lock, that
// hold a log's records between their commit window and the store's commit. A process takes the first
// slot no live process holds, a later one finds what a stopped one left, and a log started on it
// stores that first, less what the store already took; a journal holds digests, never values.

import {
  appendFileSync,
  copyFileSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync as Database } from 'node:sqlite';
import { createDispatcher, defineTool, type AuditJournal, type AuditRecord } from '@toolgate/core';
import { canonicalChain } from '@toolgate/middleware';
import { auditLog, AuditConfigError, verifyAuditLog, type AuditLogOptions } from '@toolgate/audit';
import { sqliteAuditJournal, sqliteAuditStore, SqliteStoreError } from '@toolgate/store-sqlite';
import { DIGEST_KEY, PRIVATE_PEM, PUBLIC_PEM } from '../../../test-support/audit-fixtures';
import { finished, startFixture, tempDir } from './support';

const rows = (path: string) => {
  const db = new Database(path, { readOnly: true });
  const all = db.prepare('SELECT record FROM toolgate_audit ORDER BY seq').all() as { record: string }[];
  db.close();
  return all.map((row) => JSON.parse(row.record) as AuditRecord);
};

const echo = defineTool({
  name: 'echo',
  description: 'Answers its argument.',
  inputSchema: { type: 'object', properties: { n: { type: 'number' }, secret: { type: 'string' } } },
  execute: async ({ n }: { n?: number }) => ({ n }),
});

/** The entries a journal file holds, read as an attacker would: `<id> <bytes>\n<text>\n` each, up to a line that is none. */
function framesIn(file: string): { id: number; text: string }[] {
  const bytes = readFileSync(file);
  const entries: { id: number; text: string }[] = [];
  for (let at = 0; at < bytes.length;) {
    const newline = bytes.indexOf(10, at);
    const [id, length] = bytes.toString('latin1', at, newline).split(' ');
    if (length === undefined) break;
    if (length !== 'r') {
      const end = newline + 1 + Number(length);
      entries.push({ id: Number(id), text: bytes.toString('utf8', newline + 1, end) });
      at = end + 1;
    } else at = newline + 1;
  }
  return entries;
}

/** Puts `texts` in a journal file as its entries, numbered from 1. */
function writeFrames(file: string, texts: readonly string[]): void {
  writeFileSync(file, texts.map((text, i) => `${i + 1} ${Buffer.byteLength(text)}\n${text}\n`).join(''));
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('sqliteAuditJournal', () => {
  let tmp: ReturnType<typeof tempDir>;
  beforeEach(() => (tmp = tempDir()));
  afterEach(() => tmp.cleanup());

  it('keeps entries in order until released, across a close', () => {
    const path = tmp.file('j');
    const journal = sqliteAuditJournal({ path });
    expect(journal.path).toBe(path);
    expect(journal.left()).toEqual([]);
    const first = journal.write(['a', 'b']);
    const second = journal.write(['c']);
    expect(second).toBe(first + 1);
    journal.release(first - 1);
    journal.close();
    const again = sqliteAuditJournal({ path });
    expect(again.left()).toEqual([
      { id: first, text: 'b' },
      { id: second, text: 'c' },
    ]);
    again.release(second);
    // Written after everything before was released: kept as any other.
    const third = again.write(['d']);
    again.close();
    const emptied = sqliteAuditJournal({ path });
    expect(emptied.left()).toEqual([{ id: third, text: 'd' }]);
    emptied.release(third);
    emptied.close();
    const last = sqliteAuditJournal({ path });
    expect(last.left()).toEqual([]);
    last.close();
    expect(() => emptied.write(['d'])).toThrow(expect.objectContaining({ code: 'ERR_STORE_CLOSED' }));
  });

  it('gives each holder its own file, refuses past the slots, and moves what a stopped holder left', () => {
    const path = tmp.file('j');
    const a = sqliteAuditJournal({ path, slots: 2 });
    const b = sqliteAuditJournal({ path, slots: 2 });
    expect([a.path, b.path]).toEqual([path, `${path}.2`]);
    let refused: unknown;
    try {
      sqliteAuditJournal({ path, slots: 2 });
    } catch (error) {
      refused = error;
    }
    expect(refused).toBeInstanceOf(SqliteStoreError);
    expect(refused).toMatchObject({
      code: 'SQLITE_BUSY',
      message: expect.stringMatching(/all 2 journal files/),
    });
    a.write(['a1']);
    b.write(['b1', 'b2']);
    // Both stop with entries the store never took.
    a.close();
    b.close();
    const c = sqliteAuditJournal({ path, slots: 2 });
    expect(c.path).toBe(path);
    expect(c.left().map((entry) => entry.text)).toEqual(['a1', 'b1', 'b2']);
    // What b left now lives in c's file only: the next holder of b's file starts empty.
    const d = sqliteAuditJournal({ path, slots: 2 });
    expect(d.path).toBe(`${path}.2`);
    expect(d.left()).toEqual([]);
    c.close();
    d.close();
  });

  it('writes on the other file once one is long and the store took all the other holds', () => {
    const path = tmp.file('j');
    const journal = sqliteAuditJournal({ path });
    const big = (c: string) => c.repeat(400_000);
    const heads = (file: string) => framesIn(file).map((entry) => entry.text.slice(0, 2));
    journal.write([big('a'), big('b')]);
    const c = journal.write([big('c')]);
    journal.release(c - 1);
    expect(statSync(`${path}.a`).size).toBeGreaterThan(1 << 20);
    // Past the length, and the other file holds nothing the store has not taken: the next write goes there.
    const d = journal.write(['d']);
    expect(heads(`${path}.b`)).toEqual(['d']);
    const g = journal.write([big('e'), big('f'), big('g')]);
    // `.a` still holds an entry the store has not taken: `.b` goes on past the length.
    const h = journal.write(['h']);
    expect(heads(`${path}.a`)).toEqual(['aa', 'bb', 'cc']);
    expect(heads(`${path}.b`)).toEqual(['d', 'ee', 'ff', 'gg', 'h']);
    journal.release(c);
    // Now it holds none: the next write starts it over, in place.
    const i = journal.write(['i']);
    expect(heads(`${path}.a`)).toEqual(['i']);
    journal.close();
    const again = sqliteAuditJournal({ path });
    expect(again.left().map((entry) => entry.text.slice(0, 2))).toEqual(['d', 'ee', 'ff', 'gg', 'h', 'i']);
    expect(again.left().map((entry) => entry.id)).toEqual([d, g - 2, g - 1, g, h, i]);
    again.release(i);
    // The store took everything: both files start over, and what they held is not read again.
    expect([framesIn(`${path}.a`), framesIn(`${path}.b`)]).toEqual([[], []]);
    const j = again.write(['j']);
    again.close();
    const last = sqliteAuditJournal({ path });
    expect(last.left()).toEqual([{ id: j, text: 'j' }]);
    last.close();
  });

  it('cuts off the torn tail of a write, so what comes after it is read', () => {
    const path = tmp.file('j');
    const journal = sqliteAuditJournal({ path });
    journal.write(['a', 'b']);
    journal.close();
    // The frames, and the line that ends them.
    const whole = statSync(`${path}.a`).size - 1;
    // A power cut in the middle of the next write: a header and part of its text, over that line.
    truncateSync(`${path}.a`, whole);
    appendFileSync(`${path}.a`, `000000000000003 0000000100\n{"at":`);
    const again = sqliteAuditJournal({ path });
    expect(again.left().map((entry) => entry.text)).toEqual(['a', 'b']);
    expect(statSync(`${path}.a`).size).toBe(whole);
    again.write(['c']);
    again.close();
    const last = sqliteAuditJournal({ path });
    expect(last.left().map((entry) => entry.text)).toEqual(['a', 'b', 'c']);
    last.close();
  });

  it('never writes through a link put in place of its files', () => {
    const path = tmp.file('j');
    const victim = tmp.file('victim');
    writeFileSync(victim, 'precious');
    symlinkSync(victim, `${path}.a`);
    expect(() => sqliteAuditJournal({ path })).toThrow(
      expect.objectContaining({
        name: 'SqliteStoreError',
        path,
        message: expect.stringMatching(/read the journal/),
      }),
    );
    expect(readFileSync(victim, 'utf8')).toBe('precious');
    // The lock went with the failed open: the next holder takes the same slot.
    rmSync(`${path}.a`);
    const journal = sqliteAuditJournal({ path });
    expect(journal.path).toBe(path);
    journal.close();
  });

  it('takes over what a journal of an earlier version left in its SQLite table', () => {
    const path = tmp.file('j');
    const earlier = new Database(path);
    earlier.exec('CREATE TABLE toolgate_audit_journal (id INTEGER PRIMARY KEY, fields TEXT NOT NULL) STRICT');
    earlier.exec(`INSERT INTO toolgate_audit_journal (fields) VALUES ('x1'), ('x2')`);
    earlier.close();
    const journal = sqliteAuditJournal({ path });
    expect(journal.left().map((entry) => entry.text)).toEqual(['x1', 'x2']);
    journal.write(['y']);
    journal.close();
    const table = new Database(path);
    expect(table.prepare('SELECT count(*) AS n FROM toolgate_audit_journal').get()).toEqual({ n: 0 });
    table.close();
    const again = sqliteAuditJournal({ path });
    expect(again.left().map((entry) => entry.text)).toEqual(['x1', 'x2', 'y']);
    again.close();
  });

  it('checks its options', () => {
    expect(() => sqliteAuditJournal({ path: ':memory:' })).toThrow(/must be a file/);
    expect(() => sqliteAuditJournal({ path: tmp.file('j'), slots: 0 })).toThrow(/'slots' must be an integer/);
    expect(() => sqliteAuditJournal({} as never)).toThrow(/expected \{ path \}/);
  });
});

describe('auditLog with a journal', () => {
  let tmp: ReturnType<typeof tempDir>;
  beforeEach(() => (tmp = tempDir()));
  afterEach(() => tmp.cleanup());

  /** A journal that tells what was written to it, and can be made to fail. */
  function watched(journal: AuditJournal) {
    const written: string[] = [];
    const released: number[] = [];
    const state = { failWrites: false };
    const watchedJournal: AuditJournal = {
      left: () => journal.left(),
      write: (texts) => {
        if (state.failWrites) throw new Error('disk full');
        written.push(...texts);
        return journal.write(texts);
      },
      release: (id) => {
        released.push(id);
        journal.release(id);
      },
      close: () => journal.close(),
    };
    return { journal: watchedJournal, written, released, state };
  }

  /** A batching log on the store at `db` with `journal`; `options` add to or replace the defaults. */
  function logOn(db: string, journal: AuditJournal, options: Partial<AuditLogOptions> = {}) {
    const store = sqliteAuditStore({ path: db });
    const audit = auditLog({
      store,
      signingKey: PRIVATE_PEM,
      digestKey: DIGEST_KEY,
      durability: 'batch',
      journal,
      ...options,
    });
    const dispatcher = audit.attach(createDispatcher({ tools: [echo], chain: canonicalChain() }));
    return { db, store, audit, dispatcher };
  }

  function open(journal: AuditJournal, storeIntervalMs = 60_000, onJournalError?: (error: unknown) => void) {
    return logOn(tmp.file('audit.db'), journal, {
      commitWindowMs: 1,
      storeIntervalMs,
      ...(onJournalError !== undefined ? { onJournalError } : {}),
    });
  }

  it('a closed window goes to the journal and the store takes it at its interval, in one commit, then the journal forgets it', async () => {
    const opened = sqliteAuditJournal({ path: tmp.file('j') });
    const { journal, written, released } = watched(opened);
    const { db, store, audit, dispatcher } = open(journal, 300);
    await Promise.all([1, 2, 3].map((n) => dispatcher.dispatch({ toolName: 'echo', args: { n } })));
    await sleep(30);
    // One entry for the window: the head it was written on, one MAC, a line of fields per record.
    expect(written).toHaveLength(1);
    const [since, mac, ...lines] = written[0]!.split('\n');
    expect(since).toBe('0');
    expect(mac).toMatch(/^[0-9a-f]{64}$/);
    expect(lines.map((line) => (JSON.parse(line) as { kind: string }).kind)).toEqual([
      'result',
      'result',
      'result',
    ]);
    expect(rows(db)).toHaveLength(0);
    await sleep(500);
    const stored = rows(db);
    expect(stored.map((r) => r.seq)).toEqual([1, 2, 3]);
    // One commit: one signature, on the last record.
    expect(stored.map((r) => r.signature !== '')).toEqual([false, false, true]);
    expect(released).toHaveLength(1);
    await audit.close();
    store.close();
    opened.close();
    const reopened = sqliteAuditJournal({ path: tmp.file('j') });
    expect(reopened.left()).toEqual([]);
    reopened.close();
  });

  it('a window whose next record is not expected before it closes is journaled at the end of its turn, not at its close', async () => {
    const opened = sqliteAuditJournal({ path: tmp.file('j') });
    const { journal, written } = watched(opened);
    const { db, audit, dispatcher } = logOn(tmp.file('audit.db'), journal, {
      commitWindowMs: 2000,
      storeIntervalMs: 60_000,
    });
    const lines = (entry: string) => entry.split('\n').length - 2;
    // The first record: none came before it, so none is expected soon.
    await dispatcher.dispatch({ toolName: 'echo', args: { n: 1 } });
    await sleep(20);
    expect(written.map(lines)).toEqual([1]);
    // Three at once, 20 ms after it: more may follow within the window, which stays open.
    await Promise.all([2, 3, 4].map((n) => dispatcher.dispatch({ toolName: 'echo', args: { n } })));
    await sleep(200);
    expect(written.map(lines)).toEqual([1]);
    // 1.5 s into the window, with as long since the last record: it closes with this one, 0.5 s early.
    await sleep(1300);
    await dispatcher.dispatch({ toolName: 'echo', args: { n: 5 } });
    await sleep(20);
    expect(written.map(lines)).toEqual([1, 4]);
    await audit.flush();
    expect(rows(db).map((r) => r.seq)).toEqual([1, 2, 3, 4, 5]);
    await audit.close();
    journal.close();
  });

  it('flush() and close() do not wait for the interval; a record someone waits for is never journaled', async () => {
    const opened = sqliteAuditJournal({ path: tmp.file('j') });
    const { journal, written } = watched(opened);
    const { db, store, audit, dispatcher } = open(journal);
    await dispatcher.dispatch({ toolName: 'echo', args: { n: 1 } });
    await audit.flush();
    expect(rows(db)).toHaveLength(1);
    await audit.record({ kind: 'pin.accepted', tool: 'echo' });
    expect(rows(db).map((r) => r.kind)).toEqual(['result', 'pin.accepted']);
    await dispatcher.dispatch({ toolName: 'echo', args: { n: 2 } });
    await audit.close();
    expect(rows(db)).toHaveLength(3);
    expect(written.some((text) => text.includes('pin.accepted'))).toBe(false);
    store.close();
    opened.close();
  });

  it('when the journal stops taking entries, each window goes to the store as without one', async () => {
    const opened = sqliteAuditJournal({ path: tmp.file('j') });
    const { journal, state } = watched(opened);
    state.failWrites = true;
    const heard: unknown[] = [];
    const { db, store, audit, dispatcher } = open(journal, 60_000, (error) => heard.push(error));
    await dispatcher.dispatch({ toolName: 'echo', args: { n: 1 } });
    await sleep(50);
    expect(rows(db)).toHaveLength(1);
    await dispatcher.dispatch({ toolName: 'echo', args: { n: 2 } });
    await sleep(50);
    // Not the minute of the store interval: the window's own commit.
    expect(rows(db)).toHaveLength(2);
    // Heard once, when the journal was turned off.
    expect(heard).toEqual([new Error('disk full')]);
    await audit.close();
    store.close();
    opened.close();
  });

  it('a window entry the store took only part of is released once the store took the rest', async () => {
    const opened = sqliteAuditJournal({ path: tmp.file('j') });
    const { journal, written, released } = watched(opened);
    const db = tmp.file('audit.db');
    const store = sqliteAuditStore({ path: db });
    let open = () => undefined as void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const audit = auditLog({
      store: {
        head: () => store.head(),
        read: (after, limit) => store.read(after, limit),
        append: async (seal) => {
          await gate;
          return store.append(seal);
        },
      },
      signingKey: PRIVATE_PEM,
      digestKey: DIGEST_KEY,
      durability: 'batch',
      journal,
      commitWindowMs: 1,
      storeIntervalMs: 60_000,
    });
    await audit.ready();
    const dispatcher = audit.attach(createDispatcher({ tools: [echo], chain: canonicalChain() }));
    // 300 at once: the 256th starts an append of a full batch, held at the gate while the window
    // closes and the journal takes all 300 as one entry.
    await Promise.all(
      Array.from({ length: 300 }, (_, n) => dispatcher.dispatch({ toolName: 'echo', args: { n } })),
    );
    await sleep(30);
    expect(written).toHaveLength(1);
    expect(written[0]!.split('\n')).toHaveLength(302);
    open();
    for (let i = 0; i < 200 && rows(db).length < 256; i++) await sleep(5);
    expect(rows(db)).toHaveLength(256);
    // 44 of the entry's records are not stored: a crash now must find the entry in the journal.
    expect(released.filter((id) => id >= 1)).toEqual([]);
    await audit.close();
    expect(rows(db)).toHaveLength(300);
    expect(released.filter((id) => id >= 1)).toEqual([1]);
    store.close();
    opened.close();
  });

  it('checks the options that go with it', () => {
    const store = sqliteAuditStore({ path: tmp.file('audit.db') });
    const journal = sqliteAuditJournal({ path: tmp.file('j') });
    const base = { store, signingKey: PRIVATE_PEM, digestKey: DIGEST_KEY };
    expect(() => auditLog({ ...base, journal })).toThrow(AuditConfigError);
    expect(() => auditLog({ ...base, journal })).toThrow(/needs durability: 'batch'/);
    expect(() => auditLog({ ...base, durability: 'batch', journal: {} as AuditJournal })).toThrow(
      /must be an AuditJournal/,
    );
    expect(() => auditLog({ ...base, durability: 'batch', journal, storeIntervalMs: 0 })).toThrow(
      /'storeIntervalMs' must be an integer/,
    );
    journal.close();
    store.close();
  });

  /** A log started on the journal at `path` after a crash, and what its journal listener heard. */
  function reopen(db: string, path: string) {
    const heard: string[] = [];
    const journal = sqliteAuditJournal({ path });
    const log = logOn(db, journal, { onJournalError: (error) => heard.push((error as Error).message) });
    return {
      ...log,
      journal,
      heard,
      async close() {
        await log.audit.close();
        journal.close();
        log.store.close();
      },
    };
  }

  /** Starts a log on the journal at `path` after a crash, stores what it left, and says what it heard. */
  async function restart(db: string, path: string) {
    const log = reopen(db, path);
    await log.close();
    return log.heard;
  }

  /** How many entries the journal at `path` holds (it takes the file and lets it go). */
  function journalLeft(path: string) {
    const journal = sqliteAuditJournal({ path });
    const left = journal.left().length;
    journal.close();
    return left;
  }

  it('a process killed with records only in its journal: the next start stores them first, in order, and the chain verifies', async () => {
    const db = tmp.file('audit.db');
    const path = tmp.file('j');
    const run = await finished(startFixture('audit-journal-crash', [db, path, 'released']));
    expect(run.status).toBeNull();
    expect(JSON.parse(run.stdout.trim())).toEqual({ answered: 7, pending: 3, journal: path });
    expect(rows(db).map((r) => r.seq)).toEqual([1, 2, 3, 4]);
    // The journal holds digests of the arguments, never the arguments.
    for (const name of readdirSync(tmp.dir).filter((file) => file.startsWith('j'))) {
      expect(readFileSync(join(tmp.dir, name)).includes('7'.repeat(24))).toBe(false);
    }

    const log = reopen(db, path);
    expect(log.journal.left()).toHaveLength(3);
    const { audit } = log;
    await log.dispatcher.dispatch({ toolName: 'echo', args: { n: 8 } });
    await log.close();
    expect(log.heard).toEqual([]);
    const records = rows(db);
    expect(records.map((r) => r.seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    const digestOf = (n: number) => audit.digest({ n, secret: `sk-live-${'7'.repeat(24)}` });
    // The three the crash left come before the new call, in the order they happened.
    expect(records.slice(4, 7).map((r) => r.argsDigest)).toEqual(await Promise.all([5, 6, 7].map(digestOf)));
    expect(records[7]!.argsDigest).toBe(await audit.digest({ n: 8 }));
    expect(await verifyAuditLog(records, PUBLIC_PEM)).toEqual({ ok: true, count: 8 });
    expect(journalLeft(path)).toBe(0);
  });

  it('a process killed after the store took its records but before the journal forgot them: none is stored twice', async () => {
    const db = tmp.file('audit.db');
    const path = tmp.file('j');
    const run = await finished(startFixture('audit-journal-crash', [db, path, 'unreleased']));
    expect(run.status).toBeNull();
    expect(rows(db)).toHaveLength(7);
    // The first four were flushed before their window closed, so only the last three were journaled.
    expect(journalLeft(path)).toBe(3);
    expect(await restart(db, path)).toEqual([]);
    const records = rows(db);
    expect(records).toHaveLength(7);
    expect(await verifyAuditLog(records, PUBLIC_PEM)).toEqual({ ok: true, count: 7 });
    expect(journalLeft(path)).toBe(0);
  });

  it('an entry edited or forged in the journal is never stored (so never signed); the others are', async () => {
    const db = tmp.file('audit.db');
    const path = tmp.file('j');
    await finished(startFixture('audit-journal-crash', [db, path, 'released']));
    expect(rows(db)).toHaveLength(4);
    // The process is gone: its files are anyone's who can write them.
    const entries = framesIn(`${path}.a`);
    expect(entries).toHaveLength(3);
    const [since, mac] = entries[1]!.text.split('\n');
    const forged = JSON.stringify({
      at: new Date().toISOString(),
      kind: 'pin.accepted',
      ran: false,
      approver: 'mallory',
    });
    writeFrames(`${path}.a`, [
      entries[0]!.text.replace('"kind":"result"', '"kind":"refused"'),
      entries[1]!.text,
      entries[2]!.text,
      `${since}\n${mac}\n${forged}`,
      forged,
    ]);

    const heard = await restart(db, path);
    expect(heard).toEqual([expect.stringMatching(/^3 audit journal entries do not hold their check/)]);
    const records = rows(db);
    expect(records.map((r) => r.kind)).toEqual(Array(6).fill('result'));
    expect(records.some((r) => r.approver === 'mallory')).toBe(false);
    expect(await verifyAuditLog(records, PUBLIC_PEM)).toEqual({ ok: true, count: 6 });
  });

  it('a record slipped into a window entry, or one taken out of it, voids the whole entry', async () => {
    for (const edit of [
      (lines: string[]) => [...lines, lines[0]!.replace('"kind":"result"', '"kind":"refused"')],
      (lines: string[]) => lines.slice(0, 2),
      (lines: string[]) => [lines[1]!, lines[0]!, lines[2]!],
    ]) {
      const db = tmp.file('audit.db');
      const path = tmp.file('j');
      await finished(startFixture('audit-journal-crash', [db, path, 'one-window']));
      const entries = framesIn(`${path}.a`);
      expect(entries).toHaveLength(1);
      const [since, mac, ...lines] = entries[0]!.text.split('\n');
      expect(lines).toHaveLength(3);
      writeFrames(`${path}.a`, [[since, mac, ...edit(lines)].join('\n')]);

      expect(await restart(db, path)).toEqual([
        expect.stringMatching(/^1 audit journal entry does not hold its check/),
      ]);
      const records = rows(db);
      expect(records).toHaveLength(4);
      expect(await verifyAuditLog(records, PUBLIC_PEM)).toEqual({ ok: true, count: 4 });
      tmp.cleanup();
      tmp = tempDir();
    }
  });

  it('a window entry left by a crash is stored whole, in its order, after what the store held', async () => {
    const db = tmp.file('audit.db');
    const path = tmp.file('j');
    const run = await finished(startFixture('audit-journal-crash', [db, path, 'one-window']));
    expect(JSON.parse(run.stdout.trim())).toMatchObject({ answered: 7, pending: 3 });
    expect(framesIn(`${path}.a`)).toHaveLength(1);
    expect(await restart(db, path)).toEqual([]);
    const records = rows(db);
    expect(records.map((r) => r.seq)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(await verifyAuditLog(records, PUBLIC_PEM)).toEqual({ ok: true, count: 7 });
    expect(journalLeft(path)).toBe(0);
  });

  it('a journal put back after its records were stored stores nothing twice', async () => {
    const db = tmp.file('audit.db');
    const path = tmp.file('j');
    await finished(startFixture('audit-journal-crash', [db, path, 'released']));
    const saved = readdirSync(tmp.dir).filter((name) => name.startsWith('j'));
    for (const name of saved) copyFileSync(join(tmp.dir, name), join(tmp.dir, `saved-${name}`));
    expect(await restart(db, path)).toEqual([]);
    expect(rows(db)).toHaveLength(7);
    // Someone who kept the old journal puts it back.
    for (const name of saved) copyFileSync(join(tmp.dir, `saved-${name}`), join(tmp.dir, name));
    expect(await restart(db, path)).toEqual([]);
    const records = rows(db);
    expect(records).toHaveLength(7);
    expect(await verifyAuditLog(records, PUBLIC_PEM)).toEqual({ ok: true, count: 7 });
  });
});
