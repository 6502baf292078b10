// Randomness comes from Web Crypto only, so the core runs on Node, Bun, Deno and edge workers.

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

// getRandomValues has a fixed per-call cost far above the bytes it returns, and an id is drawn on
// every dispatch, so bytes are drawn a pool at a time, each turned at once into a base62 character
// code or dropped (248 = 62 * 4: bytes at or above it would favour the first characters). Each code
// is used once.
const POOL_BYTES = 4096;
const pool = new Uint8Array(POOL_BYTES);
const ready = new Uint8Array(POOL_BYTES);
let readyAt = 0;
let readyEnd = 0;

const CODES = Uint8Array.from(BASE62, (char) => char.charCodeAt(0));

function refill(): void {
  globalThis.crypto.getRandomValues(pool);
  let n = 0;
  for (let i = 0; i < POOL_BYTES; i++) {
    const byte = pool[i]!;
    if (byte < 248) ready[n++] = CODES[byte % 62]!;
  }
  readyAt = 0;
  readyEnd = n;
}

const AT_ONCE = 256;

/** `length` random base62 characters, without modulo bias. */
export function randomBase62(length: number): string {
  const wanted = length > 0 ? Math.ceil(length) : 0;
  if (wanted > AT_ONCE) {
    let out = '';
    for (let left = wanted; left > 0; left -= AT_ONCE) out += randomBase62(Math.min(left, AT_ONCE));
    return out;
  }
  while (readyEnd - readyAt < wanted) refill();
  const at = readyAt;
  readyAt += wanted;
  return String.fromCharCode.apply(null, ready.subarray(at, at + wanted) as unknown as number[]);
}

/** 20 random base62 characters: an id's, drawn on every dispatch, so its codes are passed one by one. */
function random20(): string {
  if (readyEnd - readyAt < 20) refill();
  const r = ready;
  const i = readyAt;
  readyAt = i + 20;
  // prettier-ignore
  return String.fromCharCode(
    r[i]!, r[i + 1]!, r[i + 2]!, r[i + 3]!, r[i + 4]!, r[i + 5]!, r[i + 6]!, r[i + 7]!, r[i + 8]!, r[i + 9]!,
    r[i + 10]!, r[i + 11]!, r[i + 12]!, r[i + 13]!, r[i + 14]!, r[i + 15]!, r[i + 16]!, r[i + 17]!, r[i + 18]!, r[i + 19]!,
  );
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
  return `${prefix}_${random20()}`;
}
