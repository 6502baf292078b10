import { createDispatcher, defineTool, type JsonSchema } from '@toolgate/core';
import { ajvValidator, canonicalChain, evalFreeValidator, type ValidationResult } from '@toolgate/middleware';
import { Type } from 'typebox';
import { SCHEMA_CASES } from '../../../test-support/schema-cases';

function problems(result: ValidationResult) {
  if (result.valid) throw new Error('expected the args to be invalid');
  return result.problems;
}

function dispatcherWith(validator: ReturnType<typeof ajvValidator>, schema: JsonSchema) {
  const tool = defineTool({
    name: 'probe',
    description: 'probe',
    inputSchema: schema,
    execute: (args) => args,
  });
  return createDispatcher({ tools: [tool], chain: canonicalChain({ validator }) });
}

describe('evalFreeValidator', () => {
  describe.each(SCHEMA_CASES)('judges like ajv: $name', ({ schema, args }) => {
    it('finds the same problems, in the same order, and the same defaults', () => {
      const expected = ajvValidator().compile(schema)(args);

      expect(evalFreeValidator().compile(schema)(args)).toEqual(expected);
    });

    it('gives the model the same refusal, word for word', async () => {
      const viaAjv = await dispatcherWith(ajvValidator(), schema).dispatch({ toolName: 'probe', args });
      const viaInterpreter = await dispatcherWith(evalFreeValidator(), schema).dispatch({
        toolName: 'probe',
        args,
      });

      expect(viaInterpreter.kind).toBe(viaAjv.kind);
      expect(viaInterpreter.content).toBe(viaAjv.content);
    });
  });

  it('the shared cases include refusals, not only valid args', () => {
    const refused = SCHEMA_CASES.filter(({ schema, args }) => !ajvValidator().compile(schema)(args).valid);

    expect(refused.length).toBeGreaterThan(20);
  });

  it('judges a TypeBox schema like ajv', () => {
    const schema = Type.Object({
      q: Type.String({ minLength: 2 }),
      limit: Type.Optional(Type.Integer({ maximum: 50 })),
    }) as never;
    const args = { q: 'x', limit: 51 };

    expect(evalFreeValidator().compile(schema)(args)).toEqual(ajvValidator().compile(schema)(args));
    expect(problems(evalFreeValidator().compile(schema)(args))).toHaveLength(2);
  });

  it('never repeats the supplied value in a problem', () => {
    const validate = evalFreeValidator().compile({
      type: 'object',
      additionalProperties: false,
      properties: {
        mode: { enum: ['fast'] },
        n: { type: 'number', maximum: 1 },
        s: { type: 'string', pattern: '^a$' },
      },
    });

    const found = problems(validate({ mode: 'secret-value-91', n: 987654, s: 'secret-text-42' }));

    expect(JSON.stringify(found)).not.toMatch(/secret-value-91|987654|secret-text-42/);
  });

  it('applies no defaults when useDefaults is false', () => {
    const validate = evalFreeValidator({ useDefaults: false }).compile({
      type: 'object',
      properties: { limit: { type: 'integer', default: 10 } },
    });

    expect(validate({})).toEqual({ valid: true });
  });

  it('leaves the given args alone when it applies defaults', () => {
    const args = Object.freeze({ q: 'refunds' });
    const validate = evalFreeValidator().compile({
      type: 'object',
      properties: { q: { type: 'string' }, limit: { type: 'integer', default: 10 } },
    });

    expect(validate(args)).toEqual({ valid: true, value: { q: 'refunds', limit: 10 } });
    expect(args).toEqual({ q: 'refunds' });
  });

  describe('strict like ajv: what it cannot honour fails at compile', () => {
    it('an unknown keyword', () => {
      expect(() =>
        evalFreeValidator().compile({ type: 'object', properties: { a: { type: 'string', minLenght: 2 } } }),
      ).toThrow(/unknown keyword: "minLenght"/);
    });

    it('an unknown format', () => {
      expect(() =>
        evalFreeValidator().compile({
          type: 'object',
          properties: { a: { type: 'string', format: 'e-mail' } },
        }),
      ).toThrow(/unknown format "e-mail"/);
    });

    it('a pattern the linear-time engine cannot run, naming where it is', () => {
      expect(() =>
        evalFreeValidator().compile({
          type: 'object',
          properties: { a: { type: 'string', pattern: '^(?=x)' } },
        }),
      ).toThrow(/"#\/properties\/a\/pattern".*cannot run on the linear-time engine/);
    });

    it('a dispatcher over such a tool refuses to build, naming the tool', () => {
      const tool = defineTool({
        name: 'typo',
        description: 'typo',
        inputSchema: { type: 'object', properties: { a: { type: 'string', minLenght: 2 } } },
        execute: () => 'ran',
      });

      expect(() =>
        createDispatcher({ tools: [tool], chain: canonicalChain({ validator: evalFreeValidator() }) }),
      ).toThrow(/typo/);
    });
  });

  describe('patterns run on a linear-time engine', () => {
    it('a catastrophic pattern against a megabyte is judged, not stalled', () => {
      const validate = evalFreeValidator().compile({
        type: 'object',
        properties: { s: { type: 'string', pattern: '^(a+)+$' } },
      });

      expect(validate({ s: `${'a'.repeat(1_000_000)}b` }).valid).toBe(false);
      expect(validate({ s: 'a'.repeat(1_000_000) }).valid).toBe(true);
    });

    it('patternProperties match property names on the same engine', () => {
      const validate = evalFreeValidator().compile({
        type: 'object',
        patternProperties: { '^(x+)+$': { type: 'number' } },
      });

      expect(problems(validate({ [`${'x'.repeat(100_000)}`]: 'nope' }))).toHaveLength(1);
      expect(validate({ y: 'not checked' }).valid).toBe(true);
    });

    it('the global RegExp is restored after validation, even when a check throws', () => {
      const native = globalThis.RegExp;
      const validate = evalFreeValidator().compile({
        type: 'object',
        properties: { s: { type: 'string', pattern: 'a' } },
      });

      validate({ s: 'a' });
      expect(globalThis.RegExp).toBe(native);
      const hostile = {
        get s(): string {
          throw new Error('getter');
        },
      };
      expect(() => validate(hostile)).toThrow('getter');
      expect(globalThis.RegExp).toBe(native);
    });
  });
});
