import {
  checkInApproved,
  ChainOrderError,
  CANONICAL_ORDER,
  createDispatcher,
  type CredentialProvider,
  type ResolvedCredential,
} from '@toolgate/core';
import {
  canonicalChain,
  inMemoryLimits,
  limitsGate,
  type LimitCharge,
  type LimitRule,
  type LimitsGateOptions,
  type LimitStore,
} from '@toolgate/middleware';
import {
  eventsOf,
  expectPaused,
  expectRefused,
  expectResult,
  KEY,
  manualClock,
  never,
  recordEvents,
  recordingTool,
  type RecordingToolSpec,
} from './fixtures';

const HOUR = 3_600_000;
const ACME = { identity: { tenant: 'acme', principal: 'ana' } };
const TENANT_CALLS: LimitRule = { name: 'tenant-calls', per: 'tenant', calls: 2, windowMs: HOUR };

/** The in-memory store, counting what the gate asks of it. */
function countingStore(inner: LimitStore = inMemoryLimits()) {
  const seen = { consumes: [] as LimitCharge[][], refunds: [] as LimitCharge[][] };
  const store: LimitStore = {
    consume(charges, now) {
      seen.consumes.push([...charges]);
      return inner.consume(charges, now);
    },
    refund(charges, now) {
      seen.refunds.push([...charges]);
      return inner.refund(charges, now);
    },
  };
  return { store, seen };
}

function setup(
  limits: Partial<LimitsGateOptions> & { limits?: readonly LimitRule[] } = {},
  spec: RecordingToolSpec = {},
  respond?: Parameters<typeof recordingTool>[1],
  more: { credentials?: CredentialProvider; defaultMaxChars?: number } = {},
) {
  const clock = manualClock();
  const tool = recordingTool({ name: 'search', ...spec }, respond);
  const dispatcher = createDispatcher({
    tools: [tool],
    chain: canonicalChain({
      limits: { limits: [TENANT_CALLS], ...limits },
      checkInKey: KEY,
      ...more,
    }),
    clock: clock.now,
  });
  const events = recordEvents(dispatcher, ['limits.refused', 'limits.failed-open', 'limits.store-failed']);
  const call = (args: Record<string, unknown> = {}, options: object = ACME) =>
    dispatcher.dispatch({ toolName: 'search', args }, options);
  return { dispatcher, tool, clock, events, call };
}

describe('limitsGate: rates', () => {
  it('refuses the call past the rate, naming the limit, the window and when it has room again', async () => {
    const { tool, call } = setup();
    expectResult(await call());
    expectResult(await call());
    const refused = expectRefused(await call());
    expect(refused).toMatchObject({ gate: 'limits', code: 'RATE_LIMITED', retryable: true });
    expect(refused.content).toBe(
      "[limits refused: 'search' did not run: the rate limit 'tenant-calls' (2 calls per hour for each tenant) is used up. " +
        'Waiting helps: it has room again in 30 min, at 2031-03-04T05:36:07.000Z. Call it again then, or do something else meanwhile.]',
    );
    expect(tool.calls).toHaveLength(2);
  });

  it('lets the call run again once the time the refusal named has passed', async () => {
    const { tool, clock, call } = setup();
    await call();
    await call();
    expectRefused(await call());
    clock.advance(30 * 60_000);
    expectResult(await call());
    expectRefused(await call());
    expect(tool.calls).toHaveLength(3);
  });

  it('keeps one bucket per tenant: another tenant is not held back', async () => {
    const { call } = setup();
    await call();
    await call();
    expectRefused(await call());
    expectResult(await call({}, { identity: { tenant: 'globex' } }));
  });

  it('keys per principal and per tool, from the identity and the tool name, never from args', async () => {
    const { call } = setup({
      limits: [{ name: 'per-person-tool', per: ['tool', 'principal'], calls: 1, windowMs: HOUR }],
    });
    expectResult(await call({ text: 'a' }, { identity: { tenant: 'acme', principal: 'ana' } }));
    // Args that look like identity change nothing.
    expectRefused(
      await call({ text: 'b', principal: 'bob' }, { identity: { tenant: 'x', principal: 'ana' } }),
    );
    expectResult(await call({}, { identity: { tenant: 'acme', principal: 'bob' } }));
  });

  it('puts calls without the identity value a limit is kept per into one shared bucket', async () => {
    const { call } = setup();
    expectResult(await call({}, {}));
    expectResult(await call({}, { identity: { principal: 'ana' } }));
    expectRefused(await call({}, {}));
    expectResult(await call({}, { identity: { tenant: 'null' } }));
  });

  it('checks every limit at once and takes from none when one refuses', async () => {
    const { store, seen } = countingStore();
    const { call } = setup({
      store,
      limits: [
        { name: 'tenant-calls', per: 'tenant', calls: 5, windowMs: HOUR },
        { name: 'person-calls', per: 'principal', calls: 1, windowMs: 60_000 },
      ],
    });
    expectResult(await call());
    const refused = expectRefused(await call());
    expect(refused.content).toContain("the rate limit 'person-calls' (1 call per minute for each principal)");
    expect(seen.consumes.map((charges) => charges.map((c) => c.rule))).toEqual([
      ['tenant-calls', 'person-calls'],
      ['tenant-calls', 'person-calls'],
    ]);
    // The refused call took nothing from 'tenant-calls': four more principals fit.
    for (const principal of ['b', 'c', 'd', 'e']) {
      expectResult(await call({}, { identity: { tenant: 'acme', principal } }));
    }
    expectRefused(await call({}, { identity: { tenant: 'acme', principal: 'f' } }));
  });
});

describe('limitsGate: budgets', () => {
  const spend = (
    cost: LimitRule extends infer R ? (R extends { cost: infer C } ? C : never) : never,
  ): LimitRule => ({
    name: 'tenant-spend',
    per: 'tenant',
    budget: 10,
    windowMs: 86_400_000,
    cost,
  });

  it('takes the cost the budget declares for the args that will run', async () => {
    const { tool, call } = setup({ limits: [spend(({ args }) => (args['pages'] as number) ?? 1)] });
    expectResult(await call({ pages: 6 }));
    const refused = expectRefused(await call({ pages: 6 }));
    expect(refused).toMatchObject({ code: 'BUDGET_EXCEEDED', retryable: true });
    expect(refused.content).toContain(
      "'search' did not run: it costs 6, more than is left of the budget 'tenant-spend' (10 per day for each tenant)",
    );
    expectResult(await call({ pages: 4 }));
    expect(tool.calls).toHaveLength(2);
  });

  it('refuses a call that costs more than the whole budget, saying waiting will not help', async () => {
    const { store, seen } = countingStore();
    const { call } = setup({ store, limits: [spend(() => 11)] });
    const refused = expectRefused(await call());
    expect(refused).toMatchObject({ code: 'BUDGET_TOO_SMALL', retryable: false });
    expect(refused.content).toContain('Waiting will not help');
    expect(seen.consumes).toHaveLength(0);
  });

  it('lets a call that costs nothing pass without asking the store', async () => {
    const { store, seen } = countingStore();
    const { dispatcher, call } = setup({
      store,
      limits: [spend(({ toolName }) => (toolName === 'search' ? 0 : 5))],
    });
    const outcome = expectResult(await call());
    expect(seen.consumes).toHaveLength(0);
    expect(outcome.ledger.find((row) => row.gate === 'limits')).toMatchObject({
      outcome: 'allow',
      why: 'no limit applies',
    });
    expect(dispatcher).toBeDefined();
  });

  it.each([
    [
      'throws',
      () => {
        throw new Error('secret-bearing message');
      },
    ],
    ['answers NaN', () => Number.NaN],
    ['answers a negative cost', () => -1],
    ['answers a string', () => '3' as unknown as number],
    ['answers a fraction', () => 0.5],
    ['answers a number past 2^53', () => 2 ** 60],
  ])('refuses, without running the tool, when the cost function %s', async (_, cost) => {
    const { tool, call } = setup({ limits: [spend(cost)] });
    const refused = expectRefused(await call());
    expect(refused).toMatchObject({ gate: 'limits', code: 'LIMITS_COST_FAILED', retryable: false });
    expect(refused.content).not.toContain('secret-bearing');
    expect(tool.calls).toHaveLength(0);
  });
});

describe('limitsGate: what a call is charged', () => {
  const rule = (calls: number): LimitRule => ({ name: 'tenant-calls', per: 'tenant', calls, windowMs: HOUR });

  it('gives back what a call took when a later gate refuses it', async () => {
    let fail = true;
    const credentials: CredentialProvider = {
      resolve: () => {
        if (fail) throw new Error('vault down');
        return { kind: 'api_key', value: 'k' } as ResolvedCredential;
      },
    };
    const { store, seen } = countingStore();
    const { tool, call } = setup(
      { store, limits: [rule(1)] },
      { needs: { kind: 'api_key', service: 'search' } },
      undefined,
      { credentials },
    );
    expect(expectRefused(await call()).gate).toBe('credentials');
    expect(seen.refunds).toHaveLength(1);
    fail = false;
    expectResult(await call());
    expect(tool.calls).toHaveLength(1);
  });

  it('gives back what a paused call took, and takes it again when the approved call resumes', async () => {
    const { store, seen } = countingStore();
    const { dispatcher, tool, call } = setup({ store, limits: [rule(1)] }, { checkIn: 'always' });
    const paused = expectPaused(await call());
    expect(seen.refunds).toHaveLength(1);
    const resumed = await dispatcher.resume(paused.checkIn, checkInApproved({ by: 'ops' }));
    expectResult(resumed);
    expect(seen.consumes).toHaveLength(2);
    expect(tool.calls).toHaveLength(1);
    expect(expectRefused(await call()).gate).toBe('limits');
  });

  it('a resume the limit refuses leaves the approval unspent, so it can be resumed once there is room', async () => {
    const { dispatcher, tool, clock, call } = setup(
      { limits: [{ name: 'tenant-calls', per: 'tenant', calls: 1, windowMs: 10 * 60_000 }] },
      { checkIn: (args) => args['ask'] === true },
    );
    const paused = expectPaused(await call({ ask: true }));
    expectResult(await call());
    const approval = checkInApproved({ by: 'ops' });
    expect(expectRefused(await dispatcher.resume(paused.checkIn, approval)).code).toBe('RATE_LIMITED');
    clock.advance(10 * 60_000); // within the request's 15-minute lifetime
    expectResult(await dispatcher.resume(paused.checkIn, approval));
    expect(tool.calls).toHaveLength(2);
  });

  it('charges nothing for a call with invalid args: validate-args refuses before the limit is asked', async () => {
    const { store, seen } = countingStore();
    const { call } = setup(
      { store, limits: [rule(1)] },
      { inputSchema: { type: 'object', properties: { n: { type: 'integer' } } } },
    );
    expect(expectRefused(await call({ n: 'x' })).gate).toBe('validate-args');
    expect(seen.consumes).toHaveLength(0);
    expectResult(await call({ n: 1 }));
  });

  it('keeps the charge of a tool that ran and failed', async () => {
    const { store, seen } = countingStore();
    const { tool, call } = setup({ store, limits: [rule(1)] }, {}, () => {
      throw new Error('upstream 500');
    });
    expect((await call()).kind).toBe('failed');
    expect(seen.refunds).toHaveLength(0);
    expect(expectRefused(await call()).gate).toBe('limits');
    expect(tool.calls).toHaveLength(1);
  });

  it('keeps the charge of a tool whose result a later gate withheld', async () => {
    const { call } = setup({ limits: [rule(1)] }, { resultCeiling: { maxChars: 3 } }, () => 'too long');
    expect(expectRefused(await call()).gate).toBe('result-ceiling');
    expect(expectRefused(await call()).gate).toBe('limits');
  });

  it('says in its ledger row what it took', async () => {
    const outcome = expectResult(await setup().call());
    expect(outcome.ledger.find((row) => row.gate === 'limits')).toEqual({
      gate: 'limits',
      outcome: 'allow',
      why: "took 1 call on 'tenant-calls'",
      changed: false,
    });
  });

  it('a refund that fails leaves the outcome as it was and emits an event', async () => {
    const inner = inMemoryLimits();
    const store: LimitStore = {
      consume: (charges, now) => inner.consume(charges, now),
      refund: () => Promise.reject(new Error('down')),
    };
    const { events, call } = setup({ store }, { checkIn: 'always' });
    expectPaused(await call());
    expect(eventsOf(events, 'limits.store-failed')).toMatchObject([
      { operation: 'refund', failure: 'threw' },
    ]);
  });
});

describe('limitsGate: a store that fails', () => {
  const failing = (consume: LimitStore['consume']): LimitStore => ({ consume, refund: () => undefined });

  it.each([
    [
      'throws',
      'threw',
      failing(() => {
        throw new Error('ECONNREFUSED 10.0.0.5 password=hunter2');
      }),
    ],
    ['rejects', 'threw', failing(() => Promise.reject(new Error('ECONNREFUSED')))],
    ['answers nonsense', 'malformed', failing(() => ({ allowed: 'yes' }) as never)],
    [
      'names a charge that does not exist',
      'malformed',
      failing(() => ({ allowed: false, index: 3, retryAfterMs: 1 })),
    ],
    ['hangs past the deadline', 'timeout', failing(() => never())],
  ])('refuses by default, retryably, when the store %s', async (_, failure, store) => {
    const { tool, events, call } = setup({ store, deadlineMs: 20 });
    const refused = expectRefused(await call());
    expect(refused).toMatchObject({ gate: 'limits', code: 'LIMITS_STORE_FAILED', retryable: true });
    expect(refused.content).toBe(
      "[limits refused: 'search' did not run: the store that keeps its rate and budget limits is unavailable. Retrying later may help.]",
    );
    expect(JSON.stringify(events)).not.toContain('hunter2');
    expect(eventsOf(events, 'limits.store-failed')).toMatchObject([{ operation: 'consume', failure }]);
    expect(tool.calls).toHaveLength(0);
  });

  it('with failOpen, lets the call run, and says so in the ledger and an event', async () => {
    const store = failing(() => Promise.reject(new Error('down')));
    const { tool, events, call } = setup({ store, failOpen: true });
    const outcome = expectResult(await call());
    expect(outcome.ledger.find((row) => row.gate === 'limits')).toMatchObject({
      outcome: 'allow',
      why: 'limits store threw; failed open, the call was not counted',
    });
    expect(eventsOf(events, 'limits.failed-open')).toMatchObject([{ failure: 'threw', tenant: 'acme' }]);
    expect(tool.calls).toHaveLength(1);
  });
});

describe('limitsGate: events and configuration', () => {
  it('emits limits.refused with the limit, the amount and the wait, and no arg value', async () => {
    const { events, call } = setup();
    await call({ text: 'private words' });
    await call({ text: 'private words' });
    await call({ text: 'private words' });
    expect(eventsOf(events, 'limits.refused')).toMatchObject([
      { limit: 'tenant-calls', amount: 1, retryAfterMs: 30 * 60_000, tenant: 'acme' },
    ]);
    expect(JSON.stringify(events)).not.toContain('private words');
  });

  it('stands after wants and before check-in in canonicalChain, and only when limits is given', () => {
    expect(canonicalChain().names()).toEqual([...CANONICAL_ORDER]);
    expect(canonicalChain({ limits: { limits: [TENANT_CALLS] } }).names()).toEqual([
      'permission',
      'capabilities',
      'validate-args',
      'wants',
      'limits',
      'check-in',
      'credentials',
      'result-ceiling',
    ]);
  });

  it('cannot be moved before validate-args or after check-in', () => {
    const chain = canonicalChain();
    const gate = limitsGate({ limits: [TENANT_CALLS] });
    expect(() => chain.insertBefore('validate-args', gate)).toThrow(ChainOrderError);
    expect(() => chain.insertAfter('check-in', gate)).toThrow(ChainOrderError);
    expect(chain.insertAfter('wants', gate).names()).toContain('limits');
  });

  it('folds its limits into the chain id', () => {
    const a = canonicalChain({ limits: { limits: [TENANT_CALLS] } });
    const b = canonicalChain({ limits: { limits: [{ ...TENANT_CALLS, calls: 3 }] } });
    expect(a.id).not.toBe(b.id);
  });

  it.each([
    ['no limits array', {}, 'options.limits must be an array'],
    ['a limit without a name', { limits: [{ per: 'tenant', calls: 1, windowMs: 1 }] }, 'needs a name'],
    [
      'an unknown dimension',
      { limits: [{ name: 'x', per: 'conversation', calls: 1, windowMs: 1 }] },
      "needs 'per'",
    ],
    [
      'a window that is not a whole number of ms',
      { limits: [{ name: 'x', per: 'tenant', calls: 1, windowMs: 0.5 }] },
      'windowMs',
    ],
    [
      'both calls and budget',
      { limits: [{ name: 'x', per: 'tenant', calls: 1, budget: 1, windowMs: 1 }] },
      'exactly one',
    ],
    [
      'a fractional rate',
      { limits: [{ name: 'x', per: 'tenant', calls: 1.5, windowMs: 1 }] },
      'whole number',
    ],
    [
      'a budget without cost',
      { limits: [{ name: 'x', per: 'tenant', budget: 5, windowMs: 1 }] },
      'needs cost',
    ],
    [
      'two limits of one name',
      { limits: [TENANT_CALLS, TENANT_CALLS] },
      "two limits are named 'tenant-calls'",
    ],
    [
      'a store without refund',
      { limits: [TENANT_CALLS], store: { consume: () => ({ allowed: true }) } },
      'LimitStore',
    ],
    ['a bad deadline', { limits: [TENANT_CALLS], deadlineMs: -1 }, 'deadlineMs'],
    [
      'an absurd budget (1e308)',
      { limits: [{ name: 'x', per: 'tenant', budget: 1e308, windowMs: 60_000, cost: () => 1 }] },
      "needs 'budget' to be a whole number up to 9,007,199,254,740,991",
    ],
    [
      'a fractional budget',
      { limits: [{ name: 'x', per: 'tenant', budget: 2.5, windowMs: 60_000, cost: () => 1 }] },
      'count in a smaller unit (cents, tokens) for fractions',
    ],
    [
      'a window longer than 366 days',
      { limits: [{ name: 'x', per: 'tenant', calls: 1, windowMs: 1e15 }] },
      'the longest window is 31,622,400,000 ms (366 days)',
    ],
    [
      'more than 20 units per millisecond of window',
      { limits: [{ name: 'x', per: 'tenant', budget: 1e9, windowMs: 60_000, cost: () => 1 }] },
      '1,000,000,000 per 60,000 ms, more than 20 per millisecond of window',
    ],
  ])('fails at build on %s', (_, options, message) => {
    expect(() => limitsGate(options as unknown as LimitsGateOptions)).toThrow(message);
  });
});

describe('limitsGate: rules scoped to tools', () => {
  it('counts only the named tools, and says the rate is used up in a rate’s own words', async () => {
    const clock = manualClock();
    const search = recordingTool({ name: 'search' });
    const lookup = recordingTool({ name: 'lookup' });
    const dispatcher = createDispatcher({
      tools: [search, lookup],
      chain: canonicalChain({
        limits: {
          limits: [{ name: 'searches', per: 'tenant', calls: 1, windowMs: 60_000, tools: ['search'] }],
        },
        checkInKey: KEY,
      }),
      clock: clock.now,
    });
    const call = (toolName: string) => dispatcher.dispatch({ toolName, args: {} }, ACME);
    expectResult(await call('search'));
    for (let i = 0; i < 3; i++) expectResult(await call('lookup'));
    const refused = expectRefused(await call('search'));
    expect(refused.code).toBe('RATE_LIMITED');
    expect(refused.content).toContain(
      "'search' did not run: the rate limit 'searches' (1 call per minute for each tenant) is used up",
    );
    expect(refused.content).not.toContain('costs');
    expect(lookup.calls).toHaveLength(3);
  });

  it('refuses an empty or malformed tools list at build', () => {
    for (const tools of [[], [''], 'search']) {
      expect(() =>
        canonicalChain({
          limits: { limits: [{ name: 'x', per: 'tenant', calls: 1, windowMs: 1000, tools } as LimitRule] },
          checkInKey: KEY,
        }),
      ).toThrow(/'tools' to be a non-empty array of tool names/);
    }
  });
});
