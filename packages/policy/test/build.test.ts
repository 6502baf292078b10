// Typed at build: rules are checked when the gate is built (fields, syntax) and against every tool's
// schema when the dispatcher is built (undeclared args, wrong types).

import { createDispatcher, DispatcherConfigError } from '@toolgate/core';
import { canonicalChain } from '@toolgate/middleware';
import { policyGate, PolicyConfigError, type PolicyRule } from '@toolgate/policy';
import { countedTool, KEY, lookup, refund } from './support';

const build = (rules: readonly PolicyRule[], tools = [refund(), lookup()]) =>
  createDispatcher({ tools, chain: canonicalChain({ checkInKey: KEY, policy: policyGate(rules) }) });

function buildError(rules: readonly PolicyRule[], tools = [refund(), lookup()]): DispatcherConfigError {
  try {
    build(rules, tools);
  } catch (error) {
    if (error instanceof DispatcherConfigError) return error;
    throw error;
  }
  throw new Error('expected the dispatcher build to fail');
}

function configError(rules: unknown): PolicyConfigError {
  try {
    policyGate(rules as PolicyRule[]);
  } catch (error) {
    if (error instanceof PolicyConfigError) return error;
    throw error;
  }
  throw new Error('expected policyGate to refuse the rules');
}

describe('typed at build: a scoped rule against its tools', () => {
  test('reading an arg the tool does not declare fails the build naming rule, tool and field', () => {
    const error = buildError([
      { name: 'cap', tools: ['issue_refund'], when: 'args.amout > 10.0', effect: 'deny' },
    ]);
    expect(error.message).toBe(
      "createDispatcher: tool 'issue_refund' cannot be served by gate 'policy': policy rule 'cap' reads args.amout, which tool 'issue_refund' does not declare (it declares amount, order, items). Fix the field name, or leave 'issue_refund' out of the rule's tools.",
    );
  });

  test('comparing an arg with the wrong type fails the build naming rule, tool, field and column', () => {
    const error = buildError([
      { name: 'cap', tools: ['issue_refund'], when: 'args.order > 10', effect: 'deny' },
    ]);
    expect(error.message).toContain(
      "policy rule 'cap' uses args.order with the wrong type for tool 'issue_refund', whose schema makes it string (column 1)",
    );
    expect(error.message).toContain('string > int');
  });

  test('a glob reaching a tool without the field fails too: the rule must fit every tool it names', () => {
    const error = buildError([{ name: 'orders', tools: ['*'], when: 'args.amount > 1.0', effect: 'deny' }]);
    expect(error.message).toContain(
      "policy rule 'orders' reads args.amount, which tool 'lookup_order' does not declare (it declares order)",
    );
  });

  test('a tool whose schema declares no arguments is named as such', () => {
    const error = buildError(
      [{ name: 'x', tools: ['bare'], when: 'args.q == "a"', effect: 'deny' }],
      [countedTool({ name: 'bare' })],
    );
    expect(error.message).toContain("which tool 'bare' does not declare (it declares no arguments)");
  });

  test('a rule whose tools match nothing builds: it simply applies nowhere', () => {
    expect(() =>
      build([{ name: 'x', tools: ['nothing_*'], when: 'args.zzz > 1', effect: 'deny' }]),
    ).not.toThrow();
  });
});

describe('typed at build: an unscoped rule applies only where the schema has its args', () => {
  test('it is left out for tools lacking a field, and applied to those that have it', async () => {
    const refundTool = refund();
    const lookupTool = lookup();
    const gate = policyGate([{ name: 'cap', when: 'args.amount > 100.0', effect: 'deny' }]);
    const dispatcher = createDispatcher({
      tools: [refundTool, lookupTool],
      chain: canonicalChain({ policy: gate }),
    });
    expect(gate.rulesFor(refundTool)).toEqual(['cap']);
    expect(gate.rulesFor(lookupTool)).toEqual([]);
    const outcome = await dispatcher.dispatch({
      toolName: 'issue_refund',
      args: { amount: 500, order: 'o' },
    });
    expect(outcome.kind).toBe('refused');
    const listed = await dispatcher.dispatch({ toolName: 'lookup_order', args: { order: 'o' } });
    expect(listed.kind).toBe('result');
  });

  test('a tool that has the field with another type fails the build rather than silently never matching', () => {
    const tools = [refund(), countedTool({ name: 'set_label', properties: { amount: { type: 'string' } } })];
    const error = buildError([{ name: 'cap', when: 'args.amount > 100.0', effect: 'deny' }], tools);
    expect(error.message).toContain(
      "policy rule 'cap' uses args.amount with the wrong type for tool 'set_label'",
    );
  });

  test('nested objects and lists are typed from the schema', () => {
    const tool = countedTool({
      name: 'ship',
      properties: {
        address: { type: 'object', properties: { country: { type: 'string' } } },
        lines: { type: 'array', items: { type: 'integer' } },
      },
    });
    expect(() =>
      build(
        [
          {
            name: 'eu',
            when: "args.address.country in ['DE', 'FR'] && args.lines.all(n, n < 10)",
            effect: 'deny',
          },
        ],
        [tool],
      ),
    ).not.toThrow();
    const error = buildError(
      [{ name: 'bad', tools: ['ship'], when: 'args.address.zip == "1"', effect: 'deny' }],
      [tool],
    );
    expect(error.message).toContain(
      "policy rule 'bad' uses args.address with the wrong type for tool 'ship'",
    );
    expect(error.message).toContain('zip');
  });
});

describe('rules are checked when the gate is built', () => {
  test('a CEL syntax error names the rule and the column', () => {
    const error = configError([{ name: 'broken', when: 'args.amount >', effect: 'deny' }]);
    expect(error.message).toBe(
      "policy rule 'broken': its 'when' is not valid CEL at column 14: Unexpected token: EOF.",
    );
    expect(error.column).toBe(14);
  });

  test('an unknown variable or a type error outside args names the rule and column', () => {
    expect(configError([{ name: 'u', when: "user.name == 'x'", effect: 'deny' }]).message).toMatch(
      /^policy rule 'u': its 'when' does not type-check at column 1: .*user/,
    );
    expect(configError([{ name: 'r', when: 'identity.roles > 3', effect: 'deny' }]).message).toContain(
      "policy rule 'r': its 'when' does not type-check at column 1",
    );
  });

  test('a condition that is not a boolean is refused', () => {
    expect(configError([{ name: 'n', when: 'identity.tenant', effect: 'deny' }]).message).toBe(
      "policy rule 'n': its 'when' must be a condition (bool), but it is string.",
    );
  });

  test.each([
    [[{ effect: 'deny' }], "policy rule #1 needs a 'name'"],
    [[{ name: 'a', effect: 'block' }], "policy rule 'a': 'effect' must be allow, deny or ask"],
    [[{ name: 'a', effect: 'deny', mode: 'dry-run' }], "'mode' must be enforce or shadow"],
    [[{ name: 'a', effect: 'deny', tools: [] }], "'tools' must be a non-empty list"],
    [[{ name: 'a', effect: 'deny', tools: ['bad name'] }], "'tools' entries are tool names or globs"],
    [[{ name: 'a', effect: 'deny', efect: 'deny' }], "unknown key 'efect'"],
    [[{ name: 'a', effect: 'deny', when: '' }], "'when' must be a CEL expression"],
    [
      [
        { name: 'a', effect: 'deny' },
        { name: 'a', effect: 'allow' },
      ],
      "two policy rules are named 'a'",
    ],
    ['not a list', 'a policy is a list of rules'],
  ])('refuses %j', (rules, message) => {
    expect(configError(rules).message).toContain(message);
  });
});
