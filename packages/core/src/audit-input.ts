// Checks an AuditStore runs on what a seal hands back, shared so every store refuses a record that
// does not continue its log in the same words, whatever the sealer did wrong.

import type { AuditHead, AuditRecord } from './ports';

/** The `prevHash` of the first record of every audit log. */
export const AUDIT_GENESIS = '0'.repeat(64);

const HASH = /^[0-9a-f]{64}$/;

/**
 * Throws a TypeError unless `records` continue the log at `head`: consecutive `seq` from `head.seq + 1`,
 * each `prevHash` the hash before it, every `hash` 64 lowercase hex digits. Answers the new head.
 */
export function auditContinues(
  store: string,
  head: AuditHead | undefined,
  records: readonly AuditRecord[],
): AuditHead | undefined {
  if (!Array.isArray(records)) throw new TypeError(`${store}: the seal must answer an array of records.`);
  let seq = head?.seq ?? 0;
  let hash = head?.hash ?? AUDIT_GENESIS;
  for (const record of records as readonly unknown[]) {
    const shaped = (typeof record === 'object' && record !== null ? record : {}) as Partial<AuditRecord>;
    if (shaped.seq !== seq + 1) {
      throw new TypeError(`${store}: a sealed record must have seq ${seq + 1}, the next after the head.`);
    }
    if (shaped.prevHash !== hash) {
      throw new TypeError(`${store}: sealed record ${seq + 1} must carry the previous record's hash.`);
    }
    if (typeof shaped.hash !== 'string' || !HASH.test(shaped.hash)) {
      throw new TypeError(`${store}: sealed record ${seq + 1} has no hash (64 lowercase hex digits).`);
    }
    seq += 1;
    hash = shaped.hash;
  }
  return seq === 0 ? undefined : { seq, hash };
}

/** The JSON text of each record a sealer wrote as it sealed it: a store keeps it rather than write it again. */
const sealedTexts = new WeakMap<AuditRecord, string>();

/**
 * Hands a database store the JSON text of `record` (the sealer made it to hash the record: it holds
 * every field, keys in another order), so `auditRowValues` does not write the record again. Only for
 * a record no one changes before the store takes it.
 */
export function keepAuditRecordText(record: AuditRecord, text: string): void {
  sealedTexts.set(record, text);
}

/**
 * A record as a database store keeps it, in the column order `seq, at, tenant, tool, kind, hash,
 * record` (the searchable fields beside the record's JSON text, which is what verification reads).
 */
export function auditRowValues(
  record: AuditRecord,
): readonly [number, string, string | null, string | null, string, string, string] {
  return [
    record.seq,
    record.at,
    record.tenant ?? null,
    record.tool ?? null,
    record.kind,
    record.hash,
    sealedTexts.get(record) ?? JSON.stringify(record),
  ];
}
