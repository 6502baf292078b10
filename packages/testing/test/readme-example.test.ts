// The runnable example of the README's "Testing your policies" section; keep the two in sync.

import { createDispatcher, refusalReason, type Middleware } from '@toolgate/core';
import { canonicalChain } from '@toolgate/middleware';
import {
  fixedClock,
  inMemoryCheckIns,
  lastToolMessage,
  mockTool,
  runAgentLoop,
  scriptedModel,
  seededIds,
  staticPermissions,
} from '@toolgate/testing';
// Installs the matchers (toBeRefusedBy, toHaveRun, …) and brings the conformance suites.
import { describeCheckInStoreConformance, describeMiddlewareConformance } from '@toolgate/testing/jest';

// The policy under test: refunds above a limit are refused with a sentence the model can act on.
function refundLimit(max: number): Middleware {
  return {
    name: 'refund-limit',
    fingerprint: `max ${max}`,
    async run(ctx, next) {
      const amount = ctx.args['amount'];
      if (ctx.toolName === 'refund' && typeof amount === 'number' && amount > max) {
        ctx.deny(
          refusalReason(
            `refunds above ${max} need a person`,
            'Retrying will not help',
            `Refund at most ${max}, and tell the user support handles the rest`,
          ),
          { code: 'OVER_LIMIT' },
        );
      }
      await next();
    },
  };
}

describe('refund-limit', () => {
  it('refuses a refund over the limit, and the model corrects itself', async () => {
    const refund = mockTool({ name: 'refund', result: { refunded: true } });
    const dispatcher = createDispatcher({
      tools: [refund],
      chain: canonicalChain({ permissions: staticPermissions([{ tenant: 'acme', allow: true }]) }).use(
        refundLimit(500),
      ),
      clock: fixedClock().now,
      callIds: seededIds('refund-limit'),
    });

    const run = await runAgentLoop({
      dispatcher,
      identity: { tenant: 'acme' },
      model: scriptedModel([
        { toolName: 'refund', args: { orderId: 'o-1', amount: 900 } },
        (transcript) =>
          lastToolMessage(transcript)?.includes('above 500')
            ? { toolName: 'refund', args: { orderId: 'o-1', amount: 500 } }
            : 'I gave up.',
        { say: 'Refunded 500; support will handle the rest.' },
      ]),
    });

    expect(run.outcomes[0]).toBeRefusedBy('refund-limit', 'OVER_LIMIT');
    expect(run.outcomes[1]).toHaveRun();
    expect(run.outcomes[1]).toHaveLedgerRow({ gate: 'refund-limit', outcome: 'allow' });
    expect(refund).toHaveRun(1);
    expect(run.finalText).toBe('Refunded 500; support will handle the rest.');
  });
});

// The middleware laws, against the policy: it must let an allowed call through exactly once,
// call next at most once, fail closed, forward the signal and leak no argument value.
describeMiddlewareConformance('refund-limit', () => refundLimit(500), {
  toolName: 'refund',
  args: { orderId: 'o-1', amount: 100 },
  refused: { args: { orderId: 'o-1', amount: 900 } },
});

// The same suite any CheckInStore runs; swap in your own store's factory.
describeCheckInStoreConformance('in-memory check-ins', ({ now }) => inMemoryCheckIns({ now }));
