// Properties: whatever the rules, a policy only narrows. A call an earlier gate refuses stays refused by
// that gate, and a call that runs under a policy also runs without it.

import fc from 'fast-check';
import { createDispatcher, type Decision, type PermissionChecker } from '@toolgate/core';
import { canonicalChain } from '@toolgate/middleware';
import { policyGate, type PolicyRule } from '@toolgate/policy';
import { countedTool, KEY } from './support';

const CONDITIONS = [
  undefined,
  'args.amount > 100.0',
  'args.amount <= 100.0',
  "'intern' in identity.roles",
  "identity.tenant == 'acme'",
  '!tool.annotations.readOnlyHint',
  'args.note.startsWith("x")',
  '10 / 0 > 1',
  "now.getHours('UTC') < 12",
];

const ruleArb = fc.record({
  tools: fc.option(fc.constantFrom(['pay'], ['read_*'], ['*']), { nil: undefined }),
  when: fc.constantFrom(...CONDITIONS),
  effect: fc.constantFrom('allow' as const, 'deny' as const, 'ask' as const),
  mode: fc.constantFrom('enforce' as const, 'shadow' as const),
});

const policyArb = fc.record({
  rules: fc.array(ruleArb, { maxLength: 6 }),
  fallback: fc.constantFrom('allow' as const, 'deny' as const, 'ask' as const),
});

const callArb = fc.record({
  tool: fc.constantFrom('pay', 'read_ledger'),
  // Some args break the schema (validate-args refuses them before policy).
  amount: fc.oneof(fc.double({ min: 0, max: 1000, noNaN: true }), fc.constant('lots' as unknown as number)),
  note: fc.option(fc.constantFrom('xyz', 'abc'), { nil: undefined }),
  identity: fc.record({
    tenant: fc.option(fc.constantFrom('acme', 'globex'), { nil: undefined }),
    roles: fc.constantFrom([], ['intern'], ['agent']),
  }),
  permitted: fc.boolean(),
});

function tools() {
  const props = { amount: { type: 'number' }, note: { type: 'string' } };
  return [
    countedTool({ name: 'pay', properties: props, required: ['amount'], capabilities: ['payments'] }),
    countedTool({
      name: 'read_ledger',
      properties: props,
      required: ['amount'],
      annotations: { readOnlyHint: true },
    }),
  ];
}

const checker = (permitted: boolean): PermissionChecker => ({
  check: (): Decision => (permitted ? { allow: true } : { allow: false, reason: 'not for you' }),
});

describe('policy only narrows', () => {
  test('a refusal by an earlier gate is never turned into a run, and nothing runs that would not run without the policy', async () => {
    await fc.assert(
      fc.asyncProperty(policyArb, callArb, async ({ rules, fallback }, call) => {
        const named: PolicyRule[] = rules.map((r, i) => ({
          name: `r${i}`,
          effect: r.effect,
          mode: r.mode,
          ...(r.tools !== undefined ? { tools: r.tools } : {}),
          ...(r.when !== undefined ? { when: r.when } : {}),
        }));
        const args = { amount: call.amount, ...(call.note !== undefined ? { note: call.note } : {}) };
        const identity = {
          ...(call.identity.tenant !== undefined ? { tenant: call.identity.tenant } : {}),
          roles: call.identity.roles,
        };
        const run = async (withPolicy: boolean) => {
          const list = tools();
          const dispatcher = createDispatcher({
            tools: list,
            chain: canonicalChain({
              checkInKey: KEY,
              permissions: checker(call.permitted),
              ...(withPolicy ? { policy: policyGate(named, { default: fallback }) } : {}),
            }),
          });
          const outcome = await dispatcher.dispatch({ toolName: call.tool, args }, { identity });
          return { outcome, runs: list.reduce((n, t) => n + t.runs, 0) };
        };
        const bare = await run(false);
        const governed = await run(true);
        if (bare.outcome.kind === 'refused') {
          expect(governed.outcome.kind).toBe('refused');
          expect(governed.outcome.kind === 'refused' && governed.outcome.gate).toBe(bare.outcome.gate);
          expect(governed.runs).toBe(0);
        }
        if (governed.runs > 0) expect(bare.runs).toBeGreaterThan(0);
      }),
      { numRuns: 150 },
    );
  });
});
