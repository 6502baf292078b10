// Checks both validators run on a schema before compiling it, for what neither may honour: references
// that point at something other than a subschema (a pattern hidden under `title` or in an `enum` value
// would escape every check made on subschemas), and the keywords whose meaning one validator lacks.

import type { JsonSchema } from '@toolgate/core';
import { compileLinear, type LinearRegExp } from '../linear-regexp';
import { knownFormats } from './formats';
import { assertDefaultsApply, resolveRefs } from './schema-refs';
import { assertSchemaShape, draftOf } from './schema-shape';
import { isNode, pointsAtSchema, walkSchema, type Draft, type SchemaNode } from './schema-words';

/**
 * Everything both validators check before compiling: the audit below, then what ajv's meta-schema and
 * strict mode refuse, over the whole document (ajv's strict mode alone skips subschemas nothing
 * references). A schema one validator refuses at build, the other refuses too.
 */
export function checkSchema(
  schema: JsonSchema,
  useDefaults: boolean,
): {
  readonly draft: Draft;
  readonly patterns: Map<string, LinearRegExp>;
  readonly refs: Map<SchemaNode, SchemaNode | boolean>;
} {
  const patterns = auditSchema(schema);
  const draft = draftOf(schema as SchemaNode);
  assertSchemaShape(schema as SchemaNode, draft);
  const refs = resolveRefs(schema as SchemaNode);
  if (useDefaults) assertDefaultsApply(schema as SchemaNode, refs);
  return { draft, patterns, refs };
}

// $dynamicRef/$recursiveRef resolve at run time by the path taken, which the eval-free interpreter does
// not model; $async would turn a validation into a promise; $vocabulary only matters in a meta-schema.
const UNSUPPORTED: Readonly<Record<string, string>> = {
  $dynamicRef: 'dynamic references',
  $dynamicAnchor: 'dynamic references',
  $recursiveRef: 'recursive references',
  $recursiveAnchor: 'recursive references',
  $async: 'asynchronous schemas',
  $vocabulary: 'vocabularies',
};

/**
 * Throws, naming the place, on a schema neither validator may run; returns its patterns (`pattern`
 * and `patternProperties` keys, used or not) compiled for the linear-time engine, by source.
 */
function auditSchema(schema: JsonSchema): Map<string, LinearRegExp> {
  const patterns = new Map<string, LinearRegExp>();
  const pattern = (source: string, where: string) => {
    if (patterns.has(source)) return;
    // A pattern must be an ECMAScript regex (as the meta-schema says) that the linear engine runs.
    if (!knownFormats()['regex']!.validate(source as never))
      throw new Error(`schema is invalid: ${where} must match format "regex"`);
    try {
      patterns.set(source, compileLinear(source));
    } catch (error) {
      throw new Error(`at "${where}": ${error instanceof Error ? error.message : String(error)}`);
    }
  };
  walkSchema(schema, (node, pointer) => {
    if (!isNode(node)) return;
    if (typeof node['pattern'] === 'string') pattern(node['pattern'], `${pointer}/pattern`);
    if (isNode(node['patternProperties']))
      for (const source of Object.keys(node['patternProperties']))
        pattern(source, `${pointer}/patternProperties`);
    for (const key of Object.keys(node)) {
      const what = UNSUPPORTED[key];
      if (what !== undefined)
        throw new Error(`"${key}" at "${pointer}": ${what} are not supported in a tool's input schema`);
    }
    const ref = node['$ref'];
    if (typeof ref !== 'string') return;
    const hash = ref.indexOf('#');
    if (hash === -1) return;
    let fragment: string;
    try {
      fragment = decodeURIComponent(ref.slice(hash + 1));
    } catch {
      throw new Error(`"$ref" at "${pointer}" is not a valid reference`);
    }
    // A plain-name fragment is an anchor, which no accepted keyword defines: left for resolution to refuse.
    if ((fragment === '' || fragment.startsWith('/')) && !pointsAtSchema(fragment)) {
      throw new Error(`"$ref" at "${pointer}" points at ${JSON.stringify(ref)}, which is not a subschema`);
    }
  });
  return patterns;
}
