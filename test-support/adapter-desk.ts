// One governed workload for the framework adapters' tests: the same tools, policy and secrets, so
// each adapter is held to the same outcomes. Deterministic: fixed clock, seeded call ids.

import { Type } from 'typebox';
import {
  createDispatcher,
  defineTool,
  type CheckInStore,
  type Dispatcher,
  type ToolgateEventMap,
} from '@toolgate/core';
import { canonicalChain } from '@toolgate/middleware';
import {
  fixedClock,
  inMemoryCheckIns,
  seededIds,
  staticCredentials,
  staticPermissions,
} from '@toolgate/testing';

export const DESK_SECRET = 'sk-live-desk-7d1f0c';
export const DESK_KEY = 'adapter-desk-check-in-key-0123456789abcdef';
export const BIG_LOG_CHARS = 5_000;

export interface DeskRun {
  readonly tool: string;
  readonly args: unknown;
}

export interface Desk {
  readonly dispatcher: Dispatcher;
  /** The chain's check-in store. */
  readonly checkIns: CheckInStore;
  /** Every execute that ran, in order. */
  readonly ran: DeskRun[];
  /** The identity each permission check saw. */
  readonly permissions: ReturnType<typeof staticPermissions>;
  /** Every `dispatch.end` event. */
  readonly ends: ToolgateEventMap['dispatch.end'][];
  /** Every `checkin.resolved` event. */
  readonly resolved: ToolgateEventMap['checkin.resolved'][];
  /** Whether the credentialed tool saw the real secret. */
  readonly sawSecret: boolean[];
}

/** lookup_order, refund_order (a person approves), fetch_report (needs an API key), read_log (ceiling). */
export function adapterDesk(): Desk {
  const ran: DeskRun[] = [];
  const sawSecret: boolean[] = [];
  const lookup = defineTool({
    name: 'lookup_order',
    description: 'Look up an order by id.',
    inputSchema: Type.Object({ orderId: Type.String() }, { additionalProperties: false }),
    execute: (args) => {
      ran.push({ tool: 'lookup_order', args });
      return { orderId: args.orderId, total: 120 };
    },
  });
  const refund = defineTool({
    name: 'refund_order',
    description: 'Refund part of an order. A person approves every refund.',
    inputSchema: Type.Object(
      { orderId: Type.String(), amount: Type.Number() },
      { additionalProperties: false },
    ),
    checkIn: 'always',
    execute: (args) => {
      ran.push({ tool: 'refund_order', args });
      return { orderId: args.orderId, refunded: args.amount };
    },
  });
  const report = defineTool({
    name: 'fetch_report',
    description: 'Fetch the sales report from the billing service.',
    inputSchema: Type.Object({ month: Type.String() }),
    needs: { kind: 'api_key', service: 'billing' },
    execute: (args, ctx) => {
      ran.push({ tool: 'fetch_report', args });
      sawSecret.push(ctx.credential?.reveal() === DESK_SECRET);
      return { month: args.month, sales: 42 };
    },
  });
  const log = defineTool({
    name: 'read_log',
    description: 'Read the service log.',
    inputSchema: Type.Object({ lines: Type.Optional(Type.Number()) }),
    resultCeiling: { maxChars: 1_000, narrowBy: ['lines'] },
    execute: (args) => {
      ran.push({ tool: 'read_log', args });
      return 'x'.repeat(BIG_LOG_CHARS);
    },
  });
  const clock = fixedClock();
  const permissions = staticPermissions(
    [{ tool: 'refund_order', principal: 'guest', allow: false, reason: 'guests cannot refund orders' }],
    { default: 'allow' },
  );
  const checkIns = inMemoryCheckIns({ now: clock.now });
  const dispatcher = createDispatcher({
    tools: [lookup, refund, report, log],
    chain: canonicalChain({
      permissions,
      credentials: staticCredentials({ billing: DESK_SECRET }),
      checkInKey: DESK_KEY,
      checkIns,
    }),
    clock: clock.now,
    callIds: seededIds('desk'),
  });
  const ends: Desk['ends'] = [];
  const resolved: Desk['resolved'] = [];
  dispatcher.on('dispatch.end', (event) => ends.push(event));
  dispatcher.on('checkin.resolved', (event) => resolved.push(event));
  return { dispatcher, checkIns, ran, permissions, ends, resolved, sawSecret };
}
