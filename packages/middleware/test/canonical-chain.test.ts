import {
  CANONICAL_ORDER,
  ChainOrderError,
  inMemoryCheckIns,
  type Chain,
  type Middleware,
} from '@toolgate/core';
import {
  canonicalChain,
  checkInGate,
  credentialsGate,
  resultCeilingGate,
  validateArgsGate,
  wantsGate,
} from '@toolgate/middleware';
import { KEY } from './fixtures';

function policy(name: string, extra: Partial<Middleware> = {}): Middleware {
  return { name, run: (_ctx, next) => next(), ...extra };
}

function orderErrorOf(build: () => Chain): ChainOrderError {
  try {
    build();
  } catch (error) {
    expect(error).toBeInstanceOf(ChainOrderError);
    return error as ChainOrderError;
  }
  throw new Error('expected a ChainOrderError, but the chain was built');
}

const provider = { resolve: () => ({ kind: 'api_key', value: 'k' }) };

describe('canonicalChain', () => {
  it('holds the seven gates in CANONICAL_ORDER', () => {
    expect(canonicalChain().names()).toEqual([...CANONICAL_ORDER]);
  });

  it('inserts use()d policy just before validate-args, in the order added', () => {
    const chain = canonicalChain().use(policy('tenant-policy')).use(policy('audit'));

    expect(chain.names()).toEqual([
      'permission',
      'capabilities',
      'tenant-policy',
      'audit',
      'validate-args',
      'wants',
      'check-in',
      'credentials',
      'result-ceiling',
    ]);
  });

  it('accepts an args-transforming policy added with use(), since validate-args judges it afterwards', () => {
    expect(
      canonicalChain()
        .use(policy('rewrite', { transformsArgs: true }))
        .names(),
    ).toContain('rewrite');
  });

  it('refuses credentials before check-in', () => {
    const error = orderErrorOf(() =>
      canonicalChain({ credentials: provider })
        .remove('credentials')
        .insertBefore('check-in', credentialsGate(provider)),
    );

    expect(error.violations).toEqual([
      { middleware: 'credentials', other: 'check-in', reason: "'credentials' must stand after 'check-in'" },
    ]);
    expect(error.message).toContain("'credentials' and 'check-in'");
  });

  it('refuses check-in before validate-args', () => {
    const error = orderErrorOf(() =>
      canonicalChain().remove('check-in').insertBefore('validate-args', checkInGate()),
    );

    expect(error.violations).toEqual(
      expect.arrayContaining([
        {
          middleware: 'check-in',
          other: 'validate-args',
          reason: "'check-in' must stand after 'validate-args'",
        },
      ]),
    );
  });

  it('refuses check-in before wants', () => {
    const error = orderErrorOf(() =>
      canonicalChain().remove('check-in').insertBefore('wants', checkInGate()),
    );

    expect(error.violations).toEqual([
      { middleware: 'check-in', other: 'wants', reason: "'check-in' must stand after 'wants'" },
    ]);
  });

  it('refuses wants before validate-args', () => {
    const error = orderErrorOf(() =>
      canonicalChain().remove('wants').insertBefore('validate-args', wantsGate()),
    );

    expect(error.violations).toEqual([
      { middleware: 'wants', other: 'validate-args', reason: "'wants' must stand after 'validate-args'" },
    ]);
  });

  it('refuses an args-transforming middleware after validate-args', () => {
    const error = orderErrorOf(() =>
      canonicalChain().insertAfter('validate-args', policy('rewrite', { transformsArgs: true })),
    );

    expect(error.violations).toEqual([
      {
        middleware: 'rewrite',
        other: 'validate-args',
        reason:
          "'rewrite' transforms args, so 'validate-args' must come after it to judge the args that will run",
      },
    ]);
  });

  it('refuses a middleware placed inside result-ceiling', () => {
    const error = orderErrorOf(() => canonicalChain().insertAfter('result-ceiling', policy('late')));

    expect(error.violations).toEqual([
      {
        middleware: 'result-ceiling',
        other: 'late',
        reason: "'result-ceiling' must be innermost, but 'late' stands after it",
      },
    ]);
  });

  it('refuses validate-args moved after the gates that depend on it', () => {
    expect(() =>
      canonicalChain().remove('validate-args').insertAfter('credentials', validateArgsGate()),
    ).toThrow(ChainOrderError);
  });

  it('allows a broken order only with an explicit reason', () => {
    const chain = canonicalChain().insertAfter('result-ceiling', policy('late'), {
      unsafeOrder: 'late only logs, it never reads the result',
    });

    expect(chain.names().at(-1)).toBe('late');
    expect(chain.names().at(-2)).toBe('result-ceiling');
  });

  it('refuses checkIns without checkInKey', () => {
    expect(() => canonicalChain({ checkIns: inMemoryCheckIns() })).toThrow(
      /checkIns was given without checkInKey/,
    );
  });

  it('carries a pause service only when given a check-in key, with the store it was given', () => {
    const store = inMemoryCheckIns();

    expect(canonicalChain().canPause).toBe(false);
    expect(canonicalChain({ checkInKey: KEY }).canPause).toBe(true);
    expect(canonicalChain({ checkInKey: KEY, checkIns: store }).checkInStore).toBe(store);
  });

  it('keeps the pause service and the policy anchor through builder verbs', () => {
    const chain = canonicalChain({ checkInKey: KEY }).replace(
      'result-ceiling',
      resultCeilingGate({ defaultMaxChars: 10 }),
    );

    expect(chain.canPause).toBe(true);
    expect(chain.use(policy('late-policy')).names().indexOf('late-policy')).toBe(2);
  });

  it('gives one configuration one chain id, and a different configuration another', () => {
    expect(canonicalChain({ defaultMaxChars: 100 }).id).toBe(canonicalChain({ defaultMaxChars: 100 }).id);
    expect(canonicalChain({ defaultMaxChars: 100 }).id).not.toBe(canonicalChain({ defaultMaxChars: 200 }).id);
    expect(canonicalChain().id).not.toBe(canonicalChain({ credentials: provider }).id);
  });

  it('describes each gate with its constraints', () => {
    const described = canonicalChain().describe();

    expect(described.find((m) => m.name === 'check-in')).toMatchObject({ after: ['validate-args', 'wants'] });
    expect(described.find((m) => m.name === 'credentials')).toMatchObject({ after: ['check-in'] });
    expect(described.find((m) => m.name === 'wants')).toMatchObject({
      after: ['validate-args'],
      transformsArgs: true,
    });
    expect(described.find((m) => m.name === 'result-ceiling')).toMatchObject({ innermost: true });
  });

  it('refuses a bad deadline at build', () => {
    expect(() => canonicalChain({ deadlineMs: -1 })).toThrow(/deadlineMs must be a positive integer/);
  });
});
