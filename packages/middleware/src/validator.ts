// The pluggable schema validator behind validate-args. The default is ajv, which compiles with
// `new Function`; eval-free runtimes (edge workers) pass an interpreter-based validator instead.

import {
  _,
  Ajv,
  str,
  type ErrorObject,
  type FuncKeywordDefinition,
  type ValidateFunction,
  type Vocabulary,
} from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import draft7Vocabularies from 'ajv/dist/vocabularies/draft7.js';
import draft2020Vocabularies from 'ajv/dist/vocabularies/draft2020.js';
import type { JsonSchema } from '@toolgate/core';
import { knownFormats } from './internal/formats';
import { checkSchema } from './internal/schema-audit';
import { draftOf } from './internal/schema-shape';
import type { SchemaNode } from './internal/schema-words';
import { duplicateItemsMessage, firstDuplicate, isMultipleOf } from './internal/schema-kernels';
import { linearRegExp } from './linear-regexp';

/** One thing wrong with the args: where, and what was expected. Never the value supplied. */
export interface ValidationProblem {
  /** Dotted path from the args root, e.g. `customer.email`; empty for the root. */
  readonly path: string;
  /** What was expected, e.g. `must be number`, `is required`. */
  readonly expected: string;
}

export type ValidationResult =
  | {
      readonly valid: true;
      /** The args with schema defaults applied, when any were. */ readonly value?: Record<string, unknown>;
    }
  | { readonly valid: false; readonly problems: readonly ValidationProblem[] };

export type CompiledSchema = (args: Readonly<Record<string, unknown>>) => ValidationResult;

export interface SchemaValidator {
  /** Compiles once per schema; throws when the schema is invalid or uses an unknown keyword. */
  compile(schema: JsonSchema): CompiledSchema;
}

export interface AjvValidatorOptions {
  /** Apply `default` values from the schema to the args the tool receives; default true. */
  readonly useDefaults?: boolean;
}

function hasDefaults(schema: unknown): boolean {
  if (typeof schema !== 'object' || schema === null) return false;
  if (Array.isArray(schema)) return schema.some(hasDefaults);
  return Object.entries(schema).some(([key, value]) => key === 'default' || hasDefaults(value));
}

function pathOf(instancePath: string): string {
  return instancePath
    .split('/')
    .slice(1)
    .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'))
    .join('.');
}

/** `a`, `a or b`, `a, b or c`. */
function alternatives(names: readonly string[]): string {
  return names.length <= 1
    ? names.join('')
    : `${names.slice(0, -1).join(', ')} or ${names[names.length - 1]}`;
}

/**
 * ajv reports a failed anyOf/oneOf as one error per branch plus one for the union. The model reads one
 * problem per union: the types it accepts when every branch is a plain type check, else a plain sentence.
 */
export function problemsOf(errors: readonly ErrorObject[]): ValidationProblem[] {
  const unions = errors.filter((e) => e.keyword === 'anyOf' || e.keyword === 'oneOf');
  // Array items share one schema path, so a branch error must also sit at or below the union's data path.
  const inBranch = (error: ErrorObject, union: ErrorObject) =>
    error.schemaPath.startsWith(`${union.schemaPath}/`) &&
    (error.instancePath === union.instancePath || error.instancePath.startsWith(`${union.instancePath}/`));
  const problems: ValidationProblem[] = [];
  for (const error of errors) {
    if (unions.some((union) => union !== error && inBranch(error, union))) continue;
    if (error.keyword !== 'anyOf' && error.keyword !== 'oneOf') {
      problems.push(problemOf(error));
      continue;
    }
    const branches = errors.filter((e) => inBranch(e, error));
    const types = branches.every((e) => e.keyword === 'type' && e.instancePath === error.instancePath)
      ? [
          ...new Set(
            branches.flatMap((e) => String((e.params as Record<string, unknown>)['type']).split(',')),
          ),
        ]
      : [];
    const expected =
      types.length > 0
        ? `must be ${alternatives(types)}`
        : error.keyword === 'oneOf'
          ? 'must match exactly one of its allowed forms'
          : 'must match one of its allowed forms';
    problems.push({ path: pathOf(error.instancePath), expected });
  }
  const unique = new Map(problems.map((p) => [`${p.path}\n${p.expected}`, p]));
  return [...unique.values()];
}

function problemOf(error: ErrorObject): ValidationProblem {
  const at = pathOf(error.instancePath);
  const join = (child: string) => (at === '' ? child : `${at}.${child}`);
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'required':
      return { path: join(String(params['missingProperty'])), expected: 'is required' };
    case 'additionalProperties':
      return { path: join(String(params['additionalProperty'])), expected: 'is not an accepted argument' };
    case 'type':
      return { path: at, expected: `must be ${alternatives(String(params['type']).split(','))}` };
    case 'enum':
      return {
        path: at,
        expected: `must be one of ${(params['allowedValues'] as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`,
      };
    case 'const':
      return { path: at, expected: `must be ${JSON.stringify(params['allowedValue'])}` };
    default:
      // ajv's own messages describe the constraint ("must be >= 1", "must match format \"email\""), never the data.
      return { path: at, expected: error.message ?? `must satisfy '${error.keyword}'` };
  }
}

/** The ajv options of one configuration, built in this one place. */
function ajvSettings(useDefaults: boolean) {
  return {
    allErrors: true,
    strict: true,
    strictTypes: false,
    strictTuples: false,
    strictRequired: false,
    allowUnionTypes: true,
    // required/properties/dependencies look at own properties only: `{}` has no 'constructor'.
    ownProperties: true,
    // ajv's check that a property name matches no pattern runs the pattern on a backtracking engine.
    allowMatchingProperties: true,
    useDefaults,
    // A compiled schema is not registered by its $id: tools sharing one ajv must not collide on an id.
    addUsedSchema: false,
    code: { regExp: linearRegExp },
  } as const;
}

// multipleOf and uniqueItems by the kernels the eval-free interpreter uses too: decimal-exact, and
// linear. Each replaces ajv's own definition in place, so ajv checks keywords in its usual order.
const multipleOf: FuncKeywordDefinition = {
  keyword: 'multipleOf',
  type: 'number',
  schemaType: 'number',
  errors: false,
  validate: (divisor: number, data: number) => isMultipleOf(data, divisor),
  error: {
    message: ({ schemaCode }) => str`must be multiple of ${schemaCode}`,
    params: ({ schemaCode }) => _`{multipleOf: ${schemaCode}}`,
  },
};

function checkUnique(this: unknown, unique: boolean, data: unknown[]): boolean {
  const duplicate = unique ? firstDuplicate(data) : undefined;
  if (duplicate === undefined) return true;
  const [i, j] = duplicate;
  checkUnique.errors = [{ keyword: 'uniqueItems', params: { i, j }, message: duplicateItemsMessage(i, j) }];
  return false;
}
checkUnique.errors = [] as Partial<ErrorObject>[];

const uniqueItems: FuncKeywordDefinition = {
  keyword: 'uniqueItems',
  type: 'array',
  schemaType: 'boolean',
  validate: checkUnique,
};

const KERNELS: Readonly<Record<string, FuncKeywordDefinition>> = { multipleOf, uniqueItems };

const withKernels = (vocabularies: readonly Vocabulary[]): Vocabulary[] =>
  vocabularies.map((vocabulary) =>
    vocabulary.map((definition) =>
      typeof definition === 'object' && typeof definition.keyword === 'string'
        ? (KERNELS[definition.keyword] ?? definition)
        : definition,
    ),
  );

// These modules are CommonJS with a `default` export: Node's ESM loader hands over the whole exports object.
const listOf = (module: readonly Vocabulary[] | { default: readonly Vocabulary[] }): readonly Vocabulary[] =>
  Array.isArray(module) ? module : (module as { default: readonly Vocabulary[] }).default;

const draft7WithKernels = withKernels(listOf(draft7Vocabularies));
const draft2020WithKernels = withKernels(listOf(draft2020Vocabularies));

// MCP's annotation naming the header an argument is mirrored into (SEP-2243): known, validates nothing.
const MCP_HEADER_ANNOTATION = 'x-mcp-header';

/** ajv for draft-07 with the shared kernels in place of its own multipleOf and uniqueItems. */
class Draft7 extends Ajv {
  override _addVocabularies(): void {
    this.addKeyword('$async');
    this.addKeyword(MCP_HEADER_ANNOTATION);
    for (const vocabulary of draft7WithKernels) this.addVocabulary(vocabulary);
  }
}

/** ajv for 2020-12, likewise. */
class Draft2020 extends Ajv2020 {
  override _addVocabularies(): void {
    this.addKeyword('$async');
    this.addKeyword(MCP_HEADER_ANNOTATION);
    // ajv resolves `$anchor` but defines no keyword for it, so strict mode would call it unknown.
    this.addKeyword('$anchor');
    for (const vocabulary of draft2020WithKernels) this.addVocabulary(vocabulary);
  }
}

/** The formats both validators share, in ajv's form. */
const ajvFormats = () =>
  Object.fromEntries(Object.entries(knownFormats()).map(([name, check]) => [name, { ...check }]));

type AjvSettings = ReturnType<typeof ajvSettings>;

// How many compiled schemas one configuration keeps by text; the least recently used go first.
const MAX_COMPILED = 500;

interface Cached {
  readonly compiled: CompiledSchema;
  readonly schema: JsonSchema;
  stamp: number;
}

/**
 * One configuration's ajv instances and compiled schemas, shared by every validator of that
 * configuration in the process: a new chain or dispatcher compiles nothing it has seen.
 */
class SharedAjv {
  readonly #settings: AjvSettings;
  #draft7: Draft7 | undefined;
  #draft2020: Draft2020 | undefined;
  readonly #bySchema = new WeakMap<object, CompiledSchema>();
  readonly #byText = new Map<string, Cached>();
  /** Counts insertions into #byText; an entry's `stamp` is the count when it last moved to the back. */
  #inserted = 0;

  constructor(settings: AjvSettings) {
    this.#settings = settings;
  }

  compile(schema: JsonSchema): CompiledSchema {
    const known = this.#bySchema.get(schema);
    if (known !== undefined) return known;
    const text = jsonTextOf(schema);
    const cached = text === undefined ? undefined : this.#byText.get(text);
    if (cached !== undefined) {
      // Back to the end of the eviction order, unless it is still in the newer half: nothing used within
      // the last MAX_COMPILED / 2 insertions can be evicted, and a hit on a recent schema costs no move.
      if (this.#inserted - cached.stamp > MAX_COMPILED / 2) {
        this.#byText.delete(text!);
        this.#byText.set(text!, cached);
        cached.stamp = ++this.#inserted;
      }
      this.#bySchema.set(schema, cached.compiled);
      return cached.compiled;
    }
    checkSchema(schema, this.#settings.useDefaults);
    const compiled = compiledBy(this.#instanceFor(schema).compile(schema), this.#settings, schema);
    this.#bySchema.set(schema, compiled);
    if (text !== undefined) {
      this.#byText.set(text, { compiled, schema, stamp: ++this.#inserted });
      if (this.#byText.size > MAX_COMPILED) this.#evictOldest();
    }
    return compiled;
  }

  #evictOldest(): void {
    const [text, entry] = this.#byText.entries().next().value!;
    this.#byText.delete(text);
    this.#instanceFor(entry.schema).removeSchema(entry.schema);
  }

  // The draft the audit read it as (a schema naming none is 2020-12 when only 2020-12 keywords say so).
  #instanceFor(schema: JsonSchema): Ajv | Ajv2020 {
    if (draftOf(schema as SchemaNode) === '2020-12') {
      this.#draft2020 ??= new Draft2020({ ...this.#settings, formats: ajvFormats() });
      return this.#draft2020;
    }
    this.#draft7 ??= new Draft7({ ...this.#settings, formats: ajvFormats() });
    return this.#draft7;
  }
}

/**
 * The schema as JSON text, in its own key order (which decides the order problems are reported in);
 * undefined when it has no JSON form, so it is cached by identity only.
 */
function jsonTextOf(schema: JsonSchema): string | undefined {
  try {
    return JSON.stringify(schema);
  } catch {
    return undefined;
  }
}

function compiledBy(validate: ValidateFunction, settings: AjvSettings, schema: JsonSchema): CompiledSchema {
  const cloneFirst = settings.useDefaults && hasDefaults(schema);
  return (args) => {
    // ajv writes defaults into the data it validates, so it gets a copy.
    const data = cloneFirst ? structuredClone(args) : args;
    if (validate(data)) return cloneFirst ? { valid: true, value: data as Record<string, unknown> } : VALID;
    return { valid: false, problems: problemsOf(validate.errors ?? []) };
  };
}

const VALID: ValidationResult = Object.freeze({ valid: true });

const shared = new Map<string, SharedAjv>();

/**
 * ajv with ajv-formats' formats (each linear); strict, so an unknown keyword fails at compile (dispatcher build), not at a call.
 * Validators of the same configuration share one ajv per draft and one bounded cache of compiled
 * schemas for the process, keyed by schema object and then by its JSON text.
 */
export function ajvValidator(options: AjvValidatorOptions = {}): SchemaValidator {
  const settings = ajvSettings(options.useDefaults ?? true);
  const key = JSON.stringify(settings);
  let instance = shared.get(key);
  if (instance === undefined) {
    instance = new SharedAjv(settings);
    shared.set(key, instance);
  }
  const chosen = instance;
  return { compile: (schema) => chosen.compile(schema) };
}
