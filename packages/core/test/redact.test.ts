import fc from 'fast-check';
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

  it('a secret echoed as a number, in bytes, a Map, a Set or an Error leaves neither value nor content', async () => {
    const pin = '4111111111111111';
    const providePin: Middleware = {
      name: 'provide',
      run: (ctx, next) => {
        ctx.provideCredential(
          new Credential({ kind: 'api_key', service: 'card' }, { kind: 'api_key', value: pin }),
        );
        return next();
      },
    };
    const echo = defineTool({
      name: 'echo_pin',
      description: 'echoes its key in every shape',
      inputSchema: { type: 'object' },
      execute: (_args, ctx) => {
        const key = String(ctx.credential?.reveal());
        return {
          pan: Number(key),
          bytes: new TextEncoder().encode(key),
          map: new Map([['pan', key]]),
          set: new Set([key]),
          error: new Error(`declined ${key}`),
        };
      },
    });
    const dispatcher = createDispatcher({ tools: [echo], chain: createChain([providePin]) });

    const outcome = await dispatcher.dispatch({ toolName: 'echo_pin', args: {} });

    expect(outcome.kind).toBe('result');
    if (outcome.kind !== 'result') return;
    const value = outcome.value as Record<string, unknown>;
    expect(value['pan']).toBe('[redacted]');
    expect(value['bytes']).toBe('[redacted]');
    expect([...(value['map'] as Map<string, string>)]).toEqual([['pan', '[redacted]']]);
    expect([...(value['set'] as Set<string>)]).toEqual(['[redacted]']);
    expect((value['error'] as Error).message).toBe('declined [redacted]');
    expect(outcome.content).toBe('{"pan":"[redacted]","bytes":"[redacted]","map":{},"set":{},"error":{}}');
    // Whatever holds the outcome finds the secret nowhere: not in its text, not by walking its values.
    const seen: string[] = [];
    const collect = (node: unknown): void => {
      if (typeof node === 'string' || typeof node === 'number') seen.push(String(node));
      else if (node instanceof Map) [...node].flat().forEach(collect);
      else if (node instanceof Set) [...node].forEach(collect);
      else if (node instanceof Error) [node.message, node.stack].forEach(collect);
      else if (typeof node === 'object' && node !== null) Object.values(node).forEach(collect);
    };
    collect(outcome.value);
    expect(seen.filter((text) => text.includes(pin))).toEqual([]);
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

describe('redactValue: by value, whatever the type or container', () => {
  const PIN = '4111111111111111';
  const KEY_TEXT = 'sk_live_BYTES_0123456789';

  it('a number that spells a secret becomes the string [redacted]; a bigint too', () => {
    const clean = redactValue({ pan: Number(PIN), list: [1, Number(PIN)], big: BigInt(PIN) }, [PIN]);

    expect(clean).toEqual({ pan: '[redacted]', list: [1, '[redacted]'], big: '[redacted]' });
  });

  it('bytes holding a secret become [redacted]: typed arrays, Buffer, DataView, ArrayBuffer', () => {
    // An even number of bytes, so a Uint16Array can view them all.
    const bytes = new TextEncoder().encode(`Bearer ${KEY_TEXT}.`);
    const value = {
      u8: bytes,
      buffer: Buffer.from(bytes),
      view: new DataView(bytes.buffer),
      raw: bytes.buffer,
      u16: new Uint16Array(bytes.buffer),
      clean: new Uint8Array([1, 2, 3]),
    };

    expect(redactValue(value, [KEY_TEXT])).toEqual({
      u8: '[redacted]',
      buffer: '[redacted]',
      view: '[redacted]',
      raw: '[redacted]',
      u16: '[redacted]',
      clean: value.clean,
    });
  });

  it('a non-ASCII secret is found in bytes by its UTF-8 form', () => {
    const secret = 'clé-secrète-ünïcode';

    expect(redactValue([new TextEncoder().encode(`x${secret}y`)], [secret])).toEqual(['[redacted]']);
  });

  it('bytes that already went through JSON (a Buffer from an upstream) are redacted too', () => {
    const upstream = JSON.parse(JSON.stringify({ body: Buffer.from(`token=${KEY_TEXT}`) })) as object;

    expect(redactValue(upstream, [KEY_TEXT])).toEqual({ body: { type: 'Buffer', data: '[redacted]' } });
  });

  it('Map keys and values and Set members are redacted, in a new Map or Set', () => {
    const map = new Map<unknown, unknown>([
      [KEY_TEXT, 'as a key'],
      ['as a value', `Bearer ${KEY_TEXT}`],
      ['plain', 1],
    ]);
    const set = new Set([KEY_TEXT, 'plain']);

    const clean = redactValue({ map, set }, [KEY_TEXT]) as { map: Map<unknown, unknown>; set: Set<unknown> };

    expect([...clean.map]).toEqual([
      ['[redacted]', 'as a key'],
      ['as a value', 'Bearer [redacted]'],
      ['plain', 1],
    ]);
    expect([...clean.set]).toEqual(['[redacted]', 'plain']);
    expect(map.get(KEY_TEXT)).toBe('as a key');
    const untouched = new Map([['a', 1]]);
    expect(redactValue(untouched, [KEY_TEXT])).toBe(untouched);
  });

  it("an Error's message, stack, cause and own fields are redacted, and it stays an Error", () => {
    class UpstreamError extends Error {
      readonly header = `Authorization: Bearer ${KEY_TEXT}`;
    }
    const error = new UpstreamError(`rejected ${KEY_TEXT}`, { cause: new Error(KEY_TEXT) });

    const clean = redactValue({ error }, [KEY_TEXT]) as { error: UpstreamError };

    expect(clean.error).toBeInstanceOf(UpstreamError);
    expect(clean.error.message).toBe('rejected [redacted]');
    expect(clean.error.header).toBe('Authorization: Bearer [redacted]');
    expect((clean.error.cause as Error).message).toBe('[redacted]');
    expect(String(clean.error.stack)).not.toContain(KEY_TEXT);
    expect(error.message).toBe(`rejected ${KEY_TEXT}`);
  });

  it('symbol-keyed and non-enumerable properties of a plain object are redacted and keep their flags', () => {
    const tag = Symbol('tag');
    const value: Record<PropertyKey, unknown> = { [tag]: KEY_TEXT };
    Object.defineProperty(value, 'hidden', { value: KEY_TEXT, enumerable: false });

    const clean = redactValue(value, [KEY_TEXT]) as Record<PropertyKey, unknown>;

    expect(clean[tag]).toBe('[redacted]');
    expect(Object.getOwnPropertyDescriptor(clean, 'hidden')).toMatchObject({
      value: '[redacted]',
      enumerable: false,
    });
  });
});

describe('redact: encoded forms of a secret', () => {
  const SECRET_TEXT = 'sk_live_a/b+c=d?e!f~g h';
  const utf8 = (text: string) => new TextEncoder().encode(text);
  const base64 = (text: string) => btoa(String.fromCharCode(...utf8(text)));
  const base64url = (text: string) => base64(text).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
  const hex = (text: string) => [...utf8(text)].map((b) => b.toString(16).padStart(2, '0')).join('');

  it.each([
    ['base64', base64(SECRET_TEXT)],
    ['base64 without padding', base64(SECRET_TEXT).replace(/=+$/, '')],
    ['base64url', base64url(SECRET_TEXT)],
    ['lowercase hex', hex(SECRET_TEXT)],
    ['uppercase hex', hex(SECRET_TEXT).toUpperCase()],
    ['lowercase %xx', encodeURIComponent(SECRET_TEXT).replace(/%[0-9A-F]{2}/g, (e) => e.toLowerCase())],
    ['form encoding', new URLSearchParams({ k: SECRET_TEXT }).toString().slice(2)],
    ['every byte as %XX', [...utf8(SECRET_TEXT)].map((b) => `%${b.toString(16).padStart(2, '0')}`).join('')],
  ])('replaces the secret as %s', (_, encoded) => {
    const out = redact(`before ${encoded} after`, [SECRET_TEXT]);

    expect(out).toBe('before [redacted] after');
  });

  it.each(['a', 'ab', 'abc', 'user'])(
    "replaces an HTTP Basic header for '%s:<secret>', whatever the user name's length",
    (user) => {
      const header = `Authorization: Basic ${base64(`${user}:${SECRET_TEXT}`)}`;

      expect(redact(JSON.stringify({ echo: header }), [SECRET_TEXT])).toBe(
        '{"echo":"Authorization: Basic [redacted]"}',
      );
    },
  );

  it('finds a secret base64-encoded inside a longer document, at any offset', () => {
    for (let pad = 0; pad < 6; pad++) {
      const document = base64(`${'x'.repeat(pad)}{"token":"${SECRET_TEXT}","n":1}`);

      expect(redact(`data:application/json;base64,${document}`, [SECRET_TEXT])).toBe(
        'data:application/json;base64,[redacted]',
      );
    }
  });

  it('leaves base64 and hex that do not hold the secret alone, and does not hunt short secrets in them', () => {
    const blob = base64(Array.from({ length: 3000 }, (_, i) => String.fromCharCode(i % 251)).join(''));
    expect(redact(blob, [SECRET_TEXT])).toBe(blob);
    expect(redact(`id ${hex('abc')} ${base64('abc')}`, ['abc'])).toBe(`id ${hex('abc')} ${base64('abc')}`);
  });

  it('no encoded form of a random secret survives, checked by decoding what is left', () => {
    const forms: ((text: string) => string)[] = [
      base64,
      base64url,
      (text) => base64(`user:${text}`),
      (text) => base64(`{"k":${JSON.stringify(text)}}`),
      hex,
      (text) => hex(text).toUpperCase(),
      (text) => encodeURIComponent(text).replace(/%[0-9A-F]{2}/g, (e) => e.toLowerCase()),
    ];
    fc.assert(
      fc.property(
        fc.string({ minLength: 8, maxLength: 40 }),
        fc.string({ maxLength: 8 }),
        fc.integer({ min: 0, max: forms.length - 1 }),
        (secret, around, which) => {
          const encoded = forms[which]!(`${around}${secret}${around}`);
          const out = redact(`<${encoded}>`, [secret]);
          expect(decodedRuns(out).some((text) => text.includes(secret))).toBe(false);
        },
      ),
      { numRuns: 300, seed: 20 },
    );
  });
});

/** Every run of base64, hex or %xx in `text`, decoded as each could be read: what a reader could recover. */
function decodedRuns(text: string): string[] {
  const out: string[] = [text];
  const decoder = new TextDecoder();
  for (const run of text.match(/[A-Za-z0-9+/_=-]{4,}/g) ?? []) {
    for (let skip = 0; skip < 4; skip++) {
      const body = run.slice(skip).replace(/-/g, '+').replace(/_/g, '/').replace(/=+$/, '');
      try {
        const bytes = Uint8Array.from(atob(body.slice(0, body.length - (body.length % 4))), (c) =>
          c.charCodeAt(0),
        );
        out.push(decoder.decode(bytes));
      } catch {
        // Not base64 at this offset.
      }
    }
    if (/^[0-9a-fA-F]+$/.test(run)) {
      for (const start of [0, 1]) {
        const pairs = run.slice(start).match(/../g) ?? [];
        out.push(decoder.decode(Uint8Array.from(pairs, (pair) => parseInt(pair, 16))));
      }
    }
  }
  try {
    out.push(decodeURIComponent(text));
  } catch {
    // Not URL-encoded throughout.
  }
  return out;
}

describe('redact: the same list handed in again', () => {
  it('honours a list edited in place after a call: an element replaced, one added, one removed', () => {
    const secrets = ['first-secret-value-0001'];
    expect(redact('a first-secret-value-0001 b', secrets)).toBe('a [redacted] b');
    secrets[0] = 'second-secret-value-0002';
    expect(redact('a second-secret-value-0002 b', secrets)).toBe('a [redacted] b');
    expect(redact('a first-secret-value-0001 b', secrets)).toBe('a first-secret-value-0001 b');
    secrets.push('third-secret-value-00003');
    expect(redactValue({ text: 'third-secret-value-00003' }, secrets)).toEqual({ text: '[redacted]' });
    secrets.length = 0;
    expect(redact('a second-secret-value-0002 b', secrets)).toBe('a second-secret-value-0002 b');
  });

  it('a frozen list handed in call after call keeps redacting what it holds', () => {
    const secrets = Object.freeze(['steady-secret-value-0001']);
    for (let i = 0; i < 3; i++) {
      expect(redactValue(['x steady-secret-value-0001 y'], secrets)).toEqual(['x [redacted] y']);
    }
  });
});
