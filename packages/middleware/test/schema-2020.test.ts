// JSON Schema 2020-12 in tool input schemas, on both validators: `$anchor`, `$defs` and the recursive
// `$dynamicRef` compile and judge alike (the word-for-word cases are in test-support/schema-cases.ts);
// the dynamic forms ajv resolves unlike the specification are refused at build by both, naming why.

import type { JsonSchema } from '@toolgate/core';
import { ajvValidator, evalFreeValidator, type SchemaValidator } from '@toolgate/middleware';

const DIALECT = 'https://json-schema.org/draft/2020-12/schema';

describe.each([
  ['ajv', ajvValidator],
  ['eval-free', evalFreeValidator],
] as const)('the %s validator', (_name, make: () => SchemaValidator) => {
  const compile = (schema: Record<string, unknown>) => make().compile(schema as JsonSchema);

  it('follows a $ref to an $anchor in $defs', () => {
    const check = compile({
      $schema: DIALECT,
      type: 'object',
      properties: { when: { $ref: '#day' } },
      $defs: { day: { $anchor: 'day', type: 'string', format: 'date' } },
    });

    expect(check({ when: '2026-07-28' })).toEqual({ valid: true });
    expect(check({ when: 'tomorrow' })).toEqual({
      valid: false,
      problems: [{ path: 'when', expected: 'must match format "date"' }],
    });
  });

  it('reads a schema without $schema as 2020-12 when only 2020-12 keywords say so', () => {
    const check = compile({
      type: 'object',
      properties: { pair: { type: 'array', prefixItems: [{ type: 'string' }, { $ref: '#n' }] } },
      $defs: { n: { $anchor: 'n', type: 'number' } },
    });

    expect(check({ pair: ['a', 'b'] })).toEqual({
      valid: false,
      problems: [{ path: 'pair.1', expected: 'must be number' }],
    });
  });

  it('keeps a draft-07 schema draft-07: $anchor beside draft-07 tuple items is an unknown keyword', () => {
    expect(() =>
      compile({
        type: 'object',
        properties: { pair: { type: 'array', items: [{ type: 'string' }], $anchor: 'p' } },
      }),
    ).toThrow(/unknown keyword: "\$anchor"/);
  });

  it.each([
    [
      'a $dynamicAnchor below the root',
      { type: 'object', properties: { a: { $dynamicAnchor: 'x', type: 'string' } } },
      /"\$dynamicAnchor" at "#\/properties\/a"/,
    ],
    [
      'a $dynamicRef to another anchor than the root’s',
      { $dynamicAnchor: 'node', type: 'object', properties: { a: { $dynamicRef: '#leaf' } } },
      /names no "\$dynamicAnchor" of the root/,
    ],
    [
      'a $dynamicRef inside $defs',
      {
        $dynamicAnchor: 'node',
        type: 'object',
        properties: { a: { $ref: '#/$defs/list' } },
        $defs: { list: { type: 'array', items: { $dynamicRef: '#node' } } },
      },
      /sits in a definition/,
    ],
    [
      'a nested $id beside dynamic references',
      {
        $dynamicAnchor: 'node',
        type: 'object',
        properties: { a: { $dynamicRef: '#node' }, b: { $id: 'https://example.com/b', type: 'string' } },
      },
      /may not hold nested "\$id"s/,
    ],
    [
      'two subschemas with one $anchor',
      {
        type: 'object',
        properties: { a: { $ref: '#x' } },
        $defs: { one: { $anchor: 'x', type: 'string' }, two: { $anchor: 'x', type: 'number' } },
      },
      /resolves to more than one schema/,
    ],
    ['an anchor that is not a name', { type: 'object', $defs: { a: { $anchor: '1-x' } } }, /anchor name/],
    [
      'a $ref to an anchor nobody declares',
      { type: 'object', properties: { a: { $ref: '#nowhere' } }, $defs: { b: { $anchor: 'b' } } },
      /can't resolve reference #nowhere/,
    ],
  ])('refuses %s at build, naming why', (_case, schema, why) => {
    expect(() => compile({ $schema: DIALECT, ...schema })).toThrow(why);
  });
});
