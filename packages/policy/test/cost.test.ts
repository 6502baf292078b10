// Policy cost (finding #32.5): a rule's cost is bounded at build against each tool's schema, a rule
// that grows faster than its input is refused (POLICY_COST, naming it), and a decision has a deadline
// it fails closed on, so one tenant's arguments cannot stall the event loop for everyone.

import { createDispatcher, DispatcherConfigError, type Tool } from '@toolgate/core';
import { canonicalChain } from '@toolgate/middleware';
import { policyGate, PolicyBuildError, type PolicyRule } from '@toolgate/policy';
import { estimateCost, MAX_RULE_COST } from '../src/cost';
import { compileFor, decide, variablesFor } from '../src/decide';
import { compileRules } from '../src/rules';
import { countedTool, KEY, refused, result, setup, ana } from './support';

const NO_DUPLICATES = 'args.to.exists(a, args.to.filter(b, b == a).size() > 1)';
const noDuplicates: PolicyRule = {
  name: 'no-duplicate-recipients',
  tools: ['send_mail'],
  when: NO_DUPLICATES,
  effect: 'deny',
  reason: 'each recipient once',
};

const mailTool = (to: Record<string, unknown>) =>
  countedTool({ name: 'send_mail', properties: { to: { type: 'array', items: { type: 'string' }, ...to } } });

const recipients = (n: number) => Array.from({ length: n }, (_, i) => `r${i}@example.com`);

function buildError(tool: Tool, rules: PolicyRule[]): PolicyBuildError {
  try {
    policyGate(rules).rulesFor(tool);
  } catch (error) {
    if (error instanceof PolicyBuildError) return error;
    throw error;
  }
  throw new Error('expected the policy build to fail');
}

describe('cost bound at build', () => {
  it('"no duplicate recipients" over an unbounded list: refused with POLICY_COST naming the rule', () => {
    const error = buildError(mailTool({}), [noDuplicates]);
    expect(error.code).toBe('POLICY_COST');
    expect(error.message).toContain(
      "policy rule 'no-duplicate-recipients' has no cost bound for tool 'send_mail'",
    );
    expect(error.message).toContain('maxItems');
    // And the dispatcher is not built with it.
    expect(() =>
      createDispatcher({
        tools: [mailTool({})],
        chain: canonicalChain({ checkInKey: KEY, policy: policyGate([noDuplicates]) }),
      }),
    ).toThrow(DispatcherConfigError);
  });

  it('bounded by maxItems: 6,000 is over the limit, 100 is served and decides', async () => {
    const big = buildError(mailTool({ maxItems: 6000 }), [noDuplicates]);
    expect(big.code).toBe('POLICY_COST');
    expect(big.message).toMatch(/may take about [\d,]+ steps .* over the limit/);

    const tool = mailTool({ maxItems: 100 });
    const { dispatcher } = setup([tool], [noDuplicates]);
    result(
      await dispatcher.dispatch({ toolName: 'send_mail', args: { to: recipients(100) } }, { identity: ana }),
    );
    const twice = [...recipients(99), 'r0@example.com'];
    const denied = refused(
      await dispatcher.dispatch({ toolName: 'send_mail', args: { to: twice } }, { identity: ana }),
    );
    expect(denied.code).toBe('POLICY_DENIED');
    // 6,000 recipients never reach the rule: the schema's bound refuses them first.
    const flood = refused(
      await dispatcher.dispatch({ toolName: 'send_mail', args: { to: recipients(6000) } }, { identity: ana }),
    );
    expect(flood.gate).toBe('validate-args');
    expect(tool.runs).toBe(1);
  });

  it('rules that walk an input once are linear in it and allowed, whatever the list length', () => {
    const tool = mailTool({});
    for (const when of [
      "'ceo@example.com' in args.to",
      "args.to.exists(a, a.endsWith('@evil.example'))",
      "args.to.all(a, a.matches('^[a-z0-9.]+@example\\\\.com$')) && size(args.to) < 50",
    ]) {
      expect(policyGate([{ name: 'r', tools: ['send_mail'], when, effect: 'deny' }]).rulesFor(tool)).toEqual([
        'r',
      ]);
    }
  });

  it('the estimate follows the schema: nested walks multiply, bounds apply per level, literals count as written', () => {
    const ast = (text: string) => compileRules([{ name: 'r', when: text, effect: 'deny' }])[0]!.when!.ast;
    const schema = (to: Record<string, unknown>) => ({
      type: 'object',
      properties: { to: { type: 'array', items: { type: 'string', maxLength: 20 }, ...to } },
    });
    expect(estimateCost(ast(NO_DUPLICATES), schema({})).degree).toBe(2);
    expect(estimateCost(ast(NO_DUPLICATES), schema({ maxItems: 10 })).degree).toBe(0);
    const linear = estimateCost(ast("args.to.exists(a, a.contains('x'))"), schema({}));
    expect(linear.degree).toBe(1);
    expect(linear.steps).toBeLessThan(MAX_RULE_COST);
    // A walk of a literal list inside a walk of an unbounded one stays linear.
    expect(estimateCost(ast("args.to.exists(a, ['x', 'y'].exists(b, a == b))"), schema({})).degree).toBe(1);
  });
});

describe('the decision deadline', () => {
  const tool = countedTool({
    name: 'send_mail',
    properties: { to: { type: 'array', items: { type: 'string' } } },
  });
  const scanners: PolicyRule[] = Array.from({ length: 20 }, (_, i) => ({
    name: `scan-${i}`,
    when: `args.to.exists(a, a.matches('^blocked-${i}@'))`,
    effect: 'deny' as const,
  }));

  it('past the deadline the decision denies (fail closed) at the rule it did not reach', () => {
    const policy = compileFor(compileRules(scanners), tool, 'allow');
    let t = 0;
    // A clock that moves 10 ms each time it is read: the third look (every 8 costly rules) is past
    // a 15 ms deadline.
    const verdict = decide(policy, variablesFor(policy, { args: { to: ['a@b'] }, identity: ana, now: 0 }), {
      ms: 15,
      now: () => (t += 10),
    });
    expect(verdict).toMatchObject({
      effect: 'deny',
      failed: true,
      timedOut: true,
      rule: { name: 'scan-15' },
    });
    // Without a deadline the same call is allowed: the deadline, not a rule, refused it.
    expect(
      decide(policy, variablesFor(policy, { args: { to: ['a@b'] }, identity: ana, now: 0 })).effect,
    ).toBe('allow');
  });

  it('through the gate: a call whose decision outlasts the deadline is refused with POLICY_COST, and cheap rules never read the clock', async () => {
    const { dispatcher, events } = setup([tool], scanners, { decisionDeadlineMs: 1 });
    const outcome = refused(
      await dispatcher.dispatch(
        { toolName: 'send_mail', args: { to: recipients(20_000) } },
        { identity: ana },
      ),
    );
    expect(outcome.code).toBe('POLICY_COST');
    expect(outcome.content).not.toContain('r0@example.com');
    expect(events.find((e) => e.type === 'policy.decided')).toMatchObject({ effect: 'deny', timedOut: true });
    expect(tool.runs).toBe(0);

    const cheap = compileFor(
      compileRules([{ name: 'c', when: "'x' in identity.roles", effect: 'deny' }]),
      tool,
      'allow',
    );
    const never = () => {
      throw new Error('read the clock');
    };
    expect(
      decide(cheap, variablesFor(cheap, { args: {}, identity: ana, now: 0 }), { ms: 1, now: never }).effect,
    ).toBe('allow');
  });

  it('refuses a deadline that is not a positive number', () => {
    expect(() => policyGate([], { decisionDeadlineMs: 0 })).toThrow(/decisionDeadlineMs/);
  });
});
