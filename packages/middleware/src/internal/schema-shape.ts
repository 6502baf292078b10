// The eval-free validator's compile-time checks: what ajv refuses by validating a schema against its
// draft's meta-schema and by its strict mode, so a schema one validator refuses at build the other
// refuses too. ajv runs its own; this is the same list for the interpreter, without code generation.

import { knownFormats } from './formats';
import { firstDuplicate } from './schema-kernels';
import { KEYWORDS, ONLY_2020, isNode, walkSchema, type Draft, type SchemaNode } from './schema-words';

const SIMPLE_TYPES = new Set(['array', 'boolean', 'integer', 'null', 'number', 'object', 'string']);
const STRINGS = [
  ...['$id', '$ref', '$schema', '$comment', 'title', 'description', '$dynamicRef'],
  ...['contentMediaType', 'contentEncoding', 'format', 'pattern'],
];
const NUMBERS = ['maximum', 'minimum', 'exclusiveMaximum', 'exclusiveMinimum', 'multipleOf'];
const COUNTS = [
  ...['maxLength', 'minLength', 'maxItems', 'minItems', 'maxProperties', 'minProperties'],
  ...['maxContains', 'minContains'],
];
const BOOLEANS = ['readOnly', 'writeOnly', 'deprecated', 'uniqueItems', 'nullable'];
const SCHEMAS = [
  ...['not', 'if', 'then', 'else', 'additionalItems', 'contains', 'unevaluatedItems'],
  ...['additionalProperties', 'propertyNames', 'unevaluatedProperties'],
];
const SCHEMA_ARRAYS = ['allOf', 'anyOf', 'oneOf', 'prefixItems'];
const SCHEMA_MAPS = ['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas'];

const isSchema = (value: unknown): boolean => typeof value === 'boolean' || isNode(value);
const isCount = (value: unknown): boolean => Number.isInteger(value) && (value as number) >= 0;
const isNameList = (value: unknown): boolean =>
  Array.isArray(value) &&
  value.every((name) => typeof name === 'string') &&
  new Set(value).size === value.length;

// An anchor name as the 2020-12 meta-schema (and ajv) allow it.
const ANCHOR = /^[A-Za-z_][-A-Za-z0-9._]*$/;

/**
 * The meta-schemas ajv knows: a schema naming any other fails to compile under ajv. A schema naming
 * none is draft-07, unless it uses keywords only 2020-12 has (`$anchor`, `prefixItems`, …) and none
 * only draft-07 has: MCP's default dialect is 2020-12, and such a schema means it.
 */
export function draftOf(schema: SchemaNode): Draft {
  const declared = schema['$schema'];
  if (declared === undefined) return says2020(schema) ? '2020-12' : '7';
  if (
    declared === 'http://json-schema.org/draft-07/schema' ||
    declared === 'http://json-schema.org/draft-07/schema#'
  )
    return '7';
  if (declared === 'https://json-schema.org/draft/2020-12/schema') return '2020-12';
  throw new Error(
    `no schema with key or ref "${String(declared)}": the schema's "$schema" is not draft-07 or 2020-12`,
  );
}

function says2020(schema: SchemaNode): boolean {
  let newer = false;
  let older = false;
  walkSchema(schema, (node) => {
    if (!isNode(node)) return;
    for (const key of Object.keys(node)) newer ||= ONLY_2020.has(key);
    older ||= 'additionalItems' in node || Array.isArray(node['items']);
  });
  return newer && !older;
}

/** Throws, naming the place, on what ajv would refuse at compile (patterns: see auditSchema). */
export function assertSchemaShape(schema: SchemaNode, draft: Draft): void {
  walkSchema(schema, (node, at) => {
    if (!isNode(node)) return;
    const fail = (what: string): never => {
      throw new Error(`schema is invalid: ${at}${what}`);
    };
    for (const key of Object.keys(node)) {
      if (!KEYWORDS[draft].has(key)) throw new Error(`strict mode: unknown keyword: "${key}" at "${at}"`);
    }
    for (const key of STRINGS)
      if (key in node && typeof node[key] !== 'string') fail(`/${key} must be string`);
    for (const key of NUMBERS)
      if (key in node && typeof node[key] !== 'number') fail(`/${key} must be number`);
    for (const key of COUNTS) if (key in node && !isCount(node[key])) fail(`/${key} must be a count`);
    for (const key of BOOLEANS)
      if (key in node && typeof node[key] !== 'boolean') fail(`/${key} must be boolean`);
    for (const key of SCHEMAS) if (key in node && !isSchema(node[key])) fail(`/${key} must be a schema`);
    for (const key of SCHEMA_ARRAYS) {
      const list = node[key];
      if (list !== undefined && (!Array.isArray(list) || list.length === 0 || !list.every(isSchema)))
        fail(`/${key} must be a non-empty list of schemas`);
    }
    for (const key of SCHEMA_MAPS) {
      const map = node[key];
      if (map !== undefined && (!isNode(map) || !Object.values(map).every(isSchema)))
        fail(`/${key} must map names to schemas`);
    }
    if ('items' in node) {
      const items = node['items'];
      const list = draft === '7' && Array.isArray(items) && items.length > 0 && items.every(isSchema);
      if (!list && !isSchema(items)) fail('/items must be a schema');
    }
    if ('contentSchema' in node && draft === '2020-12' && !isSchema(node['contentSchema']))
      fail('/contentSchema must be a schema');
    if ('examples' in node && !Array.isArray(node['examples'])) fail('/examples must be array');
    for (const key of ['$anchor', '$dynamicAnchor'])
      if (key in node && (typeof node[key] !== 'string' || !ANCHOR.test(node[key] as string)))
        fail(`/${key} must be an anchor name (a letter or _, then letters, digits, -, _ or .)`);
    if ('multipleOf' in node && !((node['multipleOf'] as number) > 0)) fail('/multipleOf must be > 0');
    if ('enum' in node && (!Array.isArray(node['enum']) || node['enum'].length === 0))
      fail('/enum must be a non-empty array');
    if (Array.isArray(node['enum']) && firstDuplicate(node['enum']) !== undefined)
      fail('/enum must NOT have duplicate items');
    if ('required' in node && !isNameList(node['required'])) fail('/required must list distinct names');
    if ('type' in node) {
      const type = node['type'];
      const ok = Array.isArray(type)
        ? type.length > 0 && isNameList(type) && type.every((t) => SIMPLE_TYPES.has(t as string))
        : SIMPLE_TYPES.has(type as string);
      if (!ok) fail('/type must name JSON types');
    }
    for (const key of ['dependencies', 'dependentRequired']) {
      const map = node[key];
      if (map === undefined) continue;
      const entryOk = (v: unknown) => isNameList(v) || (key === 'dependencies' && isSchema(v));
      if (!isNode(map) || !Object.values(map).every(entryOk))
        fail(`/${key} must map names to ${key === 'dependencies' ? 'schemas or ' : ''}name lists`);
    }
    strictRules(node, at, draft);
  });
}

/** ajv's strict mode: keywords that would be silently ignored, and formats it does not know. */
function strictRules(node: SchemaNode, at: string, draft: Draft): void {
  const fail = (what: string): never => {
    throw new Error(`strict mode: ${what} at "${at}"`);
  };
  const format = node['format'];
  if (typeof format === 'string' && !Object.hasOwn(knownFormats(), format))
    throw new Error(`unknown format "${format}" ignored in schema at path "${at}"`);
  if ('if' in node && node['then'] === undefined && node['else'] === undefined)
    fail('"if" without "then" and "else" is ignored');
  for (const key of ['then', 'else'])
    if (key in node && node['if'] === undefined) fail(`"${key}" without "if" is ignored`);
  if (draft === '7' && 'additionalItems' in node && !Array.isArray(node['items']))
    fail('"additionalItems" is ignored when "items" is not an array of schemas');
  const type = node['type'];
  if (node['nullable'] === false && (type === 'null' || (Array.isArray(type) && type.includes('null'))))
    throw new Error('type: null contradicts nullable: false');
  if (node['nullable'] === true && node['type'] === undefined)
    throw new Error('"nullable" cannot be used without "type"');
  if (draft === '2020-12') {
    for (const key of ['minContains', 'maxContains'])
      if (key in node && node['contains'] === undefined) fail(`"${key}" without "contains" is ignored`);
    if ('contains' in node) {
      const min = node['minContains'];
      const max = node['maxContains'];
      if (min === 0 && max === undefined)
        fail('"minContains" == 0 without "maxContains": "contains" keyword ignored');
      if (typeof min === 'number' && typeof max === 'number' && min > max)
        fail('"minContains" > "maxContains" is always invalid');
    }
  }
}
