// A SchemaValidator for runtimes that forbid code generation (Cloudflare workerd, some edge hosts),
// where ajv cannot compile. It checks a schema as ajv would (meta-schema, strict mode), resolves its
// references with @cfworker/json-schema's resolver, and interprets it with toolgate's own interpreter,
// which reports ajv's errors in ajv's order: a model reads the same refusal whichever validator runs.

import { dereference, type Schema } from '@cfworker/json-schema';
import type { JsonSchema } from '@toolgate/core';
import { interpret, type Program } from './internal/interpret';
import { auditSchema } from './internal/schema-audit';
import { assertSchemaShape, draftOf } from './internal/schema-shape';
import { isNode, walkSchema, type SchemaNode } from './internal/schema-words';
import { problemsOf, type SchemaValidator } from './validator';

export interface EvalFreeValidatorOptions {
  /** Apply `default` values from the schema to the args the tool receives; default true. */
  readonly useDefaults?: boolean;
}

/** A private copy: the resolver marks the schema objects it reads, and the tool's schema stays as given. */
function copyOf(schema: JsonSchema): SchemaNode {
  let text: string | undefined;
  try {
    text = JSON.stringify(schema);
  } catch {
    text = undefined;
  }
  if (text === undefined) throw new Error('schema is invalid: it has no JSON form');
  return JSON.parse(text) as SchemaNode;
}

/** Each `$ref` node's target; throws, as ajv does, on a reference that resolves to no subschema. */
function resolveRefs(root: SchemaNode): Map<SchemaNode, SchemaNode | boolean> {
  const lookup = dereference(root as Schema) as Record<string, unknown>;
  const subschemas = new Set<unknown>();
  walkSchema(root, (node) => subschemas.add(node));
  const refs = new Map<SchemaNode, SchemaNode | boolean>();
  walkSchema(root, (node, pointer) => {
    if (!isNode(node) || typeof node['$ref'] !== 'string') return;
    const absolute = (node as { __absolute_ref__?: string }).__absolute_ref__ ?? node['$ref'];
    const target = lookup[absolute];
    // ajv does not register the schema it compiles, so a reference to the whole schema resolves nowhere.
    if (target === undefined || target === root || !subschemas.has(target)) {
      throw new Error(`can't resolve reference ${node['$ref']} at "${pointer}"`);
    }
    refs.set(node, target as SchemaNode | boolean);
  });
  return refs;
}

/** Applies `default`s where ajv does: in `properties` and `items`, not inside anyOf/oneOf/not/if. */
function applyDefaults(
  schema: unknown,
  data: unknown,
  refs: ReadonlyMap<SchemaNode, SchemaNode | boolean>,
): void {
  if (!isNode(schema)) return;
  const target = refs.get(schema);
  if (target !== undefined) applyDefaults(target, data, refs);
  if (Array.isArray(schema['allOf'])) for (const sub of schema['allOf']) applyDefaults(sub, data, refs);
  if (isNode(data) && !Array.isArray(data) && isNode(schema['properties'])) {
    for (const [name, sub] of Object.entries(schema['properties'])) {
      if (name === '__proto__') continue;
      if (isNode(sub) && !Object.hasOwn(data, name) && 'default' in sub)
        data[name] = structuredClone(sub['default']);
      applyDefaults(sub, data[name], refs);
    }
  }
  if (Array.isArray(data) && schema['items'] !== undefined) {
    const items = schema['items'];
    data.forEach((item, index) => applyDefaults(Array.isArray(items) ? items[index] : items, item, refs));
  }
}

const hasDefaults = (schema: SchemaNode): boolean => {
  let found = false;
  walkSchema(schema, (node) => {
    found ||= isNode(node) && 'default' in node;
  });
  return found;
};

/**
 * An eval-free SchemaValidator (drafts 7 and 2020-12): no `new Function`, so it runs where code
 * generation is forbidden. It refuses at compile what ajv refuses, and judges args as ajv does, in
 * ajv's words; patterns and formats run in linear time, `uniqueItems` by hashing.
 */
export function evalFreeValidator(options: EvalFreeValidatorOptions = {}): SchemaValidator {
  const useDefaults = options.useDefaults ?? true;
  return {
    compile(schema) {
      const root = copyOf(schema);
      auditSchema(root);
      const draft = draftOf(root);
      const patterns = assertSchemaShape(root, draft, useDefaults);
      const program: Program = { root, draft, refs: resolveRefs(root), patterns };
      const cloneFirst = useDefaults && hasDefaults(root);
      return (args) => {
        const data = cloneFirst ? structuredClone(args) : args;
        if (cloneFirst) applyDefaults(root, data, program.refs);
        const errors = interpret(program, data);
        if (errors.length === 0)
          return cloneFirst ? { valid: true, value: data as Record<string, unknown> } : { valid: true };
        return { valid: false, problems: problemsOf(errors) };
      };
    },
  };
}
