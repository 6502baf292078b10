import { createHash, createHmac } from 'node:crypto';
import { canonicalJson, createSigner, digestOf, shortHash } from '@toolgate/core';

describe('canonicalJson', () => {
  it('sorts object keys at every depth and keeps array order', () => {
    expect(canonicalJson({ b: 1, a: { d: [3, { z: 1, y: 2 }], c: null } })).toBe(
      '{"a":{"c":null,"d":[3,{"y":2,"z":1}]},"b":1}',
    );
  });

  it('writes the same text for the same value whatever the key order', () => {
    expect(canonicalJson({ x: 1, y: { p: 'q', r: 's' } })).toBe(
      canonicalJson({ y: { r: 's', p: 'q' }, x: 1 }),
    );
  });

  it('agrees with JSON.stringify on strings, numbers and booleans', () => {
    const value = {
      text: 'quote " slash \\ line\n emoji 😀 \u2028',
      n: -0.5e-7,
      big: 1e21,
      t: true,
      f: false,
    };
    expect(JSON.parse(canonicalJson(value))).toEqual(value);
    for (const [, item] of Object.entries(value)) expect(canonicalJson(item)).toBe(JSON.stringify(item));
  });

  it('drops what JSON drops: undefined, functions and symbols in objects; null for them in arrays and for non-finite numbers', () => {
    expect(canonicalJson({ a: undefined, b: () => 1, c: Symbol('s'), d: 1 })).toBe('{"d":1}');
    expect(canonicalJson([undefined, Number.NaN, Number.POSITIVE_INFINITY])).toBe('[null,null,null]');
  });

  it('writes the edges as it always has: empty containers, only dropped keys, holes, nesting', () => {
    expect(canonicalJson({})).toBe('{}');
    expect(canonicalJson([])).toBe('[]');
    expect(canonicalJson({ a: undefined, b: () => 1 })).toBe('{}');
    expect(canonicalJson({ a: undefined, z: 2, b: undefined, m: [] })).toBe('{"m":[],"z":2}');
    // eslint-disable-next-line no-sparse-arrays
    expect(canonicalJson([1, , 2])).toBe('[1,,2]');
    expect(canonicalJson([[], [[]], {}, [{}], [undefined]])).toBe('[[],[[]],{},[{}],[null]]');
    expect(canonicalJson({ '': 1, '"': { ',': [','] } })).toBe('{"":1,"\\"":{",":[","]}}');
  });

  it('honors toJSON', () => {
    expect(canonicalJson({ at: new Date('2030-01-01T00:00:00.000Z') })).toBe(
      '{"at":"2030-01-01T00:00:00.000Z"}',
    );
  });

  it('throws a TypeError on a cycle but accepts a shared reference', () => {
    const shared = { id: 1 };
    expect(canonicalJson({ a: shared, b: [shared] })).toBe('{"a":{"id":1},"b":[{"id":1}]}');
    const loop: Record<string, unknown> = {};
    loop['self'] = loop;
    expect(() => canonicalJson(loop)).toThrow(TypeError);
    expect(() => canonicalJson(loop)).toThrow(/cycle/);
  });

  it('throws a TypeError on a BigInt or a bare undefined', () => {
    expect(() => canonicalJson({ n: 1n })).toThrow(TypeError);
    expect(() => canonicalJson(undefined)).toThrow(TypeError);
  });
});

describe('digestOf', () => {
  it('is the lowercase hex SHA-256 of the canonical JSON', async () => {
    const value = { b: [1, 2], a: 'x' };
    const expected = createHash('sha256').update('{"a":"x","b":[1,2]}').digest('hex');
    expect(await digestOf(value)).toBe(expected);
    expect(await digestOf({ a: 'x', b: [1, 2] })).toBe(expected);
  });

  it('differs when a value differs', async () => {
    expect(await digestOf({ a: 1 })).not.toBe(await digestOf({ a: 2 }));
  });
});

describe('createSigner', () => {
  const key = 'k'.repeat(32);

  it('signs with HMAC-SHA-256 over the canonical JSON, in lowercase hex', async () => {
    const signature = await createSigner(key).sign({ b: 2, a: 1 });
    expect(signature).toBe(createHmac('sha256', key).update('{"a":1,"b":2}').digest('hex'));
  });

  it('takes the key as a string or as bytes', async () => {
    const bytes = new TextEncoder().encode(key);
    expect(await createSigner(bytes).sign({ a: 1 })).toBe(await createSigner(key).sign({ a: 1 }));
  });

  it('verifies its own signature and rejects any change', async () => {
    const signer = createSigner(key);
    const signature = await signer.sign({ a: 1 });
    expect(await signer.verify({ a: 1 }, signature)).toBe(true);
    expect(await signer.verify({ a: 2 }, signature)).toBe(false);
    expect(await createSigner('another key').verify({ a: 1 }, signature)).toBe(false);
  });

  it.each([
    ['uppercase hex', (s: string) => s.toUpperCase()],
    ['too short', (s: string) => s.slice(2)],
    ['not hex', (s: string) => `zz${s.slice(2)}`],
    ['not a string', () => 42 as unknown as string],
  ])('rejects a signature that is %s', async (_label, mangle) => {
    const signer = createSigner(key);
    const signature = await signer.sign({ a: 1 });
    expect(await signer.verify({ a: 1 }, mangle(signature))).toBe(false);
  });
});

describe('shortHash', () => {
  it('is 16 lowercase hex characters, stable, and differs for different text', () => {
    expect(shortHash('a(x)>b()')).toMatch(/^[0-9a-f]{16}$/);
    expect(shortHash('a(x)>b()')).toBe(shortHash('a(x)>b()'));
    expect(shortHash('a(x)>b()')).not.toBe(shortHash('a(y)>b()'));
    expect(shortHash('')).toMatch(/^[0-9a-f]{16}$/);
  });
});
