// The world the framework adapters are tested in: one dispatcher with every gate an adapter must carry
// (validation, permission, check-in, credentials, result ceiling), deterministic clock and ids.

import {
  createDispatcher,
  defineTool,
  type Dispatcher,
  type DispatchOutcome,
  type CheckInStore,
  type Middleware,
} from '@toolgate/core';
import { canonicalChain } from '@toolgate/middleware';
import {
  fixedClock,
  inMemoryCheckIns,
  seededIds,
  staticCredentials,
  staticPermissions,
} from '@toolgate/testing';

export const SECRET = 'sk_live_ADAPTER_SECRET_9f3e';
export const KEY = 'adapter-test-check-in-key-0123456789';

/**
 * A world with every gate the adapters must carry: validation, permission, check-in, credentials, ceiling.
 * Pass `checkIns` (and the `clock` it runs on) to share one check-in store between worlds, as two
 * processes over one database would.
 */
export function world(
  options: { policy?: Middleware; checkIns?: CheckInStore; clock?: ReturnType<typeof fixedClock> } = {},
) {
  const clock = options.clock ?? fixedClock();
  const permissions = staticPermissions(
    [
      { tool: 'delete_account', allow: false, reason: 'only an admin may delete accounts' },
      { tenant: 'acme', allow: true },
    ],
    { default: 'deny' },
  );
  const credentials = staticCredentials({ billing: SECRET });
  const ran: Record<string, unknown[]> = {};
  const record = (name: string, args: unknown) => (ran[name] ??= []).push(args);
  const tools = [
    defineTool({
      name: 'echo',
      description: 'Echo a text back.',
      inputSchema: {
        type: 'object',
        properties: { text: { type: 'string' } },
        required: ['text'],
        additionalProperties: false,
      },
      execute: (args: { text: string }) => {
        record('echo', args);
        return args.text;
      },
    }),
    defineTool({
      name: 'delete_account',
      description: 'Delete an account.',
      inputSchema: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] },
      execute: (args: { id: string }) => {
        record('delete_account', args);
        return 'deleted';
      },
    }),
    defineTool({
      name: 'refund',
      description: 'Refund an order.',
      inputSchema: { type: 'object', properties: { amount: { type: 'number' } }, required: ['amount'] },
      checkIn: 'always',
      execute: (args: { amount: number }) => {
        record('refund', args);
        return `refunded ${args.amount}`;
      },
    }),
    defineTool({
      name: 'transfer',
      description: 'Transfer money; large amounts need a human.',
      inputSchema: { type: 'object', properties: { amount: { type: 'number' } }, required: ['amount'] },
      checkIn: (args: { amount: number }) => args.amount > 100,
      execute: (args: { amount: number }) => {
        record('transfer', args);
        return `transferred ${args.amount}`;
      },
    }),
    defineTool({
      name: 'charge',
      description: 'Charge the card on file.',
      inputSchema: { type: 'object', properties: { cents: { type: 'number' } }, required: ['cents'] },
      needs: { kind: 'api_key', service: 'billing' },
      execute: (args: { cents: number }, ctx) => {
        record('charge', args);
        // A careless tool that echoes its key: the model must still never read it.
        return `charged ${args.cents} with ${ctx.credential?.reveal() ?? 'no key'}`;
      },
    }),
    defineTool({
      name: 'search',
      description: 'Search the docs.',
      inputSchema: { type: 'object', properties: { limit: { type: 'number' } } },
      resultCeiling: { maxChars: 200, narrowBy: ['limit'] },
      execute: (args: { limit?: number }) => {
        record('search', args);
        return 'x'.repeat((args.limit ?? 100) * 10);
      },
    }),
  ];
  let chain = canonicalChain({
    permissions,
    credentials,
    checkInKey: KEY,
    checkIns: options.checkIns ?? inMemoryCheckIns({ now: clock.now }),
  });
  if (options.policy !== undefined) chain = chain.use(options.policy);
  const dispatcher = createDispatcher({ tools, chain, clock: clock.now, callIds: seededIds('adapters') });
  return { dispatcher, permissions, credentials, ran, clock };
}

export type { Dispatcher, DispatchOutcome };
