// A support desk's refund tool behind one custom policy, dispatched three ways: allowed, refused by
// the policy, and refused by the dispatcher for args that are not JSON. Run: `pnpm demo`.
import { createChain, createDispatcher, defineTool, formatCount, refusalReason } from '@toolgate/core';
import type { DispatchOutcome, Middleware } from '@toolgate/core';

const REFUND_LIMIT = 100;

const refund = defineTool({
  name: 'refund',
  description: 'Refund part of an order to the customer.',
  inputSchema: {
    type: 'object',
    properties: { orderId: { type: 'string' }, amount: { type: 'number' } },
    required: ['orderId', 'amount'],
  },
  execute: ({ orderId, amount }) => ({ orderId, refunded: amount, status: 'queued' }),
});

// Larger refunds need a human, so this policy refuses them before the tool runs.
const refundLimit: Middleware = {
  name: 'refund-limit',
  async run(ctx, next) {
    const amount = ctx.args['amount'];
    if (typeof amount === 'number' && amount > REFUND_LIMIT) {
      ctx.deny(
        refusalReason(
          `'${ctx.toolName}' may refund at most ${formatCount(REFUND_LIMIT)} per call`,
          'Retrying with the same amount will be refused again',
          'Ask the customer to contact a supervisor for larger refunds',
        ),
        { code: 'OVER_LIMIT' },
      );
    }
    await next();
  },
};

const dispatcher = createDispatcher({ tools: [refund], chain: createChain([refundLimit]) });

function show(label: string, outcome: DispatchOutcome): void {
  const who = outcome.kind === 'refused' ? ` by ${outcome.gate} (${outcome.code})` : '';
  console.log(`${label}\n  ${outcome.kind}${who}, ran: ${outcome.ran}\n  model reads: ${outcome.content}\n`);
}

show(
  'A refund within the limit',
  await dispatcher.dispatch({ toolName: 'refund', args: { orderId: 'A-17', amount: 40 } }),
);
show(
  'A refund over the limit',
  await dispatcher.dispatch({ toolName: 'refund', args: { orderId: 'A-17', amount: 900 } }),
);
show(
  'Args that are not JSON',
  await dispatcher.dispatch({ toolName: 'refund', args: '{"orderId": "A-17", amount: 40' }),
);
