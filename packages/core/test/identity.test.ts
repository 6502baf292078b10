import { scopeOf } from '@toolgate/core';

describe('scopeOf', () => {
  it('copies the three scoping fields that are present, and nothing else', () => {
    const identity = { tenant: 'acme', principal: 'ana', conversation: 'c1', role: 'admin' } as {
      tenant: string;
    };
    expect(scopeOf(identity)).toEqual({ tenant: 'acme', principal: 'ana', conversation: 'c1' });
  });

  it('leaves absent fields absent, not undefined', () => {
    const scope = scopeOf({ tenant: 'acme' });
    expect(Object.keys(scope)).toEqual(['tenant']);
    expect(scopeOf(undefined)).toEqual({});
    expect(Object.keys(scopeOf(undefined))).toEqual([]);
  });
});
