// The conformance suites must catch what they promise to catch: each law fails for a middleware
// or store that breaks it, and passes for the shipped implementations (see the *-conformance tests).

import type { ArtifactStore, CheckInStore, Middleware } from '@toolgate/core';
import { inMemoryArtifacts, inMemoryCheckIns } from '@toolgate/testing';
import { ARTIFACT_STORE_LAWS } from '../src/conformance/artifact-store-laws';
import { CHECK_IN_STORE_LAWS } from '../src/conformance/check-in-store-laws';
import { MIDDLEWARE_LAWS, type MiddlewareConformanceOptions } from '../src/conformance/middleware-laws';
import { fixedClock } from '../src/clock';

function law<T extends { readonly title: string }>(laws: readonly T[], start: string): T {
  const found = laws.find((candidate) => candidate.title.startsWith(start));
  if (found === undefined) throw new Error(`no law starts with '${start}'`);
  return found;
}

const middlewareLaw = (start: string) => law(MIDDLEWARE_LAWS, start);

function middleware(run: Middleware['run']): Middleware {
  return { name: 'under-test', run };
}

const passThrough = middleware(async (_ctx, next) => next());

async function check(
  start: string,
  subject: Middleware,
  options: MiddlewareConformanceOptions = {},
): Promise<void> {
  await middlewareLaw(start).check({ factory: () => subject, options });
}

describe('the middleware laws', () => {
  it('every law passes for a middleware that only continues', async () => {
    for (const candidate of MIDDLEWARE_LAWS) {
      if (candidate.applies !== undefined && !candidate.applies({})) continue;
      await expect(candidate.check({ factory: () => passThrough, options: {} })).resolves.toBeUndefined();
    }
  });

  it('catches a middleware that never calls next', async () => {
    const silent = middleware(async () => undefined);
    await expect(check('lets an allowed call reach the tool', silent)).rejects.toThrow(
      /did not end in a result[\s\S]*GATE_SILENT/,
    );
  });

  it('catches a middleware that calls next twice', async () => {
    const twice = middleware(async (_ctx, next) => {
      await next();
      await next().catch(() => undefined);
    });
    await expect(check('calls next at most once', twice)).rejects.toThrow(
      'called next() 2 times in one run (an allowed call)',
    );
  });

  it('catches a middleware that retries next after a refusal further in', async () => {
    const retrying = middleware(async (_ctx, next) => {
      try {
        await next();
      } catch {
        await next();
      }
    });
    await expect(check('calls next at most once', retrying)).rejects.toThrow('(a refusal further in)');
  });

  it('catches a middleware that runs the tool itself', async () => {
    const runsTool = middleware(async (ctx, next) => {
      await ctx.tool.execute(ctx.args, ctx);
      await next();
    });
    await expect(check('cannot answer for the tool', runsTool)).rejects.toThrow(
      'the tool ran 2 times for one call',
    );
  });

  it('catches a middleware that falls back to running the tool when the chain throws', async () => {
    const fallback = middleware(async (ctx, next) => {
      try {
        await next();
      } catch {
        await ctx.tool.execute(ctx.args, ctx);
      }
    });
    await expect(check('treats a throw as a refusal', fallback)).rejects.toThrow(
      'did not end in a refusal before the tool',
    );
  });

  it('catches a middleware that fails open when its dependency throws', async () => {
    const guarded = (check: () => boolean): Middleware =>
      middleware(async (ctx, next) => {
        let allowed = true;
        try {
          allowed = check();
        } catch {
          // Fails open: the bug the law exists for.
        }
        if (!allowed) ctx.deny('not allowed.');
        await next();
      });
    const broken = () =>
      guarded(() => {
        throw new Error('directory down');
      });
    await expect(
      check(
        'fails closed',
        guarded(() => true),
        { broken },
      ),
    ).rejects.toThrow('did not refuse');
  });

  it('catches a middleware that runs the tool although the call was aborted', async () => {
    const stubborn = middleware(async (ctx, next) => {
      if (ctx.signal.aborted) await ctx.tool.execute(ctx.args, ctx);
      await next();
    });
    await expect(check('forwards the call', stubborn)).rejects.toThrow(
      'aborted before dispatch still ran the tool',
    );
  });

  it.each([
    [
      'an event',
      middleware(async (ctx, next) => {
        ctx.emit({ type: 'audit.call', args: ctx.args });
        await next();
      }),
      /into: event 'audit.call'/,
    ],
    [
      'a ledger row',
      middleware(async (ctx, next) => {
        ctx.note(`saw ${JSON.stringify(ctx.args)}`);
        await next();
      }),
      /into: .*ledger row 1 \('under-test'\)/,
    ],
    [
      'a refusal',
      middleware(async (ctx) => ctx.deny(`refused ${String(ctx.args['note'])}.`)),
      /into: .*the refused content/,
    ],
  ])('catches a middleware that puts an argument value in %s', async (_where, leaky, message) => {
    await expect(check('puts no argument value', leaky)).rejects.toThrow(message);
  });

  it('catches a middleware that lets through the call it should refuse', async () => {
    const lax = middleware(async (_ctx, next) => next());
    await expect(
      check('refuses the call it should refuse', lax, { refused: { identity: { tenant: 'globex' } } }),
    ).rejects.toThrow("'under-test' did not refuse options.refused");
  });

  it('prints the outcome when a law fails', async () => {
    const denier = middleware(async (ctx) => ctx.deny('nobody passes.', { code: 'NOPE' }));
    await expect(check('lets an allowed call reach the tool', denier)).rejects.toThrow(
      /refused by 'under-test' \(NOPE\); the tool did not run[\s\S]*model read: \[under-test refused: nobody passes\.\]/,
    );
  });
});

describe('the CheckInStore laws', () => {
  const clock = () => fixedClock();

  it('catch a consume that is not atomic', async () => {
    const inner = inMemoryCheckIns();
    const racy: CheckInStore = {
      ...inner,
      async consume(id, receipt) {
        const record = await inner.get(id);
        await new Promise<void>((resolve) => queueMicrotask(resolve));
        if (record?.state !== 'pending') return false;
        await inner.consume(id, receipt);
        return true;
      },
    };
    await expect(
      law(CHECK_IN_STORE_LAWS, 'exactly one of 100').check({ store: racy, clock: clock() }),
    ).rejects.toThrow();
  });

  it('catch a store that ignores the clock it was given', async () => {
    const c = clock();
    const store = inMemoryCheckIns({ now: () => Date.parse('2000-01-01T00:00:00Z') });
    await expect(
      law(CHECK_IN_STORE_LAWS, 'a request can be consumed until it expires').check({ store, clock: c }),
    ).rejects.toThrow();
  });

  it('catch a put that brings a used request back', async () => {
    const records = new Map<string, Awaited<ReturnType<CheckInStore['get']>>>();
    const inner = inMemoryCheckIns();
    const overwriting: CheckInStore = {
      ...inner,
      async put(request) {
        records.set(request.id, { request, state: 'pending' });
      },
      async get(id) {
        return records.get(id);
      },
      async consume(id) {
        const record = records.get(id);
        if (record?.state !== 'pending') return false;
        records.set(id, { ...record, state: 'consumed' });
        return true;
      },
    };
    await expect(
      law(CHECK_IN_STORE_LAWS, 'a second put').check({ store: overwriting, clock: clock() }),
    ).rejects.toThrow();
  });

  it('pass for the in-memory store', async () => {
    for (const candidate of CHECK_IN_STORE_LAWS) {
      const c = clock();
      await expect(
        candidate.check({ store: inMemoryCheckIns({ now: c.now }), clock: c }),
      ).resolves.toBeUndefined();
    }
  });
});

describe('the ArtifactStore laws', () => {
  it('catch a store that ignores scope', async () => {
    const inner = inMemoryArtifacts();
    const scopeless: ArtifactStore = {
      put: (_scope, artifact) => inner.put({}, artifact),
      get: (_scope, ref) => inner.get({}, ref),
      list: (_scope, kind, limit) => inner.list({}, kind, limit),
    };
    await expect(
      law(ARTIFACT_STORE_LAWS, 'another tenant').check({ store: scopeless, clock: fixedClock() }),
    ).rejects.toThrow();
  });

  it('catch a store that lists oldest first', async () => {
    const clock = fixedClock();
    const inner = inMemoryArtifacts({ now: clock.now });
    const backwards: ArtifactStore = {
      ...inner,
      list: async (scope, kind, limit) => (await inner.list(scope, kind, 100)).reverse().slice(0, limit),
    };
    await expect(
      law(ARTIFACT_STORE_LAWS, 'list returns live artifacts').check({ store: backwards, clock }),
    ).rejects.toThrow();
  });

  it('catch a store that hands out its own copy of the data', async () => {
    const clock = fixedClock();
    const data = new Map<string, { meta: { ref: string; kind: string; createdAt: string }; data: unknown }>();
    const inner = inMemoryArtifacts({ now: clock.now });
    const sharing: ArtifactStore = {
      ...inner,
      async put(scope, artifact) {
        const ref = await inner.put(scope, artifact);
        data.set(ref, { meta: { ref, kind: artifact.kind, createdAt: clock.iso() }, data: artifact.data });
        return ref;
      },
      async get(_scope, ref) {
        return data.get(ref);
      },
    };
    await expect(
      law(ARTIFACT_STORE_LAWS, 'changing data').check({ store: sharing, clock }),
    ).rejects.toThrow();
  });
});
