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

// $recursiveRef is 2019-09's, which neither validator reads; $async would turn a validation into a
// promise; $vocabulary only matters in a meta-schema. Dynamic references: see dynamicProblem.
const UNSUPPORTED: Readonly<Record<string, string>> = {
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
  const dynamic = dynamicProblem(schema);
  if (dynamic !== undefined) throw new Error(dynamic);
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

/**
 * Why the schema's dynamic references cannot run, if they cannot. Supported is the form recursive
 * schemas use: one `$dynamicAnchor` at the root, and `$dynamicRef`s to it outside `$defs`, in a schema
 * with no nested `$id`. There every dynamic reference means the root, on both validators (ajv calls
 * the function it sits in, which is the root's); anywhere else ajv resolves one differently from the
 * specification, so it is refused rather than judged two ways.
 */
function dynamicProblem(schema: JsonSchema): string | undefined {
  const anchor = schema['$dynamicAnchor'];
  let problem: string | undefined;
  walkSchema(schema, (node, pointer) => {
    if (problem !== undefined || !isNode(node)) return;
    const ref = node['$dynamicRef'];
    const dynamic = ref !== undefined || (pointer !== '#' && node['$dynamicAnchor'] !== undefined);
    if (!dynamic) return;
    const fix =
      'dynamic references are supported in a tool\'s input schema only as a "$dynamicRef" to the "$dynamicAnchor" of its root';
    if (ref === undefined) problem = `"$dynamicAnchor" at "${pointer}": ${fix}`;
    else if (typeof anchor !== 'string' || ref !== `#${anchor}`)
      problem = `"$dynamicRef" at "${pointer}" names no "$dynamicAnchor" of the root: ${fix}`;
    else if (/\/(?:\$defs|definitions)\//.test(pointer))
      problem = `"$dynamicRef" at "${pointer}" sits in a definition: ${fix}, outside "$defs"`;
    else if ('$ref' in node)
      problem = `"$dynamicRef" at "${pointer}" stands beside a "$ref": give each its own subschema`;
  });
  if (problem !== undefined) return problem;
  if (anchor === undefined) return undefined;
  walkSchema(schema, (node, pointer) => {
    if (problem === undefined && isNode(node) && pointer !== '#' && node['$id'] !== undefined)
      problem = `"$id" at "${pointer}": a schema with dynamic references may not hold nested "$id"s`;
  });
  return problem;
}
