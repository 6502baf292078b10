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

describe('identity roles', () => {
  it('reach middleware as a frozen copy of the strings the caller gave', async () => {
    const { createChain, createDispatcher, defineTool } = await import('@toolgate/core');
    const seen: unknown[] = [];
    const chain = createChain([
      {
        name: 'look',
        run: async (ctx, next) => {
          seen.push(ctx.identity?.roles, Object.isFrozen(ctx.identity?.roles));
          await next();
        },
      },
    ]);
    const tool = defineTool({
      name: 't',
      description: 't',
      inputSchema: { type: 'object' },
      execute: () => 1,
    });
    const roles = ['approver', 7 as unknown as string];
    const dispatcher = createDispatcher({ tools: [tool], chain });
    const pending = dispatcher.dispatch({ toolName: 't' }, { identity: { tenant: 'acme', roles } });
    roles.push('admin');
    await pending;
    expect(seen).toEqual([['approver'], true]);
  });

  it('are left out of the artifact scope', () => {
    expect(scopeOf({ tenant: 'acme', roles: ['approver'] })).toEqual({ tenant: 'acme' });
  });
});
