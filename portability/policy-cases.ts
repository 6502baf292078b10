// Policy cases for the portable suite: CEL rules compiled at dispatcher build and decided per call
// (deny, allow, ask through the check-in gate and its resume), and rules loaded from YAML.

import { checkInApproved, createDispatcher, defineTool } from '@toolgate/core';
import { canonicalChain, type SchemaValidator } from '@toolgate/middleware';
import { loadPolicy, policyGate, PolicyLoadError } from '@toolgate/policy';

const KEY = 'portable-suite-policy-key-0123456789abcdef';

function check(condition: unknown, what: string): asserts condition {
  if (!condition) throw new Error(what);
}

const POLICY = `
- name: interns-read-only
  when: "'intern' in identity.roles && !tool.annotations.readOnlyHint"
  effect: deny
  reason: interns may only use read-only tools
- name: big-refunds-ask
  tools: [issue_refund]
  when: args.amount > 1000.0 && args.items >= 1
  effect: ask
  reason: refunds over 1,000 need a supervisor
`;

function setup(validator: SchemaValidator) {
  let runs = 0;
  const refund = defineTool({
    name: 'issue_refund',
    description: 'Refunds an order',
    inputSchema: {
      type: 'object',
      required: ['amount'],
      properties: { amount: { type: 'number' }, items: { type: 'integer', default: 1 } },
    },
    execute: () => {
      runs += 1;
      return 'refunded';
    },
  });
  const dispatcher = createDispatcher({
    tools: [refund],
    chain: canonicalChain({ validator, checkInKey: KEY, policy: policyGate(loadPolicy(POLICY)) }),
  });
  return { dispatcher, runs: () => runs };
}

export function policyCases(validator: SchemaValidator): Record<string, () => Promise<void>> {
  return {
    'policy: a CEL deny refuses before the tool runs': async () => {
      const { dispatcher, runs } = setup(validator);
      const outcome = await dispatcher.dispatch(
        { toolName: 'issue_refund', args: { amount: 5 } },
        { identity: { tenant: 'acme', roles: ['intern'] } },
      );
      check(outcome.kind === 'refused' && outcome.code === 'POLICY_DENIED', `outcome was ${outcome.kind}`);
      check(outcome.content.includes('interns may only use read-only tools'), outcome.content);
      check(runs() === 0, 'the tool ran');
    },
    'policy: ask pauses at check-in and one approval runs it once': async () => {
      const { dispatcher, runs } = setup(validator);
      const first = await dispatcher.dispatch({ toolName: 'issue_refund', args: { amount: 5000 } });
      check(first.kind === 'paused' && first.checkIn.asker === 'check-in', `outcome was ${first.kind}`);
      const approval = checkInApproved({ by: 'supervisor' });
      const resumed = await dispatcher.resume(first.checkIn, approval);
      check(resumed.kind === 'result' && runs() === 1, `resume was ${resumed.kind}`);
      const again = await dispatcher.resume(first.checkIn, approval);
      check(again.kind === 'refused' && runs() === 1, 'an approval ran twice');
    },
    'policy: a call no rule matches runs': async () => {
      const { dispatcher, runs } = setup(validator);
      const outcome = await dispatcher.dispatch({ toolName: 'issue_refund', args: { amount: 50 } });
      check(outcome.kind === 'result' && runs() === 1, `outcome was ${outcome.kind}`);
    },
    'policy: a YAML error names line and column': async () => {
      try {
        loadPolicy('- name: a\n  effect: nope\n');
      } catch (error) {
        check(error instanceof PolicyLoadError && error.line === 2 && error.column === 11, String(error));
        return;
      }
      throw new Error('loadPolicy accepted a bad effect');
    },
  };
}
