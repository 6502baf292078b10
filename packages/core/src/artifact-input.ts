// Checks a durable artifact store runs on what a caller hands `put`, `get` and `list`, shared so
// every store refuses the same input in the same words.

import type { ArtifactScope } from './identity';

/** A scope's three fields as the strings a store keys rows by: an absent field is '', as in inMemoryArtifacts. */
export function scopeFields(
  store: string,
  scope: ArtifactScope,
): { tenant: string; principal: string; conversation: string } {
  if (typeof scope !== 'object' || scope === null) {
    throw new TypeError(`${store}: a scope must be an object { tenant?, principal?, conversation? }.`);
  }
  const field = (name: 'tenant' | 'principal' | 'conversation'): string => {
    const value: unknown = scope[name];
    if (value === undefined) return '';
    if (typeof value !== 'string') {
      throw new TypeError(`${store}: the scope's '${name}' must be a string when present.`);
    }
    return value;
  };
  return { tenant: field('tenant'), principal: field('principal'), conversation: field('conversation') };
}

/** The artifact kind, refused when it is not a non-empty string. */
export function artifactKind(store: string, kind: unknown): string {
  if (typeof kind !== 'string' || kind.trim() === '') {
    throw new TypeError(`${store}: an artifact kind must be a non-empty string.`);
  }
  return kind;
}

/** The JSON text a store keeps for an artifact's `data` or `meta`; refused when there is none. */
export function artifactJson(store: string, what: 'data' | 'meta', value: unknown): string {
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch {
    text = undefined;
  }
  if (text === undefined) {
    throw new TypeError(`${store}: the artifact's ${what} must be JSON-serializable or a Uint8Array.`);
  }
  return text;
}
