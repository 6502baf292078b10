// Per-tool plans leave out gates that have nothing to decide for a tool. Whatever the tool declares
// and whatever the chain is given, a call through the planned onion must read exactly like the same
// call through every gate: the same outcome, the same ledger, the same events in the same order.
import fc from 'fast-check';
import {
  createChain,
  createDispatcher,
  defineTool,
  EVENT_TYPES,
  POLICY_ANCHOR,
  type Chain,
  type DispatchOutcome,
  type Middleware,
  type Tool,
  type ToolgateEventType,
} from '@toolgate/core';
import { canonicalChain, inMemoryArtifacts } from '@toolgate/middleware';
import { fixedClock, seededIds } from '@toolgate/testing';

const KEY = 'plans-test-check-in-key-0123456789abcdef';

interface Declared {
  readonly capabilities: readonly string[];
  readonly wants: boolean;
  readonly checkIn: 'none' | 'always' | 'never-for-these-args';
  readonly needs: boolean;
  readonly ceiling: number | undefined;
  readonly returns: 'small' | 'large' | 'throws';
}

interface Configured {
  readonly checker: 'none' | 'allows' | 'denies';
  readonly governs: readonly string[];
  readonly defaultMaxChars: number | undefined;
  readonly policy: 'none' | 'notes' | 'asks' | 'denies' | 'denies-after';
  readonly aborted: boolean;
  readonly docGiven: 'ref' | 'bogus' | 'absent';
}

function toolOf(d: Declared): Tool {
  return defineTool({
    name: 'act',
    description: 'Acts.',
    inputSchema: {
      type: 'object',
      properties: { q: { type: 'string' }, doc: { type: 'string' } },
      required: ['q'],
    },
    ...(d.capabilities.length > 0 ? { capabilities: [...d.capabilities] } : {}),
    ...(d.wants ? { wants: { doc: 'invoice' } } : {}),
    ...(d.checkIn === 'always' ? { checkIn: 'always' as const } : {}),
    ...(d.checkIn === 'never-for-these-args' ? { checkIn: () => false } : {}),
    ...(d.needs ? { needs: { kind: 'api_key', service: 'billing' } } : {}),
    ...(d.ceiling !== undefined ? { resultCeiling: { maxChars: d.ceiling, narrowBy: ['q'] } } : {}),
    execute: async () => {
      if (d.returns === 'throws') throw new Error('upstream down');
      return d.returns === 'large' ? { text: 'x'.repeat(300) } : { ok: true };
    },
  }) as Tool;
}

function policyOf(kind: Configured['policy']): Middleware | undefined {
  const run: Record<Exclude<Configured['policy'], 'none'>, Middleware['run']> = {
    notes: async (ctx, next) => {
      ctx.note('policy looked');
      await next();
    },
    asks: async (ctx, next) => {
      await ctx.ask('May it run?');
      await next();
    },
    denies: async (ctx) => ctx.deny('policy says no'),
    'denies-after': async (ctx, next) => {
      await next();
      ctx.deny('policy withholds the result');
    },
  };
  return kind === 'none' ? undefined : { name: 'tenant-policy', run: run[kind] };
}

/** The same chain with no gate able to declare a pass, so every gate runs on every call. */
function unplanned(chain: Chain): Chain {
  const everyGate = chain.middleware.map((m) => {
    const { passThrough: _left, ...rest } = m;
    return rest as Middleware;
  });
  return createChain(everyGate, { checkIns: { key: KEY }, policyAnchor: POLICY_ANCHOR });
}

/** Ids and signatures are random per request; everything else must match exactly. */
function normalized(value: unknown): unknown {
  return JSON.parse(
    JSON.stringify(value, (key, v: unknown) =>
      (key === 'id' || key === 'requestId' || key === 'signature') && typeof v === 'string' ? '<id>' : v,
    ),
  );
}

async function runOnce(chain: Chain, tool: Tool, c: Configured, ref: string) {
  const clock = fixedClock();
  const dispatcher = createDispatcher({ tools: [tool], chain, clock: clock.now, callIds: seededIds(7) });
  const heard: unknown[] = [];
  for (const type of EVENT_TYPES as ToolgateEventType[])
    dispatcher.on(type, (event: unknown) => heard.push(event));
  const args = {
    q: 'refunds',
    ...(c.docGiven === 'absent' ? {} : { doc: c.docGiven === 'ref' ? ref : 'x' }),
  };
  const controller = new AbortController();
  if (c.aborted) controller.abort();
  const outcomes: DispatchOutcome[] = [
    await dispatcher.dispatch({ toolName: 'act', args }, c.aborted ? { signal: controller.signal } : {}),
  ];
  const first = outcomes[0]!;
  if (first.kind === 'paused') {
    outcomes.push(await dispatcher.resume(first.checkIn, { approved: true, by: 'ops@example.com' }));
  }
  return normalized({ outcomes, heard });
}

const declared: fc.Arbitrary<Declared> = fc.record({
  capabilities: fc.subarray(['payments', 'user_data']),
  wants: fc.boolean(),
  checkIn: fc.constantFrom('none', 'always', 'never-for-these-args'),
  needs: fc.boolean(),
  ceiling: fc.option(fc.constantFrom(10, 10_000), { nil: undefined }),
  returns: fc.constantFrom('small', 'large', 'throws'),
});

const configured: fc.Arbitrary<Configured> = fc.record({
  checker: fc.constantFrom('none', 'allows', 'denies'),
  governs: fc.subarray(['payments', 'user_data']),
  defaultMaxChars: fc.option(fc.constantFrom(20, 50_000), { nil: undefined }),
  policy: fc.constantFrom('none', 'notes', 'asks', 'denies', 'denies-after'),
  aborted: fc.boolean(),
  docGiven: fc.constantFrom('ref', 'bogus', 'absent'),
});

describe('per-tool plans', () => {
  it('a call through the plan reads exactly like the same call through every gate: outcome, ledger and events', async () => {
    await fc.assert(
      fc.asyncProperty(declared, configured, async (d, c) => {
        const artifacts = inMemoryArtifacts();
        const ref = await artifacts.put({}, { kind: 'invoice', data: { total: 12 } });
        const checker =
          c.checker === 'none'
            ? {}
            : {
                permissions: {
                  check: () =>
                    c.checker === 'allows'
                      ? { allow: true as const }
                      : { allow: false as const, reason: 'no' },
                  governs: [...c.governs],
                },
              };
        let planned = canonicalChain({
          ...checker,
          artifacts,
          credentials: { resolve: () => ({ kind: 'api_key', value: 'sk_plans_not_a_secret' }) },
          checkInKey: KEY,
          ...(c.defaultMaxChars !== undefined ? { defaultMaxChars: c.defaultMaxChars } : {}),
        });
        const policy = policyOf(c.policy);
        if (policy !== undefined) planned = planned.use(policy);
        const tool = toolOf(d);
        const viaPlan = await runOnce(planned, tool, c, ref);
        const viaEveryGate = await runOnce(unplanned(planned), tool, c, ref);
        expect(viaPlan).toEqual(viaEveryGate);
      }),
      { numRuns: 300, seed: 12 },
    );
  });

  it('leaves out the gates a tool that declares nothing gives them nothing to decide, and still files their rows', async () => {
    const tool = toolOf({
      capabilities: [],
      wants: false,
      checkIn: 'none',
      needs: false,
      ceiling: undefined,
      returns: 'small',
    });
    const ran: string[] = [];
    const spied = createChain(
      canonicalChain().middleware.map((m) => ({
        ...m,
        run: (ctx, next) => {
          ran.push(m.name);
          return m.run(ctx, next);
        },
      })),
      { policyAnchor: POLICY_ANCHOR },
    );
    const outcome = await createDispatcher({ tools: [tool], chain: spied }).dispatch({
      toolName: 'act',
      args: { q: 'refunds' },
    });

    expect(ran).toEqual(['validate-args']);
    expect(outcome.ledger.map((row) => [row.gate, row.outcome, row.why])).toEqual([
      ['permission', 'allow', 'no checker'],
      ['capabilities', 'allow', 'no checker'],
      ['validate-args', 'allow', undefined],
      ['wants', 'allow', 'no wanted args'],
      ['check-in', 'allow', 'no check-in declared'],
      ['credentials', 'allow', 'no credential needed'],
      ['result-ceiling', 'allow', 'no ceiling'],
    ]);
  });

  it('runs a middleware whose passThrough throws, and user middleware with no passThrough always', async () => {
    const ran: string[] = [];
    const chain = createChain([
      {
        name: 'audit',
        run: async (_ctx, next) => {
          ran.push('audit');
          await next();
        },
      },
      {
        name: 'fragile',
        passThrough: () => {
          throw new Error('cannot tell');
        },
        run: async (_ctx, next) => {
          ran.push('fragile');
          await next();
        },
      },
      {
        name: 'idle',
        passThrough: () => ({ why: 'nothing to do' }),
        run: async () => {
          ran.push('idle');
        },
      },
    ]);
    const tool = toolOf({
      capabilities: [],
      wants: false,
      checkIn: 'none',
      needs: false,
      ceiling: undefined,
      returns: 'small',
    });
    const outcome = await createDispatcher({ tools: [tool], chain }).dispatch({
      toolName: 'act',
      args: { q: 'x' },
    });

    expect(outcome.kind).toBe('result');
    expect(ran).toEqual(['audit', 'fragile']);
    expect(outcome.ledger.map((row) => [row.gate, row.why])).toEqual([
      ['audit', undefined],
      ['fragile', undefined],
      ['idle', 'nothing to do'],
    ]);
  });
});
