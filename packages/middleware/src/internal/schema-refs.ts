// How references resolve, once, when a schema compiles: both validators refuse a schema with a
// reference that names no subschema, wherever it sits, and the interpreter follows the map built here.

import { REFERENCE_KEYWORDS, isNode, walkSchema, type SchemaNode } from './schema-words';

// Relative `$id`s and references resolve against this when the schema names no absolute `$id`.
const BASE = 'https://schema.toolgate.invalid/root.json';

/**
 * Each `$ref` node's target; throws, as ajv does, on a reference that resolves to no subschema. A
 * reference is a URI: its resource is the schema or a subschema with that `$id`, its fragment a JSON
 * pointer into it (the audit already checked the pointer names a subschema).
 */
export function resolveRefs(root: SchemaNode): Map<SchemaNode, SchemaNode | boolean> {
  const resources = new Map<string, unknown>();
  // `$anchor` and `$dynamicAnchor` name a subschema within its resource: `resource#name`.
  const anchors = new Map<string, unknown>();
  const bases = new Map<unknown, string>();
  const visit = (node: unknown, base: string) => {
    if (!isNode(node)) return;
    let here = base;
    if (typeof node['$id'] === 'string') {
      const url = new URL(node['$id'], base);
      url.hash = '';
      here = url.href;
      if (resources.has(here)) throw new Error(`reference "${here}" resolves to more than one schema`);
      resources.set(here, node);
    }
    bases.set(node, here);
    for (const key of ['$anchor', '$dynamicAnchor']) {
      const name = node[key];
      if (typeof name !== 'string') continue;
      const named = `${here}#${name}`;
      if (anchors.has(named) && anchors.get(named) !== node)
        throw new Error(`reference "${named}" resolves to more than one schema`);
      anchors.set(named, node);
    }
    walkSchema(node, (sub) => {
      if (sub !== node && isNode(sub) && !bases.has(sub)) visit(sub, here);
    });
  };
  resources.set(BASE, root);
  visit(root, BASE);
  const subschemas = new Set<unknown>();
  walkSchema(root, (node) => subschemas.add(node));
  const refs = new Map<SchemaNode, SchemaNode | boolean>();
  walkSchema(root, (node, pointer) => {
    // The audit let through only dynamic references to the root's anchor: they call the root.
    if (isNode(node) && typeof node['$dynamicRef'] === 'string') refs.set(node, root);
    if (!isNode(node) || typeof node['$ref'] !== 'string') return;
    const ref = node['$ref'];
    let target: unknown;
    try {
      const url = new URL(ref, bases.get(node) ?? BASE);
      const fragment = decodeURIComponent(url.hash.slice(1));
      url.hash = '';
      target = resources.get(url.href);
      for (const step of fragment.split('/').slice(1)) {
        const key = step.replace(/~1/g, '/').replace(/~0/g, '~');
        target =
          typeof target === 'object' && target !== null && Object.hasOwn(target, key)
            ? (target as Record<string, unknown>)[key]
            : undefined;
      }
      if (fragment !== '' && !fragment.startsWith('/')) target = anchors.get(`${url.href}#${fragment}`);
    } catch {
      target = undefined;
    }
    // ajv does not register the schema it compiles, so a reference to the whole schema resolves nowhere.
    if (target === undefined || target === root || !subschemas.has(target)) {
      throw new Error(`can't resolve reference ${ref} at "${pointer}"`);
    }
    refs.set(node, target as SchemaNode | boolean);
  });
  assertNoLoop(root, refs);
  return refs;
}

// Subschemas applied to the same value as their parent: following only these never reaches a part of
// the arguments, so a cycle among them (through a reference) can never finish.
const SAME_VALUE = [
  'allOf',
  'anyOf',
  'oneOf',
  'not',
  'if',
  'then',
  'else',
  'dependentSchemas',
  'dependencies',
];

function sameValueChildren(node: SchemaNode, refs: ReadonlyMap<SchemaNode, SchemaNode | boolean>): unknown[] {
  const children: unknown[] = [];
  const target = refs.get(node);
  if (target !== undefined) children.push(target);
  for (const key of SAME_VALUE) {
    const value = node[key];
    if (Array.isArray(value) && key !== 'dependencies') children.push(...value);
    else if (key === 'dependentSchemas' || key === 'dependencies') {
      if (isNode(value)) children.push(...Object.values(value).filter((v) => !Array.isArray(v)));
    } else if (value !== undefined) children.push(value);
  }
  return children;
}

/** Throws on a reference cycle that never descends into the value (`{ $ref: '#/$defs/a' }` in `a`). */
function assertNoLoop(root: SchemaNode, refs: ReadonlyMap<SchemaNode, SchemaNode | boolean>): void {
  const done = new Set<unknown>();
  const onPath = new Set<unknown>();
  const visit = (node: unknown): void => {
    if (!isNode(node) || done.has(node)) return;
    if (onPath.has(node))
      throw new Error('the schema refers to itself without descending into the value: it could never finish');
    onPath.add(node);
    for (const child of sameValueChildren(node, refs)) visit(child);
    onPath.delete(node);
    done.add(node);
  };
  walkSchema(root, (node) => visit(node));
}

// Where ajv's compositeRule holds: a default there would be ignored, which strict mode refuses.
const COMPOSITE = new Set(['anyOf', 'oneOf', 'not', 'if', 'contains', 'propertyNames']);

/**
 * Throws, as ajv's strict mode does, on a `default` that could never apply: one in a subschema that
 * only runs inside anyOf, oneOf, not, if, contains or propertyNames. A referenced schema that itself
 * holds references is compiled on its own by ajv, outside the rule, so it starts afresh.
 */
export function assertDefaultsApply(
  root: SchemaNode,
  refs: ReadonlyMap<SchemaNode, SchemaNode | boolean>,
): void {
  const seen = new Set<string>();
  const ids = new Map<unknown, number>();
  const visit = (node: unknown, composite: boolean, pointer: string): void => {
    if (!isNode(node)) return;
    if (!ids.has(node)) ids.set(node, ids.size);
    const key = `${ids.get(node)}:${composite}`;
    if (seen.has(key)) return;
    seen.add(key);
    if (composite) {
      const defaulted = [
        ...Object.values(isNode(node['properties']) ? node['properties'] : {}),
        ...(Array.isArray(node['items']) ? node['items'] : []),
      ].some((sub) => isNode(sub) && sub['default'] !== undefined);
      if (defaulted) throw new Error(`strict mode: default is ignored for: a property at "${pointer}"`);
    }
    const target = refs.get(node);
    if (target !== undefined) visit(target, composite && !hasAnyRef(target), `${pointer}/$ref`);
    for (const [keyword, value] of Object.entries(node)) {
      const inner = composite || COMPOSITE.has(keyword);
      const at = `${pointer}/${keyword}`;
      if (Array.isArray(value)) value.forEach((sub, i) => visit(sub, inner, `${at}/${i}`));
      else if (['properties', 'patternProperties', 'dependentSchemas', 'dependencies'].includes(keyword)) {
        if (isNode(value))
          for (const [name, sub] of Object.entries(value)) visit(sub, inner, `${at}/${name}`);
      } else if (!['$defs', 'definitions', 'enum', 'const', 'default', 'examples'].includes(keyword)) {
        visit(value, inner, at);
      }
    }
  };
  visit(root, false, '#');
}

function hasAnyRef(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return false;
  return Object.entries(value).some(([key, sub]) => REFERENCE_KEYWORDS.has(key) || hasAnyRef(sub));
}
