// A SchemaValidator for runtimes that forbid code generation (Cloudflare workerd, some edge hosts),
// where ajv cannot compile. It interprets schemas with @cfworker/json-schema and reports problems in
// ajv's words, so a model reads the same refusal whichever validator the chain uses.

import { Validator, format as knownFormats, type OutputUnit, type Schema } from '@cfworker/json-schema';
import type { ErrorObject } from 'ajv';
import type { JsonSchema } from '@toolgate/core';
import { compileLinear, type LinearRegExp } from './linear-regexp';
import { problemsOf, type SchemaValidator } from './validator';

export interface EvalFreeValidatorOptions {
  /** Apply `default` values from the schema to the args the tool receives; default true. */
  readonly useDefaults?: boolean;
}

const DRAFT_2020 = /json-schema\.org\/draft\/2020-12/;

// Keywords of draft-07 and 2020-12 that validate or annotate. Anything else fails at compile, as it
// does under ajv's strict mode, so a typo in a schema is found at dispatcher build, not ignored.
const KEYWORDS = new Set([
  ...[
    '$schema',
    '$id',
    '$ref',
    '$comment',
    '$defs',
    'definitions',
    '$anchor',
    '$dynamicRef',
    '$dynamicAnchor',
  ],
  ...['title', 'description', 'default', 'examples', 'readOnly', 'writeOnly', 'deprecated'],
  ...['contentMediaType', 'contentEncoding', 'contentSchema'],
  ...['type', 'enum', 'const', 'not', 'anyOf', 'oneOf', 'allOf', 'if', 'then', 'else'],
  ...['maximum', 'minimum', 'exclusiveMaximum', 'exclusiveMinimum', 'multipleOf'],
  ...['maxLength', 'minLength', 'pattern', 'format'],
  ...['maxItems', 'minItems', 'uniqueItems', 'items', 'prefixItems', 'additionalItems', 'contains'],
  ...['minContains', 'maxContains', 'unevaluatedItems'],
  ...['maxProperties', 'minProperties', 'required', 'properties', 'patternProperties'],
  ...['additionalProperties', 'propertyNames', 'dependencies', 'dependentRequired', 'dependentSchemas'],
  'unevaluatedProperties',
]);
// Keywords whose value is a map of names to subschemas, or a list of subschemas.
const SCHEMA_MAPS = new Set(['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas']);
const SCHEMA_LISTS = new Set(['anyOf', 'oneOf', 'allOf', 'prefixItems', 'items']);
const SCHEMA_VALUES = new Set([
  ...['not', 'if', 'then', 'else', 'items', 'additionalItems', 'contains', 'unevaluatedItems'],
  ...['additionalProperties', 'propertyNames', 'unevaluatedProperties', 'contentSchema'],
]);

type SchemaNode = Record<string, unknown>;
const isNode = (value: unknown): value is SchemaNode =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Calls `visit` on every subschema, with its location as a JSON pointer. */
function walk(schema: unknown, location: string, visit: (node: SchemaNode, location: string) => void): void {
  if (!isNode(schema)) return;
  visit(schema, location);
  for (const [key, value] of Object.entries(schema)) {
    const at = `${location}/${key}`;
    if (SCHEMA_MAPS.has(key) && isNode(value)) {
      for (const [name, sub] of Object.entries(value)) walk(sub, `${at}/${name}`, visit);
    } else if (SCHEMA_LISTS.has(key) && Array.isArray(value)) {
      value.forEach((sub, index) => walk(sub, `${at}/${index}`, visit));
    } else if (SCHEMA_VALUES.has(key)) {
      walk(value, at, visit);
    } else if (key === 'dependencies' && isNode(value)) {
      for (const [name, sub] of Object.entries(value)) walk(sub, `${at}/${name}`, visit);
    }
  }
}

/** Throws, as ajv's strict mode does, on what the interpreter would silently ignore. */
function assertStrict(schema: JsonSchema, linear: LinearPatterns): void {
  walk(schema, '#', (node, location) => {
    for (const key of Object.keys(node)) {
      if (!KEYWORDS.has(key)) throw new Error(`strict mode: unknown keyword: "${key}" at "${location}"`);
    }
    const format = node['format'];
    if (typeof format === 'string' && !Object.hasOwn(knownFormats, format)) {
      throw new Error(`unknown format "${format}" at "${location}"`);
    }
    if (typeof node['pattern'] === 'string') linear.add(node['pattern'], `${location}/pattern`);
    if (isNode(node['patternProperties'])) {
      for (const pattern of Object.keys(node['patternProperties']))
        linear.add(pattern, `${location}/patternProperties`);
    }
  });
}

/**
 * Schema patterns run on the linear-time engine, as under ajv. The interpreter builds its regexes
 * with the global `RegExp`, so for the span of one synchronous validation that constructor answers
 * with the schema's precompiled linear matchers.
 */
class LinearPatterns {
  private readonly compiled = new Map<string, LinearRegExp>();

  add(pattern: string, location: string): void {
    if (this.compiled.has(pattern)) return;
    try {
      this.compiled.set(pattern, compileLinear(pattern));
    } catch (error) {
      throw new Error(`at "${location}": ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  run<T>(validate: () => T): T {
    if (this.compiled.size === 0) return validate();
    const native = globalThis.RegExp;
    const compiled = this.compiled;
    // A stand-in constructor: schema patterns get their linear matcher; anything else (the `regex`
    // format checking a string) is compiled by the linear engine on the spot and never cached.
    const linear = function LinearRegExp(pattern: string) {
      return compiled.get(pattern) ?? compileLinear(String(pattern));
    } as unknown as RegExpConstructor;
    globalThis.RegExp = linear;
    try {
      return validate();
    } finally {
      globalThis.RegExp = native;
    }
  }
}

/** `#/a/b~1c` → `/a/b~1c`: ajv's instancePath form, pointer-escaped the same way. */
const instancePathOf = (location: string): string => location.slice(1);

function pointerGet(root: unknown, pointer: string): unknown {
  let node: unknown = root;
  for (const raw of pointer.replace(/^#\/?/, '').split('/')) {
    if (raw === '') continue;
    const key = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
    if (isNode(node) && key === '$ref' && typeof node['$ref'] === 'string' && node['$ref'].startsWith('#')) {
      node = pointerGet(root, node['$ref']);
      continue;
    }
    node = isNode(node) || Array.isArray(node) ? (node as Record<string, unknown>)[key] : undefined;
  }
  return node;
}

const quoted = (text: string, pattern: RegExp): string | undefined => pattern.exec(text)?.[1];

/**
 * One interpreter finding as the ajv ErrorObject ajv would have reported, so that one function turns
 * both validators' findings into the problems the model reads. Wrappers (`properties`, `$ref`, …)
 * carry no finding of their own and map to nothing.
 */
function asAjvError(
  unit: OutputUnit,
  schema: JsonSchema,
  nameOwners: ReadonlySet<string>,
): ErrorObject | undefined {
  const keywordValue = () => pointerGet(schema, unit.keywordLocation);
  const ownerPath = [...nameOwners].find((owner) => unit.keywordLocation.startsWith(`${owner}/`));
  // A property name checked by propertyNames is reported at the object, as ajv does, never as a path.
  const instancePath = instancePathOf(
    ownerPath === undefined ? unit.instanceLocation : unit.instanceLocation.replace(/\/[^/]*$/, ''),
  );
  const base = { keyword: unit.keyword, instancePath, schemaPath: unit.keywordLocation };
  const error = (params: Record<string, unknown>, message: string): ErrorObject => ({
    ...base,
    params,
    message,
  });
  const limit = String(keywordValue());
  switch (unit.keyword) {
    case 'type': {
      const type = keywordValue();
      return error({ type: Array.isArray(type) ? type.join(',') : String(type) }, `must be ${String(type)}`);
    }
    case 'required': {
      const missing = quoted(unit.error, /^Instance does not have required property "(.*)"\.$/s);
      return error({ missingProperty: missing }, `must have required property '${missing}'`);
    }
    case 'additionalProperties': {
      if (keywordValue() !== false) return undefined;
      const extra = quoted(unit.error, /^Property "(.*)" does not match additional properties schema\.$/s);
      return error({ additionalProperty: extra }, 'must NOT have additional properties');
    }
    case 'enum':
      return error({ allowedValues: keywordValue() }, 'must be equal to one of the allowed values');
    case 'const':
      return error({ allowedValue: keywordValue() }, 'must be equal to constant');
    case 'minimum':
      return error({ limit }, `must be >= ${limit}`);
    case 'maximum':
      return error({ limit }, `must be <= ${limit}`);
    case 'exclusiveMinimum':
      return error({ limit }, `must be > ${limit}`);
    case 'exclusiveMaximum':
      return error({ limit }, `must be < ${limit}`);
    case 'multipleOf':
      return error({ multipleOf: limit }, `must be multiple of ${limit}`);
    case 'minLength':
      return error({ limit }, `must NOT have fewer than ${limit} characters`);
    case 'maxLength':
      return error({ limit }, `must NOT have more than ${limit} characters`);
    case 'pattern':
      return error({ pattern: limit }, `must match pattern "${limit}"`);
    case 'format':
      return error({ format: limit }, `must match format "${limit}"`);
    case 'minItems':
      return error({ limit }, `must NOT have fewer than ${limit} items`);
    case 'maxItems':
      return error({ limit }, `must NOT have more than ${limit} items`);
    case 'minProperties':
      return error({ limit }, `must NOT have fewer than ${limit} properties`);
    case 'maxProperties':
      return error({ limit }, `must NOT have more than ${limit} properties`);
    case 'uniqueItems': {
      const [first, second] = [...unit.error.matchAll(/\d+/g)].map(Number).sort((a, b) => a - b);
      return error({}, `must NOT have duplicate items (items ## ${first} and ${second} are identical)`);
    }
    case 'not':
      return error({}, 'must NOT be valid');
    case 'anyOf':
      return error({}, 'must match a schema in anyOf');
    case 'oneOf':
      return error({}, 'must match exactly one schema in oneOf');
    case 'if': {
      const branch = quoted(unit.error, /"(then|else)"/) ?? 'then';
      return error({ failingKeyword: branch }, `must match "${branch}" schema`);
    }
    case 'propertyNames':
      return error({}, 'property name must be valid');
    case 'contains':
      return error({}, 'must contain at least 1 valid item(s)');
    case 'dependencies':
    case 'dependentRequired': {
      const [, property, missing] =
        /^Instance has "(.*)" but does not have "(.*)"\.$/s.exec(unit.error) ?? [];
      if (property === undefined) return undefined;
      const deps = pointerGet(
        schema,
        `${unit.keywordLocation}/${property.replace(/~/g, '~0').replace(/\//g, '~1')}`,
      );
      const list = Array.isArray(deps) ? deps.map(String) : [String(missing)];
      const noun = list.length === 1 ? 'property' : 'properties';
      return error({}, `must have ${noun} ${list.join(', ')} when property ${property} is present`);
    }
    case 'unevaluatedProperties':
      return error({}, 'must NOT have unevaluated properties');
    case 'unevaluatedItems':
    case 'additionalItems':
      return error({}, 'must NOT have more items than its schema lists');
    case 'false':
      return error({}, 'boolean schema is false');
    default:
      return undefined;
  }
}

// ajv's keyword order inside one schema object, where the interpreter's order differs.
const AJV_RANK: Readonly<Record<string, number>> = {
  additionalProperties: 1,
  dependencies: 2,
  dependentRequired: 2,
  dependentSchemas: 2,
  properties: 3,
  patternProperties: 4,
};

/** ajv reports a failed `then`/`else` branch before the `if` that chose it; the interpreter, after. */
function branchesBeforeIf(units: readonly OutputUnit[]): OutputUnit[] {
  const out: OutputUnit[] = [];
  for (let i = 0; i < units.length; i++) {
    const unit = units[i]!;
    if (unit.keyword !== 'if') {
      out.push(unit);
      continue;
    }
    const parent = unit.keywordLocation.slice(0, -'/if'.length);
    let end = i + 1;
    while (
      end < units.length &&
      /^\/(then|else)(\/|$)/.test(units[end]!.keywordLocation.slice(parent.length))
    )
      end++;
    out.push(...units.slice(i + 1, end), unit);
    i = end - 1;
  }
  return out;
}

/** Reorders the interpreter's findings into ajv's order: siblings by keyword rank, nested ones kept under their parent. */
function inAjvOrder(units: readonly OutputUnit[]): OutputUnit[] {
  const parentOf = (location: string) => location.slice(0, location.lastIndexOf('/'));
  const rank = (unit: OutputUnit) => AJV_RANK[unit.keyword] ?? 0;
  const blocks: OutputUnit[][] = [];
  for (const unit of units) {
    const last = blocks[blocks.length - 1];
    const head = last?.[0];
    if (head !== undefined && unit.keywordLocation.startsWith(`${head.keywordLocation}/`)) last!.push(unit);
    else blocks.push([unit]);
  }
  const ordered = blocks.map((block, index) => ({ block, index }));
  ordered.sort((a, b) => {
    const [x, y] = [a.block[0]!, b.block[0]!];
    if (parentOf(x.keywordLocation) !== parentOf(y.keywordLocation)) return a.index - b.index;
    return rank(x) - rank(y) || a.index - b.index;
  });
  return ordered.flatMap(({ block }) => [block[0]!, ...inAjvOrder(block.slice(1))]);
}

/** Applies `default`s where ajv does: in `properties` and `items`, not inside anyOf/oneOf/not/if. */
function applyDefaults(schema: unknown, data: unknown, root: JsonSchema): void {
  if (!isNode(schema)) return;
  if (typeof schema['$ref'] === 'string' && schema['$ref'].startsWith('#')) {
    applyDefaults(pointerGet(root, schema['$ref']), data, root);
  }
  if (Array.isArray(schema['allOf'])) for (const sub of schema['allOf']) applyDefaults(sub, data, root);
  if (isNode(data) && isNode(schema['properties'])) {
    for (const [name, sub] of Object.entries(schema['properties'])) {
      if (isNode(sub) && !Object.hasOwn(data, name) && 'default' in sub)
        data[name] = structuredClone(sub['default']);
      applyDefaults(sub, data[name], root);
    }
  }
  if (Array.isArray(data) && schema['items'] !== undefined) {
    const items = schema['items'];
    data.forEach((item, index) => applyDefaults(Array.isArray(items) ? items[index] : items, item, root));
  }
}

const hasDefaults = (schema: JsonSchema): boolean => {
  let found = false;
  walk(schema, '#', (node) => {
    found ||= 'default' in node;
  });
  return found;
};

/**
 * An eval-free SchemaValidator on @cfworker/json-schema (drafts 7 and 2020-12): no `new Function`,
 * so it runs where code generation is forbidden. Strict like the ajv default (unknown keywords and
 * formats fail at compile), patterns on a linear-time engine, and problems worded as ajv words them.
 */
export function evalFreeValidator(options: EvalFreeValidatorOptions = {}): SchemaValidator {
  const useDefaults = options.useDefaults ?? true;
  return {
    compile(schema) {
      const linear = new LinearPatterns();
      assertStrict(schema, linear);
      const draft =
        typeof schema['$schema'] === 'string' && DRAFT_2020.test(schema['$schema']) ? '2020-12' : '7';
      const validator = new Validator(schema as Schema, draft, false);
      const nameOwners = new Set<string>();
      walk(schema, '#', (node, location) => {
        if (node['propertyNames'] !== undefined) nameOwners.add(`${location}/propertyNames`);
      });
      const cloneFirst = useDefaults && hasDefaults(schema);
      return (args) => {
        const data = cloneFirst ? structuredClone(args) : args;
        if (cloneFirst) applyDefaults(schema, data, schema);
        const { valid, errors } = linear.run(() => validator.validate(data));
        if (valid)
          return cloneFirst ? { valid: true, value: data as Record<string, unknown> } : { valid: true };
        // `additionalProperties: false` also reports the property's own `false` schema; ajv reports it once.
        const findings = errors.filter(
          (unit, i) => !(unit.keyword === 'false' && errors[i - 1]?.keyword === 'additionalProperties'),
        );
        const ajvErrors = inAjvOrder(branchesBeforeIf(findings)).flatMap(
          (unit) => asAjvError(unit, schema, nameOwners) ?? [],
        );
        return { valid: false, problems: problemsOf(ajvErrors) };
      };
    },
  };
}
