// auditLog(): the log itself. It holds the keys, the writer and the failure policy; `attach` puts it
// around a dispatcher (attached.ts), `record` appends what is not a call (a pin accepted, a reload).

import {
  canonicalJson,
  DEFAULT_DEADLINE_MS,
  withDeadline,
  type AuditJournal,
  type AuditRecord,
  type AuditStore,
  type Dispatcher,
  type LedgerRow,
} from '@toolgate/core';
import { attachedDispatcher, type AuditCore } from './attached';
import {
  checkedCheckpointOptions,
  CheckpointPublisher,
  signCheckpoint,
  type AuditCheckpointOptions,
} from './checkpoint';
import { AuditConfigError, AuditUnavailableError, optionError } from './errors';
import {
  auditPublicKey,
  digestKeySource,
  importDigestKey,
  importPublicKey,
  importSigningKey,
  publicKeySource,
  sameKey,
  signingKeySource,
  syncSignerOf,
  type AuditDigestKey,
  type AuditSigningKey,
} from './keys';
import {
  isoTime,
  keyedDigest,
  sealRecords,
  syncTextDigester,
  webCryptoSigner,
  type AuditFields,
} from './record';
import { policyRuleOf } from './rule';
import { verifyAuditLog, type AuditVerification } from './verify';
import { AuditWriter } from './writer';

/** What the log does with a call when the store cannot take its record. */
export type AuditFailureMode = 'refuse' | 'allow';

/**
 * When a call's outcome is handed back: `'record'`, once its record is stored (committed); `'batch'`,
 * once its record is queued, the store taking it with the others of its commit window.
 */
export type AuditDurability = 'record' | 'batch';

/** The default commit window of `durability: 'batch'`, in milliseconds. */
export const DEFAULT_COMMIT_WINDOW_MS = 5;
/** With a journal, the default milliseconds between the store's commits. */
export const DEFAULT_STORE_INTERVAL_MS = 100;
/** With `'batch'`, a store that took an append this recently needs no probe before a call. */
const ANSWERED_WITHIN_MS = 1000;
/** With `'batch'`, a call waits for the queue to be written once this many records are in neither the journal nor the store. */
const MAX_QUEUED = 256;

export interface AuditLogOptions {
  /** Where records go: `inMemoryAuditStore()`, `sqliteAuditStore(…)`, `postgresAuditStore(…)` or your own. */
  readonly store: AuditStore;
  /** The Ed25519 private key that signs every record's hash. */
  readonly signingKey: AuditSigningKey;
  /** The HMAC key of `argsDigest` and `resultDigest`: at least 32 bytes, not the signing key. */
  readonly digestKey: AuditDigestKey;
  /**
   * `'refuse'` (the default): a call whose record cannot be written does not run; it is refused
   * (`AUDIT_UNAVAILABLE`, retryable). `'allow'`: it runs, and its record waits in memory for the store.
   * An event says which, every time.
   */
  readonly onAuditFailure?: AuditFailureMode;
  /**
   * `'record'` (the default): a call's outcome comes back once its record is committed; a crash loses
   * no record of a call whose outcome was handed back. `'batch'`: once its record is queued; records
   * are committed together when the commit window closes (one transaction, one signature), and a
   * crash loses the records of the calls of the last window (at most `commitWindowMs` of calls, and
   * never more than 256 waiting records plus the batch being written). A failed commit is reported
   * (`audit.failed`) and its records kept as under `'record'`.
   */
  readonly durability?: AuditDurability;
  /**
   * Milliseconds a batch stays open for more records before it is committed. Default 5 with
   * `'batch'`, 0 with `'record'` (records of the same tick share a commit).
   */
  readonly commitWindowMs?: number;
  /**
   * With `'batch'`: a local journal (`sqliteAuditJournal(…)`) that takes each commit window's records
   * in place of the store, which then takes what the journal holds once every `storeIntervalMs`: far
   * fewer commits, and a process crash still loses only the last window. What a stopped process
   * left in the journal is stored first when the log starts (less what the store already holds).
   * The journal is the caller's to close, after `close()`.
   */
  readonly journal?: AuditJournal;
  /** With a journal: milliseconds between the store's commits (a waiting caller does not wait for it). Default 100. */
  readonly storeIntervalMs?: number;
  /**
   * Hears the journal fail (a write, or reading what it holds at the start; from then on the store
   * takes each window, as without a journal), and a start leave out entries that do not hold their
   * check (edited, forged, or written under another digest key).
   */
  readonly onJournalError?: (error: unknown) => void;
  /** How long one store operation may take before it counts as failed (the time spent signing is not counted). Default 5000. */
  readonly deadlineMs?: number;
  /** With `'allow'`, how many records may wait in memory; a call past that is refused. Default 10,000. */
  readonly maxPending?: number;
  /** Milliseconds since the epoch, for `at`. Default `Date.now`. */
  readonly clock?: () => number;
  /** The deciding policy rule of a call, from its ledger. Default: the `policy` gate's row (see `policyRuleOf`). */
  readonly ruleOf?: (ledger: readonly LedgerRow[]) => string | undefined;
  /**
   * Signed checkpoints (seq, hash, time) published outside the store, so a log cut short or wiped
   * together with its head is caught by `verifyAuditLog(…, { checkpoint })`. Absent: none.
   */
  readonly checkpoints?: AuditCheckpointOptions;
}

/** What `record` appends: an action that is not a call's outcome. Values go in as `args`/`result` and only their keyed digests are kept. */
export interface AuditEntry {
  /** What happened, in dot.case: `'check-in.declined'`, `'grant.used'`, `'pin.accepted'`, `'config.reloaded'`, … */
  readonly kind: string;
  readonly tenant?: string;
  readonly principal?: string;
  readonly tool?: string;
  readonly source?: string;
  readonly chainId?: string;
  readonly rule?: string;
  readonly gate?: string;
  readonly code?: string;
  /** Whether a tool ran. Default false. */
  readonly ran?: boolean;
  readonly checkInId?: string;
  /** Who decided or acted: the approver, the operator who accepted a pin or reloaded. */
  readonly approver?: string;
  /** Digested into `argsDigest` (e.g. the arguments of a grant, a new tool definition, a configuration). */
  readonly args?: unknown;
  /** Digested into `resultDigest`. */
  readonly result?: unknown;
}

export interface AuditLog {
  /** `dispatcher`, with every dispatch and resume recorded; use the returned one. */
  attach(dispatcher: Dispatcher): Dispatcher;
  /** Appends an action; resolves once it is stored, rejects (`AuditUnavailableError`) when it cannot be: then do not act. */
  record(entry: AuditEntry): Promise<AuditRecord>;
  /** The keyed digest the log would write for `value` (to check a record against a value you hold). */
  digest(value: unknown): Promise<string>;
  /** Resolves once the keys are imported and the store answers; rejects saying which is wrong. */
  ready(): Promise<void>;
  /** Writes the records waiting in memory; rejects (`AuditUnavailableError`) when the store still cannot take them. */
  flush(): Promise<void>;
  /** Records waiting in memory for the store. */
  readonly pending: number;
  /** The public key (SPKI PEM) that verifies this log. */
  publicKey(): Promise<string>;
  /** `verifyAuditLog(store, publicKey)` for this log's store and key. */
  verify(): Promise<AuditVerification>;
  /** Publishes a checkpoint of the newest stored record now, when `checkpoints` is set and one is due. */
  checkpoint(): Promise<void>;
  /** Writes what waits, publishes the last checkpoint, then takes no more records (calls through an attached dispatcher are refused). */
  close(): Promise<void>;
}

const ADMITTED = { ok: true, recovered: 0 } as const;
const KIND = /^[a-z][a-z0-9-]*(\.[a-z][a-z0-9-]*)*$/;
const ENTRY_TEXT = [
  'tenant',
  'principal',
  'tool',
  'source',
  'chainId',
  'rule',
  'gate',
  'code',
  'checkInId',
  'approver',
] as const;
const MAX_TEXT = 1024;

function checkedOptions(options: AuditLogOptions) {
  if (typeof options !== 'object' || options === null) {
    throw new AuditConfigError({ subject: 'auditLog', problem: 'expected { store, signingKey, digestKey }' });
  }
  const store = options.store as Partial<AuditStore> | undefined;
  if (
    typeof store !== 'object' ||
    store === null ||
    typeof store.append !== 'function' ||
    typeof store.head !== 'function' ||
    typeof store.read !== 'function'
  ) {
    throw optionError(
      'auditLog',
      'store',
      'must be an AuditStore (append, head, read): inMemoryAuditStore(), sqliteAuditStore(…) or postgresAuditStore(…)',
    );
  }
  const mode = options.onAuditFailure ?? 'refuse';
  if (mode !== 'refuse' && mode !== 'allow') {
    throw optionError('auditLog', 'onAuditFailure', "must be 'refuse' or 'allow'");
  }
  const deadlineMs = options.deadlineMs ?? DEFAULT_DEADLINE_MS;
  if (!(Number.isInteger(deadlineMs) && deadlineMs > 0)) {
    throw optionError('auditLog', 'deadlineMs', 'must be a positive integer of milliseconds');
  }
  const maxPending = options.maxPending ?? 10_000;
  if (!(Number.isInteger(maxPending) && maxPending >= 0)) {
    throw optionError('auditLog', 'maxPending', 'must be a non-negative integer');
  }
  const durability = options.durability ?? 'record';
  if (durability !== 'record' && durability !== 'batch') {
    throw optionError('auditLog', 'durability', "must be 'record' or 'batch'");
  }
  const commitWindowMs = options.commitWindowMs ?? (durability === 'batch' ? DEFAULT_COMMIT_WINDOW_MS : 0);
  if (!(Number.isInteger(commitWindowMs) && commitWindowMs >= 0 && commitWindowMs <= 60_000)) {
    throw optionError('auditLog', 'commitWindowMs', 'must be an integer of milliseconds from 0 to 60000');
  }
  const journal = options.journal as Partial<AuditJournal> | undefined;
  if (
    journal !== undefined &&
    (typeof journal !== 'object' ||
      journal === null ||
      typeof journal.left !== 'function' ||
      typeof journal.write !== 'function' ||
      typeof journal.release !== 'function')
  ) {
    throw optionError(
      'auditLog',
      'journal',
      'must be an AuditJournal (left, write, release): sqliteAuditJournal(…)',
    );
  }
  if (journal !== undefined && durability !== 'batch') {
    throw optionError(
      'auditLog',
      'journal',
      "needs durability: 'batch' (with 'record' every record is committed to the store before its call returns)",
    );
  }
  const storeIntervalMs = options.storeIntervalMs ?? DEFAULT_STORE_INTERVAL_MS;
  if (!(Number.isInteger(storeIntervalMs) && storeIntervalMs >= 1 && storeIntervalMs <= 60_000)) {
    throw optionError('auditLog', 'storeIntervalMs', 'must be an integer of milliseconds from 1 to 60000');
  }
  for (const name of ['clock', 'ruleOf', 'onJournalError'] as const) {
    if (options[name] !== undefined && typeof options[name] !== 'function') {
      throw optionError('auditLog', name, 'must be a function');
    }
  }
  if (sameKey(options.signingKey, options.digestKey)) {
    throw optionError(
      'auditLog',
      'digestKey',
      'must not be the signing key; use a separate random key of at least 32 bytes',
    );
  }
  return {
    store: store as AuditStore,
    mode,
    deadlineMs,
    maxPending,
    durability,
    commitWindowMs,
    journal: journal as AuditJournal | undefined,
    storeIntervalMs,
    signing: signingKeySource({ subject: 'auditLog', option: 'signingKey' }, options.signingKey),
    digesting: digestKeySource({ subject: 'auditLog', option: 'digestKey' }, options.digestKey),
    clock: options.clock ?? Date.now,
    ruleOf: options.ruleOf ?? policyRuleOf,
    checkpoints: checkedCheckpointOptions(options.checkpoints),
  };
}

/** A store's own readiness check, or reading its head when it has none. */
async function probe(store: AuditStore): Promise<void> {
  if (store.ready === undefined) await store.head();
  else await store.ready();
}

function entryFields(entry: AuditEntry, at: string): Omit<AuditFields, 'argsDigest' | 'resultDigest'> {
  if (typeof entry !== 'object' || entry === null) {
    throw new TypeError('auditLog.record: expected an entry { kind, … }.');
  }
  if (typeof entry.kind !== 'string' || !KIND.test(entry.kind) || entry.kind.length > 64) {
    throw new TypeError("auditLog.record: 'kind' must be dot.case words, e.g. 'pin.accepted'.");
  }
  if (entry.ran !== undefined && typeof entry.ran !== 'boolean') {
    throw new TypeError("auditLog.record: 'ran' must be a boolean when present.");
  }
  const fields: Record<string, unknown> = { at, kind: entry.kind, ran: entry.ran ?? false };
  for (const name of ENTRY_TEXT) {
    const value = entry[name];
    if (value === undefined) continue;
    if (typeof value !== 'string' || value === '' || value.length > MAX_TEXT) {
      throw new TypeError(
        `auditLog.record: '${name}' must be a non-empty string of at most ${MAX_TEXT} characters.`,
      );
    }
    fields[name] = value;
  }
  return fields as unknown as AuditFields;
}

/**
 * The audit log: one record per call outcome of every attached dispatcher, and one per action given
 * to `record`, appended to `store` as a hash chain, each record signed with `signingKey`. Arguments
 * and results enter only as HMAC digests under `digestKey`.
 *
 * @example
 * const audit = auditLog({ store: sqliteAuditStore({ path: './toolgate.db' }), signingKey, digestKey });
 * const dispatcher = audit.attach(createDispatcher({ tools, chain }));
 */
export function auditLog(options: AuditLogOptions): AuditLog {
  const config = checkedOptions(options);
  const { store, deadlineMs, clock } = config;
  const signingKey = importSigningKey({ subject: 'auditLog', option: 'signingKey' }, config.signing);
  const digestKey = importDigestKey({ subject: 'auditLog', option: 'digestKey' }, config.digesting);
  // Reported by the first use (ready, a call, a record) rather than as an unhandled rejection.
  signingKey.catch(() => undefined);
  digestKey.catch(() => undefined);
  // node:crypto signs in this thread where it can; Web Crypto (a thread hand-off) otherwise.
  const signNow = syncSignerOf(config.signing);
  const signer = signingKey.then((key) => signNow ?? webCryptoSigner(key));
  signer.catch(() => undefined);
  const publisher =
    config.checkpoints === undefined
      ? undefined
      : new CheckpointPublisher(
          config.checkpoints,
          async (head, at) => signCheckpoint(head, at, await signer),
          clock,
        );
  const digestText = syncTextDigester(config.digesting);
  const writer = new AuditWriter(
    store,
    async (head, batch) => sealRecords(head, batch, await signer),
    deadlineMs,
    publisher === undefined ? undefined : (head) => publisher.stored(head),
    config.commitWindowMs,
    digestText,
    config.journal === undefined
      ? undefined
      : {
          journal: config.journal,
          storeIntervalMs: config.storeIntervalMs,
          onError: options.onJournalError,
        },
  );
  const batched = config.durability === 'batch';
  let closed = false;
  /** Set once both keys imported: a call then waits on neither. */
  let keysReady = false;

  const iso = () => isoTime(clock());
  const unavailable = (what: string, cause?: unknown) =>
    new AuditUnavailableError(
      { subject: 'auditLog', problem: what },
      writer.pending,
      cause === undefined ? undefined : { cause },
    );

  async function digest(value: unknown): Promise<string> {
    return digestText !== undefined ? digestText(canonicalJson(value)) : keyedDigest(await digestKey, value);
  }

  /** True when a call may run recorded now without asking the store: it just took an append. */
  const admittedNow = () =>
    !closed &&
    keysReady &&
    batched &&
    !writer.degraded &&
    writer.unwritten < MAX_QUEUED &&
    writer.storedWithin(ANSWERED_WITHIN_MS);

  /** Whether a call may run recorded now: the store answers, and any records kept in memory went first. */
  const admit: AuditCore['admit'] = async () => {
    if (closed) return { ok: false, error: unavailable('the log is closed') };
    try {
      if (!keysReady) {
        await Promise.all([signingKey, digestKey]);
        keysReady = true;
      }
      if (batched && !writer.degraded) {
        // A store that just took an append answers; a full queue is written before more calls run.
        if (writer.unwritten >= MAX_QUEUED && !(await writer.flush()))
          return { ok: false, error: writer.lastError };
        if (writer.storedWithin(ANSWERED_WITHIN_MS)) return ADMITTED;
      }
      if (writer.degraded) {
        const kept = writer.kept;
        if (!(await writer.writeKept())) return { ok: false, error: writer.lastError };
        return { ok: true, recovered: kept };
      }
      await withDeadline(() => probe(store), deadlineMs);
      return ADMITTED;
    } catch (error) {
      return { ok: false, error };
    }
  };

  const core: AuditCore = {
    mode: config.mode,
    awaitsRecord: !batched,
    textForDigest:
      digestText === undefined
        ? undefined
        : (value) => {
            try {
              return canonicalJson(value);
            } catch {
              return undefined;
            }
          },
    admittedNow,
    maxPending: config.maxPending,
    clock,
    ruleOf: config.ruleOf,
    admit,
    async digestOrNothing(value) {
      try {
        return await digest(value);
      } catch {
        return undefined;
      }
    },
    write: (fields, digests) => writer.enqueue(fields, true, false, digests),
    queue: (fields, digests, onFailed) => writer.enqueueQuietly(fields, digests, onFailed),
    get pending() {
      return writer.pending;
    },
    get closed() {
      return closed;
    },
  };

  return {
    attach: (dispatcher) => attachedDispatcher(core, dispatcher),
    async record(entry) {
      const fields = entryFields(entry, iso());
      if (closed) throw unavailable('the log is closed');
      const [argsDigest, resultDigest] = await Promise.all([
        entry.args === undefined ? undefined : digest(entry.args),
        entry.result === undefined ? undefined : digest(entry.result),
      ]);
      await signingKey;
      const full: Record<string, unknown> = { ...fields };
      if (argsDigest !== undefined) full['argsDigest'] = argsDigest;
      if (resultDigest !== undefined) full['resultDigest'] = resultDigest;
      try {
        return await writer.enqueue(full as unknown as AuditFields, false, true);
      } catch (error) {
        throw unavailable(`the store did not take the '${fields.kind}' record`, error);
      }
    },
    digest,
    async ready() {
      await Promise.all([signingKey, digestKey]);
      try {
        await withDeadline(() => probe(store), deadlineMs);
      } catch (error) {
        throw unavailable('the store does not answer', error);
      }
    },
    async flush() {
      if (!(await writer.flush()))
        throw unavailable('the store did not take the waiting records', writer.lastError);
    },
    get pending() {
      return writer.pending;
    },
    publicKey: () => auditPublicKey(options.signingKey),
    async verify() {
      const where = { subject: 'auditLog.verify' };
      return verifyAuditLog(store, await importPublicKey(where, publicKeySource(where, options.signingKey)));
    },
    async checkpoint() {
      await publisher?.publishNow();
    },
    async close() {
      closed = true;
      try {
        if (!(await writer.flush()))
          throw unavailable('closed with records the store did not take', writer.lastError);
      } finally {
        await publisher?.publishNow();
        publisher?.stop();
      }
    },
  };
}
