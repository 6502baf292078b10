// The policy gate through the middleware laws every gate obeys: it continues once or refuses, leaks
// no argument value into events, ledger or refusals, and fails closed.

import { policyGate } from '@toolgate/policy';
import { describeMiddlewareConformance } from '@toolgate/testing/jest';

const schema = {
  type: 'object',
  properties: { amount: { type: 'number' }, note: { type: 'string' } },
  required: ['amount'],
};

describeMiddlewareConformance(
  'policyGate',
  () =>
    policyGate(
      [
        {
          name: 'cap',
          tools: ['conformance_probe'],
          when: 'args.amount > 1000.0',
          effect: 'deny',
          reason: 'Ask for less',
        },
        { name: 'agents', when: "'agent' in identity.roles", effect: 'allow' },
      ],
      { default: 'deny' },
    ),
  {
    tool: { inputSchema: schema },
    args: { amount: 12 },
    identity: { tenant: 'acme', principal: 'ana', roles: ['agent'] },
    refused: { args: { amount: 5000 } },
    // A condition that cannot evaluate (an integer division by zero) on a deny rule: fails closed.
    broken: () =>
      policyGate([
        {
          name: 'note-check',
          tools: ['conformance_probe'],
          when: 'int(args.amount) / 0 > 1',
          effect: 'deny',
        },
      ]),
  },
);
