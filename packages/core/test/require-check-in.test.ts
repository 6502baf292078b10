// ctx.requireCheckIn: a middleware demands a person's approval that a later middleware asks for;
// a call that reaches its tool with the demand unanswered never runs, however the chain is planned.

import {
  checkInApproved,
  createChain,
  createDispatcher,
  mayRequireCheckIn,
  type Middleware,
  type Tool,
} from '@toolgate/core';
import { countingTool, KEY } from './fixtures';

/** Requires a check-in on every call whose text is 'risky'. */
const requiring = (declares = true): Middleware => ({
  name: 'house-rules',
  ...(declares ? { requiresCheckIn: () => true } : {}),
  run(ctx, next) {
    if (ctx.args['text'] === 'risky') ctx.requireCheckIn('risky text needs a person');
    return next();
  },
});

/** Asks when a requirement is pending; otherwise, like a check-in gate for a tool with no checkIn, planned out. */
const asker = (): Middleware => ({
  name: 'asker',
  passThrough: (tool, chain) => (mayRequireCheckIn(tool, chain) ? undefined : { why: 'nothing to ask' }),
  async run(ctx, next) {
    if (ctx.checkInsRequired.length > 0) {
      await ctx.ask(`Allow it? ${ctx.checkInsRequired.map((r) => `${r.gate}: ${r.why}`).join('; ')}`);
    }
    return next();
  },
});

const dispatcherOf = (middleware: Middleware[], tool: Tool) =>
  createDispatcher({ tools: [tool], chain: createChain(middleware, { checkIns: { key: KEY } }) });

describe('ctx.requireCheckIn', () => {
  test('a later asker pauses the call, and the approval runs it once', async () => {
    const tool = countingTool();
    const dispatcher = dispatcherOf([requiring(), asker()], tool);
    const outcome = await dispatcher.dispatch({ toolName: 'echo', args: { text: 'risky' } });
    if (outcome.kind !== 'paused') throw new Error(outcome.content);
    expect(outcome.checkIn.asker).toBe('asker');
    expect(outcome.checkIn.question).toBe('Allow it? house-rules: risky text needs a person');
    const resumed = await dispatcher.resume(outcome.checkIn, checkInApproved({ by: 'sam' }));
    expect(resumed.kind).toBe('result');
    expect(tool.calls).toHaveLength(1);
  });

  test('with nothing to ask, the call is refused by the middleware that required it', async () => {
    const tool = countingTool();
    const dispatcher = dispatcherOf([requiring()], tool);
    const outcome = await dispatcher.dispatch({ toolName: 'echo', args: { text: 'risky' } });
    expect(outcome).toMatchObject({
      kind: 'refused',
      gate: 'house-rules',
      code: 'CHECKIN_NOT_ASKED',
      ran: false,
      content:
        "[house-rules refused: 'echo' needs a person's approval, but nothing in this deployment asked for it. Retrying will not help. Tell the user the action needs approval.]",
    });
    expect(tool.calls).toHaveLength(0);
  });

  test('an asker planned out because the requirer did not declare it cannot let the call run', async () => {
    const tool = countingTool();
    const dispatcher = dispatcherOf([requiring(false), asker()], tool);
    const outcome = await dispatcher.dispatch({ toolName: 'echo', args: { text: 'risky' } });
    expect(outcome).toMatchObject({ kind: 'refused', code: 'CHECKIN_NOT_ASKED' });
    expect(outcome.ledger.find((r) => r.gate === 'asker')).toEqual({
      gate: 'asker',
      outcome: 'allow',
      why: 'nothing to ask',
      changed: false,
    });
    expect(tool.calls).toHaveLength(0);
  });

  test('an approval given before the requirement does not answer it', async () => {
    const tool = countingTool();
    const late: Middleware = {
      name: 'late-rules',
      run(ctx, next) {
        ctx.requireCheckIn('asked after the approval');
        return next();
      },
    };
    const dispatcher = dispatcherOf([requiring(), asker(), late], tool);
    const first = await dispatcher.dispatch({ toolName: 'echo', args: { text: 'risky' } });
    if (first.kind !== 'paused') throw new Error(first.content);
    const resumed = await dispatcher.resume(first.checkIn, checkInApproved({ by: 'sam' }));
    expect(resumed).toMatchObject({ kind: 'refused', gate: 'late-rules', code: 'CHECKIN_NOT_ASKED' });
    expect(tool.calls).toHaveLength(0);
  });

  test('calls without a requirement pass, and requirements are listed in order', async () => {
    const tool = countingTool();
    const seen: unknown[] = [];
    const watcher: Middleware = {
      name: 'watcher',
      run(ctx, next) {
        seen.push(ctx.checkInsRequired);
        return next();
      },
    };
    const dispatcher = dispatcherOf([requiring(), watcher], tool);
    expect((await dispatcher.dispatch({ toolName: 'echo', args: { text: 'calm' } })).kind).toBe('result');
    expect(seen).toEqual([[]]);
  });

  test('a blank why, or a requirement after the tool ran, throws (a refusal by that middleware)', async () => {
    const tool = countingTool();
    const blank: Middleware = {
      name: 'blank',
      run(ctx, next) {
        ctx.requireCheckIn('  ');
        return next();
      },
    };
    const after: Middleware = {
      name: 'after-half',
      async run(ctx, next) {
        await next();
        ctx.requireCheckIn('too late');
      },
    };
    expect(await dispatcherOf([blank], tool).dispatch({ toolName: 'echo', args: {} })).toMatchObject({
      kind: 'refused',
      gate: 'blank',
    });
    expect(await dispatcherOf([after], tool).dispatch({ toolName: 'echo', args: {} })).toMatchObject({
      kind: 'refused',
      gate: 'after-half',
      ran: true,
    });
  });

  test('mayRequireCheckIn: a declaration that throws counts as yes', () => {
    const tool = countingTool();
    const throwing: Middleware = {
      name: 'throwing',
      requiresCheckIn: () => {
        throw new Error('boom');
      },
      run: (_ctx, next) => next(),
    };
    expect(mayRequireCheckIn(tool, createChain([throwing]))).toBe(true);
    expect(mayRequireCheckIn(tool, createChain([requiring(false)]))).toBe(false);
  });
});
