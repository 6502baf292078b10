import {
  createChain,
  createDispatcher,
  Credential,
  defineTool,
  redact,
  redactValue,
  type Middleware,
} from '@toolgate/core';

const SECRET = 'sk_live_"QUOTE\\SECRET';

describe('redact', () => {
  it('replaces the raw secret', () => {
    expect(redact(`key=${SECRET};`, [SECRET])).toBe('key=[redacted];');
  });

  it('replaces the secret as JSON escapes it', () => {
    const text = JSON.stringify({ upstream: SECRET });

    expect(text).not.toContain(SECRET);
    expect(redact(text, [SECRET])).toBe('{"upstream":"[redacted]"}');
  });

  it('replaces the secret escaped twice, as in JSON inside a JSON string', () => {
    const text = JSON.stringify({ body: JSON.stringify({ upstream: SECRET }) });

    expect(redact(text, [SECRET])).not.toMatch(/QUOTE|SECRET/);
  });

  it('replaces unicode escapes in either case, and control characters', () => {
    const secret = 'tok\u00e9n\u0001\n';
    const lower = '"tok\\u00e9n\\u0001\\n"';
    const upper = '"tok\\u00E9n\\u0001\\n"';

    expect(redact(lower, [secret])).toBe('"[redacted]"');
    expect(redact(upper, [secret])).toBe('"[redacted]"');
  });

  it('replaces the URL-encoded secret', () => {
    expect(redact(`?key=${encodeURIComponent(SECRET)}`, [SECRET])).toBe('?key=[redacted]');
  });

  it('takes the longer of two overlapping secrets whole', () => {
    expect(redact('admin-password', ['admin', 'admin-password'])).toBe('[redacted]');
  });

  it('returns the text itself when there is no secret', () => {
    expect(redact('plain', [])).toBe('plain');
  });
});

describe('redactValue', () => {
  it('walks strings and keys inside objects and arrays, and leaves the original alone', () => {
    const original = { debug: { authorization: `Bearer ${SECRET}` }, list: ['a', SECRET], [SECRET]: 1 };

    const clean = redactValue(original, [SECRET]);

    expect(clean).toEqual({
      debug: { authorization: 'Bearer [redacted]' },
      list: ['a', '[redacted]'],
      '[redacted]': 1,
    });
    expect(original.list[1]).toBe(SECRET);
  });

  it('returns the very same value when nothing in it holds a secret', () => {
    const value = { a: [1, 'two'], b: { c: true } };

    expect(redactValue(value, [SECRET])).toBe(value);
  });

  it('redacts a class instance through its JSON form, and keeps one without a secret as it is', () => {
    class Reply {
      constructor(readonly token: string) {}
    }
    const when = new Date(0);

    expect(redactValue(new Reply(SECRET), [SECRET])).toEqual({ token: '[redacted]' });
    expect(redactValue(when, [SECRET])).toBe(when);
  });

  it('a secret held as a JSON string inside a string is redacted in its escaped form', () => {
    const value = { body: JSON.stringify({ key: SECRET }) };

    expect(JSON.stringify(redactValue(value, [SECRET]))).not.toMatch(/QUOTE|SECRET/);
  });

  it('a credential in a result becomes its JSON form, so nobody holding the outcome can reveal it', () => {
    const credential = new Credential(
      { kind: 'api_key', service: 'billing' },
      { kind: 'api_key', value: SECRET },
    );

    expect(redactValue({ credential }, [SECRET])).toEqual({
      credential: { kind: 'api_key', service: 'billing', value: '[redacted]' },
    });
  });

  it('a __proto__ key stays a key and pollutes nothing', () => {
    const value = JSON.parse('{"__proto__": {"token": "sk_plain_secret"}}') as object;

    const clean = redactValue(value, ['sk_plain_secret']) as object;

    expect(clean).not.toBe(value);
    expect(Object.getPrototypeOf(clean)).toBe(Object.prototype);
    expect(Object.getOwnPropertyDescriptor(clean, '__proto__')?.value).toEqual({ token: '[redacted]' });
    expect(({} as Record<string, unknown>)['token']).toBeUndefined();
  });

  it('a value nested too deep to walk is redacted through its JSON form', () => {
    let deep: unknown = { token: SECRET };
    for (let i = 0; i < 3_000; i++) deep = { n: deep };

    const clean = redactValue(deep, [SECRET]);

    expect(JSON.stringify(clean)).not.toMatch(/QUOTE|SECRET/);
    expect(JSON.stringify(clean)).toContain('[redacted]');
  });

  it('a cycle is returned as it is (serializing it fails the call anyway)', () => {
    const cyclic: Record<string, unknown> = { s: SECRET };
    cyclic['self'] = cyclic;

    expect(() => redactValue(cyclic, [SECRET])).not.toThrow();
  });
});

describe('a call with a credential', () => {
  const provide: Middleware = {
    name: 'provide',
    run: (ctx, next) => {
      ctx.provideCredential(
        new Credential({ kind: 'api_key', service: 'upstream' }, { kind: 'api_key', value: SECRET }),
      );
      return next();
    },
  };

  it('an echoed secret is redacted in value and content alike, whatever its escaping', async () => {
    const echo = defineTool({
      name: 'echo_key',
      description: 'echoes its key',
      inputSchema: { type: 'object' },
      execute: (_args, ctx) => ({
        upstream: ctx.credential?.reveal(),
        raw: JSON.stringify({ k: ctx.credential?.reveal() }),
      }),
    });
    const dispatcher = createDispatcher({ tools: [echo], chain: createChain([provide]) });

    const outcome = await dispatcher.dispatch({ toolName: 'echo_key', args: {} });

    expect(outcome.kind).toBe('result');
    if (outcome.kind !== 'result') return;
    expect(outcome.value).toEqual({ upstream: '[redacted]', raw: '{"k":"[redacted]"}' });
    expect(outcome.content).toBe(JSON.stringify(outcome.value));
  });

  it("a tool's error holding the secret JSON-escaped fails with it redacted", async () => {
    const fails = defineTool({
      name: 'fails',
      description: 'fails loudly',
      inputSchema: { type: 'object' },
      execute: (_args, ctx) => {
        throw new Error(`upstream said ${JSON.stringify({ key: ctx.credential?.reveal() })}`);
      },
    });
    const dispatcher = createDispatcher({ tools: [fails], chain: createChain([provide]) });

    const outcome = await dispatcher.dispatch({ toolName: 'fails', args: {} });

    expect(outcome.kind).toBe('failed');
    expect(JSON.stringify(outcome)).not.toMatch(/QUOTE|SECRET/);
    expect(outcome.content).toContain('[redacted]');
  });

  it("a middleware's replacement result is redacted like the tool's own", async () => {
    const rewrap: Middleware = {
      name: 'rewrap',
      async run(ctx, next) {
        await next();
        ctx.setResult({ wrapped: ctx.result, key: ctx.credential?.reveal() }, 'wraps the result');
      },
    };
    const plain = defineTool({
      name: 'plain',
      description: 'plain',
      inputSchema: { type: 'object' },
      execute: () => 'ok',
    });
    const dispatcher = createDispatcher({ tools: [plain], chain: createChain([provide, rewrap]) });

    const outcome = await dispatcher.dispatch({ toolName: 'plain', args: {} });

    expect(outcome.kind === 'result' && outcome.value).toEqual({ wrapped: 'ok', key: '[redacted]' });
    expect(outcome.content).toBe('{"wrapped":"ok","key":"[redacted]"}');
  });
});
