// SipHash-2-4 (Aumasson and Bernstein), a keyed hash: what the cross-server guard remembers of a
// value is its digest under a key drawn per guard, so its memory holds no value and cannot be matched
// against guesses without the key. In 32-bit halves, so it runs anywhere without BigInt.

type Lane = [hi: number, lo: number];

function add(a: Lane, b: Lane): void {
  const lo = a[1] + b[1];
  a[0] = (a[0] + b[0] + (lo > 0xffffffff ? 1 : 0)) >>> 0;
  a[1] = lo >>> 0;
}

function rotl(a: Lane, n: number): void {
  const [hi, lo] = a;
  if (n === 32) {
    a[0] = lo;
    a[1] = hi;
    return;
  }
  a[0] = ((hi << n) | (lo >>> (32 - n))) >>> 0;
  a[1] = ((lo << n) | (hi >>> (32 - n))) >>> 0;
}

function xor(a: Lane, b: Lane): void {
  a[0] = (a[0] ^ b[0]) >>> 0;
  a[1] = (a[1] ^ b[1]) >>> 0;
}

function round(v0: Lane, v1: Lane, v2: Lane, v3: Lane): void {
  add(v0, v1);
  rotl(v1, 13);
  xor(v1, v0);
  rotl(v0, 32);
  add(v2, v3);
  rotl(v3, 16);
  xor(v3, v2);
  add(v0, v3);
  rotl(v3, 21);
  xor(v3, v0);
  add(v2, v1);
  rotl(v1, 17);
  xor(v1, v2);
  rotl(v2, 32);
}

const word = (bytes: Uint8Array, at: number): Lane => [
  (bytes[at + 4]! | (bytes[at + 5]! << 8) | (bytes[at + 6]! << 16) | (bytes[at + 7]! << 24)) >>> 0,
  (bytes[at]! | (bytes[at + 1]! << 8) | (bytes[at + 2]! << 16) | (bytes[at + 3]! << 24)) >>> 0,
];

/** SipHash-2-4 of `bytes` under a 16-byte `key`, as [high, low] 32-bit halves. */
export function sipHash24(key: Uint8Array, bytes: Uint8Array): Lane {
  const k0 = word(key, 0);
  const k1 = word(key, 8);
  const v0: Lane = [(k0[0] ^ 0x736f6d65) >>> 0, (k0[1] ^ 0x70736575) >>> 0];
  const v1: Lane = [(k1[0] ^ 0x646f7261) >>> 0, (k1[1] ^ 0x6e646f6d) >>> 0];
  const v2: Lane = [(k0[0] ^ 0x6c796765) >>> 0, (k0[1] ^ 0x6e657261) >>> 0];
  const v3: Lane = [(k1[0] ^ 0x74656462) >>> 0, (k1[1] ^ 0x79746573) >>> 0];
  const whole = bytes.length - (bytes.length % 8);
  for (let at = 0; at < whole; at += 8) {
    const m = word(bytes, at);
    xor(v3, m);
    round(v0, v1, v2, v3);
    round(v0, v1, v2, v3);
    xor(v0, m);
  }
  const last = new Uint8Array(8);
  last.set(bytes.subarray(whole));
  last[7] = bytes.length & 0xff;
  const m = word(last, 0);
  xor(v3, m);
  round(v0, v1, v2, v3);
  round(v0, v1, v2, v3);
  xor(v0, m);
  v2[1] = (v2[1] ^ 0xff) >>> 0;
  for (let i = 0; i < 4; i++) round(v0, v1, v2, v3);
  xor(v0, v1);
  xor(v0, v2);
  xor(v0, v3);
  return v0;
}

/** A text's digest under `key`, as a number (53 of the hash's 64 bits), for use as a Map key. */
export function keyedDigest(key: Uint8Array, text: string): number {
  // UTF-16 code units, two bytes each: an exact, cheap encoding of any string, lone surrogates too.
  const bytes = new Uint8Array(text.length * 2);
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    bytes[2 * i] = unit & 0xff;
    bytes[2 * i + 1] = unit >>> 8;
  }
  const [hi, lo] = sipHash24(key, bytes);
  return (hi >>> 11) * 0x100000000 + lo;
}
