// How many promises one governed call makes when every gate decides synchronously. Each await or
// `.then` the runtime adds shows here (an async hook sees every promise, awaits' throwaway ones
// included), so a regression fails CI; what a call costs in time is measured in bench/, never here.
import { createHook } from 'node:async_hooks';
import {
  createChain,
  createDispatcher,
  defineTool,
  type Dispatcher,
  type Middleware,
  type ToolMiddlewareContext,
} from '@toolgate/core';
import { canonicalChain } from '@toolgate/middleware';

// Promises of the runtime itself: the tool's answer as a promise, the reaction recording it, the one
// ending the executor's turn, and the one building the outcome.
const RUNTIME_PROMISES = 4;
// A gate that decides synchronously costs the one reaction that checks the laws on its return.
const PER_RUNNING_GATE = 1;

/** A tool that answers synchronously, so every promise counted is the runtime's. */
const lookup = defineTool({
  name: 'lookup',
  description: 'Looks something up.',
  inputSchema: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] },
  execute: ({ q }) => ({ found: String(q) }),
});

/** A gate that decides without awaiting anything: it checks, then hands over to next. */
function syncGate(name: string, decide: (ctx: ToolMiddlewareContext) => void = () => undefined): Middleware {
  return {
    name,
    run(ctx, next) {
      decide(ctx);
      return next();
    },
  };
}

const REPEATS = 5;

/**
 * Promises created while `run` runs and settles, less those the counting harness makes itself. The
 * test runner's own promises may land in any window, and only ever add: the fewest seen is the count.
 */
async function promisesDuring(run: () => Promise<unknown>): Promise<number> {
  let count = 0;
  const hook = createHook({
    init(_id, type) {
      if (type === 'PROMISE') count++;
    },
  });
  const settled = Promise.resolve();
  let harness = Infinity;
  let counted = Infinity;
  hook.enable();
  try {
    for (let i = 0; i < REPEATS; i++) {
      count = 0;
      // The same shape as a counted run (an async function awaiting one settled promise).
      await (async () => {
        await settled;
      })();
      harness = Math.min(harness, count);
      count = 0;
      await run();
      counted = Math.min(counted, count);
    }
  } finally {
    hook.disable();
  }
  return counted - harness;
}

async function promisesPerCall(dispatcher: Dispatcher, args: unknown = { q: 'refunds' }): Promise<number> {
  const call = { toolName: 'lookup', args };
  // The first call builds the tool's plan and compiles its schema; count a warm one.
  expect((await dispatcher.dispatch(call)).kind).toBe('result');
  return promisesDuring(async () => {
    const outcome = await dispatcher.dispatch(call);
    expect(outcome.kind).toBe('result');
  });
}

describe('promises per governed call', () => {
  it('the harness sees an added await', async () => {
    const awaited = await promisesDuring(async () => {
      await Promise.resolve();
    });
    expect(awaited).toBeGreaterThanOrEqual(1);
  });

  it('an empty chain costs only the runtime', async () => {
    const dispatcher = createDispatcher({ tools: [lookup], chain: createChain([]) });
    expect(await promisesPerCall(dispatcher)).toBeLessThanOrEqual(RUNTIME_PROMISES);
  });

  it.each([1, 4, 8])('%i synchronous gates cost one reaction each', async (gates) => {
    const seen: string[] = [];
    const chain = createChain(
      Array.from({ length: gates }, (_, i) => syncGate(`gate-${i}`, (ctx) => void seen.push(ctx.toolName))),
    );
    const dispatcher = createDispatcher({ tools: [lookup], chain });
    expect(await promisesPerCall(dispatcher)).toBeLessThanOrEqual(
      RUNTIME_PROMISES + gates * PER_RUNNING_GATE,
    );
    // Each gate really ran on both calls: the count is of a governed call, not a short cut.
    expect(seen).toHaveLength(gates * (1 + REPEATS));
  });

  it('a gate that awaits is charged for its awaits, so the bound is not slack', async () => {
    const awaiting: Middleware = {
      name: 'awaiting',
      async run(_ctx, next) {
        await Promise.resolve();
        await next();
      },
    };
    const dispatcher = createDispatcher({ tools: [lookup], chain: createChain([awaiting]) });
    expect(await promisesPerCall(dispatcher)).toBeGreaterThan(RUNTIME_PROMISES + PER_RUNNING_GATE);
  });

  it('the passive canonical chain runs one gate and files the other passes for free', async () => {
    const chain = canonicalChain();
    const dispatcher = createDispatcher({ tools: [lookup], chain });
    const count = await promisesPerCall(dispatcher);
    // The plan its calls ran (cached by the first one): only validate-args has something to decide.
    const running = chain.planFor(lookup, (() => undefined) as never).running.map((m) => m.name);
    expect(running).toEqual(['validate-args']);
    expect(count).toBeLessThanOrEqual(RUNTIME_PROMISES + running.length * PER_RUNNING_GATE);
  });

  it('a refusal by a synchronous gate costs no more than a result', async () => {
    const refuser = syncGate('refuser', (ctx) => {
      if (ctx.args['q'] === 'secret') ctx.deny('not that one', { code: 'NOPE' });
    });
    const dispatcher = createDispatcher({ tools: [lookup], chain: createChain([refuser]) });
    expect((await dispatcher.dispatch({ toolName: 'lookup', args: { q: 'secret' } })).kind).toBe('refused');
    const count = await promisesDuring(async () => {
      const outcome = await dispatcher.dispatch({ toolName: 'lookup', args: { q: 'secret' } });
      expect(outcome.kind === 'refused' && outcome.code).toBe('NOPE');
    });
    expect(count).toBeLessThanOrEqual(RUNTIME_PROMISES + PER_RUNNING_GATE);
  });
});
