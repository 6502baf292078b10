// How a record is made: its fields in one documented order, the hash that chains it to the record
// before (SHA-256 of its canonical JSON, `prevHash` included), and the Ed25519 signature over the hash
// of the last record of each batch, which covers every record before it through the chain.

import {
  AUDIT_GENESIS,
  canonicalJson,
  keepAuditRecordText,
  type AuditHead,
  type AuditRecord,
} from '@toolgate/core';
import { nativeCrypto } from './native-crypto';
import { sha256Hex } from './sha256';

/**
 * A record before it joins the chain: everything but `seq`, `prevHash`, `hash` and `signature`. A field
 * that is undefined is left out of the record, as an absent one is.
 */
export interface AuditFields {
  readonly at: string;
  readonly tenant?: string | undefined;
  readonly principal?: string | undefined;
  readonly tool?: string | undefined;
  readonly source?: string | undefined;
  readonly chainId?: string | undefined;
  readonly rule?: string | undefined;
  readonly kind: string;
  readonly gate?: string | undefined;
  readonly code?: string | undefined;
  readonly ran: boolean;
  readonly checkInId?: string | undefined;
  readonly approver?: string | undefined;
  readonly argsDigest?: string | undefined;
  readonly resultDigest?: string | undefined;
}

let isoSecond = NaN;
let isoPrefix = '';

/**
 * `new Date(ms).toISOString()`, its date and time up to the second made once a second: a call's
 * record takes its time at a third of a microsecond less. Throws as `toISOString` does for a time
 * out of range.
 */
export function isoTime(ms: number): string {
  const at = Math.trunc(ms);
  // Beyond ±8.64e15 ms a Date is invalid: toISOString says so.
  if (!(Math.abs(at) <= 8.64e15)) return new Date(ms).toISOString();
  const second = Math.floor(at / 1000);
  if (second !== isoSecond) {
    // Everything but the milliseconds and the Z, whatever the year's width.
    isoPrefix = new Date(second * 1000).toISOString().slice(0, -4);
    isoSecond = second;
  }
  const milli = at - second * 1000;
  return `${isoPrefix}${milli < 10 ? '00' : milli < 100 ? '0' : ''}${milli}Z`;
}

/** Every field of a record, in the order records are written (and exported). */
export const RECORD_FIELDS = [
  'seq',
  'at',
  'tenant',
  'principal',
  'tool',
  'source',
  'chainId',
  'rule',
  'kind',
  'gate',
  'code',
  'ran',
  'checkInId',
  'approver',
  'argsDigest',
  'resultDigest',
  'prevHash',
  'hash',
  'signature',
] as const satisfies readonly (keyof AuditRecord)[];

const encoder = new TextEncoder();
const subtle = () => globalThis.crypto.subtle;

export function hexOf(buffer: ArrayBuffer): string {
  let hex = '';
  for (const byte of new Uint8Array(buffer)) hex += byte.toString(16).padStart(2, '0');
  return hex;
}

export function bytesOfHex(hex: string): Uint8Array<ArrayBuffer> {
  const bytes = new Uint8Array(hex.length >> 1);
  for (let i = 0; i < bytes.length; i++) bytes[i] = parseInt(hex.slice(i * 2, i * 2 + 2), 16);
  return bytes;
}

/** The canonical JSON bytes of `record` without `hash` and `signature`: what its hash covers. */
function hashedBytes(record: Readonly<Record<string, unknown>>): Uint8Array<ArrayBuffer> {
  return encoder.encode(canonicalJson(hashedBody(record)));
}

/** SHA-256 (hex) of what `record`'s hash covers, by Web Crypto: how verification recomputes it. */
export async function recordHash(record: Readonly<Record<string, unknown>>): Promise<string> {
  return hexOf(await subtle().digest('SHA-256', hashedBytes(record)));
}

/** What a record's hash covers, its keys sorted: every field but `hash` and `signature`. */
export const HASHED_KEYS = RECORD_FIELDS.filter((key) => key !== 'hash' && key !== 'signature').sort();

/**
 * The canonical JSON text of what `record`'s hash covers: its fields as one object in sorted key order
 * and one `JSON.stringify` when every value is a string, a boolean or a safe integer (as the log
 * writes records; an undefined one is left out, as canonical JSON leaves it), `canonicalJson`
 * otherwise. The two agree on such a record: verification recomputes the hash with `canonicalJson`.
 */
function hashedText(record: Readonly<Record<string, unknown>>): string {
  for (const key of HASHED_KEYS) {
    const value = record[key];
    if (
      value !== undefined &&
      typeof value !== 'string' &&
      typeof value !== 'boolean' &&
      !Number.isSafeInteger(value)
    ) {
      return canonicalJson(hashedBody(record));
    }
  }
  return JSON.stringify(sortedHashedBody(record));
}

/** What a record's hash covers, its keys written in `HASHED_KEYS` order (`test/record-hash.test.ts` holds them equal). */
export function sortedHashedBody(r: Readonly<Record<string, unknown>>): Record<string, unknown> {
  return {
    approver: r['approver'],
    argsDigest: r['argsDigest'],
    at: r['at'],
    chainId: r['chainId'],
    checkInId: r['checkInId'],
    code: r['code'],
    gate: r['gate'],
    kind: r['kind'],
    prevHash: r['prevHash'],
    principal: r['principal'],
    ran: r['ran'],
    resultDigest: r['resultDigest'],
    rule: r['rule'],
    seq: r['seq'],
    source: r['source'],
    tenant: r['tenant'],
    tool: r['tool'],
  };
}

function hashedBody(record: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  for (const key of Object.keys(record)) if (key !== 'hash' && key !== 'signature') body[key] = record[key];
  return body;
}

/** SHA-256 (hex) of a record's hashed text in this thread: the runtime's own where it has node:crypto, else the portable one. */
function chainHash(text: string): string {
  const native = nativeCrypto();
  if (native === undefined) return sha256Hex(encoder.encode(text));
  return native.hash !== undefined
    ? native.hash('sha256', text, 'hex')
    : native.createHash('sha256').update(text).digest('hex');
}

/** A record not signed itself: the signature of a later record of its batch covers it through the chain. */
export const UNSIGNED = '';

/** The record's fields in `RECORD_FIELDS` order; absent fields stay absent. */
function ordered(fields: AuditFields, seq: number, prevHash: string): Record<string, unknown> {
  const source = fields as unknown as Readonly<Record<string, unknown>>;
  const out: Record<string, unknown> = {};
  for (const key of RECORD_FIELDS) {
    if (key === 'seq') out[key] = seq;
    else if (key === 'prevHash') out[key] = prevHash;
    else if (source[key] !== undefined) out[key] = source[key];
  }
  return out;
}

/** Signs bytes (a record's 32-byte hash, a checkpoint); answers the Ed25519 signature in hex. */
export type RecordSigner = (hash: Uint8Array<ArrayBuffer>) => string | Promise<string>;

/** Web Crypto's signer: the portable path, and the one for a key given as a CryptoKey. */
export function webCryptoSigner(signingKey: CryptoKey): RecordSigner {
  return async (hash) => hexOf(await subtle().sign('Ed25519', signingKey, hash));
}

/**
 * The records that continue the log at `head`: each hashed over the one before (sequential, and
 * synchronous), and the last one signed. Its hash covers every record of the batch, so one signature
 * proves them all; the others carry `signature: ''`.
 */
export async function sealRecords(
  head: AuditHead | undefined,
  batch: readonly AuditFields[],
  sign: RecordSigner,
): Promise<AuditRecord[]> {
  let seq = head?.seq ?? 0;
  let prevHash = head?.hash ?? AUDIT_GENESIS;
  const hashed: Record<string, unknown>[] = [];
  const texts: string[] = [];
  for (const fields of batch) {
    seq += 1;
    const body = ordered(fields, seq, prevHash);
    const text = hashedText(body);
    // In this thread: the chain is sequential, and a Web Crypto digest per record is a thread hop each.
    prevHash = chainHash(text);
    body['hash'] = prevHash;
    body['signature'] = UNSIGNED;
    hashed.push(body);
    texts.push(text);
  }
  const last = hashed[hashed.length - 1];
  if (last !== undefined) last['signature'] = await sign(bytesOfHex(prevHash));
  // The text just hashed is the record's JSON but for its hash and signature: the store keeps it.
  hashed.forEach((record, i) =>
    keepAuditRecordText(
      record as unknown as AuditRecord,
      `${texts[i]!.slice(0, -1)},"hash":"${record['hash'] as string}","signature":${JSON.stringify(record['signature'])}}`,
    ),
  );
  return hashed as unknown as AuditRecord[];
}

/** Whether `record`'s signature is `publicKey`'s Ed25519 signature over its hash. */
export async function signatureHolds(record: AuditRecord, publicKey: CryptoKey): Promise<boolean> {
  try {
    return await subtle().verify('Ed25519', publicKey, bytesOfHex(record.signature), bytesOfHex(record.hash));
  } catch {
    return false;
  }
}

/** HMAC-SHA-256 (hex) of the canonical JSON of `value`, keyed so a value cannot be found by hashing guesses. */
export async function keyedDigest(key: CryptoKey, value: unknown): Promise<string> {
  return hexOf(await subtle().sign('HMAC', key, encoder.encode(canonicalJson(value))));
}

/**
 * The keyed digest of a value's canonical JSON text (`canonicalJson(value)`) computed in this thread,
 * when the key's bytes are at hand and the runtime has node:crypto; undefined otherwise (then
 * `keyedDigest` with the imported key).
 */
export function syncTextDigester(key: Uint8Array | CryptoKey): ((text: string) => string) | undefined {
  const native = nativeCrypto();
  if (native === undefined || !(key instanceof Uint8Array)) return undefined;
  const oneShot = native.hash === undefined ? undefined : oneShotHmac(native.hash, key);
  if (oneShot !== undefined) return oneShot;
  // A KeyObject made once: Node 24 checks raw key bytes at every createHmac, at 6× the HMAC's cost.
  const secret = native.createSecretKey?.(new Uint8Array(key)) ?? new Uint8Array(key);
  return (text) => native.createHmac('sha256', secret).update(text).digest('hex');
}

/** SHA-256's block: an HMAC key is padded to it (RFC 2104). */
const BLOCK = 64;

/**
 * HMAC-SHA-256 (RFC 2104) from two one-shot digests, for a key of at most one block of ASCII bytes
 * (the gateway's derived key is 64 hex digits): half the CPU of a `createHmac` per digest, which
 * makes an HMAC object and looks its digest up by name each time. The inner block is then a string
 * whose UTF-8 bytes are the padded key XOR 0x36, so the text joins it without a copy to a buffer.
 * Undefined for any other key (the caller keeps `createHmac`).
 */
export function oneShotHmac(
  hash: (algorithm: 'sha256', data: string | Uint8Array, encoding: 'hex' | 'binary') => string,
  key: Uint8Array,
): ((text: string) => string) | undefined {
  if (key.length > BLOCK || key.some((byte) => byte >= 0x80)) return undefined;
  let innerPad = '';
  const outer = new Uint8Array(BLOCK + 32);
  for (let i = 0; i < BLOCK; i++) {
    innerPad += String.fromCharCode((key[i] ?? 0) ^ 0x36);
    outer[i] = (key[i] ?? 0) ^ 0x5c;
  }
  return (text) => {
    const inner = hash('sha256', innerPad + text, 'binary');
    for (let i = 0; i < 32; i++) outer[BLOCK + i] = inner.charCodeAt(i);
    return hash('sha256', outer, 'hex');
  };
}

/**
 * What a call's record still needs digested: the canonical JSON texts of its args and result, taken
 * at the call (so a value changed afterwards changes nothing) and digested when its batch is written,
 * where the digests of a whole batch run one after another.
 */
export interface DigestTexts {
  readonly args?: string | undefined;
  readonly result?: string | undefined;
}
