import { createDispatcher, defineTool } from '@toolgate/core';
import { ajvValidator, canonicalChain } from '@toolgate/middleware';

// A backtracking engine takes seconds on 29 characters of this and never finishes a megabyte; the
// bounds below are far above a linear engine's time and far below a backtracking one's. The precise
// figure is measured in bench/, not here.
const CATASTROPHIC = '^(a+)+$';
const FAR_BELOW_BACKTRACKING_MS = 2_000;

function timed<T>(run: () => T): { value: T; ms: number } {
  const started = performance.now();
  const value = run();
  return { value, ms: performance.now() - started };
}

describe('schema patterns run on a linear-time engine', () => {
  const validate = ajvValidator().compile({
    type: 'object',
    properties: { s: { type: 'string', pattern: CATASTROPHIC } },
  });

  it('a catastrophic pattern against 29 characters and a failing end is judged at once', () => {
    const { value, ms } = timed(() => validate({ s: `${'a'.repeat(29)}b` }));

    expect(value.valid).toBe(false);
    expect(ms).toBeLessThan(FAR_BELOW_BACKTRACKING_MS);
  });

  it('the same pattern against a megabyte answers, right both ways', () => {
    const refused = timed(() => validate({ s: `${'a'.repeat(1_000_000)}b` }));
    const accepted = timed(() => validate({ s: 'a'.repeat(1_000_000) }));

    expect(refused.value).toEqual({
      valid: false,
      problems: [{ path: 's', expected: `must match pattern "${CATASTROPHIC}"` }],
    });
    expect(accepted.value.valid).toBe(true);
    expect(refused.ms + accepted.ms).toBeLessThan(FAR_BELOW_BACKTRACKING_MS);
  });

  it('patternProperties keys run on the same engine', () => {
    const byName = ajvValidator().compile({
      type: 'object',
      patternProperties: { '^(x+)+$': { type: 'number' } },
    });

    const { value, ms } = timed(() =>
      byName({ [`${'x'.repeat(100_000)}y`]: 'unchecked', ['x'.repeat(50)]: 'nope' }),
    );

    expect(value).toEqual({ valid: false, problems: [{ path: 'x'.repeat(50), expected: 'must be number' }] });
    expect(ms).toBeLessThan(FAR_BELOW_BACKTRACKING_MS);
  });

  it('keeps JSON Schema semantics: a pattern matches anywhere unless anchored', () => {
    const sku = ajvValidator().compile({
      type: 'object',
      properties: { s: { type: 'string', pattern: '[0-9]{3}' } },
    });

    expect(sku({ s: 'abc123def' }).valid).toBe(true);
    expect(sku({ s: 'abc12def' }).valid).toBe(false);
  });

  it('two patterns in one schema each keep their own matcher', () => {
    const both = ajvValidator().compile({
      type: 'object',
      properties: { a: { type: 'string', pattern: '^a+$' }, b: { type: 'string', pattern: '^b+$' } },
    });

    expect(both({ a: 'aaa', b: 'bbb' }).valid).toBe(true);
    expect(both({ a: 'bbb', b: 'aaa' })).toEqual({
      valid: false,
      problems: [
        { path: 'a', expected: 'must match pattern "^a+$"' },
        { path: 'b', expected: 'must match pattern "^b+$"' },
      ],
    });
  });

  it('a regex format runs linear too: a long malformed email is refused at once', () => {
    const email = ajvValidator().compile({
      type: 'object',
      properties: { e: { type: 'string', format: 'email' } },
    });

    const { value, ms } = timed(() => email({ e: `${'a'.repeat(200_000)}@` }));

    expect(value.valid).toBe(false);
    expect(ms).toBeLessThan(FAR_BELOW_BACKTRACKING_MS);
    expect(email({ e: 'ops@example.com' }).valid).toBe(true);
  });

  it('a tool whose pattern needs backtracking fails at dispatcher build, naming the tool and the pattern', () => {
    const tool = defineTool({
      name: 'lookahead',
      description: 'uses a lookahead',
      inputSchema: { type: 'object', properties: { s: { type: 'string', pattern: '^(?=.*[0-9]).+$' } } },
      execute: () => 'ran',
    });

    expect(() => createDispatcher({ tools: [tool], chain: canonicalChain() })).toThrow(
      /lookahead.*pattern "\^\(\?=\.\*\[0-9\]\)\.\+\$" cannot run on the linear-time engine/s,
    );
  });
});
