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

describe('canonicalJson writes what sorting every object writes, whatever shape a value has', () => {
  // The reference: every object's keys sorted, element by element, as canonicalJson is specified.
  function reference(value: unknown, seen = new Set<object>()): string {
    if (value === null) return 'null';
    if (typeof value === 'string') return JSON.stringify(value);
    if (typeof value === 'number') return Number.isFinite(value) ? JSON.stringify(value) : 'null';
    if (typeof value === 'boolean') return value ? 'true' : 'false';
    if (typeof value !== 'object') throw new TypeError(`a ${typeof value}`);
    const object = value as Record<string, unknown> & { toJSON?: () => unknown };
    if (typeof object.toJSON === 'function') return reference(object.toJSON(), seen);
    if (seen.has(object)) throw new TypeError('cycle');
    seen.add(object);
    let out: string;
    if (Array.isArray(object)) {
      const parts: string[] = [];
      for (let i = 0; i < object.length; i++) {
        const item: unknown = object[i];
        parts.push(item === undefined ? (i in object ? 'null' : '') : reference(item, seen));
      }
      out = `[${parts.join(',')}]`;
    } else {
      const parts: string[] = [];
      for (const key of Object.keys(object).sort()) {
        const item = object[key];
        if (item === undefined || typeof item === 'function' || typeof item === 'symbol') continue;
        parts.push(`${JSON.stringify(key)}:${reference(item, seen)}`);
      }
      out = `{${parts.join(',')}}`;
    }
    seen.delete(object);
    return out;
  }
  const outcome = (write: () => string) => {
    try {
      return write();
    } catch (error) {
      return error instanceof TypeError ? 'TypeError' : 'other';
    }
  };

  // Keys that sort differently by code unit, by number and by insertion: integer-like keys come
  // first in an object's own order, and '\u{10000}' (a surrogate pair) sorts before '\uffff'.
  const KEYS = [
    'a',
    'b',
    'B',
    '',
    '10',
    '9',
    '0',
    '01',
    '-1',
    '\uffff',
    '\u{10000}',
    'é',
    'e\u0301',
    '__proto__',
    'toJSON',
  ];
  const LEAVES: unknown[] = [
    '',
    'x',
    'quote " \\ \n \u2028 \ud800',
    0,
    -0,
    1.5,
    1e21,
    Number.NaN,
    Infinity,
    true,
    false,
    null,
    undefined,
  ];
  // A small seeded generator, so a failure names the case that found it.
  function generator(seed: number) {
    let state = seed;
    const next = () => ((state = (state * 1103515245 + 12345) % 2147483648), state / 2147483648);
    const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]!;
    const value = (depth: number): unknown => {
      const roll = next();
      if (depth > 3 || roll < 0.35) return pick(LEAVES);
      if (roll < 0.6) return Array.from({ length: Math.floor(next() * 4) }, () => value(depth + 1));
      if (roll < 0.65) return new Date(Math.floor(next() * 1e12));
      if (roll < 0.68) return Object.assign(Object.create(null) as object, { b: value(depth + 1), a: 1 });
      if (roll < 0.7) return new Map([['a', 1]]);
      if (roll < 0.72) return new Uint8Array([1, 2]);
      if (roll < 0.74) {
        const inner = value(depth + 1);
        return { toJSON: () => ({ z: 1, a: inner }) };
      }
      if (roll < 0.76) return Object.assign(new (class Shape {})(), { b: 1, a: 2 });
      if (roll < 0.78) return () => 1;
      if (roll < 0.8) {
        const holes: unknown[] = [1];
        holes[3] = value(depth + 1);
        return holes;
      }
      const object: Record<string, unknown> = {};
      const keys = Array.from({ length: Math.floor(next() * 5) }, () => pick(KEYS));
      // Half the objects arrive with their keys in order, as parsed canonical JSON does.
      if (next() < 0.5) keys.sort();
      for (const key of keys)
        Object.defineProperty(object, key, {
          value: value(depth + 1),
          enumerable: true,
          writable: true,
          configurable: true,
        });
      return object;
    };
    return value;
  }

  it('on 5,000 generated values, sorted and not, with every kind of leaf and container', () => {
    let asIs = 0;
    for (let seed = 1; seed <= 5000; seed++) {
      const value = generator(seed)(0);
      const expected = outcome(() => reference(value));
      expect({ seed, text: outcome(() => canonicalJson(value)) }).toEqual({ seed, text: expected });
      if (expected === JSON.stringify(value)) asIs += 1;
    }
    // The generator reaches both paths.
    expect(asIs).toBeGreaterThan(500);
    expect(asIs).toBeLessThan(4500);
  });

  it('on values built to slip past a check that JSON.stringify is enough', () => {
    const cases: unknown[] = [
      { '10': 1, '9': 2 },
      { '\uffff': 1, '\u{10000}': 2 },
      { b: 1, a: 2 },
      { a: undefined },
      { a: () => 1 },
      { a: Symbol('s') },
      [undefined],
      [() => 1],
      // eslint-disable-next-line no-sparse-arrays
      [1, , 2],
      new Array(3),
      Object.assign([2, 1], { extra: 1 }),
      { a: new String('x') },
      { a: Object(1n) },
      { a: 1n },
      Object.defineProperty({ a: 1 }, 'toJSON', { value: () => 'hidden', enumerable: false }),
      Object.defineProperty({ b: 1 }, 'a', { get: () => 2, enumerable: true }),
      Object.assign(Object.create({ toJSON: () => 'inherited' }) as object, { a: 1 }),
      JSON.parse('{"__proto__":{"b":1,"a":2}}'),
      { a: [{ d: 1, c: 2 }] },
      { a: new Proxy([2, 1], {}) },
      { a: new Proxy({ b: 1, a: 2 }, {}) },
    ];
    for (const [index, value] of cases.entries()) {
      expect({ index, text: outcome(() => canonicalJson(value)) }).toEqual({
        index,
        text: outcome(() => reference(value)),
      });
    }
  });

  it('deeper than the quick check looks, and through cycles, as before', () => {
    let deep: unknown = { b: 1, a: 0 };
    for (let i = 0; i < 200; i++) deep = { x: [deep] };
    expect(canonicalJson(deep)).toBe(reference(deep));
    let sortedDeep: unknown = 'leaf';
    for (let i = 0; i < 200; i++) sortedDeep = [{ a: sortedDeep }];
    expect(canonicalJson(sortedDeep)).toBe(JSON.stringify(sortedDeep));
    const loop: Record<string, unknown> = { a: 1 };
    loop['z'] = [loop];
    expect(() => canonicalJson(loop)).toThrow(/cycle/);
  });
});
