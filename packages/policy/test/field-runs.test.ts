// Runs of rules testing one args field the same way (string equality by one lookup; startsWith,
// endsWith, contains; size() comparisons) are decided on the field read once: the verdict
// (rule, effect, failed, shadows) is the one each rule's compiled condition gives rule by rule in
// order, and cel-js's, for strings, missing fields, wrong types and fields named like
// Object.prototype's members. (cel-js cannot read a map with an own `constructor` key at all and
// errs on any rule; the compiled conditions read it as CEL does, before this change as after, so
// there the comparison is with them alone.)

import fc from 'fast-check';
import type { Tool } from '@toolgate/core';
import { compileCondition } from '../src/compile';
import { compileFor, decide, variablesFor, type ToolPolicy } from '../src/decide';
import { compileRules, type PolicyEffect, type PolicyRule, type Rule } from '../src/rules';
import { countedTool } from './support';

const FIELDS = ['region', 'constructor', 'toString', 'hasOwnProperty', 'valueOf'] as const;

const tool = (): Tool =>
  countedTool({
    name: 'send',
    properties: {
      ...Object.fromEntries(FIELDS.map((f) => [f, { type: 'string' }])),
      count: { type: 'integer' },
    },
  });

type Evaluator = (rule: Rule, vars: Record<string, unknown>) => unknown;
const byCelJs: Evaluator = (rule, vars) => rule.when!.evaluate(vars);
const byCompiledCondition: Evaluator = (rule, vars) => {
  const condition = compileCondition(rule.when!.ast, vars['tool'] as never, rule.when!.evaluate);
  return condition.kind === 'evaluate' ? condition.evaluate(vars) : condition.kind === 'always';
};

/** The first match as `evaluate` decides it, rule by rule: what the lookup must reproduce. */
function reference(
  rules: readonly Rule[],
  vars: Record<string, unknown>,
  fallback: PolicyEffect,
  evaluate: Evaluator = byCelJs,
) {
  const shadows: { rule: string; failed: boolean }[] = [];
  for (const rule of rules) {
    let value: unknown;
    try {
      value = evaluate(rule, vars);
    } catch {
      value = undefined;
    }
    const failed = value !== true && value !== false;
    if (!(value === true || (failed && rule.effect !== 'allow'))) continue;
    if (rule.shadow) {
      shadows.push({ rule: rule.name, failed });
      continue;
    }
    return { effect: rule.effect, rule: rule.name, failed, shadows };
  }
  return { effect: fallback, rule: undefined, failed: false, shadows };
}

function verdictOf(policy: ToolPolicy, vars: Record<string, unknown>) {
  const v = decide(policy, vars);
  return {
    effect: v.effect,
    rule: v.rule?.name,
    failed: v.failed,
    shadows: v.shadows.map((s) => ({ rule: s.rule.name, failed: s.failed })),
  };
}

const VALUES = ['eu', 'us', 'ap', '', 'e😀', 'constructor', '__proto__', 'toString'];
const literal = fc.constantFrom(...VALUES);
const ruleArb = (field: string) =>
  fc.record({
    shape: fc.constantFrom(
      '==',
      'reversed',
      'in',
      'startsWith',
      'endsWith',
      'contains',
      'size',
      'size()',
      'matches',
      'other',
    ),
    bound: fc.integer({ min: -1, max: 4 }),
    values: fc.array(literal, { minLength: 0, maxLength: 3 }),
    effect: fc.constantFrom<PolicyEffect>('allow', 'deny', 'ask'),
    shadow: fc.boolean(),
    field: fc.constantFrom(field, field, field, 'region'),
  });

const whenOf = (r: { shape: string; values: string[]; field: string; bound: number }): string => {
  const first = `'${r.values[0] ?? 'eu'}'`;
  const op = ['<', '<=', '>', '>='][(r.bound + 1) % 4]!;
  if (r.shape === '==') return `args.${r.field} == ${first}`;
  if (r.shape === 'matches') return `args.${r.field}.matches('^${r.values[0] ?? 'e'}|s$')`;
  if (r.shape === 'size') return `size(args.${r.field}) ${op} ${Math.max(r.bound, 0)}`;
  if (r.shape === 'size()') return `args.${r.field}.size() ${op} ${Math.max(r.bound, 0)}`;
  if (['startsWith', 'endsWith', 'contains'].includes(r.shape)) return `args.${r.field}.${r.shape}(${first})`;
  if (r.shape === 'reversed') return `${first} == args.${r.field}`;
  if (r.shape === 'in') return `args.${r.field} in [${r.values.map((v) => `'${v}'`).join(', ')}]`;
  // Not an equality: it breaks a run, and must still be evaluated in its place.
  return `args.${r.field}.startsWith(${first}) || args.count > 3`;
};

const fieldValue = fc.oneof(
  literal,
  fc.string({ maxLength: 4 }),
  fc.integer(),
  fc.boolean(),
  fc.constant(null),
  fc.array(literal, { maxLength: 2 }),
  fc.record({ a: literal }),
);

describe('equality runs', () => {
  it('decide as cel-js does rule by rule: present, missing, wrong-type and prototype-named fields', () => {
    const t = tool();
    fc.assert(
      fc.property(
        fc.constantFrom(...FIELDS).chain((field) =>
          fc.tuple(
            fc.constant(field),
            fc.array(ruleArb(field), { minLength: 1, maxLength: 8 }),
            // As JSON.parse makes them: `__proto__` an own key like any other.
            fc
              .dictionary(fc.constantFrom(...FIELDS, '__proto__', 'count'), fieldValue, { maxKeys: 3 })
              .map((d) => JSON.parse(JSON.stringify(d, (_k, v) => (typeof v === 'bigint' ? Number(v) : v)))),
            fc.constantFrom<PolicyEffect>('allow', 'deny'),
          ),
        ),
        ([, specs, args, fallback]) => {
          const rules = compileRules(
            specs.map((s, i): PolicyRule => ({
              name: `r${i}`,
              when: whenOf(s),
              effect: s.effect,
              ...(s.shadow ? { mode: 'shadow' as const } : {}),
            })),
          );
          const policy = compileFor(rules, t, fallback);
          const vars = variablesFor(policy, { args, identity: undefined, now: 0 });
          const verdict = verdictOf(policy, vars);
          expect(verdict).toEqual(reference(rules, vars, fallback, byCompiledCondition));
          if (!Object.hasOwn(args, 'constructor')) expect(verdict).toEqual(reference(rules, vars, fallback));
        },
      ),
      { numRuns: 500 },
    );
  });

  it('group consecutive rules testing one field the same way, and keep rule order across and within runs', () => {
    const rules = compileRules([
      { name: 'eu-shadow', when: "args.region == 'eu'", effect: 'deny', mode: 'shadow' },
      { name: 'not-us', when: "args.region in ['us', 'ap']", effect: 'deny' },
      { name: 'eu-allowed', when: "'eu' == args.region", effect: 'allow' },
      { name: 'eu-denied', when: "args.region == 'eu'", effect: 'deny' },
      { name: 'between', when: "args.region.startsWith('a')", effect: 'ask' },
      { name: 'ap-allowed', when: "args.region == 'ap'", effect: 'allow' },
      { name: 'ap-denied', when: "args.region in ['ap']", effect: 'deny' },
    ]);
    const policy = compileFor(rules, tool(), 'deny');
    expect(
      policy.steps.map((s) =>
        s.run === undefined ? s.entry.rule.name : s.run.entries.map((e) => e.rule.name),
      ),
    ).toEqual([['eu-shadow', 'not-us', 'eu-allowed', 'eu-denied'], 'between', ['ap-allowed', 'ap-denied']]);
    const decided = (args: Record<string, unknown>) =>
      verdictOf(policy, variablesFor(policy, { args, identity: undefined, now: 0 }));
    // The earlier allow wins over the later deny that also matches; the shadow is still reported.
    expect(decided({ region: 'eu' })).toEqual({
      effect: 'allow',
      rule: 'eu-allowed',
      failed: false,
      shadows: [{ rule: 'eu-shadow', failed: false }],
    });
    expect(decided({ region: 'us' })).toMatchObject({ effect: 'deny', rule: 'not-us' });
    // 'ap' matches the first run's `in` before the rule between and the second run.
    expect(decided({ region: 'ap' })).toMatchObject({ effect: 'deny', rule: 'not-us' });
    expect(decided({ region: 'ab' })).toMatchObject({ effect: 'ask', rule: 'between' });
    expect(decided({ region: 'zz' })).toMatchObject({ effect: 'deny', rule: undefined });
    // A missing field: each rule errors in cel-js, the first deny matches (fail closed).
    expect(decided({})).toMatchObject({ effect: 'deny', rule: 'not-us', failed: true });
    // Wrong types, and a string only inherited (not an own field): rule by rule, as cel-js answers.
    const inherited = Object.create({ region: 'us' }) as Record<string, unknown>;
    for (const region of [7n, null, ['eu'], { eu: 'eu' }, true]) {
      const vars = variablesFor(policy, { args: { region }, identity: undefined, now: 0 });
      expect(verdictOf(policy, vars)).toEqual(reference(rules, vars, 'deny'));
    }
    const withInherited = { tool: policy.toolValue, args: inherited };
    expect(verdictOf(policy, withInherited)).toEqual(reference(rules, withInherited, 'deny'));
    expect(verdictOf(policy, withInherited)).toMatchObject({ rule: 'not-us', failed: true });
  });

  it('run affix and size tests on the value read once, in rule order, and rule by rule for other values', () => {
    const rules = compileRules([
      { name: 'x-shadow', when: "args.region.startsWith('x')", effect: 'deny', mode: 'shadow' },
      { name: 'xy-allowed', when: "args.region.startsWith('xy')", effect: 'allow' },
      { name: 'x-denied', when: "args.region.contains('x')", effect: 'deny' },
      { name: 'long', when: 'size(args.region) > 3', effect: 'ask' },
      { name: 'longer', when: 'args.region.size() >= 3', effect: 'deny' },
    ]);
    const policy = compileFor(rules, tool(), 'allow');
    expect(policy.steps.map((s) => (s.run === undefined ? s.entry.rule.name : s.run.kind))).toEqual([
      'affix',
      'size',
    ]);
    const decided = (args: Record<string, unknown>) =>
      verdictOf(policy, variablesFor(policy, { args, identity: undefined, now: 0 }));
    expect(decided({ region: 'xyz' })).toEqual({
      effect: 'allow',
      rule: 'xy-allowed',
      failed: false,
      shadows: [{ rule: 'x-shadow', failed: false }],
    });
    expect(decided({ region: 'ax' })).toMatchObject({ effect: 'deny', rule: 'x-denied' });
    expect(decided({ region: 'abcd' })).toMatchObject({ effect: 'ask', rule: 'long' });
    expect(decided({ region: 'abc' })).toMatchObject({ effect: 'deny', rule: 'longer' });
    expect(decided({ region: 'ab' })).toMatchObject({ effect: 'allow', rule: undefined });
    for (const args of [{}, { region: 'a😀b' }, { region: ['a', 'b', 'c', 'd'] }, { region: 3n }]) {
      const vars = variablesFor(policy, { args, identity: undefined, now: 0 });
      expect(verdictOf(policy, vars)).toEqual(reference(rules, vars, 'allow'));
    }
  });

  it('read a field once for interleaved rules on it, each still answered in its place', () => {
    const rules = compileRules([
      { name: 'eu', when: "args.region == 'eu'", effect: 'deny', mode: 'shadow' },
      { name: 'long-name', when: 'size(args.toString) > 2', effect: 'ask' },
      { name: 'x-prefix', when: "args.region.startsWith('x')", effect: 'deny' },
      { name: 'count', when: 'args.count > 3', effect: 'deny' },
      { name: 'z-pattern', when: "args.region.matches('^z[0-9]+$')", effect: 'ask' },
      { name: 'eu-allowed', when: "args.region in ['eu', 'us']", effect: 'allow' },
    ]);
    const policy = compileFor(rules, tool(), 'deny');
    expect(policy.steps.every((s) => s.run === undefined)).toBe(true);
    expect(policy.slots).toEqual([
      { field: 'region', read: 'string' },
      { field: 'toString', read: 'size' },
    ]);
    const cases: Record<string, unknown>[] = [
      { region: 'eu' },
      { region: 'eu', toString: 'abc' },
      { region: 'xeu' },
      { region: 'us', count: 5 },
      { region: 'us' },
      { region: 'z42', toString: 'ab', count: 1 },
      { region: 7 },
      { toString: ['a', 'b', 'c'] },
      {},
    ];
    for (const args of cases) {
      const vars = variablesFor(policy, { args, identity: undefined, now: 0 });
      expect(verdictOf(policy, vars)).toEqual(reference(rules, vars, 'deny'));
    }
    expect(
      verdictOf(
        policy,
        variablesFor(policy, {
          args: { region: 'eu', toString: 'ab', count: 1 },
          identity: undefined,
          now: 0,
        }),
      ),
    ).toEqual({
      effect: 'allow',
      rule: 'eu-allowed',
      failed: false,
      shadows: [{ rule: 'eu', failed: false }],
    });
  });
});
