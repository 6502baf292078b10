// verifyAuditLog: walks a log offline and names the first record that was changed, removed, inserted
// or reordered. Everything it needs is the records and the public key; a store's head, or one kept
// apart, also catches records cut from the end.

import { AUDIT_GENESIS, type AuditHead, type AuditRecord, type AuditStore } from '@toolgate/core';
import { checkpointHolds, parseCheckpoint, type AuditCheckpoint } from './checkpoint';
import { AuditConfigError, optionError } from './errors';
import { importPublicKey, publicKeySource, type AuditPublicKey } from './keys';
import { recordHash, RECORD_FIELDS, signatureHolds, UNSIGNED } from './record';

export type AuditVerification =
  | { readonly ok: true; readonly count: number }
  | { readonly ok: false; readonly seq: number; readonly why: string };

/** What a verification checked: the head it reached, and what outside the store vouched for the tail. */
export type AuditHeadVerification =
  | {
      readonly ok: true;
      readonly count: number;
      /** The last record checked (undefined: the log is empty), to keep and give back as `head` next time. */
      readonly head: AuditHead | undefined;
      /**
       * What kept outside the store showed the log not cut short: a signed checkpoint, a head given, or
       * nothing (`undefined`: the tail is unanchored; cutting records off the end together with the
       * store's head would not show).
       */
      readonly anchoredBy: 'checkpoint' | 'head' | undefined;
    }
  | { readonly ok: false; readonly seq: number; readonly why: string };

/** A log: a store, or its records in order (an array, any iterable), or for verifying, an export's text (JSON lines). */
export type AuditSource = AuditStore | Iterable<unknown> | AsyncIterable<unknown>;

export interface VerifyAuditLogOptions {
  /**
   * The last record known from elsewhere (an earlier verify, a published checkpoint): a log that ends
   * before it or disagrees with it fails there. Without one, only a store's own head can show that
   * records were cut from the end.
   */
  readonly head?: AuditHead;
  /**
   * The newest signed checkpoint, as published (`auditLog`'s `checkpoints`): its signature must hold
   * for the public key, and the log must reach it and agree with it.
   */
  readonly checkpoint?: AuditCheckpoint | string;
}

const PAGE = 500;
const HEX64 = /^[0-9a-f]{64}$/;
const HEX128 = /^[0-9a-f]{128}$/;
const OPTIONAL_TEXT = RECORD_FIELDS.filter(
  (field) => !['seq', 'at', 'kind', 'ran', 'prevHash', 'hash', 'signature'].includes(field),
);

export function isAuditStore(value: unknown): value is AuditStore {
  const store = value as Partial<AuditStore> | null;
  return (
    typeof store === 'object' &&
    store !== null &&
    typeof store.append === 'function' &&
    typeof store.head === 'function' &&
    typeof store.read === 'function'
  );
}

/** Every record of `store` from `after` on, a page at a time. */
export async function* storeRecords(store: AuditStore, after = 0): AsyncGenerator<AuditRecord> {
  let last = after;
  for (;;) {
    const page = await store.read(last, PAGE);
    if (!Array.isArray(page) || page.length === 0) return;
    for (const record of page) yield record;
    const seq = (page[page.length - 1] as { seq?: unknown } | undefined)?.seq;
    // A store whose seqs do not move forward would loop forever; what it answered is verified as it is.
    if (typeof seq !== 'number' || !(seq > last)) return;
    last = seq;
  }
}

/** What is wrong with the shape of `record`, or undefined. */
function malformed(record: unknown): string | undefined {
  if (typeof record !== 'object' || record === null || Array.isArray(record))
    return 'it is not a JSON object';
  const r = record as Record<string, unknown>;
  if (!Number.isSafeInteger(r['seq']) || (r['seq'] as number) < 1) return "'seq' is not a positive integer";
  if (typeof r['at'] !== 'string' || Number.isNaN(Date.parse(r['at']))) return "'at' is not a time";
  if (typeof r['kind'] !== 'string' || r['kind'] === '') return "'kind' is missing";
  if (typeof r['ran'] !== 'boolean') return "'ran' is not true or false";
  for (const field of ['prevHash', 'hash'] as const) {
    if (typeof r[field] !== 'string' || !HEX64.test(r[field] as string))
      return `'${field}' is not a SHA-256 hex digest`;
  }
  if (typeof r['signature'] !== 'string' || !(r['signature'] === UNSIGNED || HEX128.test(r['signature'])))
    return "'signature' is not an Ed25519 hex signature (or '' for a record a later signature covers)";
  for (const field of OPTIONAL_TEXT) {
    if (r[field] !== undefined && typeof r[field] !== 'string') return `'${field}' is not a string`;
  }
  return undefined;
}

/** What breaks the chain at `record`, expected as record `seq` after `prevHash`; signatures are checked apart. */
async function chainProblem(record: unknown, seq: number, prevHash: string): Promise<string | undefined> {
  const shape = malformed(record);
  if (shape !== undefined) return `record ${seq} is malformed: ${shape}`;
  const r = record as AuditRecord;
  if (r.seq > seq)
    return `record ${seq} is missing: the next record in the log is ${r.seq} (removed, or moved later)`;
  if (r.seq < seq) {
    return `record ${r.seq} appears again where record ${seq} belongs (a record was inserted, repeated or moved earlier)`;
  }
  if (r.prevHash !== prevHash) {
    return `record ${seq} does not follow record ${seq - 1}: its prevHash is not that record's hash (a record was replaced, inserted or reordered)`;
  }
  if ((await recordHash(r as unknown as Record<string, unknown>)) !== r.hash) {
    return `record ${seq} was changed: its content does not match its hash`;
  }
  return undefined;
}

function checkedHead(head: unknown): AuditHead | undefined {
  if (head === undefined) return undefined;
  const h = head as Partial<AuditHead> | null;
  if (
    typeof h !== 'object' ||
    h === null ||
    !Number.isSafeInteger(h.seq) ||
    h.seq! < 1 ||
    typeof h.hash !== 'string'
  ) {
    throw optionError(
      'verifyAuditLog',
      'head',
      'must be { seq, hash }, the last record known from elsewhere',
    );
  }
  return { seq: h.seq!, hash: h.hash };
}

/**
 * Checks every record of a log in order (a store, the records, or an export's text): seq 1, 2, 3… with
 * no gap or repeat, each `prevHash` the hash
 * of the record before, each `hash` the SHA-256 of its own content, each `signature` valid for
 * `publicKey`. Answers `{ ok: true, count }`, or `{ ok: false, seq, why }` naming the first position
 * where the log stops being the one that was written.
 *
 * @example
 * const verdict = await verifyAuditLog(sqliteAuditStore({ path: './toolgate.db' }), readFileSync('audit-key.pub.pem', 'utf8'));
 * if (!verdict.ok) console.error(`audit log broken at record ${verdict.seq}: ${verdict.why}`);
 */
export async function verifyAuditLog(
  source: AuditSource | string,
  publicKey: AuditPublicKey,
  options: VerifyAuditLogOptions = {},
): Promise<AuditVerification> {
  const verdict = await verifyAuditLogHead(source, publicKey, options, 'verifyAuditLog');
  return verdict.ok ? { ok: true, count: verdict.count } : verdict;
}

/**
 * `verifyAuditLog`, answering also the head it checked (print it, keep it, give it back as `head`)
 * and whether a checkpoint or a given head anchored the tail.
 */
export async function verifyAuditLogHead(
  source: AuditSource | string,
  publicKey: AuditPublicKey,
  options: VerifyAuditLogOptions = {},
  where = 'verifyAuditLogHead',
): Promise<AuditHeadVerification> {
  const key = await importPublicKey(
    { subject: where },
    publicKeySource({ subject: where, argument: 'publicKey' }, publicKey),
  );
  const anchors: { readonly head: AuditHead; readonly what: string }[] = [];
  const given = checkedHead(options?.head);
  if (given !== undefined) anchors.push({ head: given, what: 'the head you gave' });
  if (options?.checkpoint !== undefined) {
    const checkpoint = parseCheckpoint(options.checkpoint);
    if (!(await checkpointHolds(checkpoint, key))) {
      return {
        ok: false,
        seq: checkpoint.seq,
        why: `the checkpoint at record ${checkpoint.seq} is not signed by this key (forged, edited, or another log's)`,
      };
    }
    anchors.push({ head: checkpoint, what: `the checkpoint of ${checkpoint.at}` });
  }
  const anchoredBy: 'checkpoint' | 'head' | undefined =
    options?.checkpoint !== undefined ? 'checkpoint' : given !== undefined ? 'head' : undefined;
  let records: Iterable<unknown> | AsyncIterable<unknown>;
  if (typeof source === 'string') {
    // An export's text: a line that is not JSON stays in its place, where it reads as malformed.
    records = (source as string)
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map((line) => {
        try {
          return JSON.parse(line) as unknown;
        } catch {
          return line;
        }
      });
  } else if (isAuditStore(source)) {
    // The head first: records appended while the walk runs are read too, and the head still holds.
    const head = await source.head();
    if (head !== undefined) anchors.push({ head, what: "the store's head" });
    records = storeRecords(source);
  } else if (
    source !== null &&
    typeof source === 'object' &&
    (Symbol.iterator in source || Symbol.asyncIterator in source)
  ) {
    records = source;
  } else {
    throw new AuditConfigError({
      subject: 'verifyAuditLog',
      problem: 'expected an AuditStore or the records in order (an array or iterable)',
    });
  }

  let seq = 1;
  let prevHash = AUDIT_GENESIS;
  const hashes = new Map<number, string>();
  // Signed records waiting for their signatures to be checked, each with the first record it covers.
  let page: { readonly record: AuditRecord; readonly from: number }[] = [];
  /** The first record of the run no signature has covered yet. */
  let unsignedFrom: number | undefined;
  type Failure = Extract<AuditVerification, { ok: false }>;

  // Signatures of a page are checked together; the first failure in log order wins.
  const signaturesOf = async (checked: typeof page): Promise<Failure | undefined> => {
    const holds = await Promise.all(checked.map(({ record }) => signatureHolds(record, key)));
    const bad = holds.indexOf(false);
    if (bad === -1) return undefined;
    const { record, from } = checked[bad]!;
    return from === record.seq
      ? {
          ok: false,
          seq: record.seq,
          why: `record ${record.seq} is not signed by this key: its signature does not verify`,
        }
      : {
          ok: false,
          seq: from,
          why: `record ${from} is not proven: the signature of record ${record.seq}, which covers records ${from}–${record.seq} through the chain, does not verify (one of them was changed, or they were not written with this key)`,
        };
  };

  for await (const record of records) {
    const problem = await chainProblem(record, seq, prevHash);
    if (problem !== undefined) {
      const earlier = await signaturesOf(page);
      if (earlier !== undefined) return earlier;
      if (unsignedFrom === undefined) return { ok: false, seq, why: problem };
      return {
        ok: false,
        seq: unsignedFrom,
        why: `record ${unsignedFrom} is not proven: the chain breaks at record ${seq} before a signature covers ${seq - 1 === unsignedFrom ? `record ${unsignedFrom}` : `records ${unsignedFrom}–${seq - 1}`} (${problem})`,
      };
    }
    const r = record as AuditRecord;
    if (r.signature === UNSIGNED) unsignedFrom ??= seq;
    else {
      page.push({ record: r, from: unsignedFrom ?? seq });
      unsignedFrom = undefined;
    }
    if (anchors.some((anchor) => anchor.head.seq === seq)) hashes.set(seq, r.hash);
    prevHash = r.hash;
    seq += 1;
    if (page.length === PAGE) {
      const failed = await signaturesOf(page);
      if (failed !== undefined) return failed;
      page = [];
    }
  }
  const failed = await signaturesOf(page);
  if (failed !== undefined) return failed;
  if (unsignedFrom !== undefined) {
    return {
      ok: false,
      seq: unsignedFrom,
      why: `record ${unsignedFrom} is not proven: records ${unsignedFrom}–${seq - 1} end the log with no signature after them (cut inside a batch, or added without the key)`,
    };
  }

  const count = seq - 1;
  for (const { head, what } of anchors) {
    if (count < head.seq) {
      return {
        ok: false,
        seq: count + 1,
        why: `record ${count + 1} is missing: the log ends at ${count}, but ${what} is record ${head.seq}`,
      };
    }
    if (hashes.get(head.seq) !== head.hash) {
      return {
        ok: false,
        seq: head.seq,
        why: `record ${head.seq} differs from ${what}: its hash is not the one kept there`,
      };
    }
  }
  return {
    ok: true,
    count,
    head: count === 0 ? undefined : { seq: count, hash: prevHash },
    anchoredBy,
  };
}
