// The simple-pattern matcher answers exactly as RE2 does (a partial match, as CEL's matches()), on
// the patterns it accepts, for random patterns and inputs; the rest it leaves to RE2.

import fc from 'fast-check';
import { RE2JS } from 're2js';
import { simpleMatcher } from '../src/simple-regex';

const re2 = (pattern: string, text: string) => RE2JS.compile(pattern).matcher(text).find();

const ATOMS = [
  '(a|b)',
  '(?:ab|c)',
  '|',
  '(a|)',
  'a',
  'b',
  '.',
  '\\.',
  '\\d',
  '\\w',
  '\\s',
  '\\D',
  '[a-c]',
  '[^a]',
  '[a-]',
  '[-b]',
  '[\\d_]',
  '@',
  'é',
  '\\-',
];
const QUANTIFIERS = ['', '', '*', '+', '?', '{2}', '{1,3}', '{2,}', '{0,1}'];

const patterns = fc
  .tuple(
    fc.boolean(),
    fc.array(fc.tuple(fc.constantFrom(...ATOMS), fc.constantFrom(...QUANTIFIERS)), { maxLength: 6 }),
    fc.boolean(),
  )
  .map(
    ([start, atoms, end]) => `${start ? '^' : ''}${atoms.map(([a, q]) => a + q).join('')}${end ? '$' : ''}`,
  );
const texts = fc.string({
  unit: fc.constantFrom('a', 'b', 'c', '1', '_', '.', ' ', '\n', '@', 'é', '-', '😀'),
  maxLength: 12,
});

describe('simpleMatcher', () => {
  it('agrees with RE2 on random patterns and inputs', () => {
    fc.assert(
      fc.property(patterns, fc.array(texts, { minLength: 1, maxLength: 8 }), (pattern, inputs) => {
        const matcher = simpleMatcher(pattern);
        if (matcher === undefined) return;
        for (const text of inputs)
          expect([pattern, text, matcher(text)]).toEqual([pattern, text, re2(pattern, text)]);
      }),
      { numRuns: 500 },
    );
  });

  it('agrees on the patterns policies use', () => {
    const cases: [string, string[]][] = [
      [
        '^[a-z0-9._%+-]+@example\\.com$',
        ['ana@example.com', 'ana@example.com.evil', 'x@examplexcom', '@example.com'],
      ],
      ['^BILL-[0-9]{4,8}$', ['BILL-1234', 'BILL-123', 'BILL-123456789', 'xBILL-1234']],
      ['secret', ['a secret here', 'SECRET']],
      ['^https://', ['https://a', 'http://a']],
      ['^(cn|ru)-', ['cn-1', 'ru-', 'us-1', 'xcn-']],
      ['test|staging', ['a-test', 'staging-1', 'prod']],
    ];
    for (const [pattern, inputs] of cases) {
      const matcher = simpleMatcher(pattern)!;
      expect(matcher).toBeDefined();
      for (const text of inputs) expect(matcher(text)).toBe(re2(pattern, text));
    }
  });

  it('leaves groups, alternation, flags and word boundaries to RE2', () => {
    for (const pattern of ['(a|b)+', '(?i)abc', '\\bword', 'a*?', '[[:alpha:]]', 'x{1000}', '((a|b)c)*'])
      expect(simpleMatcher(pattern)).toBeUndefined();
  });
});
