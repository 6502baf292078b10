// The compiled closures answer as cel-js does (the same value, or an error where it errs), for the
// operators policies use, over args of the declared types and of wrong ones; parts that test only
// the tool fold at build, so a rule false for a tool is never evaluated for it, yet still listed.

import fc from 'fast-check';
import type { Tool } from '@toolgate/core';
import { policyGate } from '@toolgate/policy';
import { compileCondition } from '../src/compile';
import { compileFor, decide, variablesFor } from '../src/decide';
import { compileRules } from '../src/rules';
import { countedTool } from './support';

const EXPRESSIONS = [
  "args.region == 'eu'",
  "args.region != 'eu' && args.count > 3",
  'args.count >= 2 || args.amount < 10.5',
  "!(args.flag) && 'admin' in identity.roles",
  "args.region in ['eu', 'us', 'ap']",
  "args.tags.exists(t, t == 'x')",
  "'x' in args.tags",
  'size(args.region) > 2 && args.region.size() < 6',
  'size(args.tags) == 2',
  "args.region.startsWith('e') || args.region.endsWith('s') || args.region.contains('p')",
  "args.region.matches('^[a-z]{2}$')",
  "args.email.matches('^[a-z0-9._%+-]+@example\\\\.com$')",
  'has(args.flag) ? args.flag : false',
  'args.count + 1 > 4 && args.count * 2 < 100 && args.count - 3 != 0',
  '-args.amount < 0.0',
  'args.amount + 1.5 > 2.0',
  "tool.name == 'send' && args.count > 1",
  "tool.annotations.readOnlyHint || args.region == 'eu'",
  "args.tags[0] == 'x'",
  "identity.principal == 'ana'",
  "args.region < 'm'",
];

const schema = {
  region: { type: 'string' },
  count: { type: 'integer' },
  amount: { type: 'number' },
  flag: { type: 'boolean' },
  tags: { type: 'array', items: { type: 'string' } },
  email: { type: 'string' },
};

const tool = (name = 'send'): Tool => countedTool({ name, properties: schema });

/** Well-typed args, and often not: absent fields, wrong types, odd strings. */
const anyValue = fc.oneof(
  fc.string(),
  fc.integer(),
  fc.double({ noNaN: false }),
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.string(), { maxLength: 3 }),
);
const argsArb = fc.record(
  {
    region: fc.oneof(fc.constantFrom('eu', 'us', 'ap', 'e😀s', ''), fc.string({ maxLength: 6 }), anyValue),
    count: fc.oneof(fc.integer({ min: -5, max: 200 }), anyValue),
    amount: fc.oneof(fc.double({ min: -20, max: 20, noNaN: true }), anyValue),
    flag: fc.oneof(fc.boolean(), anyValue),
    tags: fc.oneof(fc.array(fc.constantFrom('x', 'y', 'z'), { maxLength: 3 }), anyValue),
    email: fc.oneof(fc.constantFrom('ana@example.com', 'x@evil.example', 'A@example.com'), fc.string()),
  },
  { requiredKeys: [] },
);
const identityArb = fc.record(
  {
    principal: fc.constantFrom('ana', 'bo'),
    roles: fc.array(fc.constantFrom('admin', 'agent'), { maxLength: 2 }),
  },
  { requiredKeys: ['roles'] },
);

type Answer = { value: unknown } | { error: true };
const answer = (fn: () => unknown): Answer => {
  try {
    return { value: fn() };
  } catch {
    return { error: true };
  }
};

describe('compiled conditions', () => {
  it('answer as cel-js does, value for value and error for error', () => {
    const rules = compileRules(
      EXPRESSIONS.map((when, i) => ({ name: `r${i}`, when, effect: 'deny' as const })),
    );
    const t = tool();
    const policy = compileFor(rules, t, 'allow');
    fc.assert(
      fc.property(argsArb, identityArb, (args, identity) => {
        const vars = variablesFor(policy, { args, identity, now: 0 });
        for (const rule of rules) {
          const condition = compileCondition(rule.when!.ast, policy.toolValue, rule.when!.evaluate);
          const compiled = answer(() =>
            condition.kind === 'evaluate' ? condition.evaluate(vars) : condition.kind === 'always',
          );
          expect([rule.when!.text, compiled]).toEqual([
            rule.when!.text,
            answer(() => rule.when!.evaluate(vars)),
          ]);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('run the common operators without cel-js', () => {
    const t = tool();
    const rules = compileRules(
      EXPRESSIONS.filter((e) => !e.includes('exists') && !e.includes("< 'm'")).map((when, i) => ({
        name: `r${i}`,
        when,
        effect: 'deny' as const,
      })),
    );
    const vars = {
      tool: compileFor([], t, 'allow').toolValue,
      args: { region: 'eu', count: 5n, amount: 3.5, flag: false, tags: ['x', 'y'], email: 'ana@example.com' },
      identity: { principal: 'ana', roles: ['agent'] },
    };
    for (const rule of rules) {
      const condition = compileCondition(rule.when!.ast, vars.tool, () => {
        throw new Error(`cel-js was asked for ${rule.when!.text}`);
      });
      if (condition.kind === 'evaluate') expect(() => condition.evaluate(vars)).not.toThrow();
    }
  });

  it('fold what tests only the tool: a rule false for a tool is listed but never evaluated', () => {
    const rules = compileRules([
      { name: 'send-only', when: "tool.name == 'send' && args.count > 1", effect: 'deny' },
      { name: 'read-only-tools', when: 'tool.annotations.readOnlyHint', effect: 'deny' },
    ]);
    const other = compileFor(rules, tool('other'), 'allow');
    expect(other.entries.map((e) => e.rule.name)).toEqual(['send-only', 'read-only-tools']);
    expect(other.active).toEqual([]);
    const send = compileFor(rules, tool('send'), 'allow');
    expect(send.active.map((e) => e.rule.name)).toEqual(['send-only']);
    expect(
      decide(send, variablesFor(send, { args: { count: 2 }, identity: undefined, now: 0 })).rule?.name,
    ).toBe('send-only');
    expect(
      policyGate([{ name: 'send-only', when: "tool.name == 'send'", effect: 'deny' }]).rulesFor(
        tool('other'),
      ),
    ).toEqual(['send-only']);
  });
});
