import { Type } from 'typebox';
import { ajvValidator, type ValidationResult } from '@toolgate/middleware';

function problems(result: ValidationResult) {
  if (result.valid) throw new Error('expected the args to be invalid');
  return result.problems;
}

describe('ajvValidator', () => {
  it('accepts valid args without a value when the schema has no defaults', () => {
    const validate = ajvValidator().compile({ type: 'object', properties: { q: { type: 'string' } } });

    expect(validate({ q: 'refunds' })).toEqual({ valid: true });
  });

  it('returns a copy with schema defaults applied and leaves the given args alone', () => {
    const validate = ajvValidator().compile({
      type: 'object',
      properties: { q: { type: 'string' }, limit: { type: 'integer', default: 10 } },
    });
    const args = Object.freeze({ q: 'refunds' });

    expect(validate(args)).toEqual({ valid: true, value: { q: 'refunds', limit: 10 } });
    expect(args).toEqual({ q: 'refunds' });
  });

  it('applies no defaults when useDefaults is false', () => {
    const validate = ajvValidator({ useDefaults: false }).compile({
      type: 'object',
      properties: { limit: { type: 'integer', default: 10 } },
    });

    expect(validate({})).toEqual({ valid: true });
  });

  it('names the dotted path and the expected type of each problem', () => {
    const validate = ajvValidator().compile({
      type: 'object',
      properties: {
        customer: {
          type: 'object',
          properties: { email: { type: 'string', format: 'email' }, age: { type: 'integer', minimum: 18 } },
          required: ['email'],
        },
        mode: { enum: ['fast', 'safe'] },
        version: { const: 2 },
      },
      required: ['customer'],
      additionalProperties: false,
    });

    const found = problems(
      validate({ customer: { age: 12 }, mode: 'reckless-mode-value', version: 3, extra: 'x' } as never),
    );

    expect(found).toEqual(
      expect.arrayContaining([
        { path: 'extra', expected: 'is not an accepted argument' },
        { path: 'customer.email', expected: 'is required' },
        { path: 'customer.age', expected: 'must be >= 18' },
        { path: 'mode', expected: 'must be one of "fast", "safe"' },
        { path: 'version', expected: 'must be 2' },
      ]),
    );
    expect(found).toHaveLength(5);
    expect(JSON.stringify(found)).not.toContain('reckless-mode-value');
  });

  it('names a format without repeating the supplied value', () => {
    const validate = ajvValidator().compile({
      type: 'object',
      properties: { email: { type: 'string', format: 'email' } },
    });

    const found = problems(validate({ email: 'not-an-email-zq81' }));

    expect(found).toEqual([{ path: 'email', expected: 'must match format "email"' }]);
  });

  it('lists every type of a union type, not just the first two', () => {
    const validate = ajvValidator().compile({
      type: 'object',
      properties: { id: { type: ['string', 'integer', 'null'] } },
    });

    expect(problems(validate({ id: true }))).toEqual([
      { path: 'id', expected: 'must be string, integer or null' },
    ]);
  });

  it('reports a failed anyOf of plain types as one problem naming the accepted types', () => {
    const validate = ajvValidator().compile(
      Type.Object({ id: Type.Union([Type.String(), Type.Number(), Type.Null()]) }) as never,
    );

    expect(problems(validate({ id: true }))).toEqual([
      { path: 'id', expected: 'must be string, number or null' },
    ]);
  });

  it('reports a failed anyOf of object shapes as one problem at its path', () => {
    const validate = ajvValidator().compile({
      type: 'object',
      properties: {
        target: {
          anyOf: [
            { type: 'object', properties: { user: { type: 'string' } }, required: ['user'] },
            { type: 'object', properties: { team: { type: 'string' } }, required: ['team'] },
          ],
        },
      },
    });

    expect(problems(validate({ target: { group: 'x' } }))).toEqual([
      { path: 'target', expected: 'must match one of its allowed forms' },
    ]);
  });

  it('keeps the problems of different array items apart when they share one schema', () => {
    const validate = ajvValidator().compile({
      type: 'object',
      properties: { ids: { type: 'array', items: { anyOf: [{ type: 'string' }, { type: 'integer' }] } } },
    });

    expect(problems(validate({ ids: [true, 'ok', false] }))).toEqual([
      { path: 'ids.0', expected: 'must be string or integer' },
      { path: 'ids.2', expected: 'must be string or integer' },
    ]);
  });

  it('unescapes JSON-pointer characters in paths', () => {
    const validate = ajvValidator().compile({
      type: 'object',
      properties: { 'a/b': { type: 'number' }, 'c~d': { type: 'number' } },
    });

    expect(problems(validate({ 'a/b': 'x', 'c~d': 'y' }))).toEqual([
      { path: 'a/b', expected: 'must be number' },
      { path: 'c~d', expected: 'must be number' },
    ]);
  });

  it('throws at compile on an unknown keyword or an invalid schema', () => {
    expect(() => ajvValidator().compile({ type: 'object', colour: 'blue' })).toThrow(
      /unknown keyword: "colour"/,
    );
    expect(() => ajvValidator().compile({ type: 'nonsense' })).toThrow();
  });

  it('compiles a draft 2020-12 schema by its $schema', () => {
    const validate = ajvValidator().compile({
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      properties: { pair: { type: 'array', prefixItems: [{ type: 'string' }, { type: 'number' }] } },
    });

    expect(validate({ pair: ['a', 1] })).toEqual({ valid: true });
    expect(problems(validate({ pair: [1, 'a'] }))).toEqual([
      { path: 'pair.0', expected: 'must be string' },
      { path: 'pair.1', expected: 'must be number' },
    ]);
  });

  it('accepts TypeBox schemas as they are', () => {
    const validate = ajvValidator().compile(
      Type.Object({ q: Type.String(), limit: Type.Optional(Type.Integer()) }) as never,
    );

    expect(validate({ q: 'x', limit: 3 })).toEqual({ valid: true });
    expect(problems(validate({ limit: 'three' }))).toEqual([
      { path: 'q', expected: 'is required' },
      { path: 'limit', expected: 'must be integer' },
    ]);
  });

  it('compiles two different schemas that share an $id, each judging by its own rules', () => {
    const byName = ajvValidator().compile({
      $id: 'https://example.com/args.json',
      type: 'object',
      properties: { name: { type: 'string' } },
      required: ['name'],
    });
    const byCount = ajvValidator().compile({
      $id: 'https://example.com/args.json',
      type: 'object',
      properties: { count: { type: 'integer' } },
      required: ['count'],
    });

    expect(byName({ name: 'a' })).toEqual({ valid: true });
    expect(problems(byCount({ name: 'a' }))).toEqual([{ path: 'count', expected: 'is required' }]);
  });

  it('hands the same compiled schema to every validator of one configuration for equal schema text', () => {
    const schema = { type: 'object', properties: { shared_text_probe: { type: 'string' } } };

    expect(ajvValidator().compile(schema)).toBe(ajvValidator().compile(structuredClone(schema)));
    expect(ajvValidator({ useDefaults: false }).compile(schema)).not.toBe(ajvValidator().compile(schema));
  });
});
