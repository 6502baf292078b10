// The last step of loading: the values the schema marks with a `unit` become what the code uses —
// durations milliseconds, sizes bytes, store URLs typed locations (a sqlite path made absolute) —
// so nothing downstream parses a configuration string again.

import { isAbsolute, resolve } from 'node:path';
import { configSchema } from './schema';
import type { ConfigPath } from './errors';
import type { Problem } from './problem';
import type { LimitsStoreLocation, StateStoreLocation } from './types';
import { parseDuration, parseSize } from './units';

interface SchemaNode {
  readonly $ref?: string;
  readonly unit?: string;
  readonly errorMessage?: { readonly message: string; readonly fix: string };
  readonly type?: string | readonly string[];
  readonly properties?: Readonly<Record<string, SchemaNode>>;
  readonly additionalProperties?: SchemaNode | boolean;
  readonly items?: SchemaNode;
  readonly oneOf?: readonly SchemaNode[];
}

const root = configSchema as unknown as SchemaNode & { definitions: Readonly<Record<string, SchemaNode>> };

/** The resolved value of `value` (validated against the schema), and every unit that did not resolve. */
export function resolveUnits(value: unknown, baseDir: string): { resolved: unknown; problems: Problem[] } {
  const problems: Problem[] = [];
  const resolved = walk(root, value, [], { baseDir, problems });
  return { resolved, problems };
}

/** `memory:`, `sqlite:PATH` (relative to `baseDir`) or `postgres://…`; undefined for anything else. */
export function stateStoreLocation(url: string, baseDir: string): StateStoreLocation | undefined {
  if (url === 'memory:') return { kind: 'memory' };
  if (url.startsWith('sqlite:')) {
    const path = url.slice('sqlite:'.length);
    return { kind: 'sqlite', path: path === ':memory:' || isAbsolute(path) ? path : resolve(baseDir, path) };
  }
  if (/^postgres(ql)?:\/\/./.test(url)) return { kind: 'postgres', url };
  return undefined;
}

/** `memory:` or `redis://…`/`rediss://…`; undefined for anything else. */
export function limitsStoreLocation(url: string): LimitsStoreLocation | undefined {
  if (url === 'memory:') return { kind: 'memory' };
  if (/^rediss?:\/\/./.test(url)) return { kind: 'redis', url };
  return undefined;
}

interface Walk {
  readonly baseDir: string;
  readonly problems: Problem[];
}

function walk(node: SchemaNode, value: unknown, path: ConfigPath, context: Walk): unknown {
  const schema = dereference(node);
  if (schema.unit !== undefined) return unit(schema, value, path, context);
  if (schema.oneOf !== undefined) {
    const branch = schema.oneOf.map(dereference).find((candidate) => accepts(candidate, value));
    return branch === undefined ? value : walk(branch, value, path, context);
  }
  if (Array.isArray(value))
    return schema.items === undefined
      ? value
      : value.map((item, index) => walk(schema.items!, item, [...path, index], context));
  if (typeof value === 'object' && value !== null) {
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) {
      const child =
        schema.properties?.[key] ??
        (typeof schema.additionalProperties === 'object' ? schema.additionalProperties : undefined);
      out[key] = child === undefined ? item : walk(child, item, [...path, key], context);
    }
    return out;
  }
  return value;
}

function unit(schema: SchemaNode, value: unknown, path: ConfigPath, context: Walk): unknown {
  const resolved =
    schema.unit === 'milliseconds'
      ? parseDuration(value)
      : schema.unit === 'bytes'
        ? parseSize(value)
        : typeof value !== 'string'
          ? undefined
          : schema.unit === 'stateStore'
            ? stateStoreLocation(value, context.baseDir)
            : schema.unit === 'limitsStore'
              ? limitsStoreLocation(value)
              : undefined;
  if (resolved === undefined || typeof resolved === 'string') {
    const words = schema.errorMessage ?? { message: 'is not valid', fix: 'see schema/toolgate.schema.json' };
    context.problems.push({ path, message: words.message, fix: words.fix });
    return value;
  }
  return resolved;
}

function dereference(node: SchemaNode): SchemaNode {
  if (node.$ref === undefined) return node;
  const name = node.$ref.replace(/^#\/definitions\//, '');
  // A `$ref` beside other keys (a description) keeps the definition's own keys.
  return { ...root.definitions[name], ...withoutRef(node) };
}

function withoutRef(node: SchemaNode): SchemaNode {
  const { $ref: _ref, ...rest } = node;
  return rest;
}

function accepts(schema: SchemaNode, value: unknown): boolean {
  const types =
    schema.type === undefined ? [] : typeof schema.type === 'string' ? [schema.type] : schema.type;
  if (types.length === 0) return true;
  const actual = Array.isArray(value)
    ? 'array'
    : value === null
      ? 'null'
      : typeof value === 'number'
        ? Number.isInteger(value)
          ? 'integer'
          : 'number'
        : typeof value;
  return types.some((type) => type === actual || (type === 'number' && actual === 'integer'));
}

/**
 * One part of a configuration as written (at `path`, e.g. `['auth']`), resolved: for a factory
 * called alone with written values. Throws a TypeError naming the first value that does not resolve.
 */
export function resolvePart<T>(path: ConfigPath, value: unknown, baseDir: string): T {
  let node: SchemaNode = root;
  for (const segment of path) {
    const schema = dereference(node);
    const child =
      typeof segment === 'number'
        ? schema.items
        : (schema.properties?.[segment] ??
          (typeof schema.additionalProperties === 'object' ? schema.additionalProperties : undefined));
    if (child === undefined) throw new TypeError(`the configuration schema has no part at ${path.join('.')}`);
    node = child;
  }
  const problems: Problem[] = [];
  const resolved = walk(node, value, path, { baseDir, problems });
  const first = problems[0];
  if (first !== undefined)
    throw new TypeError(`${first.path.join('.')}: ${first.message}; ${first.fix ?? 'see the schema'}.`);
  return resolved as T;
}
