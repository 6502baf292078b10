// Redaction of a call's resolved secrets from whatever leaves the call: the result value, its text,
// and a tool's error message. A secret can travel escaped (inside JSON, inside JSON inside JSON, as
// \u escapes, URL-encoded), so text is searched for every such form, and values are walked.

import { Credential } from './credential';

const REDACTED = '[redacted]';

const hex4 = (char: string) => char.charCodeAt(0).toString(16).padStart(4, '0');

/** The forms a secret takes when a serializer escapes it, longest first, the raw one included. */
export function escapedForms(secret: string): string[] {
  const json = JSON.stringify(secret).slice(1, -1);
  const asciiOnly = json.replace(/[\u007f-\uffff]/g, (char) => `\\u${hex4(char)}`);
  const everyEscape = [json, asciiOnly].map((form) =>
    form.replace(/\\u([0-9a-f]{4})/g, (_match, code: string) => `\\u${code.toUpperCase()}`),
  );
  let urlEncoded = '';
  try {
    urlEncoded = encodeURIComponent(secret);
  } catch {
    // A lone surrogate has no URL form; nothing to search for.
  }
  const forms = new Set([
    secret,
    json,
    JSON.stringify(json).slice(1, -1),
    asciiOnly,
    JSON.stringify(asciiOnly).slice(1, -1),
    ...everyEscape,
    json.replace(/\//g, '\\/'),
    urlEncoded,
  ]);
  return [...forms].filter((form) => form.length > 0).sort((a, b) => b.length - a.length);
}

/** Every form of every secret, longest first, so a secret that contains a shorter one goes whole. */
function formsOf(secrets: readonly string[]): string[] {
  const all = new Set(secrets.filter((secret) => secret.length > 0).flatMap(escapedForms));
  return [...all].sort((a, b) => b.length - a.length);
}

function replaceForms(text: string, forms: readonly string[]): string {
  let out = text;
  for (const form of forms) if (out.includes(form)) out = out.split(form).join(REDACTED);
  return out;
}

/** Replaces every occurrence of each secret in `text`, raw or escaped, with `[redacted]`. */
export function redact(text: string, secrets: readonly string[]): string {
  if (secrets.length === 0) return text;
  return replaceForms(text, formsOf(secrets));
}

const isPlainObject = (value: object): value is Record<string, unknown> => {
  const proto = Object.getPrototypeOf(value) as unknown;
  return (
    (proto === Object.prototype || proto === null) &&
    typeof (value as { toJSON?: unknown }).toJSON !== 'function'
  );
};

/**
 * A tool's result with each secret redacted wherever it sits: in strings and keys of plain objects
 * and arrays, and in any other object through the JSON form the model would read. Returns the value
 * itself when nothing in it changed. A value too deep to walk is redacted through its JSON text;
 * one with no JSON form (a cycle, a throwing getter) is returned as it is: serializing it fails the
 * call anyway.
 */
export function redactValue(value: unknown, secrets: readonly string[]): unknown {
  if (secrets.length === 0) return value;
  const forms = formsOf(secrets);
  const holdsSecret = (text: string) => forms.some((form) => text.includes(form));
  const seen = new Set<object>();
  const walk = (node: unknown): unknown => {
    if (typeof node === 'string') return holdsSecret(node) ? replaceForms(node, forms) : node;
    if (typeof node !== 'object' || node === null || seen.has(node)) return node;
    // A credential in a result reads as its JSON form: no holder of the outcome can reveal() it.
    if (node instanceof Credential) return node.toJSON();
    seen.add(node);
    try {
      if (Array.isArray(node)) {
        const items = node.map(walk);
        return items.some((item, i) => item !== node[i]) ? items : node;
      }
      if (isPlainObject(node)) {
        let changed = false;
        const copy: Record<string, unknown> = {};
        for (const [key, item] of Object.entries(node)) {
          const cleanKey = walk(key) as string;
          const cleanItem = walk(item);
          changed ||= cleanKey !== key || cleanItem !== item;
          // Defined, not assigned: a '__proto__' key stays a key.
          Object.defineProperty(copy, cleanKey, {
            value: cleanItem,
            enumerable: true,
            writable: true,
            configurable: true,
          });
        }
        return changed ? copy : node;
      }
      const json = JSON.stringify(node);
      return json !== undefined && holdsSecret(json) ? walk(JSON.parse(json)) : node;
    } finally {
      seen.delete(node);
    }
  };
  try {
    return walk(value);
  } catch {
    // Too deep to walk, or a getter that throws: what the model would read, redacted, stands in.
    return redactedJson(value, forms);
  }
}

function redactedJson(value: unknown, forms: readonly string[]): unknown {
  let json: string | undefined;
  try {
    json = JSON.stringify(value);
  } catch {
    return value;
  }
  if (json === undefined) return value;
  const clean = replaceForms(json, forms);
  try {
    return JSON.parse(clean) as unknown;
  } catch {
    return clean;
  }
}
