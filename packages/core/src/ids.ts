// Randomness comes from Web Crypto only, so the core runs on Node, Bun, Deno and edge workers.

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

// getRandomValues has a fixed per-call cost far above the bytes it returns, and an id is drawn on
// every dispatch, so bytes are drawn a pool at a time; each byte is still used once.
const POOL_BYTES = 4096;
const pool = new Uint8Array(POOL_BYTES);
let poolAt = POOL_BYTES;

function randomByte(): number {
  if (poolAt === POOL_BYTES) {
    globalThis.crypto.getRandomValues(pool);
    poolAt = 0;
  }
  return pool[poolAt++]!;
}

const CODES = Array.from(BASE62, (char) => char.charCodeAt(0));
// Character codes gathered here and turned into one string at once: a call id is drawn on every
// dispatch, and appending character by character costs more than the randomness.
const codes: number[] = [];

const AT_ONCE = 256;

/** `length` random base62 characters, without modulo bias. */
export function randomBase62(length: number): string {
  const wanted = length > 0 ? Math.ceil(length) : 0;
  if (wanted > AT_ONCE) {
    let out = '';
    for (let left = wanted; left > 0; left -= AT_ONCE) out += randomBase62(Math.min(left, AT_ONCE));
    return out;
  }
  codes.length = wanted;
  let n = 0;
  while (n < wanted) {
    const byte = randomByte();
    // 248 = 62 * 4: bytes at or above it would favour the first characters.
    if (byte < 248) codes[n++] = CODES[byte % 62]!;
  }
  return String.fromCharCode.apply(null, codes);
}

/** A fresh artifact ref: `art_` + 22 random base62 characters. */
export function newArtifactRef(): string {
  return `art_${randomBase62(22)}`;
}

/** True when `value` has the shape of an artifact ref. */
export function isArtifactRef(value: unknown): value is string {
  return typeof value === 'string' && /^art_[0-9A-Za-z]{22}$/.test(value);
}

/** A random id with a readable prefix, e.g. `call_…`, `chk_…`. */
export function newId(prefix: string): string {
  return `${prefix}_${randomBase62(20)}`;
}
