import {
  checkInApproved,
  createChain,
  createDispatcher,
  Credential,
  inMemoryCheckIns,
  type DispatchOutcome,
  type Middleware,
  type PausedOutcome,
  type Tool,
} from '@toolgate/core';
import {
  beforeNext,
  countingTool,
  EVENT_TYPES,
  KEY,
  manualClock,
  passThrough,
  recordEvents,
} from './fixtures';

const SECRET = 'SECRET-7f3a9c';

describe('events carry facts, not values', () => {
  it('no event of any type ever contains an arg, a result, a credential or an error message', async () => {
    const clock = manualClock();
    let mode = 'return';
    const tool = countingTool('echo', () => {
      if (mode === 'throw') throw new Error(`lookup failed for ${SECRET}`);
      return { found: SECRET };
    });
    const credentials = beforeNext('credentials', (ctx) =>
      ctx.provideCredential(
        new Credential({ kind: 'api_key', service: 'crm' }, { kind: 'api_key', value: `${SECRET}-key` }),
      ),
    );
    const approval: Middleware = {
      name: 'approval',
      async run(ctx, next) {
        if (ctx.args['ask'] === true) await ctx.ask('Is this fine?', { preview: SECRET });
        await next();
      },
    };
    const trimmer = beforeNext('trimmer', (ctx) =>
      ctx.setArgs({ ...ctx.args, text: `${String(ctx.args['text'])} ` }, 'padded'),
    );
    const withholder: Middleware = {
      name: 'withholder',
      async run(ctx, next) {
        await next();
        if (ctx.args['withhold'] === true) ctx.deny('the result is withheld');
      },
    };
    const chain = createChain([withholder, trimmer, approval, credentials], {
      checkIns: { key: KEY, store: inMemoryCheckIns({ now: clock.now }) },
    });
    const dispatcher = createDispatcher({ tools: [tool], chain, clock: clock.now });
    const events = recordEvents(dispatcher);

    const outcomes: DispatchOutcome[] = [];
    outcomes.push(
      await dispatcher.dispatch(
        { toolName: 'echo', args: { text: SECRET } },
        { identity: { tenant: 'acme' } },
      ),
    );
    outcomes.push(await dispatcher.dispatch({ toolName: 'echo', args: { text: SECRET, withhold: true } }));
    outcomes.push(await dispatcher.dispatch({ toolName: 'echo', args: `{"text": "${SECRET}"` }));
    const pausedOutcome = await dispatcher.dispatch({ toolName: 'echo', args: { text: SECRET, ask: true } });
    outcomes.push(pausedOutcome);
    outcomes.push(
      await dispatcher.resume((pausedOutcome as PausedOutcome).checkIn, checkInApproved({ by: 'ana' })),
    );
    mode = 'throw';
    outcomes.push(await dispatcher.dispatch({ toolName: 'echo', args: { text: SECRET } }));

    expect(outcomes.map((o) => o.kind)).toEqual([
      'result',
      'refused',
      'refused',
      'paused',
      'result',
      'failed',
    ]);
    const types = new Set(events.map((e) => e.type));
    for (const type of [
      'dispatch.start',
      'dispatch.end',
      'gate.decision',
      'tool.start',
      'tool.end',
      'tool.error',
      'checkin.requested',
      'checkin.resolved',
    ]) {
      expect(types).toContain(type);
    }
    for (const event of events) expect(JSON.stringify(event)).not.toContain(SECRET);
  });
});

describe('event content', () => {
  it('fires one gate.decision per ledger row, with the same facts', async () => {
    const dispatcher = createDispatcher({
      tools: [countingTool()],
      chain: createChain([
        passThrough('a'),
        beforeNext('b', (ctx) => ctx.note('no checker')),
        beforeNext('c', (ctx) => ctx.setArgs({}, 'cleared')),
      ]),
    });
    const events = recordEvents(dispatcher);
    const outcome = await dispatcher.dispatch({ toolName: 'echo', args: { text: 'x' } });
    const decisions = events.filter((e) => e.type === 'gate.decision');
    expect(
      decisions.map(({ gate, outcome: o, why, changed }) => ({
        gate,
        outcome: o,
        ...(why !== undefined ? { why } : {}),
        changed,
      })),
    ).toEqual(outcome.ledger);
  });

  it('tells the story of a call in order, stamped and timed by the dispatcher clock', async () => {
    const clock = manualClock();
    const startedAt = clock.now();
    const tool = countingTool('echo', () => {
      clock.advance(250);
      return 'twelve chars';
    });
    const dispatcher = createDispatcher({
      tools: [tool],
      chain: createChain([passThrough('audit')]),
      clock: clock.now,
      callIds: () => 'call_1',
    });
    const events = recordEvents(dispatcher);
    const outcome = await dispatcher.dispatch(
      { toolName: 'echo', args: {} },
      { identity: { tenant: 'acme', principal: 'ana' } },
    );
    const base = { toolName: 'echo', toolCallId: 'call_1', chainId: outcome.chainId, tenant: 'acme' };
    const before = { ...base, at: startedAt };
    const after = { ...base, at: startedAt + 250 };
    expect(events).toEqual([
      { type: 'dispatch.start', ...before, resumed: false },
      { type: 'gate.decision', ...before, gate: 'audit', outcome: 'allow', changed: false },
      { type: 'tool.start', ...before },
      { type: 'tool.end', ...after, chars: 12, durationMs: 250 },
      { type: 'dispatch.end', ...after, kind: 'result', ran: true, durationMs: 250 },
    ]);
    expect(JSON.stringify(events)).not.toContain('ana');
  });

  it('dispatch.end of a refusal names the gate and code; tool.error names only the error class', async () => {
    const clock = manualClock();
    const tool = countingTool('echo', () => {
      clock.advance(40);
      throw new SyntaxError('bad upstream payload');
    });
    const dispatcher = createDispatcher({ tools: [tool], chain: createChain([]), clock: clock.now });
    const events = recordEvents(dispatcher);
    await dispatcher.dispatch({ toolName: 'missing' });
    await dispatcher.dispatch({ toolName: 'echo' });
    const ends = events.filter((e) => e.type === 'dispatch.end');
    expect(ends[0]).toMatchObject({ kind: 'refused', ran: false, gate: 'dispatch', code: 'UNKNOWN_TOOL' });
    expect(ends[1]).toMatchObject({ kind: 'failed', ran: true });
    expect(events.find((e) => e.type === 'tool.error')).toMatchObject({
      errorName: 'SyntaxError',
      durationMs: 40,
    });
    expect(JSON.stringify(events)).not.toContain('bad upstream payload');
  });

  it('an event a middleware emits gets the call fields and the middleware name', async () => {
    const clock = manualClock();
    const imported = { ...countingTool('remote'), source: 'github' } as Tool;
    const auditor = beforeNext('auditor', (ctx) => ctx.emit({ type: 'audit.logged', rows: 3 }));
    const dispatcher = createDispatcher({
      tools: [imported],
      chain: createChain([auditor]),
      clock: clock.now,
      callIds: () => 'call_1',
    });
    const heard: unknown[] = [];
    dispatcher.events.on('audit.logged', (event) => void heard.push(event));
    const outcome = await dispatcher.dispatch({ toolName: 'remote' });
    expect(heard).toEqual([
      {
        type: 'audit.logged',
        rows: 3,
        toolName: 'remote',
        toolSource: 'github',
        toolCallId: 'call_1',
        chainId: outcome.chainId,
        at: clock.now(),
        gate: 'auditor',
      },
    ]);
  });

  it('a middleware cannot pass its event off as another call or another gate', async () => {
    const liar = beforeNext('liar', (ctx) =>
      ctx.emit({ type: 'audit.logged', toolName: 'other', gate: 'permission', chainId: 'chain_fake' }),
    );
    const dispatcher = createDispatcher({ tools: [countingTool()], chain: createChain([liar]) });
    const heard: Array<Record<string, unknown>> = [];
    dispatcher.events.on(
      'audit.logged',
      (event) => void heard.push(event as unknown as Record<string, unknown>),
    );
    const outcome = await dispatcher.dispatch({ toolName: 'echo' });
    expect(heard[0]).toMatchObject({ toolName: 'echo', gate: 'liar', chainId: outcome.chainId });
  });

  it('a dispatcher with no listeners still dispatches', async () => {
    const dispatcher = createDispatcher({
      tools: [countingTool()],
      chain: createChain([beforeNext('auditor', (ctx) => ctx.emit({ type: 'audit.logged' }))]),
    });
    expect(EVENT_TYPES.every((type) => dispatcher.events.listenerCount(type) === 0)).toBe(true);
    expect((await dispatcher.dispatch({ toolName: 'echo' })).kind).toBe('result');
  });
});

describe('listeners', () => {
  it('a listener that throws changes neither the outcome nor whether the tool ran', async () => {
    const tool = countingTool('echo', () => 'ok');
    const dispatcher = createDispatcher({ tools: [tool], chain: createChain([passThrough('audit')]) });
    for (const type of EVENT_TYPES) {
      dispatcher.on(type, () => {
        throw new Error(`listener for ${type} broke`);
      });
    }

    const outcome = await dispatcher.dispatch({ toolName: 'echo', args: {} });

    expect(outcome.kind).toBe('result');
    expect(outcome.content).toBe('ok');
    expect(tool.calls).toHaveLength(1);
  });
});
