import {
  assertTool,
  createChain,
  createDispatcher,
  Credential,
  Refusal,
  type DispatchOutcome,
  type Middleware,
  type Tool,
  type ToolMiddlewareContext,
} from '@toolgate/core';
import { beforeNext, countingTool, passThrough, recordEvents } from './fixtures';

/** Dispatches one call to a counting `echo` tool through `middleware`. */
async function dispatchThrough(
  middleware: Middleware[],
  args: Record<string, unknown> = { text: 'hello' },
  tool = countingTool(),
) {
  const dispatcher = createDispatcher({ tools: [tool], chain: createChain(middleware) });
  const events = recordEvents(dispatcher);
  const outcome = await dispatcher.dispatch({ toolName: tool.schema.name, args });
  return { outcome, tool, events };
}

function refused(outcome: DispatchOutcome) {
  if (outcome.kind !== 'refused')
    throw new Error(`expected a refusal, got ${outcome.kind}: ${outcome.content}`);
  return outcome;
}

describe('the onion', () => {
  it('runs before-halves in order and after-halves in reverse order around the tool', async () => {
    const order: string[] = [];
    const layer = (name: string): Middleware => ({
      name,
      async run(_ctx, next) {
        order.push(`${name}:before`);
        await next();
        order.push(`${name}:after`);
      },
    });
    const tool = countingTool('echo', () => {
      order.push('tool');
      return 'done';
    });
    const { outcome } = await dispatchThrough([layer('outer'), layer('middle'), layer('inner')], {}, tool);
    expect(outcome.kind).toBe('result');
    expect(order).toEqual([
      'outer:before',
      'middle:before',
      'inner:before',
      'tool',
      'inner:after',
      'middle:after',
      'outer:after',
    ]);
  });

  it('files one allow row per middleware that continued, in order', async () => {
    const { outcome } = await dispatchThrough([passThrough('a'), passThrough('b')]);
    expect(outcome.ledger).toEqual([
      { gate: 'a', outcome: 'allow', changed: false },
      { gate: 'b', outcome: 'allow', changed: false },
    ]);
  });

  it('lets after-halves read the result and the text the model will read', async () => {
    let seen: unknown[] = [];
    const reader: Middleware = {
      name: 'reader',
      async run(ctx, next) {
        await next();
        seen = [ctx.ran, ctx.result, ctx.resultText];
      },
    };
    const { outcome } = await dispatchThrough([reader], { text: 'hi' });
    expect(seen).toEqual([true, { echoed: { text: 'hi' } }, '{"echoed":{"text":"hi"}}']);
    expect(outcome.content).toBe('{"echoed":{"text":"hi"}}');
  });

  it('shares one state bag between the middleware of a call', async () => {
    const writer = beforeNext('writer', (ctx) => {
      ctx.state['seenBy'] = 'writer';
    });
    let read: unknown;
    const reader = beforeNext('reader', (ctx) => {
      read = ctx.state['seenBy'];
    });
    await dispatchThrough([writer, reader]);
    expect(read).toBe('writer');
  });
});

describe('the law: no middleware can answer for the tool', () => {
  it('a middleware that returns without next or deny is a refusal by that middleware', async () => {
    const silent: Middleware = { name: 'silent', async run() {} };
    const { outcome, tool } = await dispatchThrough([passThrough('outer'), silent]);
    const refusal = refused(outcome);
    expect(refusal.gate).toBe('silent');
    expect(refusal.code).toBe('GATE_SILENT');
    expect(refusal.content).toBe(
      `[silent refused: 'echo' was stopped by 'silent', which neither continued nor refused. Retrying will not help.]`,
    );
    expect(refusal.ran).toBe(false);
    expect(tool.calls).toHaveLength(0);
  });

  it('a middleware that throws is a refusal by that middleware, without leaking its message', async () => {
    const broken = beforeNext('broken', () => {
      throw new Error('connection to db://admin:hunter2@10.0.0.1 failed');
    });
    const { outcome, tool, events } = await dispatchThrough([broken]);
    const refusal = refused(outcome);
    expect(refusal.gate).toBe('broken');
    expect(refusal.code).toBe('GATE_ERROR');
    expect(refusal.content).toBe(
      `[broken refused: 'echo' was stopped because the 'broken' check failed. Retrying will not help.]`,
    );
    expect(JSON.stringify(refusal)).not.toContain('hunter2');
    expect(JSON.stringify(events)).not.toContain('hunter2');
    expect(tool.calls).toHaveLength(0);
  });

  it('a middleware that throws a non-Error value is still a refusal by that middleware', async () => {
    const broken = beforeNext('broken', () => {
      throw 'hunter2';
    });
    const { outcome, tool } = await dispatchThrough([broken]);
    expect(refused(outcome).gate).toBe('broken');
    expect(outcome.content).not.toContain('hunter2');
    expect(tool.calls).toHaveLength(0);
  });

  it('a middleware that throws undefined is still a refusal by that middleware', async () => {
    const broken = beforeNext('broken', () => {
      throw undefined;
    });
    const { outcome, tool } = await dispatchThrough([passThrough('outer'), broken]);
    const refusal = refused(outcome);
    expect(refusal.gate).toBe('broken');
    expect(refusal.code).toBe('GATE_ERROR');
    expect(tool.calls).toHaveLength(0);
  });

  it('calling next() twice after the tool ran is a refusal that says the tool ran and its result was withheld', async () => {
    const twice: Middleware = {
      name: 'twice',
      async run(_ctx, next) {
        await next();
        await next();
      },
    };
    const { outcome, tool } = await dispatchThrough([passThrough('outer'), twice], { text: 'payload-text' });
    const refusal = refused(outcome);
    expect(refusal.gate).toBe('twice');
    expect(refusal.code).toBe('GATE_NEXT_TWICE');
    expect(refusal.ran).toBe(true);
    expect(refusal.content).toContain(`'echo' ran, but 'twice' withheld its result`);
    expect(refusal.content).not.toContain('payload-text');
    expect(refusal.retryable).toBe(false);
    expect(tool.calls).toHaveLength(1);
  });

  it('calling next() twice before the downstream finished is a refusal by that middleware', async () => {
    const twice: Middleware = {
      name: 'twice',
      async run(_ctx, next) {
        await Promise.all([next(), next()]);
      },
    };
    const slow = beforeNext('slow', () => Promise.resolve());
    const { outcome, tool } = await dispatchThrough([twice, slow]);
    const refusal = refused(outcome);
    expect(refusal.gate).toBe('twice');
    expect(refusal.code).toBe('GATE_NEXT_TWICE');
    expect(refusal.ran).toBe(tool.calls.length > 0);
  });

  it('an inner refusal swallowed by an outer try/catch is still refused and the tool never runs', async () => {
    let caught: unknown;
    const swallower: Middleware = {
      name: 'swallower',
      async run(_ctx, next) {
        try {
          await next();
        } catch (error) {
          caught = error;
        }
      },
    };
    const denier = beforeNext('denier', (ctx) => ctx.deny(`'echo' is closed on Sundays`));
    const { outcome, tool } = await dispatchThrough([swallower, denier]);
    const refusal = refused(outcome);
    expect(caught).toBeDefined();
    expect(refusal.gate).toBe('denier');
    expect(refusal.content).toBe(`[denier refused: 'echo' is closed on Sundays.]`);
    expect(refusal.ledger).toEqual([
      { gate: 'swallower', outcome: 'allow', changed: false },
      { gate: 'denier', outcome: 'deny', why: `'echo' is closed on Sundays.`, changed: false },
    ]);
    expect(tool.calls).toHaveLength(0);
  });

  it('a swallowed refusal cannot be followed by a second try at the tool', async () => {
    const retrier: Middleware = {
      name: 'retrier',
      async run(_ctx, next) {
        try {
          await next();
        } catch {
          await next();
        }
      },
    };
    const { outcome, tool } = await dispatchThrough([retrier, beforeNext('denier', (ctx) => ctx.deny('no'))]);
    expect(refused(outcome).gate).toBe('denier');
    expect(tool.calls).toHaveLength(0);
  });

  it('setResult before the tool ran throws, which refuses the call', async () => {
    const forger = beforeNext('forger', (ctx) => ctx.setResult({ fake: true }, 'answering for the tool'));
    const { outcome, tool } = await dispatchThrough([forger]);
    const refusal = refused(outcome);
    expect(refusal.gate).toBe('forger');
    expect(refusal.code).toBe('GATE_ERROR');
    expect(refusal.content).not.toContain('fake');
    expect(tool.calls).toHaveLength(0);
  });

  it('a middleware that answers without calling next cannot produce a result', async () => {
    const answerer: Middleware = {
      name: 'answerer',
      async run(ctx) {
        try {
          ctx.setResult('cached answer', 'served from cache');
        } catch {
          // The only way out is to continue or refuse.
        }
      },
    };
    const { outcome, tool } = await dispatchThrough([answerer]);
    expect(refused(outcome).code).toBe('GATE_SILENT');
    expect(outcome.content).not.toContain('cached answer');
    expect(tool.calls).toHaveLength(0);
  });

  it('a middleware that does not await next is refused', async () => {
    const hasty: Middleware = {
      name: 'hasty',
      async run(_ctx, next) {
        void next();
      },
    };
    const { outcome, tool } = await dispatchThrough([hasty]);
    const refusal = refused(outcome);
    expect(refusal.gate).toBe('hasty');
    expect(refusal.code).toBe('GATE_UNAWAITED');
    expect(refusal.ran).toBe(tool.calls.length === 1);
  });
});

describe('ctx.deny', () => {
  it('a Refusal that a middleware throws itself is refused in its own name, whatever gate it names', async () => {
    const tool = countingTool();
    const impostor: Middleware = {
      name: 'impostor',
      async run() {
        throw new Refusal('permission', 'not today.', { code: 'NOPE' });
      },
    };
    const dispatcher = createDispatcher({
      tools: [tool],
      chain: createChain([passThrough('outer'), impostor]),
    });

    const outcome = await dispatcher.dispatch({ toolName: 'echo', args: {} });

    expect(outcome).toMatchObject({
      kind: 'refused',
      gate: 'impostor',
      code: 'NOPE',
      content: '[impostor refused: not today.]',
    });
    expect(outcome.ledger.map((row) => [row.gate, row.outcome])).toEqual([
      ['outer', 'allow'],
      ['impostor', 'deny'],
    ]);
    expect(tool.calls).toHaveLength(0);
  });

  it('refuses with the sentence the model reads and the code, retryable flag and detail kept apart', async () => {
    const denier = beforeNext('quota', (ctx) =>
      ctx.deny(`the daily quota for 'echo' is used up. Retrying tomorrow may help`, {
        code: 'QUOTA',
        retryable: true,
        detail: 'tenant acme at 100/100',
      }),
    );
    const { outcome, events } = await dispatchThrough([denier]);
    const refusal = refused(outcome);
    expect(refusal.content).toBe(
      `[quota refused: the daily quota for 'echo' is used up. Retrying tomorrow may help.]`,
    );
    expect(refusal.reason).toBe(`the daily quota for 'echo' is used up. Retrying tomorrow may help.`);
    expect(refusal.code).toBe('QUOTA');
    expect(refusal.retryable).toBe(true);
    expect(refusal.content).not.toContain('acme');
    expect(events.find((e) => e.type === 'gate.decision' && e['outcome'] === 'deny')).toMatchObject({
      gate: 'quota',
      code: 'QUOTA',
      detail: 'tenant acme at 100/100',
    });
  });

  it('defaults the code to DENIED and a blank reason to a generic sentence', async () => {
    const { outcome } = await dispatchThrough([beforeNext('blank', (ctx) => ctx.deny('  '))]);
    expect(refused(outcome).code).toBe('DENIED');
    expect(outcome.content).toBe(`[blank refused: 'echo' was refused.]`);
  });

  it('a deny after the tool returned withholds the result and says the tool ran', async () => {
    let outerSaw: unknown[] = [];
    const outer: Middleware = {
      name: 'outer',
      async run(ctx, next) {
        try {
          await next();
        } finally {
          outerSaw = [ctx.ran, ctx.result, ctx.resultText];
        }
      },
    };
    const late: Middleware = {
      name: 'late',
      async run(ctx, next) {
        await next();
        ctx.deny('the result names a private customer', { retryable: true });
      },
    };
    const { outcome, tool } = await dispatchThrough([outer, late], { text: 'customer-42' });
    const refusal = refused(outcome);
    expect(refusal.ran).toBe(true);
    expect(refusal.gate).toBe('late');
    expect(refusal.retryable).toBe(false);
    expect(refusal.content).toBe(
      `[late refused: the result names a private customer. 'echo' ran, but 'late' withheld its result.]`,
    );
    expect(JSON.stringify(refusal)).not.toContain('customer-42');
    expect(outerSaw).toEqual([true, undefined, undefined]);
    expect(tool.calls).toHaveLength(1);
  });

  it('a deny that already mentions the run is not told twice', async () => {
    const ceiling: Middleware = {
      name: 'ceiling',
      async run(ctx, next) {
        await next();
        ctx.deny(`'echo' ran and returned too much`, { mentionsRun: true });
      },
    };
    const { outcome } = await dispatchThrough([ceiling]);
    expect(outcome.content).toBe(`[ceiling refused: 'echo' ran and returned too much.]`);
    expect(outcome.ran).toBe(true);
  });

  it('a throw after the tool ran is a refusal that says the result was withheld', async () => {
    const broken: Middleware = {
      name: 'broken',
      async run(_ctx, next) {
        await next();
        throw new Error('audit sink down');
      },
    };
    const { outcome } = await dispatchThrough([broken]);
    const refusal = refused(outcome);
    expect(refusal.ran).toBe(true);
    expect(refusal.content).toContain(`'echo' ran, but 'broken' withheld its result`);
    expect(refusal.content).not.toContain('audit sink');
  });
});

describe('ctx.setArgs and ctx.setResult', () => {
  it('setArgs hands the tool the new args and files a transform row with its why', async () => {
    let laterSaw: unknown;
    const trimmer = beforeNext('trimmer', (ctx) =>
      ctx.setArgs({ ...ctx.args, text: String(ctx.args['text']).trim() }, 'trimmed whitespace'),
    );
    const reader = beforeNext('reader', (ctx) => {
      laterSaw = ctx.args;
    });
    const { outcome, tool } = await dispatchThrough([trimmer, reader], { text: '  hi  ' });
    expect(tool.calls).toEqual([{ text: 'hi' }]);
    expect(laterSaw).toEqual({ text: 'hi' });
    expect(outcome.ledger).toEqual([
      { gate: 'trimmer', outcome: 'transform', why: 'trimmed whitespace', changed: true },
      { gate: 'reader', outcome: 'allow', changed: false },
    ]);
  });

  it('ctx.args is read-only', async () => {
    let assigned: unknown;
    const mutator = beforeNext('mutator', (ctx) => {
      try {
        (ctx.args as Record<string, unknown>)['text'] = 'changed';
      } catch (error) {
        assigned = error;
      }
    });
    const { tool } = await dispatchThrough([mutator], { text: 'original' });
    expect(assigned).toBeInstanceOf(TypeError);
    expect(tool.calls).toEqual([{ text: 'original' }]);
  });

  it.each([
    ['with no why', undefined],
    ['with a blank why', '   '],
  ])('setArgs %s is refused and the tool never runs', async (_label, why) => {
    const sloppy = beforeNext('sloppy', (ctx) => ctx.setArgs({ text: 'other' }, why as unknown as string));
    const { outcome, tool } = await dispatchThrough([sloppy]);
    expect(refused(outcome).gate).toBe('sloppy');
    expect(tool.calls).toHaveLength(0);
  });

  it('setArgs with something other than a plain object is refused', async () => {
    const { outcome, tool } = await dispatchThrough([
      beforeNext('arrays', (ctx) => ctx.setArgs([1, 2] as never, 'made it a list')),
    ]);
    expect(refused(outcome).gate).toBe('arrays');
    expect(tool.calls).toHaveLength(0);
  });

  it('setArgs after the tool ran is refused and the result withheld', async () => {
    const late: Middleware = {
      name: 'late',
      async run(ctx, next) {
        await next();
        ctx.setArgs({ text: 'x' }, 'too late');
      },
    };
    const { outcome } = await dispatchThrough([late]);
    expect(refused(outcome).ran).toBe(true);
    expect(outcome.content).toContain(`'late' withheld its result`);
  });

  it('setResult after the tool returned replaces what the model reads and files a transform row', async () => {
    const masker: Middleware = {
      name: 'masker',
      async run(ctx, next) {
        await next();
        ctx.setResult({ masked: true }, 'masked emails');
      },
    };
    const { outcome } = await dispatchThrough([masker]);
    expect(outcome.kind).toBe('result');
    expect(outcome.kind === 'result' && outcome.value).toEqual({ masked: true });
    expect(outcome.content).toBe('{"masked":true}');
    expect(outcome.ledger).toEqual([
      { gate: 'masker', outcome: 'allow', changed: false },
      { gate: 'masker', outcome: 'transform', why: 'masked emails', changed: true },
    ]);
  });

  it('setResult without a why is refused and the result withheld', async () => {
    const sloppy: Middleware = {
      name: 'sloppy',
      async run(ctx, next) {
        await next();
        ctx.setResult('other', '');
      },
    };
    const { outcome, tool } = await dispatchThrough([sloppy]);
    const refusal = refused(outcome);
    expect(refusal.gate).toBe('sloppy');
    expect(refusal.ran).toBe(true);
    expect(refusal.content).toContain(`'sloppy' withheld its result`);
    expect(tool.calls).toHaveLength(1);
  });

  it('note explains a pass-through in the ledger', async () => {
    const { outcome } = await dispatchThrough([beforeNext('permission', (ctx) => ctx.note('no checker'))]);
    expect(outcome.ledger).toEqual([
      { gate: 'permission', outcome: 'allow', why: 'no checker', changed: false },
    ]);
  });

  it("decidedBy files the rule on the speaker's own rows only, for a pass and for a refusal", async () => {
    const { outcome, events } = await dispatchThrough([
      beforeNext('policy', (ctx) => {
        ctx.decidedBy('small-ok');
        ctx.note('allowed');
      }),
      beforeNext('limits', (ctx) => ctx.note('under the cap')),
    ]);
    expect(outcome.ledger).toEqual([
      { gate: 'policy', outcome: 'allow', why: 'allowed', rule: 'small-ok', changed: false },
      { gate: 'limits', outcome: 'allow', why: 'under the cap', changed: false },
    ]);
    expect(events.filter((e) => e.type === 'gate.decision')[0]).toMatchObject({
      gate: 'policy',
      rule: 'small-ok',
    });
    const denied = await dispatchThrough([
      beforeNext('policy', (ctx) => {
        ctx.decidedBy('no-refunds');
        ctx.deny('refunds need a person', { code: 'POLICY_DENIED' });
      }),
    ]);
    expect(denied.outcome.ledger).toEqual([expect.objectContaining({ outcome: 'deny', rule: 'no-refunds' })]);
  });

  it('decidedBy refuses an empty rule name: a fact must name something', async () => {
    const { outcome } = await dispatchThrough([beforeNext('policy', (ctx) => ctx.decidedBy(' '))]);
    expect(outcome.kind).not.toBe('result');
  });
});

describe('tool failures travelling out', () => {
  const failing = () =>
    countingTool('echo', () => {
      throw new RangeError('upstream said 503');
    });

  it('stay failed when an after-half denies', async () => {
    const denier: Middleware = {
      name: 'denier',
      async run(ctx, next) {
        try {
          await next();
        } finally {
          ctx.deny('should not relabel the failure');
        }
      },
    };
    const { outcome } = await dispatchThrough([denier], {}, failing());
    expect(outcome.kind).toBe('failed');
    expect(outcome.kind === 'failed' && outcome.error).toEqual({
      name: 'RangeError',
      message: 'upstream said 503',
    });
    expect(outcome.content).toBe(`['echo' failed: upstream said 503.]`);
    expect(outcome.ran).toBe(true);
  });

  it('stay failed when an after-half swallows the error', async () => {
    const swallower: Middleware = {
      name: 'swallower',
      async run(ctx, next) {
        try {
          await next();
        } catch {
          // Ignored on purpose.
        }
        expect(ctx.error).toEqual({ name: 'RangeError', message: 'upstream said 503' });
      },
    };
    const { outcome } = await dispatchThrough([swallower], {}, failing());
    expect(outcome.kind).toBe('failed');
  });
});

describe('what the context exposes', () => {
  it('has no toolSource key for our own tools', async () => {
    let hasKey: boolean | undefined;
    const probe = beforeNext('probe', (ctx) => {
      hasKey = 'toolSource' in ctx;
    });
    const { outcome } = await dispatchThrough([probe]);
    expect(hasKey).toBe(false);
    expect('toolSource' in outcome).toBe(false);
  });

  it('carries the toolSource of a tool imported from an MCP server', async () => {
    const imported = {
      schema: { name: 'remote_search', description: 'Search remotely', inputSchema: { type: 'object' } },
      execute: async () => 'found',
      source: 'github',
    };
    assertTool(imported, { allowSource: true });
    let seen: string | undefined;
    const probe = beforeNext('probe', (ctx) => {
      seen = ctx.toolSource;
    });
    const dispatcher = createDispatcher({ tools: [imported as Tool], chain: createChain([probe]) });
    const outcome = await dispatcher.dispatch({ toolName: 'remote_search', args: {} });
    expect(seen).toBe('github');
    expect(outcome.toolSource).toBe('github');
    expect(outcome.kind).toBe('result');
  });

  it('has no identity key when the call has no identity', async () => {
    let hasKey: boolean | undefined;
    await dispatchThrough([beforeNext('probe', (ctx) => void (hasKey = 'identity' in ctx))]);
    expect(hasKey).toBe(false);
  });

  it('JSON.stringify(ctx) shows identifying facts only: no args, no result, no credential', async () => {
    let json = '';
    const holder: Middleware = {
      name: 'holder',
      async run(ctx, next) {
        ctx.provideCredential(
          new Credential(
            { kind: 'api_key', service: 'billing' },
            { kind: 'api_key', value: 'sk_live_SECRET' },
          ),
        );
        await next();
        json = JSON.stringify(ctx);
      },
    };
    const { outcome } = await dispatchThrough([holder], { text: 'arg-value' });
    expect(outcome.kind).toBe('result');
    expect(json).not.toContain('sk_live_SECRET');
    expect(json).not.toContain('arg-value');
    expect(JSON.parse(json)).toEqual({
      toolName: 'echo',
      toolCallId: outcome.toolCallId,
      chainId: outcome.chainId,
      resumed: false,
      ran: true,
    });
  });

  it('hands the tool the provided credential, whose secret is readable only through reveal()', async () => {
    let revealed: unknown;
    const tool = countingTool('echo', (_args, ctx) => {
      revealed = ctx.credential?.reveal();
      return 'ok';
    });
    const provider = beforeNext('credentials', (ctx) =>
      ctx.provideCredential(
        new Credential({ kind: 'api_key', service: 'billing' }, { kind: 'api_key', value: 'sk_live_SECRET' }),
      ),
    );
    await dispatchThrough([provider], {}, tool);
    expect(revealed).toBe('sk_live_SECRET');
  });

  it('provideCredential after the tool ran is refused', async () => {
    const late: Middleware = {
      name: 'late',
      async run(ctx, next) {
        await next();
        ctx.provideCredential(
          new Credential({ kind: 'api_key', service: 'billing' }, { kind: 'api_key', value: 'x' }),
        );
      },
    };
    const { outcome } = await dispatchThrough([late]);
    expect(refused(outcome).gate).toBe('late');
    expect(outcome.ran).toBe(true);
  });

  it('provideWanted records each resolved artifact by argument name', async () => {
    let wanted: unknown;
    const wants = beforeNext('wants', (ctx) => {
      ctx.provideWanted('rows', {
        ref: 'art_0000000000000000000001',
        kind: 'dataset/rows',
        createdAt: '2030-01-01T00:00:00.000Z',
      });
      ctx.provideWanted('cols', {
        ref: 'art_0000000000000000000002',
        kind: 'dataset/cols',
        createdAt: '2030-01-01T00:00:00.000Z',
      });
    });
    await dispatchThrough([
      wants,
      beforeNext('reader', (ctx: ToolMiddlewareContext) => void (wanted = ctx.wanted)),
    ]);
    expect(Object.keys(wanted as object)).toEqual(['rows', 'cols']);
  });
});
