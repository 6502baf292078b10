import {
  awaitDecision,
  carryOutDecision,
  checkInApproved,
  createChain,
  createDispatcher,
  defineTool,
  digestOf,
  inMemoryCheckIns,
  type CheckInRecord,
  type DispatchOutcome,
  type Middleware,
  type PausedOutcome,
  type RecordedDecision,
} from '@toolgate/core';
import { Type } from 'typebox';
import { KEY, manualClock } from './fixtures';

/** A refund tool that records the amounts it ran with. */
function refundTool() {
  const ran: number[] = [];
  const tool = defineTool({
    name: 'refund',
    description: 'refunds an order',
    inputSchema: Type.Object({ orderId: Type.String(), amount: Type.Number() }),
    execute: async (args) => {
      ran.push(args.amount);
      return { refunded: args.amount };
    },
  });
  return Object.assign(tool, { ran });
}

/** Policy: refunds over `cap` are refused whoever approved them. */
const capPolicy = (cap: number): Middleware => ({
  name: 'refund-cap',
  async run(ctx, next) {
    if ((ctx.args['amount'] as number) > cap) ctx.deny(`refunds over ${cap} are not allowed`);
    await next();
  },
});

/** Asks a person about refunds over `threshold`. */
const askOver = (threshold: number): Middleware => ({
  name: 'approval',
  async run(ctx, next) {
    if ((ctx.args['amount'] as number) > threshold) await ctx.ask('Refund this much?');
    await next();
  },
});

function setup(threshold = 100) {
  const clock = manualClock();
  const checkIns = inMemoryCheckIns({ now: clock.now });
  const tool = refundTool();
  const chain = createChain([capPolicy(1000), askOver(threshold)], {
    checkIns: { key: KEY, store: checkIns },
  });
  const dispatcher = createDispatcher({ tools: [tool], chain, clock: clock.now });
  const identity = { tenant: 'acme', principal: 'agent-7' };
  const pause = async (amount: number): Promise<PausedOutcome> => {
    const outcome = await dispatcher.dispatch(
      { toolName: 'refund', args: { orderId: 'o-1', amount } },
      { identity },
    );
    if (outcome.kind !== 'paused')
      throw new Error(`expected a pause, got ${outcome.kind}: ${outcome.content}`);
    return outcome;
  };
  const decide = async (id: string, decision: Record<string, unknown>): Promise<CheckInRecord> => {
    expect(
      await checkIns.decide(id, { ...decision, decidedAt: clock.iso() } as unknown as RecordedDecision),
    ).toBe(true);
    return (await checkIns.get(id))!;
  };
  return { clock, checkIns, tool, dispatcher, pause, decide };
}

function expectKind<K extends DispatchOutcome['kind']>(outcome: DispatchOutcome, kind: K) {
  if (outcome.kind !== kind) throw new Error(`expected ${kind}, got ${outcome.kind}: ${outcome.content}`);
  return outcome as Extract<DispatchOutcome, { kind: K }>;
}

describe('carryOutDecision', () => {
  it('an approval runs the call once and leaves the receipt in the store', async () => {
    const { checkIns, tool, dispatcher, pause, decide } = setup();
    const paused = await pause(500);
    const record = await decide(paused.checkIn.id, { approved: true, by: 'ana', note: 'photos checked' });
    const outcome = expectKind(await carryOutDecision(dispatcher, record, { checkIns }), 'result');
    expect(outcome.value).toEqual({ refunded: 500 });
    expect(tool.ran).toEqual([500]);
    expect(outcome.receipts?.[0]).toMatchObject({
      by: 'ana',
      note: 'photos checked',
      argsDigest: paused.checkIn.argsDigest,
    });
    expect(outcome.receipts?.[0]).not.toHaveProperty('askedArgsDigest');
    expect(await checkIns.get(paused.checkIn.id)).toMatchObject({
      state: 'consumed',
      receipt: { by: 'ana' },
    });
  });

  it('a decline refuses with the reason the model reads, and spends the request', async () => {
    const { checkIns, tool, dispatcher, pause, decide } = setup();
    const paused = await pause(500);
    const record = await decide(paused.checkIn.id, {
      approved: false,
      by: 'ana',
      reason: 'the order was never paid',
    });
    const outcome = expectKind(await carryOutDecision(dispatcher, record, { checkIns }), 'refused');
    expect(outcome.code).toBe('CHECKIN_DECLINED');
    expect(outcome.content).toContain('the order was never paid');
    expect(tool.ran).toEqual([]);
    expect((await checkIns.get(paused.checkIn.id))?.state).toBe('consumed');
  });

  it('an approval with narrower args runs them, and the receipt records the asked and the approved digests', async () => {
    const { checkIns, tool, dispatcher, pause, decide } = setup();
    const paused = await pause(500);
    const record = await decide(paused.checkIn.id, {
      approved: true,
      by: 'ana',
      args: { orderId: 'o-1', amount: 200 },
    });
    const outcome = expectKind(await carryOutDecision(dispatcher, record, { checkIns }), 'result');
    expect(tool.ran).toEqual([200]);
    const receipt = outcome.receipts?.[0];
    expect(receipt?.askedArgsDigest).toBe(paused.checkIn.argsDigest);
    expect(receipt?.argsDigest).toBe(await digestOf({ orderId: 'o-1', amount: 200 }));
    expect(outcome.ledger.find((row) => row.gate === 'approval')?.why).toBe('approved with changes by ana');
    expect((await checkIns.get(paused.checkIn.id))?.receipt).toEqual(receipt);
  });

  it('changed args that policy refuses do not run, and the decision is revoked rather than left standing', async () => {
    const { checkIns, tool, dispatcher, pause, decide } = setup();
    const paused = await pause(500);
    const record = await decide(paused.checkIn.id, {
      approved: true,
      by: 'ana',
      args: { orderId: 'o-1', amount: 5000 },
    });
    const outcome = expectKind(await carryOutDecision(dispatcher, record, { checkIns }), 'refused');
    expect(outcome.gate).toBe('refund-cap');
    expect(outcome.content).toContain('refunds over 1000 are not allowed');
    expect(tool.ran).toEqual([]);
    expect((await checkIns.get(paused.checkIn.id))?.state).toBe('revoked');
    // The original approval cannot be resumed afterwards either.
    const again = await dispatcher.resume(paused.checkIn, checkInApproved({ by: 'ana' }));
    expect(again).toMatchObject({ kind: 'refused', code: 'CHECKIN_NOT_PENDING' });
    expect(tool.ran).toEqual([]);
  });

  it('narrowed args that no longer need the asker still spend the approval once', async () => {
    const { checkIns, tool, dispatcher, pause, decide } = setup(100);
    const paused = await pause(500);
    const record = await decide(paused.checkIn.id, {
      approved: true,
      by: 'ana',
      args: { orderId: 'o-1', amount: 50 },
    });
    const [first, second] = await Promise.all([
      carryOutDecision(dispatcher, record, { checkIns }),
      carryOutDecision(dispatcher, record, { checkIns }),
    ]);
    const outcomes = [first!, second!];
    expect(outcomes.map((o) => o.kind).sort()).toEqual(['refused', 'result']);
    expect(outcomes.find((o) => o.kind === 'refused')).toMatchObject({
      code: 'CHECKIN_NOT_PENDING',
      gate: 'approval',
    });
    expect(tool.ran).toEqual([50]);
    const result = expectKind(
      outcomes.find((o) => o.kind === 'result')!,
      'result',
    );
    expect(result.receipts?.[0]).toMatchObject({ askedArgsDigest: paused.checkIn.argsDigest, by: 'ana' });
    // The asker passed without asking; the executor then spent the approval in its name.
    const rows = result.ledger.filter((row) => row.gate === 'approval');
    expect(rows.at(-1)).toMatchObject({
      outcome: 'allow',
      why: expect.stringContaining('did not need to ask'),
    });
  });

  it('two holders carrying out one approval at once run the call once', async () => {
    const { checkIns, tool, dispatcher, pause, decide } = setup();
    const paused = await pause(500);
    const record = await decide(paused.checkIn.id, { approved: true, by: 'ana' });
    const outcomes = await Promise.all(
      Array.from({ length: 5 }, () => carryOutDecision(dispatcher, record, { checkIns })),
    );
    expect(outcomes.filter((o) => o.kind === 'result')).toHaveLength(1);
    expect(tool.ran).toEqual([500]);
  });

  it('changed args that a later middleware changes again are refused, not run', async () => {
    const clock = manualClock();
    const checkIns = inMemoryCheckIns({ now: clock.now });
    const tool = refundTool();
    const doubler: Middleware = {
      name: 'doubler',
      transformsArgs: true,
      async run(ctx, next) {
        ctx.setArgs({ ...ctx.args, amount: (ctx.args['amount'] as number) * 2 }, 'test transform');
        await next();
      },
    };
    const chain = createChain([doubler, askOver(10)], { checkIns: { key: KEY, store: checkIns } });
    const dispatcher = createDispatcher({ tools: [tool], chain, clock: clock.now });
    const paused = await dispatcher.dispatch({ toolName: 'refund', args: { orderId: 'o-1', amount: 50 } });
    if (paused.kind !== 'paused') throw new Error('expected a pause');
    // The person saw amount 100 (after the transform) and approves 60; the run doubles it to 120.
    await checkIns.decide(paused.checkIn.id, {
      approved: true,
      by: 'ana',
      args: { orderId: 'o-1', amount: 60 },
      decidedAt: clock.iso(),
    });
    const record = (await checkIns.get(paused.checkIn.id))!;
    const outcome = expectKind(await carryOutDecision(dispatcher, record, { checkIns }), 'refused');
    expect(outcome.code).toBe('CHECKIN_MISMATCH');
    expect(tool.ran).toEqual([]);
  });

  it('refuses a record that has no decision', async () => {
    const { checkIns, dispatcher, pause } = setup();
    const paused = await pause(500);
    const record = (await checkIns.get(paused.checkIn.id))!;
    await expect(carryOutDecision(dispatcher, record, { checkIns })).rejects.toThrow(/has no decision yet/);
  });

  it('a resume whose changed args are not an object is refused before anything runs', async () => {
    const { tool, dispatcher, pause } = setup();
    const paused = await pause(500);
    const decision = { approved: true, by: 'ana', args: [1, 2] } as never;
    const outcome = await dispatcher.resume(paused.checkIn, decision);
    expect(outcome).toMatchObject({ kind: 'refused', code: 'CHECKIN_BAD_DECISION' });
    expect(tool.ran).toEqual([]);
    expect(() => checkInApproved({ by: 'ana', args: 'amount=5' as never })).toThrow(
      /'args' must be a JSON object/,
    );
  });
});

describe('awaitDecision', () => {
  it('answers the record once a person has decided', async () => {
    const { checkIns, pause, clock } = setup();
    const paused = await pause(500);
    const waiting = awaitDecision(checkIns, paused.checkIn.id, { pollMs: 5, now: clock.now });
    await checkIns.decide(paused.checkIn.id, { approved: true, by: 'ana', decidedAt: clock.iso() });
    const record = await waiting;
    expect(record?.decision).toMatchObject({ approved: true, by: 'ana' });
  });

  it('answers the undecided record after the timeout, and undefined for an unknown id', async () => {
    const { checkIns, pause } = setup();
    const paused = await pause(500);
    const record = await awaitDecision(checkIns, paused.checkIn.id, { pollMs: 5, timeoutMs: 20 });
    expect(record?.state).toBe('pending');
    expect(record?.decision).toBeUndefined();
    await expect(awaitDecision(checkIns, 'chk_unknown', { pollMs: 5 })).resolves.toBeUndefined();
  });

  it('answers at once for an expired request and rejects when aborted', async () => {
    const { checkIns, pause, clock } = setup();
    const paused = await pause(500);
    const controller = new AbortController();
    const waiting = awaitDecision(checkIns, paused.checkIn.id, { pollMs: 5, signal: controller.signal });
    controller.abort(new Error('caller went away'));
    await expect(waiting).rejects.toThrow('caller went away');
    clock.advance(16 * 60_000);
    const record = await awaitDecision(checkIns, paused.checkIn.id, { now: clock.now });
    expect(record?.decision).toBeUndefined();
  });
});
