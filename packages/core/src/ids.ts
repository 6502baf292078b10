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

/** `length` random base62 characters, without modulo bias. */
export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    const byte = randomByte();
    // 248 = 62 * 4: bytes at or above it would favour the first characters.
    if (byte < 248) out += BASE62[byte % 62];
  }
  return out;
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
