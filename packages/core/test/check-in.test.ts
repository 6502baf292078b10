import {
  checkInApproved,
  checkInDeclined,
  createChain,
  createDispatcher,
  digestOf,
  inMemoryCheckIns,
  type CheckInRequest,
  type CheckInStore,
  type DispatchOutcome,
  type Middleware,
  type PausedOutcome,
} from '@toolgate/core';
import { beforeNext, countingTool, KEY, manualClock, passThrough, recordEvents } from './fixtures';

const FIFTEEN_MINUTES = 15 * 60 * 1000;
const HEX64 = /^[0-9a-f]{64}$/;

/** A middleware that asks a human `question` before continuing, and records what ask returned. */
function asker(name = 'approval', question = 'Send this message?'): Middleware & { answers: unknown[] } {
  const answers: unknown[] = [];
  return {
    name,
    answers,
    async run(ctx, next) {
      answers.push(await ctx.ask(question, { preview: 'evidence for the human' }));
      await next();
    },
  };
}

function setup(middleware: Middleware[] = [asker()]) {
  const clock = manualClock();
  const store = inMemoryCheckIns({ now: clock.now });
  const tool = countingTool();
  const chain = createChain(middleware, { checkIns: { key: KEY, store } });
  const dispatcher = createDispatcher({ tools: [tool], chain, clock: clock.now });
  const events = recordEvents(dispatcher);
  return { clock, store, tool, chain, dispatcher, events };
}

function paused(outcome: DispatchOutcome): PausedOutcome {
  if (outcome.kind !== 'paused') throw new Error(`expected a pause, got ${outcome.kind}: ${outcome.content}`);
  return outcome;
}

function refused(outcome: DispatchOutcome) {
  if (outcome.kind !== 'refused')
    throw new Error(`expected a refusal, got ${outcome.kind}: ${outcome.content}`);
  return outcome;
}

/** The request as it comes back from a UI or a queue: plain JSON. */
const travelled = (request: CheckInRequest): CheckInRequest =>
  JSON.parse(JSON.stringify(request)) as CheckInRequest;

describe('pausing a call with ctx.ask', () => {
  it('returns paused with a signed request and does not run the tool', async () => {
    const { dispatcher, tool, chain, clock, store } = setup();
    const outcome = paused(
      await dispatcher.dispatch(
        { toolName: 'echo', args: { text: 'hi' }, toolCallId: 'call-1' },
        { identity: { tenant: 'acme' } },
      ),
    );
    const request = outcome.checkIn;
    expect(request).toEqual({
      id: expect.stringMatching(/^chk_/),
      asker: 'approval',
      toolName: 'echo',
      toolCallId: 'call-1',
      args: { text: 'hi' },
      review: { text: 'hi' },
      argsDigest: expect.stringMatching(HEX64),
      chainId: chain.id,
      question: 'Send this message?',
      evidence: { preview: 'evidence for the human' },
      identity: { tenant: 'acme' },
      createdAt: new Date(clock.now()).toISOString(),
      expiresAt: new Date(clock.now() + FIFTEEN_MINUTES).toISOString(),
      signature: expect.stringMatching(HEX64),
    });
    expect(request.argsDigest).toBe(await digestOf({ text: 'hi' }));
    expect(travelled(request)).toEqual(request);
    expect(outcome.ran).toBe(false);
    expect(outcome.content).toBe(`[approval paused: waiting for a human to approve 'echo'.]`);
    expect(outcome.ledger).toEqual([
      { gate: 'approval', outcome: 'ask', why: 'Send this message?', changed: false },
    ]);
    expect(tool.calls).toHaveLength(0);
    expect((await store.get(request.id))?.state).toBe('pending');
  });

  it('a middleware that swallows its own pause still cannot run the tool', async () => {
    const sneaky: Middleware = {
      name: 'sneaky',
      async run(ctx, next) {
        try {
          await ctx.ask('May I?');
        } catch {
          // Pretend the human said yes.
        }
        await next();
      },
    };
    const { dispatcher, tool } = setup([sneaky]);
    expect((await dispatcher.dispatch({ toolName: 'echo', args: {} })).kind).toBe('paused');
    expect(tool.calls).toHaveLength(0);
  });

  it('a chain without a pause service refuses the ask with NO_PAUSE_SERVICE', async () => {
    const tool = countingTool();
    const dispatcher = createDispatcher({ tools: [tool], chain: createChain([asker()]) });
    const outcome = refused(await dispatcher.dispatch({ toolName: 'echo', args: {} }));
    expect(outcome.gate).toBe('approval');
    expect(outcome.code).toBe('NO_PAUSE_SERVICE');
    expect(outcome.content).toBe(
      `[approval refused: 'echo' needs a human's approval, but this deployment cannot ask for one. Retrying will not help. Tell the user the action needs approval.]`,
    );
    expect(tool.calls).toHaveLength(0);
  });

  it('an ask without a question is refused', async () => {
    const mute: Middleware = {
      name: 'mute',
      async run(ctx, next) {
        await ctx.ask('  ');
        await next();
      },
    };
    const { dispatcher, tool } = setup([mute]);
    expect(refused(await dispatcher.dispatch({ toolName: 'echo', args: {} })).gate).toBe('mute');
    expect(tool.calls).toHaveLength(0);
  });

  it('the request shows resolved artifacts by ref for review but replays the args as dispatched', async () => {
    const ref = 'art_AAAAAAAAAAAAAAAAAAAAAA';
    const wants = beforeNext('wants', (ctx) => {
      ctx.setArgs({ ...ctx.args, text: 'the resolved rows' }, 'resolved art ref');
      ctx.provideWanted('text', { ref, kind: 'dataset/rows', createdAt: '2030-01-01T00:00:00.000Z' });
    });
    const { dispatcher } = setup([wants, asker()]);
    const { checkIn } = paused(await dispatcher.dispatch({ toolName: 'echo', args: { text: ref } }));
    expect(checkIn.args).toEqual({ text: ref });
    expect(checkIn.review).toEqual({ text: ref });
    expect(checkIn.argsDigest).toBe(await digestOf({ text: ref }));
  });
});

describe('resuming a paused call', () => {
  it('an approval runs the tool once and yields a receipt', async () => {
    const approval = asker();
    const resumedFlags: boolean[] = [];
    const probe = beforeNext('probe', (ctx) => void resumedFlags.push(ctx.resumed));
    const { dispatcher, tool, chain, clock, store } = setup([probe, approval]);
    const { checkIn } = paused(await dispatcher.dispatch({ toolName: 'echo', args: { text: 'hi' } }));
    clock.advance(60_000);
    const outcome = await dispatcher.resume(
      travelled(checkIn),
      checkInApproved({ by: 'ana', note: 'looks fine' }),
    );
    expect(outcome.kind).toBe('result');
    expect(outcome.content).toBe('{"echoed":{"text":"hi"}}');
    expect(tool.calls).toEqual([{ text: 'hi' }]);
    expect(outcome.toolCallId).toBe(checkIn.toolCallId);
    const receipts = outcome.kind === 'result' ? outcome.receipts : undefined;
    expect(receipts).toEqual([
      {
        requestId: checkIn.id,
        asker: 'approval',
        by: 'ana',
        note: 'looks fine',
        approvedAt: new Date(clock.now()).toISOString(),
        argsDigest: checkIn.argsDigest,
        chainIdRaised: chain.id,
        chainIdRun: chain.id,
        signature: expect.stringMatching(HEX64),
      },
    ]);
    expect(approval.answers).toEqual([{ approved: true, by: 'ana', note: 'looks fine' }]);
    expect(resumedFlags).toEqual([false, true]);
    expect(outcome.ledger).toEqual([
      { gate: 'probe', outcome: 'allow', changed: false },
      { gate: 'approval', outcome: 'allow', why: 'approved by ana', changed: false },
    ]);
    const record = await store.get(checkIn.id);
    expect(record?.state).toBe('consumed');
    expect(record?.receipt).toEqual(receipts?.[0]);
  });

  it('lets middleware read the decision on ctx.checkIn', async () => {
    let decision: unknown;
    const reader: Middleware = {
      name: 'reader',
      async run(ctx, next) {
        await next();
        decision = ctx.checkIn;
      },
    };
    const { dispatcher } = setup([reader, asker()]);
    const { checkIn } = paused(await dispatcher.dispatch({ toolName: 'echo', args: {} }));
    await dispatcher.resume(checkIn, checkInApproved({ by: 'ana' }));
    expect(decision).toEqual({ approved: true, by: 'ana' });
  });

  it('replaying the same approval is refused and the tool does not run again', async () => {
    const { dispatcher, tool } = setup();
    const { checkIn } = paused(await dispatcher.dispatch({ toolName: 'echo', args: {} }));
    expect((await dispatcher.resume(checkIn, checkInApproved({ by: 'ana' }))).kind).toBe('result');
    const replay = refused(await dispatcher.resume(checkIn, checkInApproved({ by: 'ana' })));
    expect(replay.code).toBe('CHECKIN_NOT_PENDING');
    expect(replay.gate).toBe('approval');
    expect(replay.content).toContain('already used, revoked or has expired');
    expect(tool.calls).toHaveLength(1);
  });

  it('two parallel resumes of one approval run the tool once', async () => {
    const { dispatcher, tool } = setup();
    const { checkIn } = paused(await dispatcher.dispatch({ toolName: 'echo', args: {} }));
    const outcomes = await Promise.all(
      Array.from({ length: 5 }, () => dispatcher.resume(checkIn, checkInApproved({ by: 'ana' }))),
    );
    expect(outcomes.filter((o) => o.kind === 'result')).toHaveLength(1);
    expect(tool.calls).toHaveLength(1);
  });

  it.each([
    ['changed args', (r: CheckInRequest) => ({ ...r, args: { text: 'transfer everything' } })],
    ['a changed review', (r: CheckInRequest) => ({ ...r, review: { text: 'something harmless' } })],
    [
      'a changed signature',
      (r: CheckInRequest) => ({
        ...r,
        signature: (r.signature[0] === 'a' ? 'b' : 'a') + r.signature.slice(1),
      }),
    ],
    ['a pushed-back expiry', (r: CheckInRequest) => ({ ...r, expiresAt: '2999-01-01T00:00:00.000Z' })],
    ['a changed asker', (r: CheckInRequest) => ({ ...r, asker: 'other' })],
    ['another identity', (r: CheckInRequest) => ({ ...r, identity: { tenant: 'globex' } })],
  ])('a request with %s is refused and the tool never runs', async (_label, tamper) => {
    const { dispatcher, tool, events } = setup();
    const { checkIn } = paused(await dispatcher.dispatch({ toolName: 'echo', args: { text: 'hi' } }));
    const outcome = refused(
      await dispatcher.resume(tamper(travelled(checkIn)), checkInApproved({ by: 'ana' })),
    );
    expect(outcome.gate).toBe('check-in');
    expect(outcome.code).toBe('CHECKIN_SIGNATURE');
    expect(outcome.content).toBe(
      `[check-in refused: 'echo' did not run: this approval request was not issued by this deployment or was altered. Ask for a new approval.]`,
    );
    expect(tool.calls).toHaveLength(0);
    expect(events.find((e) => e.type === 'checkin.resolved')).toMatchObject({
      approved: false,
      failure: 'CHECKIN_SIGNATURE',
      requestId: checkIn.id,
    });
    // The genuine request is still good for its one run.
    expect((await dispatcher.resume(checkIn, checkInApproved({ by: 'ana' }))).kind).toBe('result');
  });

  it('a request signed with another key is refused', async () => {
    const { dispatcher: other } = setup();
    const { checkIn } = paused(await other.dispatch({ toolName: 'echo', args: {} }));
    const tool = countingTool();
    const dispatcher = createDispatcher({
      tools: [tool],
      chain: createChain([asker()], { checkIns: { key: 'another key of 32 characters....' } }),
    });
    expect(refused(await dispatcher.resume(checkIn, checkInApproved({ by: 'ana' }))).code).toBe(
      'CHECKIN_SIGNATURE',
    );
    expect(tool.calls).toHaveLength(0);
  });

  it('an expired request is refused and the tool never runs', async () => {
    const { dispatcher, tool, clock } = setup();
    const { checkIn } = paused(await dispatcher.dispatch({ toolName: 'echo', args: {} }));
    clock.advance(FIFTEEN_MINUTES);
    const outcome = refused(await dispatcher.resume(checkIn, checkInApproved({ by: 'ana' })));
    expect(outcome.code).toBe('CHECKIN_EXPIRED');
    expect(outcome.content).toBe(
      `[check-in refused: 'echo' did not run: this approval request has expired. Ask for a new approval.]`,
    );
    expect(tool.calls).toHaveLength(0);
  });

  it('a request just inside its lifetime is honored', async () => {
    const { dispatcher, tool, clock } = setup();
    const { checkIn } = paused(await dispatcher.dispatch({ toolName: 'echo', args: {} }));
    clock.advance(FIFTEEN_MINUTES - 1);
    expect((await dispatcher.resume(checkIn, checkInApproved({ by: 'ana' }))).kind).toBe('result');
    expect(tool.calls).toHaveLength(1);
  });

  it('honors the chain lifetime for requests', async () => {
    const clock = manualClock();
    const chain = createChain([asker()], {
      checkIns: { key: KEY, ttlMs: 1000, store: inMemoryCheckIns({ now: clock.now }) },
    });
    const dispatcher = createDispatcher({ tools: [countingTool()], chain, clock: clock.now });
    const { checkIn } = paused(await dispatcher.dispatch({ toolName: 'echo', args: {} }));
    expect(Date.parse(checkIn.expiresAt) - Date.parse(checkIn.createdAt)).toBe(1000);
    clock.advance(1000);
    expect(refused(await dispatcher.resume(checkIn, checkInApproved({ by: 'ana' }))).code).toBe(
      'CHECKIN_EXPIRED',
    );
  });

  it('a declined request is refused with the human reason and cannot be approved afterwards', async () => {
    const { dispatcher, tool, store } = setup();
    const { checkIn } = paused(await dispatcher.dispatch({ toolName: 'echo', args: {} }));
    const outcome = refused(
      await dispatcher.resume(
        checkIn,
        checkInDeclined({ by: 'ana', reason: 'the customer asked us not to email them' }),
      ),
    );
    expect(outcome.gate).toBe('approval');
    expect(outcome.code).toBe('CHECKIN_DECLINED');
    expect(outcome.content).toBe(
      `[approval refused: 'echo' was declined by ana: the customer asked us not to email them. Do not call it again with the same arguments.]`,
    );
    expect(outcome.ran).toBe(false);
    expect((await store.get(checkIn.id))?.state).toBe('consumed');
    expect(refused(await dispatcher.resume(checkIn, checkInApproved({ by: 'ana' }))).code).toBe(
      'CHECKIN_NOT_PENDING',
    );
    expect(tool.calls).toHaveLength(0);
  });

  it('an approval does not cover args a middleware changed between pause and resume', async () => {
    let tag = 'first';
    const tagger = beforeNext('tagger', (ctx) =>
      ctx.setArgs({ ...ctx.args, text: `${String(ctx.args['text'])}-${tag}` }, 'tagged the text'),
    );
    const { dispatcher, tool } = setup([tagger, asker()]);
    const { checkIn } = paused(await dispatcher.dispatch({ toolName: 'echo', args: { text: 'hi' } }));
    expect(checkIn.review).toEqual({ text: 'hi-first' });
    tag = 'second';
    const outcome = refused(await dispatcher.resume(checkIn, checkInApproved({ by: 'ana' })));
    expect(outcome.gate).toBe('approval');
    expect(outcome.code).toBe('CHECKIN_MISMATCH');
    expect(outcome.content).toContain('changed after a person approved them');
    expect(tool.calls).toHaveLength(0);
  });

  it('gates before the asker run again on resume, so a revoked permission is honored', async () => {
    let allowed = true;
    const permission = beforeNext('permission', (ctx) => {
      if (!allowed) ctx.deny('permission was revoked');
    });
    const { dispatcher, tool } = setup([permission, asker()]);
    const { checkIn } = paused(await dispatcher.dispatch({ toolName: 'echo', args: {} }));
    allowed = false;
    const outcome = refused(await dispatcher.resume(checkIn, checkInApproved({ by: 'ana' })));
    expect(outcome.gate).toBe('permission');
    expect(tool.calls).toHaveLength(0);
  });

  it('two asks in one call: the second pause carries a receipt of the first, and its resume runs the tool once', async () => {
    const first = asker('first', 'First question?');
    const second = asker('second', 'Second question?');
    const { dispatcher, tool } = setup([first, second]);
    const one = paused(await dispatcher.dispatch({ toolName: 'echo', args: { text: 'hi' } }));
    expect(one.checkIn.asker).toBe('first');

    const two = paused(await dispatcher.resume(travelled(one.checkIn), checkInApproved({ by: 'ana' })));
    expect(two.checkIn.asker).toBe('second');
    expect(two.checkIn.id).not.toBe(one.checkIn.id);
    expect(two.checkIn.receipts).toEqual([
      expect.objectContaining({
        requestId: one.checkIn.id,
        asker: 'first',
        by: 'ana',
        argsDigest: one.checkIn.argsDigest,
      }),
    ]);
    expect(tool.calls).toHaveLength(0);

    const done = await dispatcher.resume(travelled(two.checkIn), checkInApproved({ by: 'bob' }));
    expect(done.kind).toBe('result');
    expect(tool.calls).toHaveLength(1);
    expect(done.kind === 'result' && done.receipts?.map((r) => [r.asker, r.by])).toEqual([
      ['first', 'ana'],
      ['second', 'bob'],
    ]);
    expect(first.answers).toEqual([
      { approved: true, by: 'ana' },
      { approved: true, by: 'ana' },
    ]);
    expect(second.answers).toEqual([{ approved: true, by: 'bob' }]);
    expect(refused(await dispatcher.resume(two.checkIn, checkInApproved({ by: 'bob' }))).code).toBe(
      'CHECKIN_NOT_PENDING',
    );
    expect(tool.calls).toHaveLength(1);
  });

  it('a resumed run that never reaches its asker is refused and the tool never runs', async () => {
    const clock = manualClock();
    const store = inMemoryCheckIns({ now: clock.now });
    const withAsker = createChain([passThrough('audit'), asker()], { checkIns: { key: KEY, store } });
    const withoutAsker = createChain([passThrough('audit')], { checkIns: { key: KEY, store } });
    let current = withAsker;
    const tool = countingTool();
    const dispatcher = createDispatcher({ tools: [tool], chain: () => current, clock: clock.now });
    const { checkIn } = paused(await dispatcher.dispatch({ toolName: 'echo', args: {} }));
    current = withoutAsker;
    const outcome = refused(await dispatcher.resume(checkIn, checkInApproved({ by: 'ana' })));
    expect(outcome.gate).toBe('approval');
    expect(outcome.code).toBe('CHECKIN_NOT_REACHED');
    expect(outcome.chainId).toBe(withoutAsker.id);
    expect(tool.calls).toHaveLength(0);
  });

  it('resumes under the chain the signed identity selects', async () => {
    const clock = manualClock();
    const store = inMemoryCheckIns({ now: clock.now });
    const acme = createChain([asker()], { checkIns: { key: KEY, store } });
    const other = createChain([asker(), passThrough('strict')], { checkIns: { key: KEY, store } });
    const dispatcher = createDispatcher({
      tools: [countingTool()],
      chain: (identity) => (identity?.tenant === 'acme' ? acme : other),
      clock: clock.now,
    });
    const { checkIn } = paused(
      await dispatcher.dispatch({ toolName: 'echo', args: {} }, { identity: { tenant: 'acme' } }),
    );
    const outcome = await dispatcher.resume(checkIn, checkInApproved({ by: 'ana' }));
    expect(outcome.chainId).toBe(acme.id);
    expect(outcome.kind).toBe('result');
  });

  it('emits checkin.requested and checkin.resolved', async () => {
    const { dispatcher, events } = setup();
    const { checkIn } = paused(await dispatcher.dispatch({ toolName: 'echo', args: {} }));
    await dispatcher.resume(checkIn, checkInApproved({ by: 'ana' }));
    expect(events.filter((e) => e.type.startsWith('checkin.'))).toEqual([
      expect.objectContaining({
        type: 'checkin.requested',
        requestId: checkIn.id,
        asker: 'approval',
        expiresAt: checkIn.expiresAt,
      }),
      expect.objectContaining({
        type: 'checkin.resolved',
        requestId: checkIn.id,
        asker: 'approval',
        approved: true,
        by: 'ana',
      }),
    ]);
  });
});

describe('decisions', () => {
  it('checkInApproved and checkInDeclined build the decision and require who decided', () => {
    expect(checkInApproved({ by: 'ana' })).toEqual({ approved: true, by: 'ana' });
    expect(checkInDeclined({ by: 'ana', reason: 'no' })).toEqual({
      approved: false,
      by: 'ana',
      reason: 'no',
    });
    expect(() => checkInApproved({ by: ' ' })).toThrow(/'by' must be a non-empty string/);
    expect(() => checkInDeclined({ by: 'ana', reason: '' })).toThrow(/'reason' must be a non-empty string/);
  });
});

describe('inMemoryCheckIns', () => {
  const at = (iso: string) => Date.parse(iso);
  function request(id: string, fields: Partial<CheckInRequest> = {}): CheckInRequest {
    return {
      id,
      asker: 'check-in',
      toolName: 'echo',
      toolCallId: `call-${id}`,
      args: {},
      review: {},
      argsDigest: '0'.repeat(64),
      chainId: 'chain_0',
      question: 'ok?',
      createdAt: '2030-01-01T00:00:00.000Z',
      expiresAt: '2030-01-01T00:15:00.000Z',
      signature: '0'.repeat(64),
      ...fields,
    };
  }
  function store(): { store: CheckInStore; clock: ReturnType<typeof manualClock> } {
    const clock = manualClock(at('2030-01-01T00:00:00.000Z'));
    return { store: inMemoryCheckIns({ now: clock.now }), clock };
  }

  it('consumes a pending request exactly once, even under 100 parallel consumes', async () => {
    const { store: checkIns } = store();
    await checkIns.put(request('r1'));
    const results = await Promise.all(Array.from({ length: 100 }, () => checkIns.consume('r1')));
    expect(results.filter(Boolean)).toHaveLength(1);
    expect((await checkIns.get('r1'))?.state).toBe('consumed');
  });

  it('answers false for an unknown id', async () => {
    expect(await store().store.consume('nope')).toBe(false);
  });

  it('keeps the receipt of the consume', async () => {
    const { store: checkIns } = store();
    await checkIns.put(request('r1'));
    const receipt = {
      requestId: 'r1',
      asker: 'check-in',
      by: 'ana',
      approvedAt: '2030-01-01T00:01:00.000Z',
      argsDigest: '0'.repeat(64),
      chainIdRaised: 'chain_0',
      chainIdRun: 'chain_0',
      signature: '1'.repeat(64),
    };
    await checkIns.consume('r1', receipt);
    expect((await checkIns.get('r1'))?.receipt).toEqual(receipt);
  });

  it('refuses to store the same id twice', async () => {
    const { store: checkIns } = store();
    await checkIns.put(request('r1'));
    await expect(checkIns.put(request('r1'))).rejects.toThrow(/already stored/);
  });

  it('a revoked request cannot be consumed, and only a pending one can be revoked', async () => {
    const { store: checkIns } = store();
    await checkIns.put(request('r1'));
    await checkIns.put(request('r2'));
    expect(await checkIns.revoke('r1')).toBe(true);
    expect(await checkIns.consume('r1')).toBe(false);
    expect((await checkIns.get('r1'))?.state).toBe('revoked');
    expect(await checkIns.revoke('r1')).toBe(false);
    expect(await checkIns.consume('r2')).toBe(true);
    expect(await checkIns.revoke('r2')).toBe(false);
    expect(await checkIns.revoke('missing')).toBe(false);
  });

  it('an expired request cannot be consumed', async () => {
    const { store: checkIns, clock } = store();
    await checkIns.put(request('r1'));
    await checkIns.put(request('r2'));
    clock.advance(FIFTEEN_MINUTES - 1);
    expect(await checkIns.consume('r1')).toBe(true);
    clock.advance(1);
    expect(await checkIns.consume('r2')).toBe(false);
  });

  it('lists by state, tool, tenant and limit', async () => {
    const { store: checkIns } = store();
    await checkIns.put(request('a', { identity: { tenant: 'acme' } }));
    await checkIns.put(request('b', { identity: { tenant: 'acme' }, toolName: 'pay' }));
    await checkIns.put(request('c', { identity: { tenant: 'globex' } }));
    await checkIns.put(request('d'));
    await checkIns.consume('a');
    const ids = async (filter: Parameters<CheckInStore['list']>[0]) =>
      (await checkIns.list(filter)).map((r) => r.request.id);
    expect(await ids(undefined)).toEqual(['a', 'b', 'c', 'd']);
    expect(await ids({ state: 'pending' })).toEqual(['b', 'c', 'd']);
    expect(await ids({ state: 'consumed' })).toEqual(['a']);
    expect(await ids({ toolName: 'pay' })).toEqual(['b']);
    expect(await ids({ tenant: 'acme' })).toEqual(['a', 'b']);
    expect(await ids({ tenant: 'acme', state: 'pending' })).toEqual(['b']);
    expect(await ids({ limit: 2 })).toEqual(['a', 'b']);
    expect(await ids({ limit: 0 })).toEqual([]);
  });

  it('hands out copies, so a caller cannot change what it holds', async () => {
    const { store: checkIns } = store();
    const original = request('r1', { args: { text: 'hi' } });
    await checkIns.put(original);
    (original.args as Record<string, unknown>)['text'] = 'changed after put';
    const record = await checkIns.get('r1');
    (record!.request.args as Record<string, unknown>)['text'] = 'changed after get';
    expect((await checkIns.get('r1'))?.request.args).toEqual({ text: 'hi' });
  });
});
