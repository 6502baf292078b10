// The one writer of an audit log in this process: records queue in order and go to the store in
// batches (one append, one transaction, one signature, for every record waiting), so concurrent calls
// share a commit. With a commit window, the first record queued opens it and every record queued
// before it closes joins that batch: calls one after another share a commit too.
// A record of a call that happened is never dropped: when an append fails it stays at the front of
// the queue, kept until the store takes it, and the log reports itself degraded until then.
// With a journal, the commit window ends in a journal write (a local file) instead, and the store
// takes what the journal holds in one commit per store interval: far fewer commits for the same
// loss bound. What a stopped process left in its journal is queued first, less what the store took.

import {
  DeadlineError,
  withDeadline,
  type AuditHead,
  type AuditJournal,
  type AuditJournalEntry,
  type AuditRecord,
  type AuditStore,
} from '@toolgate/core';
import { RECORD_FIELDS, type AuditFields, type DigestTexts } from './record';

/** The most records one append carries. */
export const MAX_BATCH = 256;

interface Item {
  fields: AuditFields;
  /** Digests still to compute before the record is sealed (undefined once they are in `fields`). */
  digests?: DigestTexts | undefined;
  /** Kept when an append fails (the record of something that happened) rather than dropped with an error. */
  readonly keep: boolean;
  waiter?: { resolve(record: AuditRecord): void; reject(error: unknown): void } | undefined;
  /** Hears the first failed append of a record nobody waits for (`enqueueQuietly`). */
  onFailed?: ((error: unknown) => void) | undefined;
  /** What a failed append sealed this record as: it may have been stored after all. */
  sealed?: AuditHead | undefined;
  /** Held back by a failed append: the log refuses new calls until it is written. */
  kept?: boolean;
  /** Its entry in the journal, once written there. */
  journalId?: number | undefined;
  /** In the store. */
  stored?: boolean;
}

/** A journal, and how often the store takes what it holds. */
export interface WriterJournal {
  readonly journal: AuditJournal;
  readonly storeIntervalMs: number;
  /** Hears the one failure that turns the journal off for this writer. */
  readonly onError?: ((error: unknown) => void) | undefined;
}

/** The fields a record was made of (not its place in the chain): how a journal entry finds its record. */
const FIELDS = RECORD_FIELDS.filter(
  (key) => key !== 'seq' && key !== 'prevHash' && key !== 'hash' && key !== 'signature',
);
const fieldsKey = (fields: Readonly<Record<string, unknown>>): string =>
  JSON.stringify(FIELDS.map((key) => fields[key] ?? null));
/** What a journal entry's MAC covers besides its head and fields: no digest of a value starts so. */
const ENTRY_DOMAIN = 'toolgate audit journal v1';
/** Records read at a time when a start looks for the records of entries a stopped process left. */
const READ_PAGE = 1000;

type Seal = (head: AuditHead | undefined, batch: readonly AuditFields[]) => Promise<readonly AuditRecord[]>;

/** Runs `work` once this turn's I/O is handled, without a timer of its own where the runtime has setImmediate. */
const endOfTurn: (work: () => void) => void =
  typeof setImmediate === 'function' ? (work) => void setImmediate(work) : (work) => void setTimeout(work, 0);

/** Thrown out of a seal to stop an append: the head moved past records a failed append sealed. */
class Recheck extends Error {}

/** Thrown out of a seal whose append the writer already gave up on, so the store rolls it back. */
class Abandoned extends Error {}

/**
 * A deadline for the store's part of an append: it stands still while the seal runs, so signing a
 * large batch on a busy machine never counts against the store.
 */
function storeDeadline(ms: number, onExpired: () => void) {
  let left = ms;
  let startedAt = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let stopped = false;
  let expire: (error: DeadlineError) => void = () => undefined;
  const expired = new Promise<never>((_, reject) => (expire = reject));
  const run = () => {
    // A seal that ends after the append was given up on must not start the clock again.
    if (stopped) return;
    startedAt = Date.now();
    timer = setTimeout(() => {
      onExpired();
      expire(new DeadlineError(ms));
    }, left);
  };
  run();
  return {
    expired,
    pause() {
      clearTimeout(timer);
      left = Math.max(0, left - (Date.now() - startedAt));
    },
    resume: run,
    stop() {
      stopped = true;
      clearTimeout(timer);
    },
  };
}

export class AuditWriter {
  readonly #store: AuditStore;
  readonly #seal: Seal;
  readonly #deadlineMs: number;
  readonly #onStored: ((head: AuditHead) => void) | undefined;
  #queue: Item[] = [];
  #draining: Promise<void> | undefined;
  /** Queued records held back by a failed append. */
  #kept = 0;
  #failures = 0;
  #lastError: unknown;
  /** The lowest seq a failed append sealed a queued record as; set until that is settled. */
  #unsureFrom: number | undefined;
  readonly #windowMs: number;
  readonly #digestText: ((text: string) => string) | undefined;
  /** Closes the open commit window at once. */
  #closeWindow: (() => void) | undefined;
  /** Someone waits (a flush, an urgent record, a full batch): the next drain opens no window. */
  #hurry = false;
  /** When an append last succeeded (Date.now()), and no append failed since; 0: not since the last failure. */
  #storedAt = 0;
  readonly #journal: WriterJournal | undefined;
  /** Why the journal stopped taking entries: from then on the store takes each window, as without one. */
  #journalError: unknown;
  #journalTimer: ReturnType<typeof setTimeout> | undefined;
  /** When the open window's first record was queued, and the last record (performance.now()). */
  #windowOpenedAt = 0;
  #queuedAt = Number.NEGATIVE_INFINITY;
  /** The journal write is due at the end of this turn. */
  #journalEndOfTurn = false;
  /** Records queued since the last journal write: what a crash now would lose. */
  #unjournaled = 0;
  /** The records the next journal write takes, less those the store takes first (a list, so a window never walks the queue). */
  #toJournal: Item[] = [];
  /** Entries a stopped process left in the journal, queued once the store's tail shows which it took. */
  #left: readonly AuditJournalEntry[] | undefined;
  /** The store's head seq as this writer last saw it: an entry's record is stored after it. */
  #knownSeq: number | undefined;

  constructor(
    store: AuditStore,
    seal: Seal,
    deadlineMs: number,
    onStored?: (head: AuditHead) => void,
    windowMs = 0,
    digestText?: (text: string) => string,
    journal?: WriterJournal,
  ) {
    this.#store = store;
    this.#seal = seal;
    this.#deadlineMs = deadlineMs;
    this.#onStored = onStored;
    this.#windowMs = windowMs;
    this.#digestText = digestText;
    this.#journal = journal;
    if (journal !== undefined && digestText === undefined) {
      this.#journalFailed(
        new Error(
          "the journal authenticates its entries with the digest key in this thread: it needs node:crypto and the key's bytes",
        ),
      );
    } else if (journal !== undefined) {
      try {
        const left = journal.journal.left();
        if (left.length > 0) {
          this.#left = left;
          void this.#drain();
        }
      } catch (error) {
        // A journal that cannot be read is not written either: what it holds stays for a later start.
        this.#journalFailed(error);
      }
      // The head an entry names; until it is known (or an append shows it), windows go to the store.
      store.head().then(
        (head) => (this.#knownSeq ??= head?.seq ?? 0),
        () => undefined,
      );
    }
  }

  get #journaling(): boolean {
    return this.#journal !== undefined && this.#journalError === undefined;
  }

  /** Why the journal stopped taking entries, if it did. */
  get journalError(): unknown {
    return this.#journalError;
  }

  /** Records a process crash now would lose: queued, and in neither the journal nor the store. */
  get unwritten(): number {
    return this.#journaling ? Math.min(this.#unjournaled, this.#queue.length) : this.#queue.length;
  }

  /** Whether an append succeeded within the last `ms` and none failed since: the store answers. */
  storedWithin(ms: number): boolean {
    return this.#storedAt !== 0 && Date.now() - this.#storedAt <= ms;
  }

  /** Records a failed append held back, or a stopped process left in the journal, still wait for the store. */
  get degraded(): boolean {
    return this.#kept > 0 || this.#left !== undefined;
  }

  /** How many records a failed append held back. */
  get kept(): number {
    return this.#kept;
  }

  /** Records kept in memory for the store. */
  get pending(): number {
    return this.#queue.length;
  }

  get lastError(): unknown {
    return this.#lastError;
  }

  /**
   * Queues a record; resolves once the store holds it, rejects when the append failed (a kept record
   * stays queued). `urgent`: its caller waits for it, so the commit window closes now. With `digests`,
   * `fields` are handed over: their digests are put in them when the record is written.
   */
  enqueue(fields: AuditFields, keep: boolean, urgent = false, digests?: DigestTexts): Promise<AuditRecord> {
    this.#checkDigests(digests);
    return new Promise<AuditRecord>((resolve, reject) =>
      this.#push({ fields, keep, waiter: { resolve, reject }, digests }, urgent),
    );
  }

  /**
   * Queues a record of something that happened (kept if an append fails) that nobody waits for:
   * `onFailed` hears a failed append, with no promise made per record.
   */
  enqueueQuietly(
    fields: AuditFields,
    digests: DigestTexts | undefined,
    onFailed: (error: unknown) => void,
  ): void {
    this.#checkDigests(digests);
    this.#push({ fields, keep: true, onFailed, digests }, false);
  }

  #checkDigests(digests: DigestTexts | undefined): void {
    if (digests !== undefined && this.#digestText === undefined) {
      throw new TypeError('this audit writer was made without a digester; pass digests in the fields');
    }
  }

  /** Queues `item` and starts a drain; an urgent record or a full batch closes the commit window now. */
  #push(item: Item, urgent: boolean): void {
    this.#queue.push(item);
    this.#unjournaled += 1;
    // A record someone waits for (keep false) is not journaled: when its append fails its caller hears
    // so and does not act, and a later start must not store it.
    if (this.#journaling && item.keep) this.#toJournal.push(item);
    if (this.#journaling && !urgent) this.#journalSoon();
    void this.#drain();
    if (urgent || this.#queue.length >= MAX_BATCH) this.#commitNow();
  }

  /** Writes the records a failed append held back; resolves with whether none is left. */
  writeKept(): Promise<boolean> {
    this.#commitNow();
    return this.#until(() => this.#kept === 0 && this.#left === undefined);
  }

  /** Writes every record queued now; resolves with whether all of them are stored. */
  flush(): Promise<boolean> {
    this.#commitNow();
    const last = this.#queue.at(-1);
    return this.#until(() => this.#left === undefined && (last === undefined || !this.#queue.includes(last)));
  }

  /** Drains until `done` holds or an append fails. Records queued meanwhile may keep a drain going. */
  async #until(done: () => boolean): Promise<boolean> {
    while (!done()) {
      const failures = this.#failures;
      await this.#drain();
      if (this.#failures !== failures) break;
    }
    return done();
  }

  #drain(): Promise<void> {
    this.#draining ??= this.#run();
    return this.#draining;
  }

  async #run(): Promise<void> {
    // Lets every record queued in this turn (or, with a window, before it closes) join the first batch.
    const windowMs = this.#journaling ? this.#journal!.storeIntervalMs : this.#windowMs;
    if (windowMs > 0 && !this.#hurry) await this.#window(windowMs);
    else await Promise.resolve();
    this.#hurry = false;
    try {
      // What a stopped process left goes first, so the log keeps the order things happened in.
      if (this.#left !== undefined && !(await this.#queueLeft())) return;
      while (this.#queue.length > 0 && (await this.#appendBatch())) {
        // Records queued while that append ran (calls that finish in microtasks, in this process)
        // wait for a window of their own, as the first did: else each append would carry a few.
        if (windowMs > 0 && !this.#hurry && this.#queue.length > 0 && this.#queue.length < MAX_BATCH)
          await this.#window(windowMs);
        this.#hurry = false;
      }
    } finally {
      this.#draining = undefined;
    }
  }

  /**
   * Writes the queued records to the journal once the commit window closes, or at the end of this
   * turn when the next record is not expected before it would: the window's timer would then wake an
   * idle process for the write alone, which costs it more than the write (a few records a window at
   * low rates). Expected: as far off as the last record was from this one. Only ever earlier.
   */
  #journalSoon(): void {
    const now = performance.now();
    const sinceLast = now - this.#queuedAt;
    this.#queuedAt = now;
    if (this.#journalTimer === undefined) {
      this.#windowOpenedAt = now;
      this.#journalTimer = setTimeout(() => this.#journalDue(), this.#windowMs);
    }
    if (!this.#journalEndOfTurn && now - this.#windowOpenedAt + sinceLast >= this.#windowMs) {
      this.#journalEndOfTurn = true;
      endOfTurn(() => this.#journalDue());
    }
  }

  #journalDue(): void {
    clearTimeout(this.#journalTimer);
    this.#journalTimer = undefined;
    this.#journalEndOfTurn = false;
    this.#journalQueued();
  }

  #journalQueued(): void {
    if (!this.#journaling) return;
    const fresh = this.#toJournal.filter((item) => item.stored !== true);
    this.#toJournal = fresh;
    if (fresh.length === 0) {
      this.#unjournaled = 0;
      return;
    }
    // Until an append showed the store's head, an entry could not say after which record its own is
    // stored (what a start reads to find it): the store takes this window itself.
    if (this.#knownSeq === undefined) {
      this.#commitNow();
      return;
    }
    this.#unjournaled = 0;
    this.#toJournal = [];
    try {
      // Digested first: an entry holds digests, never the texts of values.
      for (const item of fresh) if (item.digests !== undefined) this.#digest(item);
      // One entry for the window: one MAC and one frame, however many records it holds.
      const id = this.#journal!.journal.write([this.#entryText(this.#knownSeq, fresh)]);
      for (const item of fresh) item.journalId = id;
    } catch (error) {
      this.#journalFailed(error);
      this.#unjournaled = this.#queue.length;
      this.#commitNow();
    }
  }

  #journalFailed(error: unknown): void {
    this.#journalError = error;
    this.#toJournal = [];
    this.#heard(error);
  }

  #heard(error: unknown): void {
    try {
      this.#journal?.onError?.(error);
    } catch {
      // A listener that throws changes nothing.
    }
  }

  /**
   * An entry: the store's head seq when it was written, a MAC under the digest key, and the fields of
   * the window's records as JSON, one per line (JSON holds no raw newline). The MAC keeps an entry
   * from being forged or edited into records this log would sign; the head lets a start find the
   * records of a replayed one.
   */
  #entryText(since: number, items: readonly Item[]): string {
    let json = JSON.stringify(items[0]!.fields);
    for (let i = 1; i < items.length; i++) json += `\n${JSON.stringify(items[i]!.fields)}`;
    return `${since}\n${this.#digestText!(`${ENTRY_DOMAIN}\n${since}\n${json}`)}\n${json}`;
  }

  /** An entry's head and records' fields, or undefined when it is not one this log wrote under this digest key. */
  #entryOf(text: string): { readonly since: number; readonly records: readonly AuditFields[] } | undefined {
    const first = text.indexOf('\n');
    const second = text.indexOf('\n', first + 1);
    if (first < 1 || second < 0) return undefined;
    const since = text.slice(0, first);
    const json = text.slice(second + 1);
    if (!/^\d{1,15}$/.test(since)) return undefined;
    if (this.#digestText!(`${ENTRY_DOMAIN}\n${since}\n${json}`) !== text.slice(first + 1, second))
      return undefined;
    const records: AuditFields[] = [];
    for (const line of json.split('\n')) {
      let fields: unknown;
      try {
        fields = JSON.parse(line);
      } catch {
        return undefined;
      }
      if (typeof fields !== 'object' || fields === null || Array.isArray(fields)) return undefined;
      records.push(fields as AuditFields);
    }
    return { since: Number(since), records };
  }

  /**
   * Queues what a stopped process left in the journal, less what the store already holds (it may
   * have stopped between the store's commit and the journal's release); false when the store's tail
   * cannot be read, and the entries wait for the next drain.
   */
  async #queueLeft(): Promise<boolean> {
    const left = this.#left!;
    const entries: {
      readonly id: number;
      readonly since: number;
      readonly records: readonly AuditFields[];
    }[] = [];
    let refused = 0;
    for (const entry of left) {
      const parsed = this.#entryOf(entry.text);
      if (parsed === undefined) refused += 1;
      else entries.push({ id: entry.id, ...parsed });
    }
    const taken = new Map<string, number>();
    try {
      const head = await withDeadline(() => this.#store.head(), this.#deadlineMs);
      // Every record stored since the oldest entry was written: an entry whose record is among them
      // (the process stopped before the journal forgot it, or the entry was put back) is not stored again.
      let after = Math.min(...entries.map((entry) => entry.since), head?.seq ?? 0);
      while (head !== undefined && after < head.seq) {
        const page = await withDeadline(() => this.#store.read(after, READ_PAGE), this.#deadlineMs);
        if (page.length === 0) break;
        for (const record of page) {
          const key = fieldsKey(record as unknown as Record<string, unknown>);
          taken.set(key, (taken.get(key) ?? 0) + 1);
        }
        after = page[page.length - 1]!.seq;
      }
      this.#knownSeq ??= head?.seq ?? 0;
    } catch (error) {
      this.#failures += 1;
      this.#lastError = error;
      this.#storedAt = 0;
      return false;
    }
    if (refused > 0) {
      this.#heard(
        new Error(
          `${refused} audit journal ${refused === 1 ? 'entry does not hold its' : 'entries do not hold their'} check (edited, written by something else, or under another digest key): left out, not stored`,
        ),
      );
    }
    const items: Item[] = [];
    for (const { id, records } of entries) {
      for (const fields of records) {
        const key = fieldsKey(fields as unknown as Record<string, unknown>);
        const count = taken.get(key) ?? 0;
        if (count > 0) taken.set(key, count - 1);
        else items.push({ fields, keep: true, journalId: id });
      }
    }
    this.#left = undefined;
    this.#queue.unshift(...items);
    if (items.length === 0) this.#release(left[left.length - 1]!.id);
    return true;
  }

  /** The store took the journal's entries up to `id`. A release that fails leaves them for the next start, which finds them in the store. */
  #release(id: number): void {
    try {
      this.#journal?.journal.release(id);
    } catch {
      // Nothing lost: a later release covers them, and a start drops what the store holds.
    }
  }

  #commitNow(): void {
    this.#hurry = true;
    this.#closeWindow?.();
  }

  #window(windowMs: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const close = () => {
        clearTimeout(timer);
        this.#closeWindow = undefined;
        resolve();
      };
      const timer = setTimeout(close, windowMs);
      this.#closeWindow = close;
    });
  }

  /** One append of the front of the queue; false when the store failed. */
  async #appendBatch(): Promise<boolean> {
    const batch = this.#queue.slice(0, MAX_BATCH);
    for (const item of batch) if (item.digests !== undefined) this.#digest(item);
    const attempt = { abandoned: false };
    const deadline = storeDeadline(this.#deadlineMs, () => (attempt.abandoned = true));
    let records: readonly AuditRecord[];
    try {
      const appended = this.#store.append(async (head) => {
        deadline.pause();
        try {
          return await this.#sealFor(head, batch, attempt);
        } finally {
          deadline.resume();
        }
      });
      records = await Promise.race([appended, deadline.expired]);
      if (!Array.isArray(records) || records.length !== batch.length) {
        throw new TypeError('the store answered an append with other records than it was given');
      }
    } catch (error) {
      attempt.abandoned = true;
      if (error instanceof Recheck) return this.#recheck();
      this.#fail(batch, error);
      return false;
    } finally {
      deadline.stop();
    }
    this.#queue.splice(0, batch.length);
    this.#storedAt = Date.now();
    this.#knownSeq = records[records.length - 1]?.seq ?? this.#knownSeq;
    batch.forEach((item, i) => {
      item.stored = true;
      if (item.kept === true) this.#kept -= 1;
      item.waiter?.resolve(records[i]!);
    });
    let journaled: number | undefined;
    for (const item of batch) if (item.journalId !== undefined) journaled = item.journalId;
    if (journaled !== undefined) {
      // An entry holds a window: released once the store took all of it (the rest is at the queue's front).
      const next = this.#queue.find((item) => item.journalId !== undefined);
      this.#release(next?.journalId === journaled ? journaled - 1 : journaled);
    }
    if (this.#journalTimer !== undefined && !this.#toJournal.some((item) => item.stored !== true)) {
      // Nothing left for the journal: the store took it first.
      clearTimeout(this.#journalTimer);
      this.#journalTimer = undefined;
      this.#toJournal = [];
    }
    const last = records[records.length - 1];
    if (last !== undefined) this.#onStored?.({ seq: last.seq, hash: last.hash });
    return true;
  }

  /**
   * Puts a record's digests in its fields and lets go of the texts (a kept record holds no values).
   * In place: fields queued with digests to make are the writer's own (`enqueue` says so).
   */
  #digest(item: Item): void {
    const { args, result } = item.digests!;
    const fields = item.fields as { argsDigest?: string; resultDigest?: string };
    const argsDigest = this.#digestOrNothing(args);
    const resultDigest = this.#digestOrNothing(result);
    if (argsDigest !== undefined) fields.argsDigest = argsDigest;
    if (resultDigest !== undefined) fields.resultDigest = resultDigest;
    item.digests = undefined;
  }

  /** A digest that cannot be made is left out, as one of a value with no canonical text is. */
  #digestOrNothing(text: string | undefined): string | undefined {
    if (text === undefined) return undefined;
    try {
      return this.#digestText!(text);
    } catch {
      return undefined;
    }
  }

  async #sealFor(head: AuditHead | undefined, batch: readonly Item[], attempt: { abandoned: boolean }) {
    if (attempt.abandoned) throw new Abandoned('the audit log gave up on this append');
    if (this.#unsureFrom !== undefined) {
      // Heads only grow: below the unsure seq, that append was never stored and never will be.
      if ((head?.seq ?? 0) >= this.#unsureFrom) throw new Recheck('records sealed before may be stored');
      this.#settleUnsure(new Set());
    }
    const records = await this.#seal(
      head,
      batch.map((item) => item.fields),
    );
    if (attempt.abandoned) throw new Abandoned('the audit log gave up on this append');
    records.forEach((record, i) => {
      const item = batch[i];
      if (item !== undefined) item.sealed = { seq: record.seq, hash: record.hash };
    });
    return records;
  }

  /** An append failed: every waiter hears it; records of what happened stay queued, the rest are dropped. */
  #fail(batch: readonly Item[], error: unknown): void {
    this.#failures += 1;
    this.#lastError = error;
    this.#storedAt = 0;
    const sealed = batch.filter((item) => item.sealed !== undefined && item.keep);
    if (sealed.length > 0) {
      const lowest = Math.min(...sealed.map((item) => item.sealed!.seq));
      this.#unsureFrom = Math.min(this.#unsureFrom ?? lowest, lowest);
    }
    for (const item of this.#queue) {
      item.waiter?.reject(error);
      item.waiter = undefined;
      const onFailed = item.onFailed;
      item.onFailed = undefined;
      // Heard after this turn, as a rejected waiter is: a listener that throws stops no append.
      if (onFailed !== undefined) queueMicrotask(() => onFailed(error));
    }
    this.#queue = this.#queue.filter((item) => item.keep);
    for (const item of this.#queue) {
      if (item.kept !== true) this.#kept += 1;
      item.kept = true;
    }
  }

  /** The head passed records a failed append sealed: read them back and drop those that were stored. */
  async #recheck(): Promise<boolean> {
    const from = this.#unsureFrom!;
    const sealed = this.#queue.filter((item) => item.sealed !== undefined);
    let stored: AuditRecord[];
    try {
      stored = await withDeadline(
        () => this.#store.read(from - 1, sealed.length + MAX_BATCH),
        this.#deadlineMs,
      );
    } catch (error) {
      this.#fail([], error);
      return false;
    }
    this.#settleUnsure(new Set(stored.map((record) => `${record.seq}:${record.hash}`)));
    return true;
  }

  /** Queued records found among `stored` are done; the others are no longer in doubt. */
  #settleUnsure(stored: ReadonlySet<string>): void {
    this.#queue = this.#queue.filter((item) => {
      const sealed = item.sealed;
      item.sealed = undefined;
      const done = sealed !== undefined && stored.has(`${sealed.seq}:${sealed.hash}`);
      if (done) item.stored = true;
      if (done && item.kept === true) this.#kept -= 1;
      return !done;
    });
    this.#unsureFrom = undefined;
  }
}
