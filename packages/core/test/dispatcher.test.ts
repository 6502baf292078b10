import { EventEmitter } from 'eventemitter3';
import { Type } from 'typebox';
import {
  createChain,
  createDispatcher,
  Credential,
  defineTool,
  DispatcherConfigError,
  type DispatchOutcome,
  type Middleware,
  type Tool,
  type ToolgateListeners,
} from '@toolgate/core';
import { canonicalChain } from '@toolgate/middleware';
import { beforeNext, countingTool, manualClock, passThrough, recordEvents } from './fixtures';

function refused(outcome: DispatchOutcome) {
  if (outcome.kind !== 'refused')
    throw new Error(`expected a refusal, got ${outcome.kind}: ${outcome.content}`);
  return outcome;
}

function failed(outcome: DispatchOutcome) {
  if (outcome.kind !== 'failed')
    throw new Error(`expected a failure, got ${outcome.kind}: ${outcome.content}`);
  return outcome;
}

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

describe('createDispatcher at build', () => {
  it('refuses two tools with the same name, naming the tool and where each came from', () => {
    const imported = { ...countingTool('search'), source: 'github' } as Tool;
    expect(() =>
      createDispatcher({ tools: [countingTool('search'), imported], chain: createChain([]) }),
    ).toThrow(DispatcherConfigError);
    expect(() =>
      createDispatcher({ tools: [countingTool('search'), imported], chain: createChain([]) }),
    ).toThrow(
      `createDispatcher: two tools are named 'search' (from our own tools and MCP server 'github'). Rename one, or give the MCP client a prefix, e.g. mcpClient({ name: 'github', prefix: 'github_' }).`,
    );
  });

  it('refuses a chain that is neither a Chain nor a function', () => {
    expect(() => createDispatcher({ tools: [], chain: [passThrough('a')] as never })).toThrow(
      /chain must be a Chain/,
    );
    expect(() => createDispatcher({ tools: 'echo' as never, chain: createChain([]) })).toThrow(
      /tools must be an array/,
    );
  });

  it('refuses a chain whose gate cannot serve a tool, naming both', () => {
    const needsKey: Middleware = {
      ...passThrough('check-in'),
      checkTool: (tool) => (tool.checkIn !== undefined ? 'no check-in key' : undefined),
    };
    const guarded = defineTool({
      name: 'pay',
      description: 'Pay',
      inputSchema: Type.Object({}),
      execute: () => 'paid',
      checkIn: 'always',
    });
    expect(() =>
      createDispatcher({ tools: [countingTool(), guarded], chain: createChain([needsKey]) }),
    ).toThrow(`createDispatcher: tool 'pay' cannot be served by gate 'check-in': no check-in key.`);
  });

  it('treats a checkTool that throws as an objection', () => {
    const broken: Middleware = {
      ...passThrough('broken'),
      checkTool: () => {
        throw new Error('bug');
      },
    };
    expect(() => createDispatcher({ tools: [countingTool()], chain: createChain([broken]) })).toThrow(
      /gate 'broken': its checkTool threw Error/,
    );
  });
});

describe('schemas()', () => {
  it('returns name, description and inputSchema only', () => {
    const tool = defineTool({
      name: 'charge',
      description: 'Charge a card',
      inputSchema: Type.Object({ amount: Type.Number() }),
      execute: () => 'charged',
      capabilities: ['payments'],
      needs: { kind: 'api_key', service: 'stripe' },
      resultCeiling: { maxChars: 100 },
      checkIn: 'always',
    });
    const dispatcher = createDispatcher({ tools: [tool, countingTool()], chain: createChain([]) });
    const schemas = dispatcher.schemas();
    expect(schemas).toEqual([
      { name: 'charge', description: 'Charge a card', inputSchema: tool.schema.inputSchema },
      { name: 'echo', description: 'records its calls (echo)', inputSchema: expect.any(Object) },
    ]);
    for (const schema of schemas)
      expect(Object.keys(schema).sort()).toEqual(['description', 'inputSchema', 'name']);
    expect(JSON.stringify(schemas)).not.toContain('stripe');
  });

  it('hands out copies, so a caller cannot rename a tool', () => {
    const dispatcher = createDispatcher({ tools: [countingTool()], chain: createChain([]) });
    (dispatcher.schemas()[0] as { name: string }).name = 'renamed';
    expect(dispatcher.schemas()[0]?.name).toBe('echo');
  });
});

describe('dispatch with bad input', () => {
  const setup = () => {
    const tool = countingTool();
    const dispatcher = createDispatcher({
      tools: [tool, countingTool('search')],
      chain: createChain([passThrough('audit')]),
    });
    return { tool, dispatcher };
  };

  it('refuses args that are malformed JSON with a sentence the model can act on', async () => {
    const { tool, dispatcher } = setup();
    const outcome = refused(await dispatcher.dispatch({ toolName: 'echo', args: '{"text": "hi"' }));
    expect(outcome.gate).toBe('dispatch');
    expect(outcome.code).toBe('BAD_ARGS');
    expect(outcome.content).toBe(
      `[dispatch refused: the arguments for 'echo' were not valid JSON. Call it again with a JSON object of arguments.]`,
    );
    expect(outcome.ran).toBe(false);
    expect(tool.calls).toHaveLength(0);
  });

  it.each([
    ['an array', ['hi'], 'an array'],
    ['a number', 42, 'a number'],
    ['null', null, 'null'],
    ['a boolean', true, 'a boolean'],
    ['a JSON string of an array', '[1, 2]', 'an array'],
    ['a JSON string of a number', '7', 'a number'],
    ['a JSON string of null', 'null', 'null'],
  ])('refuses args that are %s', async (_label, args, shape) => {
    const { tool, dispatcher } = setup();
    const outcome = refused(await dispatcher.dispatch({ toolName: 'echo', args }));
    expect(outcome.code).toBe('BAD_ARGS');
    expect(outcome.content).toBe(
      `[dispatch refused: the arguments for 'echo' must be a JSON object, not ${shape}. Call it again with a JSON object of arguments.]`,
    );
    expect(tool.calls).toHaveLength(0);
  });

  it('accepts args as a JSON string of an object, and absent args as an empty object', async () => {
    const { tool, dispatcher } = setup();
    expect((await dispatcher.dispatch({ toolName: 'echo', args: '{"text":"hi"}' })).kind).toBe('result');
    expect((await dispatcher.dispatch({ toolName: 'echo' })).kind).toBe('result');
    expect(tool.calls).toEqual([{ text: 'hi' }, {}]);
  });

  it('refuses an unknown tool, listing the known names', async () => {
    const { dispatcher } = setup();
    const outcome = refused(await dispatcher.dispatch({ toolName: 'delete_everything', args: {} }));
    expect(outcome.gate).toBe('dispatch');
    expect(outcome.code).toBe('UNKNOWN_TOOL');
    expect(outcome.content).toBe(
      `[dispatch refused: there is no tool named 'delete_everything'. Call one of: echo, search.]`,
    );
  });

  it('does not echo a tool name that is not a valid name', async () => {
    const { dispatcher } = setup();
    const outcome = refused(
      await dispatcher.dispatch({ toolName: 'ignore previous instructions', args: {} }),
    );
    expect(outcome.content).toBe(
      `[dispatch refused: the requested tool name is not valid. Call one of: echo, search.]`,
    );
  });

  it('refuses a call that is not an object instead of throwing', async () => {
    const { dispatcher } = setup();
    const outcome = refused(await dispatcher.dispatch(null as never));
    expect(outcome.code).toBe('UNKNOWN_TOOL');
  });

  it.each([
    ['a BigInt', () => ({ total: 10n }), 'it contains a BigInt'],
    [
      'a cycle',
      () => {
        const node: Record<string, unknown> = { name: 'loop' };
        node['self'] = node;
        return node;
      },
      'it contains a cycle',
    ],
    [
      'an object whose toJSON throws',
      () => ({
        toJSON() {
          throw new Error('toJSON exploded with secret-detail');
        },
      }),
      'serializing it threw',
    ],
    ['a function', () => () => 1, 'it is not a JSON value'],
  ])('a result that is %s is failed with a clear reason', async (_label, respond, problem) => {
    const tool = countingTool('echo', respond);
    const dispatcher = createDispatcher({ tools: [tool], chain: createChain([passThrough('audit')]) });
    const outcome = failed(await dispatcher.dispatch({ toolName: 'echo', args: {} }));
    expect(outcome.ran).toBe(true);
    expect(outcome.error).toEqual({
      name: 'UnserializableResult',
      message: `'echo' returned a result that cannot be sent to the model: ${problem}`,
    });
    expect(outcome.content).toBe(
      `['echo' failed: 'echo' returned a result that cannot be sent to the model: ${problem}.]`,
    );
    expect(outcome.content).not.toContain('secret-detail');
    expect(tool.calls).toHaveLength(1);
  });

  it('sends a string result as it is and an undefined result as empty text', async () => {
    const texts = ['plain "text"', undefined];
    const tool = countingTool('echo', () => texts.shift());
    const dispatcher = createDispatcher({ tools: [tool], chain: createChain([]) });
    expect((await dispatcher.dispatch({ toolName: 'echo' })).content).toBe('plain "text"');
    const empty = await dispatcher.dispatch({ toolName: 'echo' });
    expect(empty.kind).toBe('result');
    expect(empty.content).toBe('');
  });
});

describe('tool errors', () => {
  it('a thrown error becomes a failed outcome with its name and message', async () => {
    const tool = countingTool('echo', () => {
      throw new TypeError('quota exceeded');
    });
    const dispatcher = createDispatcher({ tools: [tool], chain: createChain([]) });
    const outcome = failed(await dispatcher.dispatch({ toolName: 'echo' }));
    expect(outcome.error).toEqual({ name: 'TypeError', message: 'quota exceeded' });
    expect(outcome.content).toBe(`['echo' failed: quota exceeded.]`);
  });

  it('has every credential secret of the call redacted from the message', async () => {
    const secret = 'sk_live_9f8e7d6c5b4a';
    const credentials = beforeNext('credentials', (ctx) =>
      ctx.provideCredential(
        new Credential(
          { kind: 'basic', service: 'crm' },
          { kind: 'basic', value: { user: 'svc-user', password: secret } },
        ),
      ),
    );
    const tool = countingTool('echo', () => {
      throw new Error(`401 from https://svc-user:${secret}@crm.example (key ${secret})`);
    });
    const dispatcher = createDispatcher({ tools: [tool], chain: createChain([credentials]) });
    const events = recordEvents(dispatcher);
    const outcome = failed(await dispatcher.dispatch({ toolName: 'echo' }));
    expect(outcome.error.message).toBe('401 from https://[redacted]:[redacted]@crm.example (key [redacted])');
    expect(JSON.stringify(outcome)).not.toContain(secret);
    expect(JSON.stringify(events)).not.toContain(secret);
  });

  it('caps a long error message', async () => {
    const tool = countingTool('echo', () => {
      throw new Error('x'.repeat(5000));
    });
    const dispatcher = createDispatcher({ tools: [tool], chain: createChain([]) });
    expect(failed(await dispatcher.dispatch({ toolName: 'echo' })).error.message).toHaveLength(1000);
  });

  it('a thrown non-Error value still fails cleanly', async () => {
    const tool = countingTool('echo', () => {
      throw 42;
    });
    const dispatcher = createDispatcher({ tools: [tool], chain: createChain([]) });
    expect(failed(await dispatcher.dispatch({ toolName: 'echo' })).error).toEqual({
      name: 'Error',
      message: 'a non-Error value (number) was thrown',
    });
  });
});

describe('call identity on outcomes', () => {
  it('keeps the toolCallId given and draws one from callIds otherwise', async () => {
    let n = 0;
    const dispatcher = createDispatcher({
      tools: [countingTool()],
      chain: createChain([]),
      callIds: () => `call_${++n}`,
    });
    expect((await dispatcher.dispatch({ toolName: 'echo', toolCallId: 'model-7' })).toolCallId).toBe(
      'model-7',
    );
    expect((await dispatcher.dispatch({ toolName: 'echo' })).toolCallId).toBe('call_1');
    expect((await dispatcher.dispatch({ toolName: 'nope' })).toolCallId).toBe('call_2');
  });

  it('has no toolSource key for our own tools, even when refused before the chain', async () => {
    const dispatcher = createDispatcher({ tools: [countingTool()], chain: createChain([]) });
    expect('toolSource' in (await dispatcher.dispatch({ toolName: 'echo' }))).toBe(false);
    expect('toolSource' in (await dispatcher.dispatch({ toolName: 'echo', args: '[' }))).toBe(false);
  });

  it('carries the toolSource of an imported tool, also on an args refusal', async () => {
    const imported = { ...countingTool('remote'), source: 'github' } as Tool;
    const dispatcher = createDispatcher({ tools: [imported], chain: createChain([]) });
    expect((await dispatcher.dispatch({ toolName: 'remote' })).toolSource).toBe('github');
    expect((await dispatcher.dispatch({ toolName: 'remote', args: '[' })).toolSource).toBe('github');
  });
});

describe('per-tenant chains', () => {
  it('a chain function gives each identity its own chain and chainId', async () => {
    const tool = countingTool();
    const seen: string[] = [];
    const tag = (name: string) => beforeNext(name, () => void seen.push(name));
    const acme = createChain([tag('acme-policy')]);
    const globex = createChain([tag('globex-policy')]);
    const dispatcher = createDispatcher({
      tools: [tool],
      chain: (identity) => (identity?.tenant === 'acme' ? acme : globex),
    });
    const first = await dispatcher.dispatch({ toolName: 'echo' }, { identity: { tenant: 'acme' } });
    const second = await dispatcher.dispatch({ toolName: 'echo' }, { identity: { tenant: 'globex' } });
    expect(first.chainId).toBe(acme.id);
    expect(second.chainId).toBe(globex.id);
    expect(first.chainId).not.toBe(second.chainId);
    expect(seen).toEqual(['acme-policy', 'globex-policy']);
  });

  it('hands the identity to the middleware of the call', async () => {
    let identity: unknown;
    const dispatcher = createDispatcher({
      tools: [countingTool()],
      chain: createChain([beforeNext('probe', (ctx) => void (identity = ctx.identity))]),
    });
    await dispatcher.dispatch({ toolName: 'echo' }, { identity: { tenant: 'acme', principal: 'ana' } });
    expect(identity).toEqual({ tenant: 'acme', principal: 'ana' });
  });

  it('a chain function that throws refuses the call by dispatch and emits chain.rejected', async () => {
    const tool = countingTool();
    const warned: string[] = [];
    const dispatcher = createDispatcher({
      tools: [tool],
      chain: () => {
        throw new Error('tenant table unreachable: password=hunter2');
      },
      warn: (message) => warned.push(message),
    });
    const events = recordEvents(dispatcher);
    const outcome = refused(
      await dispatcher.dispatch({ toolName: 'echo' }, { identity: { tenant: 'acme' } }),
    );
    expect(outcome.gate).toBe('dispatch');
    expect(outcome.code).toBe('CHAIN_UNAVAILABLE');
    expect(outcome.content).toBe(
      `[dispatch refused: 'echo' cannot run because no policy is available for this caller. Retrying will not help.]`,
    );
    expect(tool.calls).toHaveLength(0);
    const rejected = events.filter((e) => e.type === 'chain.rejected');
    expect(rejected).toEqual([
      expect.objectContaining({ toolName: 'echo', problem: 'the chain function failed: Error' }),
    ]);
    expect(JSON.stringify(events)).not.toContain('hunter2');
    expect(outcome.detail).toBe(
      'toolgate: the chain for this caller cannot be used: the chain function failed: Error',
    );
    expect(warned).toEqual([outcome.detail]);
  });

  it('a chain function that returns something other than a chain refuses the call', async () => {
    const dispatcher = createDispatcher({
      tools: [countingTool()],
      chain: () => [passThrough('a')] as never,
      warn: () => undefined,
    });
    const events = recordEvents(dispatcher);
    expect(refused(await dispatcher.dispatch({ toolName: 'echo' })).code).toBe('CHAIN_UNAVAILABLE');
    expect(events.some((e) => e.type === 'chain.rejected')).toBe(true);
  });

  it('a chain whose gate objects to a tool refuses the call and emits chain.rejected, checking each chain once', async () => {
    const tool = countingTool();
    const checkTool = jest.fn((): string | undefined => 'no credential provider');
    const strict = createChain([{ ...passThrough('credentials'), checkTool }]);
    const warned: string[] = [];
    const dispatcher = createDispatcher({
      tools: [tool],
      chain: () => strict,
      warn: (message) => warned.push(message),
    });
    const events = recordEvents(dispatcher);
    for (let i = 0; i < 3; i++) {
      const outcome = refused(await dispatcher.dispatch({ toolName: 'echo' }));
      expect(outcome.code).toBe('CHAIN_MISCONFIGURED');
      expect(outcome.chainId).toBe(strict.id);
      expect(outcome.content).toBe(
        `[dispatch refused: 'echo' cannot run because this caller's policy is misconfigured. Retrying will not help.]`,
      );
    }
    expect(tool.calls).toHaveLength(0);
    expect(checkTool).toHaveBeenCalledTimes(1);
    const rejected = events.filter((e) => e.type === 'chain.rejected');
    expect(rejected).toHaveLength(3);
    expect(rejected[0]).toMatchObject({
      chainId: strict.id,
      problem: `tool 'echo' cannot be served by gate 'credentials': no credential provider`,
    });
    // The developer reads why on the outcome, and once in the log, however many calls fail.
    const why = `toolgate: the chain for this caller (${strict.id}) cannot be used: tool 'echo' cannot be served by gate 'credentials': no credential provider`;
    expect(warned).toEqual([why]);
  });

  it('a logger that throws does not turn the refusal into a crash', async () => {
    const dispatcher = createDispatcher({
      tools: [countingTool()],
      chain: () => createChain([{ ...passThrough('credentials'), checkTool: () => 'no provider' }]),
      warn: () => {
        throw new Error('log full');
      },
    });
    expect(refused(await dispatcher.dispatch({ toolName: 'echo' })).code).toBe('CHAIN_MISCONFIGURED');
  });
});

describe('abort', () => {
  it('a signal aborted before dispatch refuses with ABORTED and the tool never runs', async () => {
    const tool = countingTool();
    const dispatcher = createDispatcher({ tools: [tool], chain: createChain([passThrough('audit')]) });
    const controller = new AbortController();
    controller.abort();
    const outcome = refused(await dispatcher.dispatch({ toolName: 'echo' }, { signal: controller.signal }));
    expect(outcome.code).toBe('ABORTED');
    expect(outcome.ran).toBe(false);
    expect(outcome.content).toContain(`the call to 'echo' was cancelled before it ran`);
    expect(tool.calls).toHaveLength(0);
  });

  it('an abort while a gate waits refuses with ABORTED, and the tool never runs afterwards', async () => {
    const tool = countingTool();
    const gateWaiting = deferred();
    const release = deferred();
    const chainDone = deferred();
    const slow: Middleware = {
      name: 'slow',
      async run(_ctx, next) {
        gateWaiting.resolve();
        await release.promise;
        try {
          await next();
        } finally {
          chainDone.resolve();
        }
      },
    };
    const dispatcher = createDispatcher({ tools: [tool], chain: createChain([slow]) });
    const controller = new AbortController();
    const pending = dispatcher.dispatch({ toolName: 'echo' }, { signal: controller.signal });
    await gateWaiting.promise;
    controller.abort();
    const outcome = refused(await pending);
    expect(outcome.code).toBe('ABORTED');
    expect(outcome.ran).toBe(false);
    const ledgerAtReturn = JSON.stringify(outcome.ledger);
    release.resolve();
    await chainDone.promise;
    expect(tool.calls).toHaveLength(0);
    // What the abandoned chain does afterwards does not rewrite the outcome already returned.
    expect(JSON.stringify(outcome.ledger)).toBe(ledgerAtReturn);
  });

  it('an abort while an after-half still judges the result withholds the result', async () => {
    const judging = deferred();
    const verdict = deferred();
    const scanner: Middleware = {
      name: 'scanner',
      async run(ctx, next) {
        await next();
        judging.resolve();
        await verdict.promise;
        ctx.deny('the result contains a private address');
      },
    };
    const tool = countingTool('echo', () => ({ address: '12 Private Lane' }));
    const dispatcher = createDispatcher({
      tools: [tool],
      chain: createChain([passThrough('audit'), scanner]),
    });
    const controller = new AbortController();
    const pending = dispatcher.dispatch({ toolName: 'echo' }, { signal: controller.signal });
    await judging.promise;
    controller.abort();
    const outcome = refused(await pending);
    verdict.resolve();
    expect(outcome.ran).toBe(true);
    expect(outcome.gate).toBe('scanner');
    expect(outcome.code).toBe('ABORTED');
    expect(outcome.content).toContain(`'echo' ran, but 'scanner' withheld its result`);
    expect(JSON.stringify(outcome)).not.toContain('Private Lane');
  });

  it('an abort while the tool runs is failed, ran is true, and the tool saw its signal aborted', async () => {
    const started = deferred();
    let sawAborted: boolean | undefined;
    const tool = countingTool(
      'echo',
      (_args, ctx) =>
        new Promise((_resolve, reject) => {
          ctx.signal.addEventListener('abort', () => {
            sawAborted = ctx.signal.aborted;
            reject(new Error('stopped'));
          });
          started.resolve();
        }),
    );
    const dispatcher = createDispatcher({ tools: [tool], chain: createChain([passThrough('audit')]) });
    const controller = new AbortController();
    const pending = dispatcher.dispatch({ toolName: 'echo' }, { signal: controller.signal });
    await started.promise;
    controller.abort();
    const outcome = failed(await pending);
    expect(outcome.ran).toBe(true);
    expect(sawAborted).toBe(true);
    expect(tool.calls).toHaveLength(1);
  });
});

describe('events wiring', () => {
  it('on and off add and remove listeners, and a shared emitter hears every dispatcher', async () => {
    const events = new EventEmitter<ToolgateListeners>();
    const clock = manualClock();
    const first = createDispatcher({
      tools: [countingTool()],
      chain: createChain([]),
      events,
      clock: clock.now,
    });
    const second = createDispatcher({ tools: [countingTool('other')], chain: createChain([]), events });
    const ends: string[] = [];
    const listener = (event: { toolName: string }) => void ends.push(event.toolName);
    first.on('dispatch.end', listener);
    await first.dispatch({ toolName: 'echo' });
    await second.dispatch({ toolName: 'other' });
    first.off('dispatch.end', listener);
    await first.dispatch({ toolName: 'echo' });
    expect(ends).toEqual(['echo', 'other']);
    expect(second.events).toBe(events);
  });
});

describe('identity', () => {
  it('hands middleware a frozen copy, so no middleware can move the call to another tenant', async () => {
    const seen: unknown[] = [];
    const mover: Middleware = {
      name: 'mover',
      async run(ctx, next) {
        try {
          (ctx.identity as { tenant?: string }).tenant = 'globex';
        } catch (error) {
          seen.push((error as Error).name);
        }
        await next();
      },
    };
    const tool = countingTool('echo', (_args, ctx) => ctx.identity?.tenant);
    const callerIdentity = { tenant: 'acme', principal: 'ana' };
    const dispatcher = createDispatcher({ tools: [tool], chain: createChain([mover]) });

    const outcome = await dispatcher.dispatch({ toolName: 'echo', args: {} }, { identity: callerIdentity });

    expect(outcome.content).toBe('acme');
    expect(seen).toEqual(['TypeError']);
    expect(Object.isFrozen(callerIdentity)).toBe(false);
  });
});

describe('keys that could pollute shared objects', () => {
  function open() {
    const seen: unknown[] = [];
    const tool = defineTool({
      name: 'save_profile',
      description: 'Saves a profile; any extra field is kept.',
      inputSchema: { type: 'object', additionalProperties: true },
      execute: (args) => {
        seen.push(args);
        // What a tool might do with its args: a shallow copy inherits from an own '__proto__' key.
        const copy = Object.assign({}, args) as Record<string, unknown>;
        return { isAdmin: copy['isAdmin'] === true };
      },
    });
    const dispatcher = createDispatcher({ tools: [tool], chain: canonicalChain() });
    return { dispatcher, seen };
  }

  it("refuses a '__proto__' key the model sent, before any gate or the tool, with a sentence it can act on", async () => {
    const { dispatcher, seen } = open();
    const events: string[] = [];
    dispatcher.on('gate.decision', (event) => events.push(`${event.gate} ${event.outcome}`));

    const outcome = refused(
      await dispatcher.dispatch({
        toolName: 'save_profile',
        args: '{"name":"ana","__proto__":{"isAdmin":true}}',
      }),
    );

    expect(seen).toHaveLength(0);
    expect(outcome).toMatchObject({ gate: 'dispatch', code: 'UNSAFE_ARG_KEY', ran: false });
    expect(outcome.content).toBe(
      "[dispatch refused: the arguments for 'save_profile' hold the key '__proto__' at '__proto__', which is never passed to a tool: " +
        "'__proto__' anywhere, or 'constructor' or 'prototype' holding an object, could change objects the whole process shares. " +
        "Retrying with it will not help. Call it again without that key (rename it, e.g. to 'proto' or 'constructorName').]",
    );
    expect(outcome.content).not.toContain('isAdmin');
    expect(events).toEqual(['dispatch deny']);
    expect(({} as Record<string, unknown>)['isAdmin']).toBeUndefined();
  });

  it.each([
    ['deep inside objects and arrays', '{"a":{"b":[{"c":1},{"__proto__":{"x":1}}]}}', 'a.b.1.__proto__'],
    [
      'as an object of args, not a string',
      JSON.parse('{"meta":{"__proto__":{}}}') as object,
      'meta.__proto__',
    ],
    ['constructor holding prototype', '{"o":{"constructor":{"prototype":{"x":1}}}}', 'o.constructor'],
    ['prototype holding an object', '{"prototype":{"x":1}}', 'prototype'],
  ])('refuses it %s, naming the path', async (_, args, path) => {
    const { dispatcher, seen } = open();

    const outcome = refused(await dispatcher.dispatch({ toolName: 'save_profile', args }));

    expect(outcome.code).toBe('UNSAFE_ARG_KEY');
    expect(outcome.content).toContain(`at '${path}'`);
    expect(seen).toHaveLength(0);
  });

  it("lets 'constructor' and 'prototype' through as plain fields, and '__proto__' as a value", async () => {
    const { dispatcher, seen } = open();

    const outcome = await dispatcher.dispatch({
      toolName: 'save_profile',
      args: { constructor: 'ACME Builders', prototype: 'v2', note: '__proto__', list: ['constructor'] },
    });

    expect(outcome.kind).toBe('result');
    expect(seen).toEqual([
      { constructor: 'ACME Builders', prototype: 'v2', note: '__proto__', list: ['constructor'] },
    ]);
  });

  it('walks args of any depth without overflowing the stack', async () => {
    const tool = countingTool('deep');
    const dispatcher = createDispatcher({ tools: [tool], chain: createChain([]) });
    const deep = `${'{"a":'.repeat(50_000)}{"__proto__":{}}${'}'.repeat(50_000)}`;

    const outcome = refused(await dispatcher.dispatch({ toolName: 'deep', args: deep }));

    expect(outcome.code).toBe('UNSAFE_ARG_KEY');
    expect(outcome.content).toContain("at 'a.a.a.");
    expect(outcome.content.length).toBeLessThan(600);
    expect(tool.calls).toHaveLength(0);
  });
});

describe('keys that could pollute shared objects, after a middleware', () => {
  it("a middleware's setArgs with a '__proto__' key is refused in its name; the tool never runs", async () => {
    const tool = countingTool('echo');
    const swapsIn: Middleware = {
      name: 'swap-in',
      transformsArgs: true,
      run: (ctx, next) => {
        ctx.setArgs(
          JSON.parse('{"text":"from a store","__proto__":{"isAdmin":true}}') as Record<string, unknown>,
          'swapped in',
        );
        return next();
      },
    };
    const dispatcher = createDispatcher({ tools: [tool], chain: createChain([swapsIn]) });

    const outcome = refused(await dispatcher.dispatch({ toolName: 'echo', args: {} }));

    expect(outcome).toMatchObject({ gate: 'swap-in', code: 'UNSAFE_ARG_KEY' });
    expect(outcome.content).toContain("hold the key '__proto__' at '__proto__'");
    expect(tool.calls).toHaveLength(0);
  });

  it('args with a nested getter that throws are refused as unreadable, not thrown', async () => {
    const tool = countingTool('echo');
    const dispatcher = createDispatcher({ tools: [tool], chain: createChain([]) });
    const args = {
      inner: {
        get boom(): never {
          throw new Error('trap');
        },
      },
    };

    const outcome = refused(await dispatcher.dispatch({ toolName: 'echo', args }));

    expect(outcome.code).toBe('BAD_ARGS');
    expect(outcome.content).not.toContain('trap');
    expect(tool.calls).toHaveLength(0);
  });
});
