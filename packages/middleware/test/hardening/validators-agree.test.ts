// The differential property: for generated schemas (well-formed and malformed, draft-07 and 2020-12)
// and generated args, ajvValidator and evalFreeValidator make the same decision: both refuse the
// schema at compile or both compile it, and then both return the same result for every value — the
// same problems in the same order, in the same words, and the same defaults. `pnpm test:deep`
// (TOOLGATE_DEEP=1) runs ten times the cases on fresh seeds; TOOLGATE_SEED replays one.

import fc from 'fast-check';
import type { JsonSchema } from '@toolgate/core';
import { ajvValidator, evalFreeValidator, type CompiledSchema } from '@toolgate/middleware';

const DEEP = process.env['TOOLGATE_DEEP'] === '1';
const RUNS = Number(process.env['TOOLGATE_RUNS'] ?? (DEEP ? 10_000 : 1_000));
const TIMEOUT_MS = DEEP ? 60 * 60_000 : 240_000;

function options<T>(fixedSeed: number): fc.Parameters<T> {
  const given = process.env['TOOLGATE_SEED'];
  const seed = given !== undefined ? Number(given) : DEEP ? Date.now() ^ fixedSeed : fixedSeed;
  return { numRuns: RUNS, seed };
}

type Node = Record<string, unknown>;
const DRAFT_2020 = 'https://json-schema.org/draft/2020-12/schema';

// Values chosen where validators have disagreed: decimal multiples, formats' edge cases, duplicates.
const STRINGS = [
  ...['', 'a', 'aa', 'aaaa', 'abc', 'AB-12', 'b', 'x'.repeat(12), '𝄞𝄞', 'aaaaaaaaaaaaaaaaaaaaaaaa!'],
  ...['ops@example.com', 'a@b.co', 'not-an-email', 'a..b@example.com', '"quoted"@example.com', 'a@[1.2.3.4]'],
  ...['1.2.3.4', '01.02.03.004', '256.1.1.1', '::1', '2001:db8::8a2e:370:7334', 'fe80::1%eth0'],
  ...['http://example.com', 'https://10.0.0.1/x', 'https://8.8.8.8:8080/p?q', 'ftp://a-b.example.org'],
  ...['http://192.168.1.1', 'http://172.20.0.1', 'http://172.32.0.1', 'http://169.254.1.1', 'urn:isbn:1'],
  ...[
    '2024-02-29',
    '2023-02-29',
    '12:30:00Z',
    '12:30:00',
    '2024-01-01T00:00:00Z',
    '2024-01-01 00:00:00+01:00',
  ],
  ...['P1D', 'P', 'PT', 'PT1H', 'P1W', 'P1Y2M', 'example.com', 'example.com.', '-bad.com', 'a'.repeat(64)],
  ...['123e4567-e89b-12d3-a456-426614174000', '/a/b', '/a~2', '0/a', 'QUJD', 'QUJ=', '^a+$', '(', '[a-'],
];
const NUMBERS = [0, 1, -1, 2, 3, 2.5, 19.99, 0.3, 0.07, 1e9, -1e9, 100, 2 ** 31, 1.5, 1e-7, 3e-7, 4.35, 7];
const KEYS = ['a', 'b', 'c', 'x', 'constructor'];

const value: fc.Arbitrary<unknown> = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constantFrom(...STRINGS),
    fc.constantFrom(...NUMBERS),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('value'), { maxLength: 5 }),
    fc.dictionary(fc.constantFrom(...KEYS), tie('value'), { maxKeys: 4 }),
  ),
})).value;

const FORMATS = [
  ...['email', 'ipv4', 'ipv6', 'url', 'uri', 'uri-reference', 'date', 'date-time', 'time', 'duration'],
  ...['hostname', 'uuid', 'json-pointer', 'relative-json-pointer', 'regex', 'byte', 'int32', 'int64'],
];
const PATTERNS = ['^a+$', '[0-9]{3}', '^(a+)+$', '^[A-Z]{2}-[0-9]+$', 'b', '^.{0,3}$'];
const TYPES = ['string', 'number', 'integer', 'boolean', 'null', 'array', 'object'];

/** One keyword group's worth of schema. */
function keywords(sub: fc.Arbitrary<Node | boolean>, draft2020: boolean): fc.Arbitrary<Node> {
  const typeKw = fc.oneof(
    fc.record({ type: fc.constantFrom(...TYPES) }),
    fc.record({ type: fc.uniqueArray(fc.constantFrom(...TYPES), { minLength: 1, maxLength: 3 }) }),
    fc.record({ type: fc.constantFrom('string', 'number'), nullable: fc.boolean() }),
  );
  const numberKw = fc.record(
    {
      type: fc.constantFrom('number', 'integer'),
      minimum: fc.constantFrom(0, 1, -1, 2.5),
      maximum: fc.constantFrom(3, 100, 19.99),
      exclusiveMinimum: fc.constantFrom(0, 1),
      exclusiveMaximum: fc.constantFrom(3, 1e9),
      multipleOf: fc.constantFrom(0.01, 0.1, 0.5, 2, 3, 0.25, 1e-7, 0.07),
      format: fc.constantFrom('int32', 'int64', 'email'),
    },
    { requiredKeys: [] },
  );
  const stringKw = fc.record(
    {
      type: fc.constant('string'),
      minLength: fc.constantFrom(0, 1, 2, 5),
      maxLength: fc.constantFrom(1, 2, 3, 10),
      pattern: fc.constantFrom(...PATTERNS),
      format: fc.constantFrom(...FORMATS),
    },
    { requiredKeys: [] },
  );
  const arrayKw = fc.record(
    {
      type: fc.constant('array'),
      items: draft2020 ? sub : fc.oneof(sub, fc.array(sub, { minLength: 1, maxLength: 2 })),
      minItems: fc.constantFrom(0, 1, 2),
      maxItems: fc.constantFrom(1, 3),
      uniqueItems: fc.boolean(),
      contains: sub,
      ...(draft2020
        ? { prefixItems: fc.array(sub, { minLength: 1, maxLength: 2 }), minContains: fc.constantFrom(1, 2) }
        : {}),
    },
    { requiredKeys: [] },
  );
  const objectKw = fc.record(
    {
      type: fc.constant('object'),
      properties: fc.dictionary(fc.constantFrom(...KEYS), sub, { maxKeys: 3 }),
      required: fc.uniqueArray(fc.constantFrom(...KEYS), { maxLength: 2 }),
      additionalProperties: fc.oneof(fc.constant(false), sub),
      patternProperties: fc.dictionary(fc.constantFrom('^a', '^x$', 'c'), sub, { maxKeys: 2 }),
      propertyNames: fc.oneof(
        fc.record({ maxLength: fc.constantFrom(1, 2) }),
        fc.record({ pattern: fc.constant('^[a-c]$') }),
      ),
      dependencies: fc.dictionary(
        fc.constantFrom(...KEYS),
        fc.oneof(fc.uniqueArray(fc.constantFrom(...KEYS), { maxLength: 2 }), sub),
        { maxKeys: 2 },
      ),
      minProperties: fc.constantFrom(1, 2),
      maxProperties: fc.constantFrom(1, 3),
      ...(draft2020
        ? {
            dependentRequired: fc.dictionary(
              fc.constantFrom(...KEYS),
              fc.uniqueArray(fc.constantFrom(...KEYS), { maxLength: 2 }),
              { maxKeys: 2 },
            ),
            unevaluatedProperties: fc.oneof(fc.constant(false), sub),
          }
        : {}),
    },
    { requiredKeys: [] },
  );
  const combinators = fc.oneof(
    fc.record({ anyOf: fc.array(sub, { minLength: 1, maxLength: 3 }) }),
    fc.record({ oneOf: fc.array(sub, { minLength: 1, maxLength: 3 }) }),
    fc.record({ allOf: fc.array(sub, { minLength: 1, maxLength: 2 }) }),
    fc.record({ not: sub }),
    fc.record({ if: sub, then: sub, else: sub }, { requiredKeys: ['if', 'then'] }),
    fc.record({ enum: fc.array(value, { minLength: 1, maxLength: 3 }) }),
    fc.record({ const: value }),
  );
  const refs = fc.record(
    {
      $ref: fc.constantFrom('#/$defs/d0', '#/$defs/d1', '#/definitions/d2'),
      maximum: fc.constantFrom(3, 100),
      enum: fc.constant([1, 'a', 3]),
      required: fc.constant(['a']),
      additionalProperties: fc.constant(false),
    },
    { requiredKeys: ['$ref'] },
  );
  return fc.oneof(typeKw, numberKw, stringKw, arrayKw, objectKw, combinators, refs);
}

// Malformed or unsupported pieces: each must be refused at compile by both, or by neither.
const MALFORMED: readonly Node[] = [
  { title: 5 },
  { title: { type: 'string', pattern: '^(a+)+$' } },
  { minLength: -1 },
  { maxItems: 1.5 },
  { type: 'strin' },
  { type: [] },
  { type: ['string', 'string'] },
  { required: ['a', 'a'] },
  { required: 'a' },
  { format: 'e-mail' },
  { minLenght: 2 },
  { if: { type: 'string' } },
  { then: { type: 'string' } },
  { additionalItems: false },
  { items: { type: 'string' }, additionalItems: false },
  { enum: [] },
  { enum: 'a' },
  { multipleOf: 0 },
  { multipleOf: -2 },
  { pattern: '(?=x)' },
  { pattern: '(' },
  { pattern: '(?P<n>a)' },
  { patternProperties: { '(?=x)': {} } },
  { $ref: '#/title' },
  { $ref: '#/enum/0' },
  { $ref: '#/properties' },
  { $ref: '#/$defs/missing' },
  { $ref: '#' },
  { $ref: 'http://example.com/elsewhere' },
  { nullable: true },
  { items: [] },
  { allOf: [] },
  { anyOf: {} },
  { properties: { a: 5 } },
  { dependencies: { a: 5 } },
  { examples: 'a' },
  { $anchor: 'here' },
  { $dynamicRef: '#meta' },
  { $recursiveRef: '#' },
  { $async: true },
  { prefixItems: [{}] },
  { minContains: 1 },
  { contains: {}, minContains: 0 },
  { contains: {}, minContains: 3, maxContains: 1 },
  { unevaluatedProperties: false },
  { readOnly: 'yes' },
  { uniqueItems: 'yes' },
  { formatMaximum: '2020-01-01' },
  { properties: { a: { default: 1 } } },
];

const schemaAndValues = fc.boolean().chain((draft2020) => {
  const tree = fc.letrec<{ node: Node | boolean }>((tie) => ({
    node: fc.oneof(
      { depthSize: 'small', maxDepth: 3 },
      fc.constantFrom<Node | boolean>(true, false, {}),
      keywords(tie('node'), draft2020),
      fc
        .tuple(keywords(tie('node'), draft2020), keywords(tie('node'), draft2020))
        .map(([a, b]) => ({ ...a, ...b })),
    ),
  })).node;
  const malformed = fc.option(fc.tuple(fc.constantFrom(...MALFORMED), fc.constantFrom('root', 'v', 'def')), {
    freq: 4,
  });
  return fc.record({
    draft2020: fc.constant(draft2020),
    v: tree,
    d0: tree,
    d1: tree,
    d2: tree,
    malformed,
    composite: fc.oneof(fc.constant(undefined), fc.constantFrom('anyOf', 'not', 'oneOf')),
    values: fc.array(value, { minLength: 1, maxLength: 6 }),
  });
});

interface Generated {
  readonly draft2020: boolean;
  readonly v: Node | boolean;
  readonly d0: Node | boolean;
  readonly d1: Node | boolean;
  readonly d2: Node | boolean;
  readonly malformed: readonly [Node, string] | null;
  readonly composite: string | undefined;
}

function schemaOf(input: Generated): Node {
  const d0 =
    input.malformed?.[1] === 'def' && typeof input.d0 === 'object'
      ? { ...input.d0, ...input.malformed[0] }
      : input.d0;
  let v: Node | boolean =
    input.malformed?.[1] === 'v'
      ? { ...(typeof input.v === 'object' ? input.v : {}), ...input.malformed[0] }
      : input.v;
  if (input.composite === 'anyOf' || input.composite === 'oneOf')
    v = { [input.composite]: [v, { type: 'null' }] };
  if (input.composite === 'not') v = { not: v };
  const root: Node = {
    ...(input.draft2020 ? { $schema: DRAFT_2020 } : {}),
    type: 'object',
    $defs: { d0, d1: input.d1 },
    definitions: { d2: input.d2 },
    properties: { v },
    ...(input.malformed?.[1] === 'root' ? input.malformed[0] : {}),
  };
  return root;
}

type Compiled = { compiled: CompiledSchema } | { error: string };
function compile(validator: { compile(schema: JsonSchema): CompiledSchema }, schema: Node): Compiled {
  try {
    return { compiled: validator.compile(schema as JsonSchema) };
  } catch (error) {
    return { error: error instanceof Error ? error.message : String(error) };
  }
}

const ajv = ajvValidator();
const interpreter = evalFreeValidator();

describe('ajvValidator and evalFreeValidator agree', () => {
  it(
    'on generated schemas and args: both refuse the schema or both judge every value alike, word for word',
    () => {
      fc.assert(
        fc.property(schemaAndValues, (input) => {
          const schema = schemaOf(input);
          // Known, left as it is: ajv's run-time unevaluatedProperties tracking keeps evaluated names in
          // a plain object, so a property named like an Object.prototype member ('constructor') counts
          // as evaluated and ajv accepts it; the interpreter refuses it (stricter, never wider).
          fc.pre(
            !(
              JSON.stringify(schema).includes('unevaluatedProperties') &&
              JSON.stringify(input.values).includes('"constructor"')
            ),
          );
          const viaAjv = compile(ajv, JSON.parse(JSON.stringify(schema)));
          const viaInterpreter = compile(interpreter, JSON.parse(JSON.stringify(schema)));
          if ('error' in viaAjv || 'error' in viaInterpreter) {
            const said = (c: Compiled) => ('error' in c ? `refused it (${c.error})` : 'compiled it');
            if ('error' in viaAjv !== 'error' in viaInterpreter)
              throw new Error(`ajv ${said(viaAjv)}; the eval-free validator ${said(viaInterpreter)}`);
            return;
          }
          for (const v of input.values) {
            // Args arrive as JSON text, parsed: plain objects of this realm.
            const text = JSON.stringify({ v });
            const args = JSON.parse(text) as Record<string, unknown>;
            expect({ schema, args, result: viaInterpreter.compiled(JSON.parse(text)) }).toEqual({
              schema,
              args,
              result: viaAjv.compiled(JSON.parse(text)),
            });
          }
        }),
        options(20_20),
      );
    },
    TIMEOUT_MS,
  );
});
