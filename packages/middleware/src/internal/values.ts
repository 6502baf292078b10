// How the guards read values: the strings inside args and results, the values at an argument path,
// and the argument paths a schema marks with a format. Walks are iterative, so args nested thousands
// deep (the dispatcher accepts them) cannot overflow the stack.

import type { JsonSchema, ToolArgs } from '@toolgate/core';

const isPlain = (value: object): boolean => {
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null || Array.isArray(value);
};

/** A non-plain object as the tool would serialize it; undefined when it has no JSON form. */
function jsonOf(value: object): string | undefined {
  try {
    return JSON.stringify(value);
  } catch {
    return undefined;
  }
}

const pathTo = (at: string, key: string): string => (at === '' ? key : `${at}.${key}`);

/**
 * Calls `visit` with every string in `value` and where it stands (`to.0`; a key stands where its
 * object does): strings themselves, keys of plain objects, and other objects through their JSON
 * form; numbers too, as text, when asked. Stops and returns true as soon as `visit` returns true.
 * A `visit` declared with one parameter is handed '' for `at`: no path is built for it.
 */
export function someString(
  value: unknown,
  visit: (text: string, at: string) => boolean,
  { numbers = false, keys = true }: { readonly numbers?: boolean; readonly keys?: boolean } = {},
): boolean {
  // A visit that takes no `at` is handed '' and no path is built: most walks only read the strings.
  const paths = visit.length >= 2;
  const stack: { at: string; node: unknown }[] = [{ at: '', node: value }];
  while (stack.length > 0) {
    const { at, node } = stack.pop()!;
    if (typeof node === 'string') {
      if (visit(node, at)) return true;
      continue;
    }
    if (typeof node === 'number') {
      if (numbers && visit(String(node), at)) return true;
      continue;
    }
    if (typeof node !== 'object' || node === null) continue;
    if (!isPlain(node)) {
      const json = jsonOf(node);
      if (json !== undefined && visit(json, at)) return true;
      continue;
    }
    if (Array.isArray(node)) {
      for (let i = node.length - 1; i >= 0; i--)
        stack.push({ at: paths ? pathTo(at, String(i)) : '', node: node[i] });
      continue;
    }
    for (const key of Object.keys(node)) {
      if (keys && visit(key, at)) return true;
      stack.push({ at: paths ? pathTo(at, key) : '', node: (node as Record<string, unknown>)[key] });
    }
  }
  return false;
}

/** Results are walked recursively to rebuild them; deeper than this, a guard judges the JSON text. */
const MAX_MAP_DEPTH = 256;

export class TooDeep extends Error {
  override readonly name = 'TooDeep';
}

/**
 * `value` (JSON data: plain objects, arrays, primitives) with `map` applied to every string and key;
 * the value itself when nothing changed. Throws `TooDeep` past 256 levels.
 */
export function mapStrings(value: unknown, map: (text: string) => string): unknown {
  const walk = (node: unknown, depth: number): unknown => {
    if (typeof node === 'string') return map(node);
    if (typeof node !== 'object' || node === null) return node;
    if (depth > MAX_MAP_DEPTH) throw new TooDeep();
    if (Array.isArray(node)) {
      const items = node.map((item) => walk(item, depth + 1));
      return items.some((item, i) => item !== node[i]) ? items : node;
    }
    let changed = false;
    const copy: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(node as Record<string, unknown>)) {
      const cleanKey = map(key);
      const cleanItem = walk(item, depth + 1);
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
  };
  return walk(value, 0);
}

/** One value found at an argument path, with where it was (`targets.2.url`), for refusals. */
export interface Located {
  readonly at: string;
  readonly value: unknown;
}

/** The values at `path` (`'url'`, `'targets.*.url'`) in `args`; absent parts yield nothing. */
export function valuesAt(args: ToolArgs, path: string): Located[] {
  let found: Located[] = [{ at: '', value: args }];
  for (const segment of path.split('.')) {
    const next: Located[] = [];
    for (const { at, value } of found) {
      if (typeof value !== 'object' || value === null) continue;
      const join = (key: string) => (at === '' ? key : `${at}.${key}`);
      if (segment === '*') {
        const entries = Array.isArray(value)
          ? value.map((item, i) => [String(i), item] as const)
          : Object.entries(value as Record<string, unknown>);
        for (const [key, item] of entries) next.push({ at: join(key), value: item });
      } else if (Object.hasOwn(value, segment)) {
        next.push({ at: join(segment), value: (value as Record<string, unknown>)[segment] });
      }
    }
    found = next;
  }
  return found;
}

/**
 * The items a declared argument holds at `path`: a list counts item by item (`paths.2`), and an
 * absent or null value yields nothing.
 */
export function itemsAt(args: ToolArgs, path: string): Located[] {
  const items: Located[] = [];
  for (const { at, value } of valuesAt(args, path)) {
    if (Array.isArray(value)) value.forEach((item, i) => items.push({ at: `${at}.${i}`, value: item }));
    else items.push({ at, value });
  }
  return items.filter((item) => item.value !== undefined && item.value !== null);
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const MAX_SCHEMA_DEPTH = 16;

/**
 * The argument paths whose schema says `format` is one of `formats` (through `properties`, `items`,
 * object `additionalProperties` and `anyOf`/`oneOf`/`allOf`), each with the format found. `$ref`s
 * are not followed.
 */
export function pathsWithFormat(schema: JsonSchema, formats: ReadonlySet<string>): Map<string, string> {
  const found = new Map<string, string>();
  const visit = (node: unknown, path: string, depth: number): void => {
    if (!isRecord(node) || depth > MAX_SCHEMA_DEPTH) return;
    const format = node['format'];
    if (path !== '' && typeof format === 'string' && formats.has(format) && !found.has(path))
      found.set(path, format);
    const child = (segment: string) => (path === '' ? segment : `${path}.${segment}`);
    const properties = node['properties'];
    if (isRecord(properties))
      for (const [name, sub] of Object.entries(properties)) visit(sub, child(name), depth + 1);
    const items = node['items'];
    if (Array.isArray(items)) for (const sub of items) visit(sub, child('*'), depth + 1);
    else visit(items, child('*'), depth + 1);
    visit(node['additionalProperties'], child('*'), depth + 1);
    for (const key of ['anyOf', 'oneOf', 'allOf'] as const) {
      const list = node[key];
      if (Array.isArray(list)) for (const sub of list) visit(sub, path, depth + 1);
    }
  };
  visit(schema, '', 0);
  return found;
}
