// The check-in flow through the gateway: hold for an approver, CHECKIN_PENDING after the hold, and a
// later decision as a single-use grant for the identical call. Decisions are recorded in the store
// with `decide`, as the inbox records them.

import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  createDispatcher,
  defineTool,
  inMemoryCheckIns,
  inMemoryStandingGrants,
  standingGrantFor,
  type CheckInRequest,
  type CheckInStore,
  type StandingGrant,
  type Dispatcher,
  type PausedOutcome,
} from '@toolgate/core';
import { canonicalChain } from '@toolgate/middleware';
import type { McpRequestExtra } from '@toolgate/mcp';
import { holdFor, SAFE_HOLD_MS, settlePaused, type Settled } from '../src/check-in-flow';
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

function extra(
  notifications: unknown[] = [],
  progressToken?: string,
  meta: Record<string, unknown> = {},
): McpRequestExtra {
  const _meta = { ...meta, ...(progressToken !== undefined ? { progressToken } : {}) };
  return {
    signal: new AbortController().signal,
    requestId: 1,
    sendNotification: async (notification: unknown) => {
      notifications.push(notification);
    },
    ...(Object.keys(_meta).length > 0 ? { _meta } : {}),
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
    maxPending?: number,
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
      ...(maxPending !== undefined ? { maxPending } : {}),
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

  it('gives identical retries one check-in: the inbox shows one row, one approval runs the call once', async () => {
    const first = await call(250);
    const second = await call(250);
    const third = await call(250);
    for (const retry of [second, third])
      expect(retry.settled).toMatchObject({ code: 'CHECKIN_PENDING', checkInId: first.paused.checkIn.id });
    const waiting = await store.list({ state: 'pending' });
    expect(waiting.map((record) => record.request.id)).toEqual([first.paused.checkIn.id]);

    // Two more identical retries are held while the approver decides: the call runs once.
    const held = [call(250, 3000), call(250, 3000)];
    await new Promise((done) => setTimeout(done, 50));
    expect((await store.list({ state: 'pending' })).length).toBe(1);
    expect(await store.decide(first.paused.checkIn.id, { approved: true, by: 'ana' })).toBe(true);
    const settled = await Promise.all(held);
    expect(
      settled.filter((r) => r.settled.kind === 'outcome' && r.settled.outcome.kind === 'result'),
    ).toHaveLength(1);
    expect(runs).toBe(1);
    // A different call, or the same call by someone else, is its own check-in.
    expect((await call(251)).settled).toMatchObject({ code: 'CHECKIN_PENDING' });
    expect((await call(250, 30, { tenant: 'acme', principal: 'other' })).settled).toMatchObject({
      code: 'CHECKIN_PENDING',
    });
    expect((await store.list({ state: 'pending' })).length).toBe(2);
  });

  it('caps pending check-ins per principal with CHECKIN_LIMIT; retries of a waiting call still share it', async () => {
    for (const amount of [1, 2, 3])
      expect((await call(amount, 5, identity, 3)).settled).toMatchObject({ code: 'CHECKIN_PENDING' });
    const over = await call(4, 5, identity, 3);
    expect(over.settled).toMatchObject({ kind: 'refused', code: 'CHECKIN_LIMIT', retryable: true });
    expect(over.settled.kind === 'refused' && over.settled.text).not.toContain('4');
    expect((await store.get(over.paused.checkIn.id))?.state).toBe('revoked');
    expect((await call(2, 5, identity, 3)).settled).toMatchObject({ code: 'CHECKIN_PENDING' });
    // Another principal of the same tenant is not held back by this one's flood.
    expect((await call(4, 5, { tenant: 'acme', principal: 'human-agent' }, 3)).settled).toMatchObject({
      code: 'CHECKIN_PENDING',
    });
    expect(runs).toBe(0);
  });

  it("never holds past the client's timeout: a declared one (less a margin), else a safe cap", () => {
    expect(holdFor(extra(), 10 * 60_000)).toBe(SAFE_HOLD_MS);
    expect(holdFor(extra(), 1_000)).toBe(1_000);
    expect(holdFor(extra([], undefined, { 'io.toolgate/timeoutMs': 10_000 }), 60_000)).toBe(8_000);
    expect(holdFor(extra([], undefined, { 'io.toolgate/timeoutMs': 1_000 }), 60_000)).toBe(0);
    expect(holdFor(extra([], undefined, { 'io.toolgate/timeoutMs': 'forever' }), 10 * 60_000)).toBe(
      SAFE_HOLD_MS,
    );
    expect(holdFor(extra([], undefined, { 'io.toolgate/timeoutMs': -5 }), 10 * 60_000)).toBe(SAFE_HOLD_MS);
  });

  it('answers at once when the declared timeout leaves no time to hold', async () => {
    const paused = (await dispatcher.dispatch(
      { toolName: 'refund', args: { amount: 8 } },
      { identity },
    )) as PausedOutcome;
    const started = Date.now();
    const settled = await settlePaused(paused, {
      server: noElicitation,
      dispatcher,
      store,
      identity,
      extra: extra([], undefined, { 'io.toolgate/timeoutMs': 1500 }),
      holdMs: 60_000,
      pollMs: 5,
      elicitTimeoutMs: 1000,
    });
    expect(settled).toMatchObject({ code: 'CHECKIN_PENDING' });
    expect(Date.now() - started).toBeLessThan(1500);
  });

  describe('standing grants', () => {
    async function granted(maxUses = 2) {
      const first = await call(300);
      const grants = inMemoryStandingGrants();
      const grant = standingGrantFor(first.paused.checkIn, {
        bounds: { amount: { atMost: 300 } },
        maxUses,
        expiresAt: new Date(Date.now() + 60_000).toISOString(),
        definitionDigest: 'def-1',
        createdBy: 'ana',
      });
      await grants.create(grant);
      return { grants, grant };
    }

    const callUnder = async (
      amount: number,
      options: {
        grants: ReturnType<typeof inMemoryStandingGrants>;
        definition?: string;
        record?: (grant: StandingGrant, request: CheckInRequest) => Promise<void>;
      },
    ) => {
      const paused = (await dispatcher.dispatch(
        { toolName: 'refund', args: { amount } },
        { identity },
      )) as PausedOutcome;
      return settlePaused(paused, {
        server: noElicitation,
        dispatcher,
        store,
        identity,
        extra: extra(),
        holdMs: 10,
        pollMs: 5,
        elicitTimeoutMs: 1000,
        grants: options.grants,
        definitionOf: () => options.definition ?? 'def-1',
        ...(options.record !== undefined ? { recordGrantUse: options.record } : {}),
      });
    };

    it('answers calls within its bounds, N times, each recorded; wider calls still ask', async () => {
      const { grants, grant } = await granted(2);
      const records: string[] = [];
      const record = async (used: StandingGrant, request: CheckInRequest) => {
        records.push(`${used.id}:${request.review['amount']}`);
      };
      expect(await callUnder(301, { grants, record })).toMatchObject({ code: 'CHECKIN_PENDING' });
      expect(await callUnder(120, { grants, record })).toMatchObject({
        kind: 'outcome',
        via: 'standing-grant',
        grantId: grant.id,
      });
      expect(await callUnder(300, { grants, record })).toMatchObject({
        kind: 'outcome',
        via: 'standing-grant',
      });
      expect(await callUnder(100, { grants, record })).toMatchObject({ code: 'CHECKIN_PENDING' });
      expect(records).toEqual([`${grant.id}:120`, `${grant.id}:300`]);
      expect(runs).toBe(2);
    });

    it('covers nothing once the definition changed, and is not used when its use cannot be recorded', async () => {
      const { grants, grant } = await granted(5);
      expect(await callUnder(50, { grants, definition: 'def-2' })).toMatchObject({ code: 'CHECKIN_PENDING' });
      const failing = async () => {
        throw new Error('audit store down');
      };
      expect(await callUnder(60, { grants, record: failing })).toMatchObject({ code: 'CHECKIN_PENDING' });
      expect(runs).toBe(0);
      await grants.revoke(grant.id);
      expect(await callUnder(70, { grants })).toMatchObject({ code: 'CHECKIN_PENDING' });
      expect(runs).toBe(0);
    });
  });
});
