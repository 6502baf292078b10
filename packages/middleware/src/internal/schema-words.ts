// What both validators agree a schema may say: the keywords of each draft, and where subschemas sit.
// One list, read by the audit both validators run and by the eval-free interpreter.

export type Draft = '7' | '2020-12';

const COMMON = [
  ...['$schema', '$id', '$ref', '$comment', '$defs', 'definitions'],
  ...['title', 'description', 'default', 'examples', 'readOnly', 'writeOnly', 'deprecated'],
  ...['contentMediaType', 'contentEncoding', 'contentSchema', 'nullable'],
  ...['type', 'enum', 'const', 'not', 'anyOf', 'oneOf', 'allOf', 'if', 'then', 'else'],
  ...['maximum', 'minimum', 'exclusiveMaximum', 'exclusiveMinimum', 'multipleOf'],
  ...['maxLength', 'minLength', 'pattern', 'format'],
  ...['maxItems', 'minItems', 'uniqueItems', 'items', 'contains'],
  ...['maxProperties', 'minProperties', 'required', 'properties', 'patternProperties'],
  ...['additionalProperties', 'propertyNames', 'dependencies'],
  // An annotation (MCP SEP-2243): the argument is mirrored into an Mcp-Param-* header; it validates nothing.
  'x-mcp-header',
];

/** The keywords each draft accepts; anything else fails at compile, as under ajv's strict mode. */
export const KEYWORDS: Readonly<Record<Draft, ReadonlySet<string>>> = {
  '7': new Set([...COMMON, 'additionalItems']),
  '2020-12': new Set([
    ...COMMON,
    ...['prefixItems', 'minContains', 'maxContains', 'unevaluatedItems'],
    ...['dependentRequired', 'dependentSchemas', 'unevaluatedProperties'],
    ...['$anchor', '$dynamicAnchor', '$dynamicRef'],
  ]),
};

/** Keywords only 2020-12 has: a schema naming no `$schema` that uses them is read as 2020-12. */
export const ONLY_2020: ReadonlySet<string> = new Set(
  [...KEYWORDS['2020-12']].filter((key) => !KEYWORDS['7'].has(key)),
);

/** Keywords a target that holds them is called with, not inlined (ajv's REF_KEYWORDS). */
export const REFERENCE_KEYWORDS: ReadonlySet<string> = new Set(['$ref', '$dynamicRef', '$dynamicAnchor']);

/** Keywords that validate (ajv's rules): a schema with none of them accepts everything. */
export const RULE_KEYWORDS: ReadonlySet<string> = new Set([
  ...['$ref', '$comment', 'type', 'nullable', 'const', 'enum', 'not', 'anyOf', 'oneOf', 'allOf'],
  ...['if', 'then', 'else', 'maximum', 'minimum', 'exclusiveMaximum', 'exclusiveMinimum', 'multipleOf'],
  ...['format', 'maxLength', 'minLength', 'pattern', 'maxItems', 'minItems', 'additionalItems'],
  ...['prefixItems', 'items', 'contains', 'uniqueItems', 'maxContains', 'minContains', 'unevaluatedItems'],
  ...['maxProperties', 'minProperties', 'required', 'propertyNames', 'additionalProperties'],
  ...['dependencies', 'properties', 'patternProperties', 'dependentRequired', 'dependentSchemas'],
  ...['unevaluatedProperties', '$dynamicRef'],
]);

/** Keywords whose value is one subschema. */
export const SCHEMA_VALUES: ReadonlySet<string> = new Set([
  ...['not', 'if', 'then', 'else', 'additionalItems', 'contains', 'unevaluatedItems'],
  ...['additionalProperties', 'propertyNames', 'unevaluatedProperties'],
]);
/** Keywords whose value is a list of subschemas (`items` may also be one subschema). */
export const SCHEMA_LISTS: ReadonlySet<string> = new Set(['allOf', 'anyOf', 'oneOf', 'prefixItems', 'items']);
/** Keywords whose value maps names to subschemas (`dependencies` also maps names to name lists). */
export const SCHEMA_MAPS: ReadonlySet<string> = new Set([
  ...['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas', 'dependencies'],
]);

export type SchemaNode = Record<string, unknown>;
export const isNode = (value: unknown): value is SchemaNode =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Every subschema of `schema`, with its JSON pointer (`#/properties/a`), the root first. */
export function walkSchema(
  schema: unknown,
  visit: (node: SchemaNode | boolean, pointer: string) => void,
  pointer = '#',
): void {
  if (typeof schema === 'boolean') visit(schema, pointer);
  if (!isNode(schema)) return;
  visit(schema, pointer);
  for (const [key, value] of Object.entries(schema)) {
    const at = `${pointer}/${escapePointer(key)}`;
    if (SCHEMA_VALUES.has(key) || (key === 'items' && !Array.isArray(value))) {
      walkSchema(value, visit, at);
    } else if (SCHEMA_LISTS.has(key) && Array.isArray(value)) {
      value.forEach((sub, index) => walkSchema(sub, visit, `${at}/${index}`));
    } else if (SCHEMA_MAPS.has(key) && isNode(value)) {
      for (const [name, sub] of Object.entries(value)) {
        if (key === 'dependencies' && Array.isArray(sub)) continue;
        walkSchema(sub, visit, `${at}/${escapePointer(name)}`);
      }
    }
  }
}

export const escapePointer = (segment: string): string => segment.replace(/~/g, '~0').replace(/\//g, '~1');

const unescapePointer = (segment: string): string => segment.replace(/~1/g, '/').replace(/~0/g, '~');

/**
 * Whether a `$ref` fragment pointer (`/$defs/a`, already URI-decoded) names a subschema: every step
 * must go through a keyword that holds subschemas. A pointer into `title`, `enum`, `default` or a
 * `properties` map itself names data, not a schema.
 */
export function pointsAtSchema(pointer: string): boolean {
  if (pointer === '') return true;
  if (!pointer.startsWith('/')) return false;
  const steps = pointer.slice(1).split('/').map(unescapePointer);
  let i = 0;
  while (i < steps.length) {
    const keyword = steps[i]!;
    if (SCHEMA_VALUES.has(keyword)) i += 1;
    else if (SCHEMA_LISTS.has(keyword) || SCHEMA_MAPS.has(keyword)) {
      // `items` as one schema is `/items`; as a list, `/items/0`. A list index is digits.
      if (keyword === 'items' && (i + 1 === steps.length || !/^(0|[1-9][0-9]*)$/.test(steps[i + 1]!))) i += 1;
      else if (i + 1 < steps.length) i += 2;
      else return false;
    } else return false;
  }
  return true;
}
