// The audit log's keys, in the forms a deployment has them: a PKCS#8 PEM file (`openssl genpkey
// -algorithm ed25519`), a JWK, raw bytes or a Web Crypto key. Shapes are checked where the log is
// built; importing is asynchronous (PEM through jose, the rest Web Crypto's). No message ever prints a key.

import { exportPKCS8, exportSPKI, importPKCS8, importSPKI } from 'jose';
import { AuditConfigError } from './errors';
import { nativeCrypto } from './native-crypto';

/** The Ed25519 private key that signs records: PKCS#8 PEM, a JWK (or its JSON text), PKCS#8 DER or the 32-byte seed, a CryptoKey or a CryptoKeyPair. */
export type AuditSigningKey = string | Uint8Array | JsonWebKey | CryptoKey | CryptoKeyPair;

/** The Ed25519 public key that verifies records: SPKI PEM, a JWK (or its JSON text), SPKI DER or the 32 raw bytes, a CryptoKey or a CryptoKeyPair. A private key is accepted too: its public half is derived. */
export type AuditPublicKey = string | Uint8Array | JsonWebKey | CryptoKey | CryptoKeyPair;

/** The HMAC-SHA-256 key of the argument and result digests: at least 32 bytes, or an HMAC CryptoKey. */
export type AuditDigestKey = string | Uint8Array | CryptoKey;

const ED25519 = { name: 'Ed25519' } as const;
const subtle = () => globalThis.crypto.subtle;

// The DER prefix of an Ed25519 PKCS#8 (v1) key, before its 32-byte seed.
const PKCS8_PREFIX = [
  0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20,
];

/** A key checked for shape, ready to import. */
type Bytes = Uint8Array<ArrayBuffer>;

type KeySource =
  | { readonly format: 'pkcs8' | 'spki' | 'raw'; readonly data: Bytes; readonly private: boolean }
  | { readonly format: 'pem'; readonly text: string; readonly private: boolean }
  | { readonly format: 'jwk'; readonly data: JsonWebKey; readonly private: boolean }
  | { readonly format: 'key'; readonly key: CryptoKey; readonly private: boolean };

/** Where a key came in: the function that took it and the option or argument that carried it. */
export interface KeyPlace {
  readonly subject: string;
  /** The option that carried it (`signingKey`), named quoted in the problem and set on the error. */
  readonly option?: string;
  /** The positional argument that carried it (`publicKey`), named bare. */
  readonly argument?: string;
}

/** A key that cannot be used, named by where it came in; never its value. */
function keyError(where: KeyPlace, clause: string): AuditConfigError {
  const named =
    where.option !== undefined
      ? `'${where.option}': `
      : where.argument !== undefined
        ? `${where.argument}: `
        : '';
  return new AuditConfigError({
    subject: where.subject,
    problem: `${named}${clause}`,
    ...(where.option !== undefined ? { option: where.option } : {}),
  });
}

const GENERATE = 'generate one with `openssl genpkey -algorithm ed25519 -out audit-key.pem`';

function shapeOf(value: unknown): string {
  if (value === null) return 'null';
  if (value instanceof Uint8Array) return `${value.length} bytes`;
  if (typeof value === 'string') return value.trim().startsWith('-----BEGIN') ? 'a PEM block' : 'a string';
  return typeof value;
}

function isCryptoKey(value: unknown): value is CryptoKey {
  const key = value as Partial<CryptoKey> | null;
  return (
    typeof key === 'object' &&
    key !== null &&
    typeof key.type === 'string' &&
    typeof key.algorithm === 'object' &&
    Array.isArray(key.usages)
  );
}

function isKeyPair(value: unknown): value is CryptoKeyPair {
  const pair = value as Partial<CryptoKeyPair> | null;
  return (
    typeof pair === 'object' && pair !== null && isCryptoKey(pair.privateKey) && isCryptoKey(pair.publicKey)
  );
}

/** Whether `text` is one PEM block of `label` (its content is jose's to read). */
function isPem(text: string, label: string): boolean {
  return text.startsWith(`-----BEGIN ${label}-----`) && text.endsWith(`-----END ${label}-----`);
}

function isPkcs8(bytes: Uint8Array): boolean {
  return bytes.length === 48 && PKCS8_PREFIX.every((byte, i) => bytes[i] === byte);
}

function withPrefix(prefix: readonly number[], body: Uint8Array): Bytes {
  const out = new Uint8Array(prefix.length + body.length);
  out.set(prefix);
  out.set(body, prefix.length);
  return out;
}

function jwkSource(where: KeyPlace, jwk: JsonWebKey, wantPrivate: boolean): KeySource {
  if (jwk.kty !== 'OKP' || jwk.crv !== 'Ed25519' || typeof jwk.x !== 'string') {
    throw keyError(
      where,
      `the JWK is not an Ed25519 key; expected { kty: 'OKP', crv: 'Ed25519', x${wantPrivate ? ', d' : ''} }. ${GENERATE}`,
    );
  }
  const hasPrivate = typeof jwk.d === 'string';
  if (wantPrivate && !hasPrivate) {
    throw keyError(where, `the JWK is a public key; signing needs the private key (with 'd')`);
  }
  return { format: 'jwk', data: jwk, private: hasPrivate };
}

function textSource(where: KeyPlace, text: string, wantPrivate: boolean): KeySource {
  const trimmed = text.trim();
  if (trimmed.startsWith('{')) {
    let jwk: unknown;
    try {
      jwk = JSON.parse(trimmed);
    } catch {
      throw keyError(where, `the key text starts like a JWK but is not valid JSON`);
    }
    return jwkSource(where, (typeof jwk === 'object' && jwk !== null ? jwk : {}) as JsonWebKey, wantPrivate);
  }
  if (isPem(trimmed, 'PRIVATE KEY')) return { format: 'pem', text: trimmed, private: true };
  if (isPem(trimmed, 'PUBLIC KEY')) {
    if (wantPrivate) {
      throw keyError(
        where,
        `got a public key (BEGIN PUBLIC KEY); signing needs the private key (BEGIN PRIVATE KEY)`,
      );
    }
    return { format: 'pem', text: trimmed, private: false };
  }
  if (trimmed.startsWith('-----BEGIN ENCRYPTED PRIVATE KEY-----')) {
    throw keyError(
      where,
      `the PEM key is encrypted; decrypt it first (\`openssl pkey -in key.pem -out plain.pem\`) and keep the plain file private`,
    );
  }
  if (trimmed.startsWith('-----BEGIN')) {
    throw keyError(
      where,
      `expected a PKCS#8 PEM (BEGIN PRIVATE KEY) or SPKI PEM (BEGIN PUBLIC KEY) Ed25519 key; got another kind of PEM block. ${GENERATE}`,
    );
  }
  throw keyError(where, `expected a PEM or JWK Ed25519 key; got a string that is neither. ${GENERATE}`);
}

/** Checks the shape of a key for signing (`wantPrivate`) or verifying, without importing it. */
function keySource(where: KeyPlace, key: unknown, wantPrivate: boolean): KeySource {
  if (typeof key === 'string') return textSource(where, key, wantPrivate);
  if (key instanceof Uint8Array) {
    if (wantPrivate) {
      if (key.length === 32) return { format: 'pkcs8', data: withPrefix(PKCS8_PREFIX, key), private: true };
      return { format: 'pkcs8', data: new Uint8Array(key), private: true };
    }
    if (key.length === 32) return { format: 'raw', data: new Uint8Array(key), private: false };
    // PKCS#8 bytes (their DER prefix says so) are a private key, whose public half is derived.
    if (isPkcs8(key)) return { format: 'pkcs8', data: new Uint8Array(key), private: true };
    return { format: 'spki', data: new Uint8Array(key), private: false };
  }
  if (isKeyPair(key)) return keySource(where, wantPrivate ? key.privateKey : key.publicKey, wantPrivate);
  if (isCryptoKey(key)) {
    if (key.algorithm.name !== 'Ed25519') {
      throw keyError(where, `the CryptoKey is ${key.algorithm.name}, not Ed25519. ${GENERATE}`);
    }
    if (wantPrivate && (key.type !== 'private' || !key.usages.includes('sign'))) {
      throw keyError(where, `the CryptoKey must be an Ed25519 private key with the 'sign' usage`);
    }
    return { format: 'key', key, private: key.type === 'private' };
  }
  if (typeof key === 'object' && key !== null) return jwkSource(where, key as JsonWebKey, wantPrivate);
  throw keyError(
    where,
    `expected an Ed25519 key (PEM, JWK, bytes or CryptoKey); got ${shapeOf(key)}. ${GENERATE}`,
  );
}

/** Checks `key` as a signing key now; `importSigningKey` imports it later. */
export function signingKeySource(where: KeyPlace, key: unknown): KeySource {
  return keySource(where, key, true);
}

/** Checks `key` as a verifying key (a private key is accepted: its public half is used). */
export function publicKeySource(where: KeyPlace, key: unknown): KeySource {
  return keySource(where, key, false);
}

async function importOrExplain(where: KeyPlace, work: () => Promise<CryptoKey>): Promise<CryptoKey> {
  try {
    return await work();
  } catch {
    throw keyError(where, `the key is not a valid Ed25519 key in the form given. ${GENERATE}`);
  }
}

/** The private CryptoKey that signs. */
export function importSigningKey(where: KeyPlace, source: KeySource): Promise<CryptoKey> {
  if (source.format === 'key') return Promise.resolve(source.key);
  return importOrExplain(where, () =>
    source.format === 'pem'
      ? importPKCS8(source.text, 'Ed25519')
      : source.format === 'jwk'
        ? subtle().importKey('jwk', privateJwk(source.data), ED25519, false, ['sign'])
        : subtle().importKey('pkcs8', source.data, ED25519, false, ['sign']),
  );
}

/** The public CryptoKey that verifies; from a private key, its public half (the key must be importable or extractable). */
export async function importPublicKey(where: KeyPlace, source: KeySource): Promise<CryptoKey> {
  if (!source.private) {
    if (source.format === 'key') return source.key;
    if (source.format === 'pem') {
      const text = source.text;
      return importOrExplain(where, () => importSPKI(text, 'Ed25519', { extractable: true }));
    }
    const { format, data } = source;
    return importOrExplain(where, () =>
      format === 'jwk'
        ? subtle().importKey('jwk', publicJwk(data), ED25519, true, ['verify'])
        : subtle().importKey(format === 'raw' ? 'raw' : 'spki', data as Bytes, ED25519, true, ['verify']),
    );
  }
  let jwk: JsonWebKey;
  if (source.format === 'jwk') jwk = source.data;
  else if (source.format === 'key') {
    if (!source.key.extractable) {
      throw keyError(
        where,
        `the private CryptoKey is not extractable, so its public key cannot be derived; pass the public key (or the CryptoKeyPair)`,
      );
    }
    jwk = await subtle().exportKey('jwk', source.key);
  } else if (source.format === 'pem') {
    const text = source.text;
    const key = await importOrExplain(where, () => importPKCS8(text, 'Ed25519', { extractable: true }));
    jwk = await subtle().exportKey('jwk', key);
  } else {
    const data = source.data as Bytes;
    const key = await importOrExplain(where, () =>
      subtle().importKey('pkcs8', data, ED25519, true, ['sign']),
    );
    jwk = await subtle().exportKey('jwk', key);
  }
  return importOrExplain(where, () => subtle().importKey('jwk', publicJwk(jwk), ED25519, true, ['verify']));
}

/**
 * Signs in this thread with node:crypto (hex), when the runtime has it and the key came as material
 * (PEM, JWK, bytes); undefined otherwise, and for a CryptoKey (then Web Crypto signs). Ed25519 is
 * deterministic: both paths give the same signature.
 */
export function syncSignerOf(source: KeySource): ((data: Uint8Array) => string) | undefined {
  const native = nativeCrypto();
  if (native?.sign === undefined || native.createPrivateKey === undefined || source.format === 'key')
    return undefined;
  let key: object;
  try {
    key =
      source.format === 'jwk'
        ? native.createPrivateKey({ key: privateJwk(source.data), format: 'jwk' })
        : source.format === 'pem'
          ? native.createPrivateKey({ key: source.text, format: 'pem' })
          : native.createPrivateKey({ key: source.data, format: 'der', type: 'pkcs8' });
  } catch {
    // A key node:crypto does not take: Web Crypto's import says what is wrong with it.
    return undefined;
  }
  const sign = native.sign.bind(native);
  return (data) => sign(null, data, key).toString('hex');
}

// Only the key material: a JWK's own alg, use or key_ops could otherwise clash with the import.
function privateJwk(jwk: JsonWebKey): JsonWebKey {
  return { kty: 'OKP', crv: 'Ed25519', x: jwk.x!, d: jwk.d! };
}

function publicJwk(jwk: JsonWebKey): JsonWebKey {
  return { kty: 'OKP', crv: 'Ed25519', x: jwk.x! };
}

/**
 * The public key (SPKI PEM) that verifies what `key` signs, or `key` itself in that form when it is
 * already public: what an auditor needs, and all `toolgate audit verify` needs besides the log.
 * 32 bytes are read as a public key here (as everywhere a public key is expected), never as a seed.
 */
export async function auditPublicKey(key: AuditSigningKey | AuditPublicKey): Promise<string> {
  const where: KeyPlace = { subject: 'auditPublicKey' };
  const imported = await importPublicKey(where, publicKeySource(where, key));
  return `${await exportSPKI(imported)}\n`;
}

/** A new Ed25519 key pair as PEM text: `privateKey` (PKCS#8) for `signingKey`, `publicKey` (SPKI) for verifying. */
export async function generateAuditKeys(): Promise<{
  readonly privateKey: string;
  readonly publicKey: string;
}> {
  const pair = (await subtle().generateKey(ED25519, true, ['sign', 'verify'])) as CryptoKeyPair;
  return {
    privateKey: `${await exportPKCS8(pair.privateKey)}\n`,
    publicKey: `${await exportSPKI(pair.publicKey)}\n`,
  };
}

const encoder = new TextEncoder();

/** Checks a digest key now: a string or bytes of at least 32 bytes, or an HMAC CryptoKey. */
export function digestKeySource(where: KeyPlace, key: unknown): Bytes | CryptoKey {
  if (isCryptoKey(key)) {
    if (key.algorithm.name !== 'HMAC' || !key.usages.includes('sign')) {
      throw keyError(where, `the CryptoKey must be an HMAC key with the 'sign' usage`);
    }
    return key;
  }
  const bytes = typeof key === 'string' ? encoder.encode(key) : key instanceof Uint8Array ? key : undefined;
  if (bytes === undefined) {
    throw keyError(
      where,
      `expected a string or bytes of at least 32 bytes, or an HMAC CryptoKey; got ${shapeOf(key)}`,
    );
  }
  if (bytes.length < 32) {
    throw keyError(
      where,
      `the key has ${bytes.length} bytes; use at least 32 random bytes (e.g. \`openssl rand -hex 32\`)`,
    );
  }
  return new Uint8Array(bytes);
}

/** The HMAC-SHA-256 CryptoKey of the digests. */
export function importDigestKey(where: KeyPlace, source: Bytes | CryptoKey): Promise<CryptoKey> {
  if (!(source instanceof Uint8Array)) return Promise.resolve(source);
  return importOrExplain(where, () =>
    subtle().importKey('raw', source, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']),
  );
}

/** Whether two key inputs are the same material (a digest key must not be the signing key). */
export function sameKey(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  const bytesOf = (k: unknown) =>
    typeof k === 'string' ? encoder.encode(k.trim()) : k instanceof Uint8Array ? k : undefined;
  const x = bytesOf(a);
  const y = bytesOf(b);
  if (x === undefined || y === undefined || x.length !== y.length) return false;
  return x.every((byte, i) => byte === y[i]);
}
