// Redaction of a call's resolved secrets from whatever leaves the call: the result value, its text,
// and a tool's error message. A secret can travel escaped (inside JSON, inside JSON inside JSON, as
// \u escapes), encoded (URL, form, hex, base64 — an HTTP Basic header among them) or as bytes, and it
// can sit in any container; text is searched for every such form, and values are walked by value.

import { Credential } from './credential';

const REDACTED = '[redacted]';
/** Encoded forms are searched only for secrets this long: a shorter one's hex or base64 turns up by chance. */
const MIN_ENCODED_BYTES = 8;
/** Characters of a base64 or base64url run, padding included. */
const BASE64_CHAR = /[A-Za-z0-9+/_=-]/;

const encoder = new TextEncoder();
const hex4 = (char: string) => char.charCodeAt(0).toString(16).padStart(4, '0');
const hex2 = (byte: number) => byte.toString(16).padStart(2, '0');
const lowerPercents = (text: string) => text.replace(/%[0-9A-F]{2}/g, (escape) => escape.toLowerCase());

/** Bytes as the string btoa and String.fromCharCode read them: one character per byte. */
function byteString(bytes: ArrayLike<number>): string {
  let out = '';
  for (let i = 0; i < bytes.length; i += 0x8000) {
    out += String.fromCharCode(...Array.prototype.slice.call(bytes, i, i + 0x8000));
  }
  return out;
}

/** The forms a secret takes when a serializer escapes or encodes it, longest first, the raw one included. */
export function escapedForms(secret: string): string[] {
  const json = JSON.stringify(secret).slice(1, -1);
  const asciiOnly = json.replace(/[\u007f-\uffff]/g, (char) => `\\u${hex4(char)}`);
  const everyEscape = [json, asciiOnly].map((form) =>
    form.replace(/\\u([0-9a-f]{4})/g, (_match, code: string) => `\\u${code.toUpperCase()}`),
  );
  const forms = new Set([
    secret,
    json,
    JSON.stringify(json).slice(1, -1),
    asciiOnly,
    JSON.stringify(asciiOnly).slice(1, -1),
    ...everyEscape,
    json.replace(/\//g, '\\/'),
    ...urlForms(secret),
    ...(encoder.encode(secret).length >= MIN_ENCODED_BYTES ? byteForms(secret) : []),
  ]);
  return [...forms].filter((form) => form.length > 0).sort((a, b) => b.length - a.length);
}

/** URL and form encodings, with the %XX escapes in either case. */
function urlForms(secret: string): string[] {
  try {
    const component = encodeURIComponent(secret);
    const form = new URLSearchParams([['', secret]]).toString().slice(1);
    return [component, lowerPercents(component), form, lowerPercents(form)];
  } catch {
    // A lone surrogate has no URL form; nothing to search for.
    return [];
  }
}

/** Hex and every-byte percent escapes of the secret's UTF-8 bytes, in either case. */
function byteForms(secret: string): string[] {
  const bytes = [...encoder.encode(secret)];
  const hex = bytes.map(hex2).join('');
  const percents = bytes.map((byte) => `%${hex2(byte)}`).join('');
  return [hex, hex.toUpperCase(), percents, percents.toUpperCase()];
}

/**
 * The part of base64 that spells `source` whatever surrounds it, at each of the three offsets a
 * source can start at within a 3-byte group (so `user:secret` in a Basic header is found too), in
 * both alphabets. Characters that also carry the neighbours' bits are left off both ends.
 */
function base64Cores(source: string): string[] {
  const bytes = encoder.encode(source);
  if (bytes.length < MIN_ENCODED_BYTES) return [];
  const cores: string[] = [];
  for (let shift = 0; shift < 3; shift++) {
    const encoded = btoa(byteString([...new Array<number>(shift).fill(0), ...bytes]));
    const core = encoded.slice(Math.ceil((8 * shift) / 6), Math.floor((8 * (shift + bytes.length)) / 6));
    cores.push(core, core.replace(/\+/g, '-').replace(/\//g, '_'));
  }
  return cores;
}

/** How one set of secrets is found and removed, built once per call. */
interface Redactor {
  /** The shortest text that can hold a form: anything shorter is skipped without a search. */
  readonly minLength: number;
  holds(text: string): boolean;
  replace(text: string): string;
}

const NOTHING: Redactor = { minLength: Infinity, holds: () => false, replace: (text) => text };
/** The longest text a number or bigint up to 2^64 can spell. */
const MAX_NUMBER_CHARS = 24;

// A call redacts its value and then its text with the same secrets, and most deployments resolve the
// same few secrets call after call: the forms are worked out once. Bounded, and holding only what a
// credential provider hands out anyway.
const RECENT_REDACTORS = 16;
const recentRedactors = new Map<string, Redactor>();

// A frozen list (a gateway's own secrets, held until one is added) cannot change: its redactor is
// found by the list itself, without joining its values again.
const byFrozenList = new WeakMap<readonly string[], Redactor>();

function redactorOf(secrets: readonly string[]): Redactor {
  if (!Object.isFrozen(secrets)) return redactorOfValues(secrets);
  let redactor = byFrozenList.get(secrets);
  if (redactor === undefined) {
    redactor = redactorOfValues(secrets);
    byFrozenList.set(secrets, redactor);
  }
  return redactor;
}

function redactorOfValues(secrets: readonly string[]): Redactor {
  const present = secrets.filter((secret) => typeof secret === 'string' && secret.length > 0);
  if (present.length === 0) return NOTHING;
  const id = present.join('\u0000');
  let redactor = recentRedactors.get(id);
  if (redactor === undefined) {
    redactor = buildRedactor(present);
    if (recentRedactors.size >= RECENT_REDACTORS)
      recentRedactors.delete(recentRedactors.keys().next().value as string);
    recentRedactors.set(id, redactor);
  }
  return redactor;
}

function buildRedactor(present: readonly string[]): Redactor {
  // Longest first, so a secret that contains a shorter one goes whole.
  const forms = [...new Set(present.flatMap(escapedForms))].sort((a, b) => b.length - a.length);
  const cores = [
    ...new Set(
      present.flatMap((secret) => {
        const json = JSON.stringify(secret).slice(1, -1);
        return [...base64Cores(secret), ...(json === secret ? [] : base64Cores(json))];
      }),
    ),
  ];
  const minLength = Math.min(...forms.map((form) => form.length), ...cores.map((core) => core.length));
  return {
    minLength,
    holds: (text) =>
      text.length >= minLength &&
      (forms.some((form) => text.includes(form)) || cores.some((core) => text.includes(core))),
    replace(text) {
      let out = text;
      for (const form of forms) if (out.includes(form)) out = out.split(form).join(REDACTED);
      for (const core of cores) out = replaceBase64Runs(out, core);
      return out;
    },
  };
}

/** Replaces each whole base64 run that contains `core`: the rest of the run may encode the secret's edges. */
function replaceBase64Runs(text: string, core: string): string {
  let out = text;
  let at = out.indexOf(core);
  while (at !== -1) {
    let start = at;
    let end = at + core.length;
    while (start > 0 && BASE64_CHAR.test(out[start - 1]!)) start--;
    while (end < out.length && BASE64_CHAR.test(out[end]!)) end++;
    out = out.slice(0, start) + REDACTED + out.slice(end);
    at = out.indexOf(core, start + REDACTED.length);
  }
  return out;
}

/** Replaces every occurrence of each secret in `text`, raw, escaped or encoded, with `[redacted]`. */
export function redact(text: string, secrets: readonly string[]): string {
  if (secrets.length === 0) return text;
  return redactorOf(secrets).replace(text);
}

const isPlainObject = (value: object): value is Record<PropertyKey, unknown> => {
  const proto = Object.getPrototypeOf(value) as unknown;
  return (
    (proto === Object.prototype || proto === null) &&
    typeof (value as { toJSON?: unknown }).toJSON !== 'function'
  );
};

/** Bytes of an ArrayBuffer, a typed array, a DataView or a Node Buffer; undefined for anything else. */
function bytesOf(node: object): Uint8Array | undefined {
  if (ArrayBuffer.isView(node)) return new Uint8Array(node.buffer, node.byteOffset, node.byteLength);
  if (node instanceof ArrayBuffer) return new Uint8Array(node);
  return undefined;
}

/** An array of integers 0-255: bytes as JSON writes a Buffer or a typed array that went through it. */
function byteArray(items: readonly unknown[]): boolean {
  return (
    items.length >= MIN_ENCODED_BYTES &&
    items.every((item) => typeof item === 'number' && Number.isInteger(item) && item >= 0 && item <= 255)
  );
}

/** Whether bytes spell any form of a secret: the forms are ASCII but for a non-ASCII raw secret, read as UTF-8. */
function bytesHold(bytes: ArrayLike<number>, redactor: Redactor): boolean {
  if (bytes.length === 0) return false;
  if (redactor.holds(byteString(bytes))) return true;
  return redactor.holds(new TextDecoder('utf-8', { fatal: false }).decode(Uint8Array.from(bytes)));
}

/**
 * A tool's result with each secret redacted wherever it sits, by value: in strings, numbers and
 * bigints (a number that spells a secret becomes the string `[redacted]`), keys and values of plain
 * objects (symbol-keyed and non-enumerable ones too), arrays, Maps and Sets, the own properties of an
 * Error or any other object (its prototype kept), bytes (an ArrayBuffer, typed array, DataView,
 * Buffer, or an array of byte values holding a secret becomes `[redacted]`), and any object's JSON
 * form. Returns the value itself when nothing in it changed. A value too deep to walk is redacted
 * through its JSON text; one with no JSON form (a cycle, a throwing getter) is returned as it is:
 * serializing it fails the call anyway. What an object keeps in private fields or closures is out of
 * reach, unless its JSON form shows it.
 */
export function redactValue(value: unknown, secrets: readonly string[]): unknown {
  if (secrets.length === 0) return value;
  const redactor = redactorOf(secrets);
  if (redactor === NOTHING) return value;
  const seen = new Set<object>();
  const walk = (node: unknown): unknown => {
    if (typeof node === 'string') return redactor.holds(node) ? redactor.replace(node) : node;
    if (typeof node === 'number' || typeof node === 'bigint') {
      if (redactor.minLength > MAX_NUMBER_CHARS && typeof node === 'number') return node;
      const text = String(node);
      return redactor.holds(text) ? redactor.replace(text) : node;
    }
    if (typeof node !== 'object' || node === null || seen.has(node)) return node;
    // A credential in a result reads as its JSON form: no holder of the outcome can reveal() it.
    if (node instanceof Credential) return node.toJSON();
    const bytes = bytesOf(node);
    if (bytes !== undefined) return bytesHold(bytes, redactor) ? REDACTED : node;
    seen.add(node);
    try {
      if (Array.isArray(node)) {
        if (byteArray(node) && bytesHold(node as number[], redactor)) return REDACTED;
        const items = node.map(walk);
        return items.some((item, i) => item !== node[i]) ? items : node;
      }
      if (node instanceof Map) {
        const before = [...node];
        const after = before.map(([key, item]) => [walk(key), walk(item)] as const);
        return after.some(([key, item], i) => key !== before[i]![0] || item !== before[i]![1])
          ? new Map(after)
          : node;
      }
      if (node instanceof Set) {
        const items = [...node].map(walk);
        return items.some((item) => !node.has(item)) ? new Set(items) : node;
      }
      if (isPlainObject(node)) return walkOwn(node, walk, true) ?? node;
      // Any other object: its own properties (an Error's message, stack and cause), prototype kept;
      // then what its JSON form shows (a toJSON reading state the walk cannot see).
      const copy = walkOwn(node, walk, false) ?? node;
      const json = JSON.stringify(copy);
      return json !== undefined && redactor.holds(json) ? walk(JSON.parse(json)) : copy;
    } finally {
      seen.delete(node);
    }
  };
  try {
    return walk(value);
  } catch {
    // Too deep to walk, or a getter that throws: what the model would read, redacted, stands in.
    return redactedJson(value, redactor);
  }
}

/**
 * A copy of `node` with every own property walked, or undefined when none changed. A plain object's
 * getters are read (as JSON would) and become values; another object's accessors are left alone.
 */
function walkOwn(node: object, walk: (value: unknown) => unknown, readGetters: boolean): object | undefined {
  const entries: { key: PropertyKey; descriptor: PropertyDescriptor; read: boolean; value: unknown }[] = [];
  let changed = false;
  // Most results hold no secret: walk first, and build a copy only when something changed.
  for (const key of Reflect.ownKeys(node)) {
    const descriptor = Object.getOwnPropertyDescriptor(node, key);
    if (descriptor === undefined) continue;
    const cleanKey = typeof key === 'string' ? (walk(key) as string) : key;
    const read = 'value' in descriptor || readGetters;
    let value: unknown;
    if (read) {
      const item = 'value' in descriptor ? (descriptor.value as unknown) : Reflect.get(node, key);
      value = walk(item);
      changed ||= value !== item;
    }
    changed ||= cleanKey !== key;
    entries.push({ key: cleanKey, descriptor, read, value });
  }
  if (!changed) return undefined;
  // No prototype: a '__proto__' key is then an entry like any other, defined, not assigned.
  const descriptors = Object.create(null) as PropertyDescriptorMap;
  for (const { key, descriptor, read, value } of entries) {
    descriptors[key] = read
      ? { value, enumerable: descriptor.enumerable ?? false, writable: true, configurable: true }
      : descriptor;
  }
  return Object.create(Object.getPrototypeOf(node) as object | null, descriptors) as object;
}

function redactedJson(value: unknown, redactor: Redactor): unknown {
  let json: string | undefined;
  try {
    json = JSON.stringify(value);
  } catch {
    return value;
  }
  if (json === undefined) return value;
  const clean = redactor.replace(json);
  try {
    return JSON.parse(clean) as unknown;
  } catch {
    return clean;
  }
}
