// The eval-free validator's interpreter. It walks a schema the way ajv's generated code does (allErrors,
// ownProperties): the same keywords in the same order, the same error objects, so one function turns
// both validators' findings into the problems a model reads. Patterns run on the linear-time engine,
// formats from the shared table, multipleOf and uniqueItems by the shared kernels: nothing here can
// run longer than linear in the args for a schema that compiled.

import type { ErrorObject } from 'ajv';
import { compileLinear, type LinearRegExp } from '../linear-regexp';
import { knownFormats } from './formats';
import { duplicateItemsMessage, firstDuplicate, isMultipleOf } from './schema-kernels';
import {
  REFERENCE_KEYWORDS,
  RULE_KEYWORDS,
  escapePointer,
  isNode,
  type Draft,
  type SchemaNode,
} from './schema-words';

export interface Program {
  readonly root: SchemaNode | boolean;
  readonly draft: Draft;
  /** Each `$ref` node's target, resolved at compile. */
  readonly refs: ReadonlyMap<SchemaNode, SchemaNode | boolean>;
  readonly patterns: Map<string, LinearRegExp>;
  /** Write `default`s into the value where ajv's useDefaults does (the caller passes a copy). */
  readonly useDefaults: boolean;
}

/** Which properties and items a schema looked at, for unevaluatedProperties/unevaluatedItems. */
interface Seen {
  props: Set<string> | true;
  items: number | true;
}

const NUMBER_KEYWORDS = [
  'maximum',
  'minimum',
  'exclusiveMaximum',
  'exclusiveMinimum',
  'multipleOf',
  'format',
];
const STRING_KEYWORDS = ['maxLength', 'minLength', 'pattern', 'format'];
const ARRAY_KEYWORDS = [
  ...['maxItems', 'minItems', 'additionalItems', 'prefixItems', 'items', 'contains', 'uniqueItems'],
  ...['maxContains', 'minContains', 'unevaluatedItems'],
];
const OBJECT_KEYWORDS = [
  ...['maxProperties', 'minProperties', 'required', 'propertyNames', 'additionalProperties'],
  ...['dependencies', 'properties', 'patternProperties', 'dependentRequired', 'dependentSchemas'],
  'unevaluatedProperties',
];
const GROUPS: Readonly<Record<string, readonly string[]>> = {
  number: NUMBER_KEYWORDS,
  string: STRING_KEYWORDS,
  array: ARRAY_KEYWORDS,
  object: OBJECT_KEYWORDS,
};

const hasOwn = (data: object, key: string): boolean =>
  Object.hasOwn(data, key) && (data as Record<string, unknown>)[key] !== undefined;

/** A schema that accepts everything without looking: `true`, `{}`, or annotations only. */
export function alwaysValid(schema: unknown): boolean {
  if (typeof schema === 'boolean') return schema;
  return isNode(schema) && !Object.keys(schema).some((key) => RULE_KEYWORDS.has(key));
}

/** ajv's schema properties: `__proto__` is never one. */
const ownNames = (map: unknown): string[] =>
  isNode(map) ? Object.keys(map).filter((name) => name !== '__proto__') : [];

/** Whether a schema contains a reference anywhere (ajv inlines a referenced schema only when not). */
function hasRef(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return false;
  for (const [key, sub] of Object.entries(value)) {
    if (REFERENCE_KEYWORDS.has(key)) return true;
    if (hasRef(sub)) return true;
  }
  return false;
}

function typeOf(data: unknown): string {
  if (data === null) return 'null';
  if (Array.isArray(data)) return 'array';
  return typeof data;
}

function hasType(type: string, data: unknown): boolean {
  switch (type) {
    case 'integer':
      return typeof data === 'number' && Number.isInteger(data);
    case 'number':
      return typeof data === 'number' && Number.isFinite(data);
    default:
      return typeOf(data) === type;
  }
}

/** JSON equality, as ajv's deep-equal: key order never matters. */
function equal(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const other = b as unknown[];
    return a.length === other.length && a.every((item, i) => equal(item, other[i]));
  }
  const left = Object.keys(a);
  const right = b as Record<string, unknown>;
  return (
    left.length === Object.keys(right).length &&
    left.every((key) => Object.hasOwn(right, key) && equal((a as Record<string, unknown>)[key], right[key]))
  );
}

/** Code points, as ajv counts a string's length. */
function length(text: string): number {
  let count = 0;
  for (let i = 0; i < text.length; i++) {
    count++;
    const code = text.charCodeAt(i);
    if (code >= 0xd800 && code <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) i++;
    }
  }
  return count;
}

/** What `check` reads of a node's type keywords, worked out once per node. */
interface Shape {
  readonly onlyRef: boolean;
  readonly checked: readonly string[];
  readonly single: string | undefined;
  readonly deferred: boolean;
  readonly named: string;
}

const shapes = new WeakMap<SchemaNode, Shape>();

function shapeOf(schema: SchemaNode): Shape {
  let shape = shapes.get(schema);
  if (shape !== undefined) return shape;
  const onlyRef = '$ref' in schema && !Object.keys(schema).some((k) => k !== '$ref' && RULE_KEYWORDS.has(k));
  const declared = schema['type'];
  const types =
    declared === undefined ? [] : Array.isArray(declared) ? (declared as string[]) : [declared as string];
  const checked = schema['nullable'] === true && !types.includes('null') ? [...types, 'null'] : types;
  const single = checked.length === 1 ? checked[0]! : undefined;
  shape = {
    onlyRef,
    checked,
    single,
    // ajv checks a single type inside its keyword group when the schema has keywords of that group.
    deferred: single !== undefined && (GROUPS[single] ?? []).some((k) => schema[k] !== undefined),
    // ajv adds 'null' to a nullable type list in place, so its words name null only for a list.
    named: Array.isArray(declared) ? checked.join(',') : String(declared),
  };
  shapes.set(schema, shape);
  return shape;
}

class Run {
  readonly errors: ErrorObject[] = [];
  /** Inside anyOf/oneOf/not/if/contains/propertyNames, where ajv applies no defaults. */
  private composite = false;

  constructor(private readonly program: Program) {}

  /** Runs `body` with `composite` set as ajv's compositeRule would be. */
  private within<T>(composite: boolean, body: () => T): T {
    const outer = this.composite;
    this.composite = composite;
    try {
      return body();
    } finally {
      this.composite = outer;
    }
  }

  /** ajv's useDefaults, at the start of a keyword group: only where the value is still undefined. */
  private defaults(schema: SchemaNode, data: unknown): void {
    if (!this.program.useDefaults || this.composite) return;
    const properties = schema['properties'];
    if (typeOf(data) === 'object' && isNode(properties)) {
      const target = data as Record<string, unknown>;
      for (const [name, sub] of Object.entries(properties)) {
        if (isNode(sub) && sub['default'] !== undefined && target[name] === undefined)
          target[name] = structuredClone(sub['default']);
      }
    }
    const items = schema['items'];
    if (Array.isArray(data) && Array.isArray(items)) {
      items.forEach((sub, i) => {
        if (isNode(sub) && sub['default'] !== undefined && data[i] === undefined)
          data[i] = structuredClone(sub['default']);
      });
    }
  }

  private matcher(source: string): LinearRegExp {
    let compiled = this.program.patterns.get(source);
    if (compiled === undefined) {
      compiled = compileLinear(source);
      this.program.patterns.set(source, compiled);
    }
    return compiled;
  }

  private fail(
    keyword: string,
    instancePath: string,
    schemaPath: string,
    params: Record<string, unknown>,
    message: string,
    extra: Partial<ErrorObject> = {},
  ): false {
    this.errors.push({ keyword, instancePath, schemaPath, params, message, ...extra } as ErrorObject);
    return false;
  }

  /** Validates `data` against `schema`; returns whether it holds, pushing ajv-shaped errors. */
  check(schema: unknown, data: unknown, path: string, at: string, seen: Seen, name?: string): boolean {
    if (schema === true) return true;
    if (!isNode(schema)) {
      return this.fail('false schema', path, at, {}, 'boolean schema is false', nameOf(name));
    }
    const before = this.errors.length;
    const { onlyRef, checked, single, deferred, named } = shapeOf(schema);
    if (onlyRef) return this.ref(schema, data, path, seen, name);
    const typeError = () =>
      this.fail('type', path, `${at}/type`, { type: named }, `must be ${named}`, nameOf(name));
    if (checked.length > 0 && !deferred && !checked.some((t) => hasType(t, data))) typeError();

    this.untyped(schema, data, path, at, seen, name);
    if (hasType('number', data)) this.number(schema, data as number, path, at, name);
    else if (deferred && single === 'number') typeError();
    if (typeof data === 'string') this.string(schema, data, path, at, name);
    else if (deferred && single === 'string') typeError();
    if (Array.isArray(data)) {
      this.defaults(schema, data);
      this.array(schema, data, path, at, seen);
    } else if (deferred && single === 'array') typeError();
    if (typeOf(data) === 'object') {
      this.defaults(schema, data);
      this.object(schema, data as Record<string, unknown>, path, at, seen);
    } else if (deferred && single === 'object') typeError();
    return this.errors.length === before;
  }

  /** Validates in a scratch run whose errors are dropped (not, if). */
  private quietly(
    schema: unknown,
    data: unknown,
    path: string,
    at: string,
    seen: Seen,
    name?: string,
  ): boolean {
    const run = new Run(this.program);
    return run.within(true, () => run.check(schema, data, path, at, seen, name));
  }

  private ref(schema: SchemaNode, data: unknown, path: string, seen: Seen, name?: string): boolean {
    const target = this.program.refs.get(schema)!;
    // ajv inlines a target without references (its errors keep the $ref as their schema path) and
    // calls any other as a function of its own (schema paths from "#").
    // A called target is compiled on its own, outside any composite rule.
    // Its annotations count (for unevaluated*) only when it holds, as ajv merges a call's on success.
    if (hasRef(target)) {
      const own = fresh();
      const ok = this.within(false, () => this.check(target, data, path, '#', own, name));
      if (ok) merge(seen, own);
      return ok;
    }
    return this.check(target, data, path, String(schema['$ref']), seen, name);
  }

  private untyped(
    schema: SchemaNode,
    data: unknown,
    path: string,
    at: string,
    seen: Seen,
    name?: string,
  ): void {
    const named = nameOf(name);
    // ajv's 2020-12 vocabularies start with the dynamic one, before the core's $ref.
    if ('$dynamicRef' in schema) this.ref(schema, data, path, seen, name);
    if ('$ref' in schema) this.ref(schema, data, path, seen, name);
    if ('const' in schema && !equal(data, schema['const'])) {
      this.fail(
        'const',
        path,
        `${at}/const`,
        { allowedValue: schema['const'] },
        'must be equal to constant',
        named,
      );
    }
    if (Array.isArray(schema['enum']) && !schema['enum'].some((v) => equal(data, v))) {
      const allowedValues = schema['enum'];
      this.fail(
        'enum',
        path,
        `${at}/enum`,
        { allowedValues },
        'must be equal to one of the allowed values',
        named,
      );
    }
    if ('not' in schema) {
      const sub = schema['not'];
      if (alwaysValid(sub) || this.quietly(sub, data, path, `${at}/not`, fresh(), name))
        this.fail('not', path, `${at}/not`, {}, 'must NOT be valid', named);
    }
    if (Array.isArray(schema['anyOf']) && !schema['anyOf'].some(alwaysValid)) {
      const start = this.errors.length;
      let valid = false;
      schema['anyOf'].forEach((sub, i) => {
        if (valid) return;
        const branch = fresh();
        if (this.within(true, () => this.check(sub, data, path, `${at}/anyOf/${i}`, branch, name))) {
          valid = true;
          merge(seen, branch);
        }
      });
      if (valid) this.errors.length = start;
      else this.fail('anyOf', path, `${at}/anyOf`, {}, 'must match a schema in anyOf', named);
    }
    if (Array.isArray(schema['oneOf'])) {
      const start = this.errors.length;
      let valid = false;
      let passing: number | number[] | null = null;
      // ajv stops at the second passing branch: later branches are not even looked at.
      const branches = schema['oneOf'];
      for (let i = 0; i < branches.length; i++) {
        const branch = fresh();
        const sub = branches[i];
        const ok =
          alwaysValid(sub) ||
          this.within(true, () => this.check(sub, data, path, `${at}/oneOf/${i}`, branch, name));
        if (i > 0 && ok && valid) {
          valid = false;
          passing = [passing as number, i];
          break;
        }
        if (ok) {
          valid = true;
          passing = i;
          merge(seen, branch);
        }
      }
      if (valid) this.errors.length = start;
      else
        this.fail(
          'oneOf',
          path,
          `${at}/oneOf`,
          { passingSchemas: passing },
          'must match exactly one schema in oneOf',
          named,
        );
    }
    if (Array.isArray(schema['allOf'])) {
      schema['allOf'].forEach((sub, i) => {
        if (!alwaysValid(sub)) this.check(sub, data, path, `${at}/allOf/${i}`, seen, name);
        else merge(seen, fresh());
      });
    }
    if ('if' in schema) this.condition(schema, data, path, at, seen, name);
  }

  private condition(
    schema: SchemaNode,
    data: unknown,
    path: string,
    at: string,
    seen: Seen,
    name?: string,
  ): void {
    const useful = (key: string) => schema[key] !== undefined && !alwaysValid(schema[key]);
    if (!useful('then') && !useful('else')) return;
    const branch = fresh();
    const holds = this.quietly(schema['if'], data, path, `${at}/if`, branch, name);
    if (holds) merge(seen, branch);
    const clause = holds ? 'then' : 'else';
    if (!useful(clause)) return;
    const own = fresh();
    if (this.check(schema[clause], data, path, `${at}/${clause}`, own, name)) merge(seen, own);
    else {
      this.fail(
        'if',
        path,
        `${at}/if`,
        { failingKeyword: clause },
        `must match "${clause}" schema`,
        nameOf(name),
      );
    }
  }

  private number(schema: SchemaNode, data: number, path: string, at: string, name?: string): void {
    const named = nameOf(name);
    const limits: ReadonlyArray<readonly [string, string, (limit: number) => boolean]> = [
      ['maximum', '<=', (limit) => data <= limit],
      ['minimum', '>=', (limit) => data >= limit],
      ['exclusiveMaximum', '<', (limit) => data < limit],
      ['exclusiveMinimum', '>', (limit) => data > limit],
    ];
    for (const [keyword, comparison, holds] of limits) {
      const limit = schema[keyword];
      if (typeof limit === 'number' && !holds(limit))
        this.fail(
          keyword,
          path,
          `${at}/${keyword}`,
          { comparison, limit },
          `must be ${comparison} ${limit}`,
          named,
        );
    }
    const divisor = schema['multipleOf'];
    if (typeof divisor === 'number' && !isMultipleOf(data, divisor)) {
      this.fail(
        'multipleOf',
        path,
        `${at}/multipleOf`,
        { multipleOf: divisor },
        `must be multiple of ${divisor}`,
        named,
      );
    }
    this.format(schema, 'number', data as never, path, at, name);
  }

  private string(schema: SchemaNode, data: string, path: string, at: string, name?: string): void {
    const named = nameOf(name);
    const max = schema['maxLength'];
    const min = schema['minLength'];
    const size = max === undefined && min === undefined ? 0 : length(data);
    if (typeof max === 'number' && size > max)
      this.fail(
        'maxLength',
        path,
        `${at}/maxLength`,
        { limit: max },
        `must NOT have more than ${max} characters`,
        named,
      );
    if (typeof min === 'number' && size < min)
      this.fail(
        'minLength',
        path,
        `${at}/minLength`,
        { limit: min },
        `must NOT have fewer than ${min} characters`,
        named,
      );
    const pattern = schema['pattern'];
    if (typeof pattern === 'string' && !this.matcher(pattern).test(data))
      this.fail('pattern', path, `${at}/pattern`, { pattern }, `must match pattern "${pattern}"`, named);
    this.format(schema, 'string', data as never, path, at, name);
  }

  private format(
    schema: SchemaNode,
    type: 'string' | 'number',
    data: never,
    path: string,
    at: string,
    name?: string,
  ): void {
    const format = schema['format'];
    if (typeof format !== 'string') return;
    const check = knownFormats()[format];
    if (check === undefined || check.type !== type || check.validate(data)) return;
    this.fail('format', path, `${at}/format`, { format }, `must match format "${format}"`, nameOf(name));
  }

  private array(schema: SchemaNode, data: unknown[], path: string, at: string, seen: Seen): void {
    const maxItems = schema['maxItems'];
    const minItems = schema['minItems'];
    if (typeof maxItems === 'number' && data.length > maxItems)
      this.fail(
        'maxItems',
        path,
        `${at}/maxItems`,
        { limit: maxItems },
        `must NOT have more than ${maxItems} items`,
      );
    if (typeof minItems === 'number' && data.length < minItems)
      this.fail(
        'minItems',
        path,
        `${at}/minItems`,
        { limit: minItems },
        `must NOT have fewer than ${minItems} items`,
      );
    const items = schema['items'];
    const item = (sub: unknown, i: number, keyword: string) =>
      this.check(sub, data[i], `${path}/${i}`, keyword, fresh());
    let covered = 0;
    if (this.program.draft === '7') {
      if (Array.isArray(items)) {
        const extra = schema['additionalItems'];
        if (extra === false && data.length > items.length) {
          this.fail(
            'additionalItems',
            path,
            `${at}/additionalItems`,
            { limit: items.length },
            `must NOT have more than ${items.length} items`,
          );
        } else if (extra !== undefined && !alwaysValid(extra)) {
          for (let i = items.length; i < data.length; i++) item(extra, i, `${at}/additionalItems`);
        }
        if (extra !== undefined) covered = data.length;
        items.forEach((sub, i) => {
          if (i < data.length && !alwaysValid(sub)) item(sub, i, `${at}/items/${i}`);
        });
        covered = Math.max(covered, Math.min(items.length, data.length));
      } else if (items !== undefined) {
        if (!alwaysValid(items)) data.forEach((_, i) => item(items, i, `${at}/items`));
        covered = data.length;
      }
    } else {
      const prefix = Array.isArray(schema['prefixItems']) ? schema['prefixItems'] : [];
      prefix.forEach((sub, i) => {
        if (i < data.length && !alwaysValid(sub)) item(sub, i, `${at}/prefixItems/${i}`);
      });
      covered = Math.min(prefix.length, data.length);
      if (items !== undefined) {
        if (items === false && prefix.length > 0) {
          if (data.length > prefix.length)
            this.fail(
              'items',
              path,
              `${at}/items`,
              { limit: prefix.length },
              `must NOT have more than ${prefix.length} items`,
            );
        } else if (!alwaysValid(items)) {
          for (let i = prefix.length; i < data.length; i++) item(items, i, `${at}/items`);
        }
        covered = data.length;
      }
    }
    seen.items = seen.items === true || covered === data.length ? true : Math.max(seen.items, covered);
    if ('contains' in schema) this.contains(schema, data, path, at, seen);
    if (schema['uniqueItems'] === true) {
      const duplicate = firstDuplicate(data);
      if (duplicate !== undefined) {
        const [i, j] = duplicate;
        this.fail('uniqueItems', path, `${at}/uniqueItems`, { i, j }, duplicateItemsMessage(i, j));
      }
    }
    const unevaluated = schema['unevaluatedItems'];
    if (unevaluated !== undefined && seen.items !== true) {
      const from = seen.items;
      if (unevaluated === false) {
        if (data.length > from)
          this.fail(
            'unevaluatedItems',
            path,
            `${at}/unevaluatedItems`,
            { limit: from },
            `must NOT have more than ${from} items`,
          );
      } else {
        for (let i = from; i < data.length; i++) item(unevaluated, i, `${at}/unevaluatedItems`);
      }
      seen.items = true;
    }
  }

  private contains(schema: SchemaNode, data: unknown[], path: string, at: string, seen: Seen): void {
    const sub = schema['contains'];
    const min = this.program.draft === '7' ? 1 : ((schema['minContains'] as number | undefined) ?? 1);
    const max = this.program.draft === '7' ? undefined : (schema['maxContains'] as number | undefined);
    const words =
      max === undefined
        ? `must contain at least ${min} valid item(s)`
        : `must contain at least ${min} and no more than ${max} valid item(s)`;
    const params = max === undefined ? { minContains: min } : { minContains: min, maxContains: max };
    const start = this.errors.length;
    let valid: boolean;
    if (alwaysValid(sub)) {
      valid = data.length >= min && (max === undefined || data.length <= max);
    } else if (max === undefined && min === 1) {
      valid = false;
      for (let i = 0; i < data.length && !valid; i++) {
        if (this.within(true, () => this.check(sub, data[i], `${path}/${i}`, `${at}/contains`, fresh()))) {
          valid = true;
          markItem(seen, i);
        }
      }
    } else {
      valid = min === 0;
      let count = 0;
      if (min !== 0 || (max !== undefined && data.length > 0)) {
        for (let i = 0; i < data.length; i++) {
          if (!this.within(true, () => this.check(sub, data[i], `${path}/${i}`, `${at}/contains`, fresh())))
            continue;
          markItem(seen, i);
          count++;
          if (max === undefined) {
            if (count >= min) {
              valid = true;
              break;
            }
          } else {
            if (count > max) {
              valid = false;
              break;
            }
            if (count >= min) valid = true;
          }
        }
      }
    }
    if (valid) this.errors.length = start;
    else this.fail('contains', path, `${at}/contains`, params, words);
  }

  private object(
    schema: SchemaNode,
    data: Record<string, unknown>,
    path: string,
    at: string,
    seen: Seen,
  ): void {
    const keys = Object.keys(data);
    const maxProperties = schema['maxProperties'];
    const minProperties = schema['minProperties'];
    if (typeof maxProperties === 'number' && keys.length > maxProperties)
      this.fail(
        'maxProperties',
        path,
        `${at}/maxProperties`,
        { limit: maxProperties },
        `must NOT have more than ${maxProperties} properties`,
      );
    if (typeof minProperties === 'number' && keys.length < minProperties)
      this.fail(
        'minProperties',
        path,
        `${at}/minProperties`,
        { limit: minProperties },
        `must NOT have fewer than ${minProperties} properties`,
      );
    if (Array.isArray(schema['required'])) {
      for (const missingProperty of schema['required'] as string[]) {
        if (!hasOwn(data, missingProperty))
          this.fail(
            'required',
            path,
            `${at}/required`,
            { missingProperty },
            `must have required property '${missingProperty}'`,
          );
      }
    }
    const names = schema['propertyNames'];
    if (names !== undefined && !alwaysValid(names)) {
      for (const key of keys) {
        if (!this.within(true, () => this.check(names, key, path, `${at}/propertyNames`, fresh(), key)))
          this.fail(
            'propertyNames',
            path,
            `${at}/propertyNames`,
            { propertyName: key },
            'property name must be valid',
          );
      }
    }
    const properties = ownNames(schema['properties']);
    const patterns = ownNames(schema['patternProperties']).map(
      (source) => [source, this.matcher(source)] as const,
    );
    const additional = schema['additionalProperties'];
    if (additional !== undefined) {
      for (const key of keys) {
        if (properties.includes(key) || patterns.some(([, regex]) => regex.test(key))) continue;
        if (additional === false) {
          this.fail(
            'additionalProperties',
            path,
            `${at}/additionalProperties`,
            { additionalProperty: key },
            'must NOT have additional properties',
          );
        } else if (!alwaysValid(additional)) {
          this.check(
            additional,
            data[key],
            `${path}/${escapePointer(key)}`,
            `${at}/additionalProperties`,
            fresh(),
          );
        }
      }
    }
    if (additional !== undefined) seen.props = true;
    this.dependencies(schema, data, path, at, seen);
    const map = schema['properties'] as Record<string, unknown> | undefined;
    for (const name of properties) {
      if (!hasOwn(data, name)) continue;
      markProp(seen, name);
      if (!alwaysValid(map![name]))
        this.check(
          map![name],
          data[name],
          `${path}/${escapePointer(name)}`,
          `${at}/properties/${escapePointer(name)}`,
          fresh(),
        );
    }
    const patternMap = schema['patternProperties'] as Record<string, unknown> | undefined;
    for (const [source, regex] of patterns) {
      for (const key of keys) {
        if (!regex.test(key)) continue;
        markProp(seen, key);
        if (!alwaysValid(patternMap![source]))
          this.check(
            patternMap![source],
            data[key],
            `${path}/${escapePointer(key)}`,
            `${at}/patternProperties/${escapePointer(source)}`,
            fresh(),
          );
      }
    }
    if ('dependentRequired' in schema)
      this.propertyDependencies(
        schema['dependentRequired'],
        data,
        path,
        `${at}/dependentRequired`,
        'dependentRequired',
      );
    if (isNode(schema['dependentSchemas']))
      this.schemaDependencies(schema['dependentSchemas'], data, path, `${at}/dependentSchemas`, seen);
    const unevaluated = schema['unevaluatedProperties'];
    if (unevaluated !== undefined && seen.props !== true) {
      const evaluated = seen.props;
      for (const key of keys) {
        if (evaluated.has(key)) continue;
        if (unevaluated === false) {
          this.fail(
            'unevaluatedProperties',
            path,
            `${at}/unevaluatedProperties`,
            { unevaluatedProperty: key },
            'must NOT have unevaluated properties',
          );
        } else {
          this.check(
            unevaluated,
            data[key],
            `${path}/${escapePointer(key)}`,
            `${at}/unevaluatedProperties`,
            fresh(),
          );
        }
      }
      seen.props = true;
    }
  }

  private dependencies(
    schema: SchemaNode,
    data: Record<string, unknown>,
    path: string,
    at: string,
    seen: Seen,
  ): void {
    const deps = schema['dependencies'];
    if (!isNode(deps)) return;
    const lists = Object.fromEntries(Object.entries(deps).filter(([, v]) => Array.isArray(v)));
    const schemas = Object.fromEntries(Object.entries(deps).filter(([, v]) => !Array.isArray(v)));
    this.propertyDependencies(lists, data, path, `${at}/dependencies`, 'dependencies');
    this.schemaDependencies(schemas, data, path, `${at}/dependencies`, seen);
  }

  private propertyDependencies(
    map: unknown,
    data: Record<string, unknown>,
    path: string,
    at: string,
    keyword: string,
  ): void {
    if (!isNode(map)) return;
    for (const [property, list] of Object.entries(map)) {
      const deps = list as string[];
      if (deps.length === 0 || !hasOwn(data, property)) continue;
      const noun = deps.length === 1 ? 'property' : 'properties';
      for (const missingProperty of deps) {
        if (hasOwn(data, missingProperty)) continue;
        this.fail(
          keyword,
          path,
          at,
          { property, missingProperty, depsCount: deps.length, deps: deps.join(', ') },
          `must have ${noun} ${deps.join(', ')} when property ${property} is present`,
        );
      }
    }
  }

  private schemaDependencies(
    map: SchemaNode,
    data: Record<string, unknown>,
    path: string,
    at: string,
    seen: Seen,
  ): void {
    for (const [property, sub] of Object.entries(map)) {
      if (!hasOwn(data, property) || alwaysValid(sub)) continue;
      const own = fresh();
      if (this.check(sub, data, path, `${at}/${escapePointer(property)}`, own)) merge(seen, own);
    }
  }
}

const fresh = (): Seen => ({ props: new Set(), items: 0 });
const nameOf = (name: string | undefined): Partial<ErrorObject> =>
  name === undefined ? {} : ({ propertyName: name } as Partial<ErrorObject>);

function merge(into: Seen, from: Seen): void {
  if (from.props === true) into.props = true;
  else if (into.props !== true) for (const key of from.props) into.props.add(key);
  if (from.items === true) into.items = true;
  else if (into.items !== true) into.items = Math.max(into.items, from.items);
}

function markProp(seen: Seen, key: string): void {
  if (seen.props !== true) seen.props.add(key);
}

function markItem(seen: Seen, index: number): void {
  if (seen.items !== true && index === seen.items) seen.items = index + 1;
}

/** Runs a compiled program over `data`: the errors ajv would report, in ajv's order. */
export function interpret(program: Program, data: unknown): ErrorObject[] {
  const run = new Run(program);
  run.check(program.root, data, '', '#', fresh());
  return run.errors;
}
