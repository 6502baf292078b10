// Canonical JSON and the digests built on it. Signing and digests must not depend on key order,
// so every object is written with its keys sorted; values that JSON drops (undefined) are dropped.

/** JSON with object keys sorted at every depth. Throws a TypeError on cycles and unserializable values. */
export function canonicalJson(value: unknown): string {
  // Most values (parsed JSON: a call's args, a tool's result) already are: then the runtime's own
  // writer writes the same text at a fraction of the cost of building it here.
  return writtenAsIs(value, 0) ? JSON.stringify(value) : write(value, new Set());
}

/** Deeper than this (or a cycle) is left to `write`, which finds cycles. */
const AS_IS_DEPTH = 64;

/**
 * Whether `JSON.stringify(value)` is its canonical JSON: plain objects and arrays only, every
 * object's keys already in sorted order (JSON.stringify writes them in `Object.keys` order), no
 * hole, no toJSON, nothing JSON drops or turns into null (so `write` and it cannot differ there).
 */
function writtenAsIs(value: unknown, depth: number): boolean {
  if (value === null) return true;
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return true;
    case 'number':
      return Number.isFinite(value);
    case 'object':
      break;
    default:
      return false;
  }
  if (depth === AS_IS_DEPTH || typeof (value as { toJSON?: unknown }).toJSON === 'function') return false;
  const proto: unknown = Object.getPrototypeOf(value);
  if (Array.isArray(value)) {
    if (proto !== Array.prototype) return false;
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i];
      if (item === undefined || !writtenAsIs(item, depth + 1)) return false;
    }
    return true;
  }
  if (proto !== Object.prototype && proto !== null) return false;
  const object = value as Record<string, unknown>;
  let previous: string | undefined;
  for (const key of Object.keys(object)) {
    // `<` compares UTF-16 code units, as `sort()` does.
    if (previous !== undefined && !(previous < key)) return false;
    if (!writtenAsIs(object[key], depth + 1)) return false;
    previous = key;
  }
  return true;
}

function write(value: unknown, seen: Set<object>): string {
  if (value === null) return 'null';
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value);
    case 'number':
      return Number.isFinite(value) ? JSON.stringify(value) : 'null';
    case 'boolean':
      return value ? 'true' : 'false';
    case 'object':
      break;
    default:
      throw new TypeError(`canonicalJson: a ${typeof value} cannot be written as JSON`);
  }
  const object = value as Record<string, unknown> & { toJSON?: () => unknown };
  if (typeof object.toJSON === 'function') return write(object.toJSON(), seen);
  if (seen.has(object)) throw new TypeError('canonicalJson: the value contains a cycle');
  seen.add(object);
  // Built by appending, not by arrays of parts joined: this runs for every audited call's args and result.
  let out: string;
  if (Array.isArray(object)) {
    out = '[';
    for (let i = 0; i < object.length; i++) {
      if (i > 0) out += ',';
      const item: unknown = object[i];
      // A hole reads as nothing, as `map` then `join` always wrote it; an undefined element as null.
      out += item === undefined ? (i in object ? 'null' : '') : write(item, seen);
    }
    out += ']';
  } else {
    out = '{';
    for (const key of Object.keys(object).sort()) {
      const item = object[key];
      if (item === undefined || typeof item === 'function' || typeof item === 'symbol') continue;
      if (out.length > 1) out += ',';
      out += `${JSON.stringify(key)}:${write(item, seen)}`;
    }
    out += '}';
  }
  seen.delete(object);
  return out;
}

const encoder = new TextEncoder();

function toHex(buffer: ArrayBuffer): string {
  let hex = '';
  for (const byte of new Uint8Array(buffer)) hex += byte.toString(16).padStart(2, '0');
  return hex;
}

/** Lowercase hex SHA-256 of the canonical JSON of `value`. */
export async function digestOf(value: unknown): Promise<string> {
  return toHex(await globalThis.crypto.subtle.digest('SHA-256', encoder.encode(canonicalJson(value))));
}

/** An HMAC-SHA-256 key imported once, for signing and verifying canonical JSON. */
export interface Signer {
  sign(value: unknown): Promise<string>;
  verify(value: unknown, signatureHex: string): Promise<boolean>;
}

export function createSigner(key: string | Uint8Array): Signer {
  const raw = typeof key === 'string' ? encoder.encode(key) : new Uint8Array(key);
  const imported = globalThis.crypto.subtle.importKey('raw', raw, { name: 'HMAC', hash: 'SHA-256' }, false, [
    'sign',
    'verify',
  ]);
  // An unhandled rejection here would surface before first use; the first sign/verify reports it instead.
  imported.catch(() => undefined);
  return {
    async sign(value) {
      const signature = await globalThis.crypto.subtle.sign(
        'HMAC',
        await imported,
        encoder.encode(canonicalJson(value)),
      );
      return toHex(signature);
    },
    async verify(value, signatureHex) {
      if (typeof signatureHex !== 'string' || !/^[0-9a-f]{64}$/.test(signatureHex)) return false;
      const bytes = new Uint8Array(32);
      for (let i = 0; i < 32; i++) bytes[i] = parseInt(signatureHex.slice(i * 2, i * 2 + 2), 16);
      // subtle.verify compares in constant time.
      return globalThis.crypto.subtle.verify(
        'HMAC',
        await imported,
        bytes,
        encoder.encode(canonicalJson(value)),
      );
    },
  };
}

/** A short, stable, synchronous hash (two FNV-1a 32-bit lanes), for ids that name a configuration. */
export function shortHash(text: string): string {
  let a = 0x811c9dc5;
  let b = 0x01000193 ^ 0x5bd1e995;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    a = Math.imul(a ^ code, 0x01000193);
    b = Math.imul(b ^ code, 0x5bd1e995) ^ (b >>> 15);
  }
  return (a >>> 0).toString(16).padStart(8, '0') + (b >>> 0).toString(16).padStart(8, '0');
}
