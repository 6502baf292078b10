import compose from 'koa-compose';
import {
  CANONICAL_ORDER,
  ChainConfigError,
  ChainOrderError,
  createChain,
  createDispatcher,
  inMemoryCheckIns,
  isChain,
  POLICY_ANCHOR,
  type Middleware,
} from '@toolgate/core';
import { countingTool, KEY, passThrough } from './fixtures';

// The real koa-compose behind a spy, so the test can count compositions.
jest.mock('koa-compose', () => jest.fn(jest.requireActual<typeof compose>('koa-compose')));
const composeSpy = jest.mocked(compose);

const a = passThrough('a');
const b = passThrough('b');
const c = passThrough('c');

function orderErrorOf(build: () => unknown): ChainOrderError {
  try {
    build();
  } catch (error) {
    expect(error).toBeInstanceOf(ChainOrderError);
    return error as ChainOrderError;
  }
  throw new Error('expected a ChainOrderError, but the chain was built');
}

/** The canonical gate names as pass-through middleware with the canonical constraints. */
function canonicalLike(): Middleware[] {
  return [
    passThrough('permission'),
    passThrough('capabilities'),
    passThrough('validate-args'),
    passThrough('wants', { after: ['validate-args'], transformsArgs: true }),
    passThrough('check-in', { after: ['validate-args', 'wants'] }),
    passThrough('credentials', { after: ['check-in'] }),
    passThrough('result-ceiling', { innermost: true }),
  ];
}

describe('createChain', () => {
  it('keeps the given order', () => {
    expect(createChain([a, b, c]).names()).toEqual(['a', 'b', 'c']);
    expect(isChain(createChain([]))).toBe(true);
    expect(isChain({ names: () => [] })).toBe(false);
  });

  it('refuses two middleware with the same name', () => {
    expect(() => createChain([a, passThrough('a')])).toThrow(ChainConfigError);
    expect(() => createChain([a, passThrough('a')])).toThrow(/two middleware are named 'a'/);
  });

  it.each([['TenantPolicy'], ['tenant_policy'], ['tenant policy'], [''], ['-tenant'], ['tenant-']])(
    'refuses the non-kebab-case name %j',
    (name) => {
      expect(() => createChain([passThrough(name)])).toThrow(ChainConfigError);
      expect(() => createChain([passThrough(name)])).toThrow(/kebab-case 'name'/);
    },
  );

  it('refuses a middleware without run, naming it', () => {
    expect(() => createChain([{ name: 'audit' } as unknown as Middleware])).toThrow(
      /'audit' needs a 'run\(ctx, next\)' function/,
    );
  });

  it('refuses an after list that is not an array of names', () => {
    expect(() => createChain([passThrough('audit', { after: 'permission' as unknown as string[] })])).toThrow(
      /'audit': 'after' must be an array/,
    );
  });

  it('refuses a pause service with a key under 32 bytes or a bad lifetime', () => {
    expect(() => createChain([], { checkIns: { key: '' } })).toThrow(/checkIns.key .* at least 32 bytes/);
    expect(() => createChain([], { checkIns: { key: new Uint8Array() } })).toThrow(/at least 32 bytes/);
    expect(() => createChain([], { checkIns: { key: 5 as never } })).toThrow(/got neither/);
    expect(() => createChain([], { checkIns: { key: KEY, ttlMs: 0 } })).toThrow(
      /ttlMs must be a positive integer/,
    );
    expect(() => createChain([], { checkIns: { key: KEY, ttlMs: 1.5 } })).toThrow(
      /ttlMs must be a positive integer/,
    );
  });

  it('measures a key in bytes: UTF-8 for a string, its length for bytes, and says how to fix a short one', () => {
    const refused = (key: string | Uint8Array) => () => createChain([], { checkIns: { key } });
    expect(refused('k')).toThrow(
      "createChain: checkIns.key (canonicalChain's checkInKey) must be a string or Uint8Array of at least 32 bytes; got 1 byte.",
    );
    expect(refused('k')).toThrow(/use a random secret, e.g. 32 random bytes as hex/);
    expect(refused('k'.repeat(31))).toThrow(/got 31 bytes/);
    expect(refused(new Uint8Array(31))).toThrow(/got 31 bytes/);
    // 'é' is two bytes in UTF-8: 16 of them make 32 bytes from 16 characters.
    expect(refused(`${'é'.repeat(15)}k`)).toThrow(/got 31 bytes/);
    expect(refused('é'.repeat(16))).not.toThrow();
    expect(refused('k'.repeat(32))).not.toThrow();
    expect(refused(new Uint8Array(32))).not.toThrow();
  });

  it('exposes the pause service store, shared by derived chains', () => {
    const store = inMemoryCheckIns();
    const chain = createChain([a], { checkIns: { key: KEY, store } });
    expect(chain.checkInStore).toBe(store);
    expect(chain.use(b).checkInStore).toBe(store);
    expect(createChain([a]).checkInStore).toBeUndefined();
  });

  it('exports the canonical order with validate-args as the policy anchor', () => {
    expect(CANONICAL_ORDER).toEqual([
      'permission',
      'capabilities',
      'validate-args',
      'wants',
      'check-in',
      'credentials',
      'result-ceiling',
    ]);
    expect(POLICY_ANCHOR).toBe('validate-args');
    expect(() => createChain(canonicalLike())).not.toThrow();
  });
});

describe('chain builder verbs', () => {
  it('use appends at the end of a plain chain', () => {
    expect(createChain([a, b]).use(c).names()).toEqual(['a', 'b', 'c']);
  });

  it('use inserts before the innermost middleware of a plain chain', () => {
    const chain = createChain([a, passThrough('ceiling', { innermost: true })]);
    expect(chain.use(c).names()).toEqual(['a', 'c', 'ceiling']);
  });

  it('use inserts just before the policy anchor', () => {
    const chain = createChain(canonicalLike(), { policyAnchor: POLICY_ANCHOR });
    expect(chain.use(passThrough('tenant-policy')).names()).toEqual([
      'permission',
      'capabilities',
      'tenant-policy',
      'validate-args',
      'wants',
      'check-in',
      'credentials',
      'result-ceiling',
    ]);
  });

  it('use falls back to before the innermost middleware when the anchor is absent', () => {
    const chain = createChain([a, passThrough('ceiling', { innermost: true })], {
      policyAnchor: POLICY_ANCHOR,
    });
    expect(chain.use(c).names()).toEqual(['a', 'c', 'ceiling']);
  });

  it('insertBefore puts the middleware just before the named one', () => {
    expect(createChain([a, b]).insertBefore('b', c).names()).toEqual(['a', 'c', 'b']);
    expect(createChain([a, b]).insertBefore('a', c).names()).toEqual(['c', 'a', 'b']);
  });

  it('insertAfter puts the middleware just after the named one', () => {
    expect(createChain([a, b]).insertAfter('a', c).names()).toEqual(['a', 'c', 'b']);
    expect(createChain([a, b]).insertAfter('b', c).names()).toEqual(['a', 'b', 'c']);
  });

  it('replace swaps the named middleware in place', () => {
    const loud = passThrough('b', { fingerprint: 'loud' });
    const chain = createChain([a, b, c]).replace('b', loud);
    expect(chain.names()).toEqual(['a', 'b', 'c']);
    expect(chain.get('b')).toBe(loud);
    expect(createChain([a, b]).replace('b', c).names()).toEqual(['a', 'c']);
  });

  it('remove drops the named middleware', () => {
    const chain = createChain([a, b, c]).remove('b');
    expect(chain.names()).toEqual(['a', 'c']);
    expect(chain.has('b')).toBe(false);
    expect(chain.get('b')).toBeUndefined();
  });

  it.each([
    ['insertBefore', (chain: ReturnType<typeof createChain>) => chain.insertBefore('missing', c)],
    ['insertAfter', (chain: ReturnType<typeof createChain>) => chain.insertAfter('missing', c)],
    ['replace', (chain: ReturnType<typeof createChain>) => chain.replace('missing', c)],
    ['remove', (chain: ReturnType<typeof createChain>) => chain.remove('missing')],
  ])('%s refuses an unknown name, listing the names the chain has', (verb, apply) => {
    const chain = createChain([a, b]);
    expect(() => apply(chain)).toThrow(ChainConfigError);
    expect(() => apply(chain)).toThrow(`chain.${verb}: no middleware named 'missing'; the chain has a, b.`);
  });

  it('a verb that would duplicate a name is refused', () => {
    expect(() => createChain([a, b]).use(passThrough('a'))).toThrow(/two middleware are named 'a'/);
    expect(() => createChain([a, b]).replace('b', passThrough('a'))).toThrow(/two middleware are named 'a'/);
  });

  it('a derived chain shares the middleware objects and leaves the base unchanged', () => {
    const base = createChain([a, b]);
    const derived = base.use(c).remove('a');
    expect(base.names()).toEqual(['a', 'b']);
    expect(derived.names()).toEqual(['b', 'c']);
    expect(derived.get('b')).toBe(base.get('b'));
    expect(derived.get('b')).toBe(b);
    expect(derived).not.toBe(base);
    expect(Object.isFrozen(base.middleware)).toBe(true);
  });

  it('describe lists the effective order with each middleware constraints', () => {
    const chain = createChain([
      passThrough('validate-args', { fingerprint: 'ajv' }),
      passThrough('wants', { after: ['validate-args'], transformsArgs: true }),
      passThrough('audit', { before: ['ceiling'] }),
      passThrough('ceiling', { innermost: true }),
    ]);
    expect(chain.describe()).toEqual([
      { position: 0, name: 'validate-args', fingerprint: 'ajv' },
      { position: 1, name: 'wants', after: ['validate-args'], transformsArgs: true },
      { position: 2, name: 'audit', before: ['ceiling'] },
      { position: 3, name: 'ceiling', innermost: true },
    ]);
    expect(JSON.parse(JSON.stringify(chain))).toEqual({ id: chain.id, middleware: chain.describe() });
  });
});

describe('chain order constraints', () => {
  it('an after constraint broken by a verb throws ChainOrderError naming both middleware', () => {
    const credentials = passThrough('credentials', { after: ['check-in'] });
    const error = orderErrorOf(() =>
      createChain([passThrough('check-in')]).insertBefore('check-in', credentials),
    );
    expect(error.message).toContain(`'credentials' and 'check-in'`);
    expect(error.message).toContain(`'credentials' must stand after 'check-in'`);
    expect(error.violations).toEqual([
      { middleware: 'credentials', other: 'check-in', reason: `'credentials' must stand after 'check-in'` },
    ]);
    expect(error.code).toBe('ERR_CHAIN_ORDER');
  });

  it('a before constraint broken by a verb throws ChainOrderError naming both middleware', () => {
    const audit = passThrough('audit', { before: ['permission'] });
    const error = orderErrorOf(() =>
      createChain([passThrough('permission')]).insertAfter('permission', audit),
    );
    expect(error.message).toContain(`'audit' and 'permission': 'audit' must stand before 'permission'`);
  });

  it('an innermost middleware with another after it throws ChainOrderError naming both', () => {
    const ceiling = passThrough('result-ceiling', { innermost: true });
    const error = orderErrorOf(() =>
      createChain([ceiling]).insertAfter('result-ceiling', passThrough('late')),
    );
    expect(error.message).toContain(
      `'result-ceiling' and 'late': 'result-ceiling' must be innermost, but 'late' stands after it`,
    );
  });

  it('an args transformer after validate-args throws ChainOrderError naming both', () => {
    const rewrite = passThrough('rewrite', { transformsArgs: true });
    const error = orderErrorOf(() => createChain([passThrough('validate-args'), rewrite]));
    expect(error.message).toContain(`'rewrite' and 'validate-args'`);
    expect(error.message).toContain('transforms args');
  });

  it('an args transformer before validate-args is accepted', () => {
    const rewrite = passThrough('rewrite', { transformsArgs: true });
    expect(createChain([rewrite, passThrough('validate-args')]).names()).toEqual([
      'rewrite',
      'validate-args',
    ]);
  });

  it('an args transformer that declares after validate-args is accepted after it', () => {
    const wants = passThrough('wants', { transformsArgs: true, after: ['validate-args'] });
    expect(createChain([passThrough('validate-args'), wants]).names()).toEqual(['validate-args', 'wants']);
  });

  it('a constraint naming an absent middleware is vacuous', () => {
    expect(createChain([passThrough('credentials', { after: ['check-in'] })]).names()).toEqual([
      'credentials',
    ]);
    const chain = createChain([passThrough('check-in'), passThrough('credentials', { after: ['check-in'] })]);
    expect(chain.remove('check-in').names()).toEqual(['credentials']);
  });

  it('reports every violation at once', () => {
    const error = orderErrorOf(() =>
      createChain([
        passThrough('result-ceiling', { innermost: true }),
        passThrough('credentials', { after: ['check-in'] }),
        passThrough('check-in'),
      ]),
    );
    expect(error.violations.map((v) => v.middleware)).toEqual(['result-ceiling', 'credentials']);
  });

  it('unsafeOrder lets a verb break order on purpose', () => {
    const credentials = passThrough('credentials', { after: ['check-in'] });
    const chain = createChain([passThrough('check-in')]).insertBefore('check-in', credentials, {
      unsafeOrder: 'credentials are public here',
    });
    expect(chain.names()).toEqual(['credentials', 'check-in']);
    expect(
      createChain([passThrough('validate-args'), passThrough('rewrite', { transformsArgs: true })], {
        unsafeOrder: 'rewrite only trims',
      }).names(),
    ).toEqual(['validate-args', 'rewrite']);
  });

  it('unsafeOrder must give a reason', () => {
    expect(() => createChain([a], { unsafeOrder: ' ' })).toThrow(ChainConfigError);
    expect(() => createChain([a]).use(b, { unsafeOrder: '' })).toThrow(/non-empty reason/);
  });

  it('an order accepted once stays accepted in derived chains, but a new violation needs its own reason', () => {
    const unsafe = createChain(
      [passThrough('credentials', { after: ['check-in'] }), passThrough('check-in')],
      { unsafeOrder: 'demo' },
    );
    expect(unsafe.use(passThrough('audit')).names()).toEqual(['credentials', 'check-in', 'audit']);
    expect(() => unsafe.use(passThrough('late', { before: ['credentials'] }))).toThrow(ChainOrderError);
  });
});

describe('chainId', () => {
  it('is stable for the same names and fingerprints in the same order', () => {
    const first = createChain([a, passThrough('b', { fingerprint: 'limit=5' })]);
    const second = createChain([passThrough('a'), passThrough('b', { fingerprint: 'limit=5' })]);
    expect(first.id).toMatch(/^chain_[0-9a-f]{16}$/);
    expect(first.id).toBe(first.id);
    expect(second.id).toBe(first.id);
  });

  it('differs when a fingerprint differs', () => {
    const five = createChain([a, passThrough('b', { fingerprint: 'limit=5' })]);
    const six = createChain([a, passThrough('b', { fingerprint: 'limit=6' })]);
    const none = createChain([a, b]);
    expect(new Set([five.id, six.id, none.id]).size).toBe(3);
  });

  it('cannot be matched by a fingerprint that spells out another middleware', () => {
    const two = createChain([passThrough('a', { fingerprint: 'x' }), passThrough('b')]);
    const one = createChain([passThrough('a', { fingerprint: 'x)>b(' })]);
    expect(one.id).not.toBe(two.id);
  });

  it('differs when the order or the names differ', () => {
    expect(createChain([a, b]).id).not.toBe(createChain([b, a]).id);
    expect(createChain([a, b]).id).not.toBe(createChain([a, b]).use(c).id);
  });

  it('is what every outcome under the chain carries', async () => {
    const chain = createChain([a]);
    const dispatcher = createDispatcher({ tools: [countingTool()], chain });
    const outcome = await dispatcher.dispatch({ toolName: 'echo', args: {} });
    expect(outcome.chainId).toBe(chain.id);
  });
});

describe('composition', () => {
  it('composes a chain once, however many calls it serves', async () => {
    const tool = countingTool();
    const chain = createChain([a, b]);
    const dispatcher = createDispatcher({ tools: [tool], chain });
    composeSpy.mockClear();
    const outcomes = [];
    for (let i = 0; i < 1000; i++)
      outcomes.push(await dispatcher.dispatch({ toolName: 'echo', args: { text: String(i) } }));
    expect(composeSpy).toHaveBeenCalledTimes(1);
    expect(tool.calls).toHaveLength(1000);
    expect(outcomes.every((o) => o.kind === 'result')).toBe(true);
  });

  it('composes each derived chain once of its own', async () => {
    const base = createChain([a]);
    const derived = base.use(b);
    const dispatcher = createDispatcher({
      tools: [countingTool()],
      chain: (identity) => (identity?.tenant === 'acme' ? derived : base),
    });
    composeSpy.mockClear();
    for (let i = 0; i < 10; i++) {
      await dispatcher.dispatch({ toolName: 'echo', args: {} }, { identity: { tenant: 'acme' } });
      await dispatcher.dispatch({ toolName: 'echo', args: {} });
    }
    expect(composeSpy).toHaveBeenCalledTimes(2);
  });
});

describe('middleware names', () => {
  it('names a middleware with a camelCase name by that name, and suggests the kebab-case one', () => {
    expect(() => createChain([{ name: 'tenantPolicy', run: async (_ctx, next) => next() }])).toThrow(
      "createChain: middleware 'tenantPolicy' (#0) needs a kebab-case 'name', e.g. 'tenant-policy'.",
    );
  });

  it('says when a middleware has no name at all', () => {
    expect(() => createChain([{ run: async () => undefined } as never])).toThrow(
      "createChain: middleware #0 (it has no name) needs a kebab-case 'name', e.g. 'tenant-policy'.",
    );
  });
});
