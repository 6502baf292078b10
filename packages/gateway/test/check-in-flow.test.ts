// The check-in flow through the gateway: hold for an approver, CHECKIN_PENDING after the hold, and a
// later decision as a single-use grant for the identical call. Decisions are recorded in the store
// with `decide`, as the inbox records them.

import type { Server } from '@modelcontextprotocol/server';
import {
  createDispatcher,
  defineTool,
  inMemoryCheckIns,
  type CheckInStore,
  type Dispatcher,
  type PausedOutcome,
} from '@toolgate/core';
import { canonicalChain } from '@toolgate/middleware';
import type { McpRequestExtra } from '@toolgate/mcp';
import { settlePaused, type Settled } from '../src/check-in-flow';
import { CHECKIN_KEY } from './helpers';

type Decision =
  { approved: true; by: string; note?: string } | { approved: false; by: string; reason: string };

/** The core in-memory store; `decide` stamps the time, as the inbox does. */
function storeWithDecisions(): CheckInStore & { decide(id: string, decision: Decision): Promise<boolean> } {
  const inner = inMemoryCheckIns();
  return {
    ...inner,
    decide: (id, decision) => inner.decide(id, { ...decision, decidedAt: new Date().toISOString() }),
  };
}

const noElicitation = { getClientCapabilities: () => ({}) } as unknown as Server;

function extra(notifications: unknown[] = [], progressToken?: string): McpRequestExtra {
  return {
    mcpReq: {
      id: 1,
      signal: new AbortController().signal,
      notify: async (notification: unknown) => {
        notifications.push(notification);
      },
      ...(progressToken !== undefined ? { _meta: { progressToken } } : {}),
    },
  } as unknown as McpRequestExtra;
}

describe('settlePaused', () => {
  let store: ReturnType<typeof storeWithDecisions>;
  let dispatcher: Dispatcher;
  let runs: number;
  const identity = { tenant: 'acme', principal: 'bot' };

  beforeEach(() => {
    runs = 0;
    store = storeWithDecisions();
    const refund = defineTool({
      name: 'refund',
      description: 'Refunds an amount.',
      inputSchema: {
        type: 'object',
        properties: { amount: { type: 'number' } },
        required: ['amount'],
        additionalProperties: false,
      },
      checkIn: 'always',
      execute: ({ amount }: { amount: number }) => {
        runs += 1;
        return `refunded ${amount}`;
      },
    });
    dispatcher = createDispatcher({
      tools: [refund],
      chain: canonicalChain({ checkInKey: CHECKIN_KEY, checkIns: store }),
    });
  });

  const call = async (
    amount: number,
    holdMs = 30,
    who = identity,
  ): Promise<{ paused: PausedOutcome; settled: Settled }> => {
    const paused = (await dispatcher.dispatch(
      { toolName: 'refund', args: { amount } },
      { identity: who },
    )) as PausedOutcome;
    expect(paused.kind).toBe('paused');
    const settled = await settlePaused(paused, {
      server: noElicitation,
      dispatcher,
      store,
      identity: who,
      extra: extra(),
      holdMs,
      pollMs: 5,
      elicitTimeoutMs: 1000,
    });
    return { paused, settled };
  };

  it('answers CHECKIN_PENDING (retryable) after the hold, and the tool does not run', async () => {
    const { paused, settled } = await call(20);
    expect(settled).toMatchObject({
      kind: 'refused',
      gate: 'check-in',
      code: 'CHECKIN_PENDING',
      retryable: true,
      checkInId: paused.checkIn.id,
    });
    expect(settled.kind === 'refused' && settled.text).toMatch(
      /^\[check-in refused: 'refund' awaits a person's approval/,
    );
    expect(runs).toBe(0);
    expect((await store.get(paused.checkIn.id))?.state).toBe('pending');
  });

  it('runs the call when an approver decides during the hold, and sends progress', async () => {
    const notifications: unknown[] = [];
    const paused = (await dispatcher.dispatch(
      { toolName: 'refund', args: { amount: 7 } },
      { identity },
    )) as PausedOutcome;
    setTimeout(() => void store.decide(paused.checkIn.id, { approved: true, by: 'ana' }), 40);
    const settled = await settlePaused(paused, {
      server: noElicitation,
      dispatcher,
      store,
      identity,
      extra: extra(notifications, 'p1'),
      holdMs: 5000,
      pollMs: 5,
      elicitTimeoutMs: 1000,
    });
    expect(settled).toMatchObject({
      kind: 'outcome',
      via: 'inbox',
      outcome: { kind: 'result', content: 'refunded 7' },
    });
    expect(runs).toBe(1);
    expect(notifications.length).toBeGreaterThan(0);
    expect(notifications[0]).toMatchObject({
      method: 'notifications/progress',
      params: { progressToken: 'p1' },
    });
  });

  it('refuses with the approver’s reason when they decline during the hold', async () => {
    const paused = (await dispatcher.dispatch(
      { toolName: 'refund', args: { amount: 7 } },
      { identity },
    )) as PausedOutcome;
    setTimeout(
      () => void store.decide(paused.checkIn.id, { approved: false, by: 'ana', reason: 'duplicate refund' }),
      20,
    );
    const settled = await settlePaused(paused, {
      server: noElicitation,
      dispatcher,
      store,
      identity,
      extra: extra(),
      holdMs: 5000,
      pollMs: 5,
      elicitTimeoutMs: 1000,
    });
    expect(settled.kind === 'outcome' && settled.outcome.content).toContain('duplicate refund');
    expect(runs).toBe(0);
  });

  it('turns a later approval into a grant: the identical retry runs once, a second retry pauses again', async () => {
    const first = await call(500);
    expect(first.settled).toMatchObject({ code: 'CHECKIN_PENDING' });
    expect(await store.decide(first.paused.checkIn.id, { approved: true, by: 'ana' })).toBe(true);

    const retry = await call(500);
    expect(retry.settled).toMatchObject({
      kind: 'outcome',
      via: 'grant',
      outcome: { kind: 'result', content: 'refunded 500' },
    });
    expect(runs).toBe(1);

    const again = await call(500);
    expect(again.settled).toMatchObject({ kind: 'refused', code: 'CHECKIN_PENDING' });
    expect(runs).toBe(1);
  });

  it('binds a grant to the exact arguments and to the principal', async () => {
    const first = await call(500);
    await store.decide(first.paused.checkIn.id, { approved: true, by: 'ana' });
    expect((await call(501)).settled).toMatchObject({ code: 'CHECKIN_PENDING' });
    expect((await call(500, 30, { tenant: 'acme', principal: 'someone-else' })).settled).toMatchObject({
      code: 'CHECKIN_PENDING',
    });
    expect((await call(500, 30, { tenant: 'globex', principal: 'bot' })).settled).toMatchObject({
      code: 'CHECKIN_PENDING',
    });
    expect(runs).toBe(0);
    expect((await call(500)).settled).toMatchObject({ kind: 'outcome', via: 'grant' });
    expect(runs).toBe(1);
  });

  it('runs a grant once when two identical retries race for it', async () => {
    const first = await call(900);
    await store.decide(first.paused.checkIn.id, { approved: true, by: 'ana' });
    const [a, b] = await Promise.all([call(900), call(900)]);
    const granted = [a, b].filter((r) => r.settled.kind === 'outcome');
    expect(granted).toHaveLength(1);
    expect(runs).toBe(1);
  });

  it('does not use a grant whose request expired', async () => {
    const short = createDispatcher({
      tools: [...dispatcher.tools.values()],
      chain: canonicalChain({ checkInKey: CHECKIN_KEY, checkIns: store, checkInTtlMs: 30 }),
    });
    const paused = (await short.dispatch(
      { toolName: 'refund', args: { amount: 3 } },
      { identity },
    )) as PausedOutcome;
    await store.decide(paused.checkIn.id, { approved: true, by: 'ana' });
    await new Promise((done) => setTimeout(done, 60));
    const retry = (await short.dispatch(
      { toolName: 'refund', args: { amount: 3 } },
      { identity },
    )) as PausedOutcome;
    const settled = await settlePaused(retry, {
      server: noElicitation,
      dispatcher: short,
      store,
      identity,
      extra: extra(),
      holdMs: 10,
      pollMs: 5,
      elicitTimeoutMs: 1000,
    });
    expect(settled).toMatchObject({ kind: 'refused', code: 'CHECKIN_PENDING' });
    expect(runs).toBe(0);
  });
});
