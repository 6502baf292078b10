import { createDispatcher } from '@toolgate/core';
import { canonicalChain } from '@toolgate/middleware';
import { mockTool, staticPermissions } from '@toolgate/testing';

const signal = new AbortController().signal;
const ask = (target: string, extra: Record<string, unknown> = {}) => ({
  capability: 'tool_call',
  target,
  args: {},
  signal,
  ...extra,
});

describe('staticPermissions', () => {
  it('denies when no rule matches, by default', () => {
    expect(staticPermissions([]).check(ask('search'))).toEqual({ allow: false, reason: 'no rule allows it' });
  });

  it('allows when no rule matches with default: allow', () => {
    expect(staticPermissions([], { default: 'allow' }).check(ask('search'))).toEqual({ allow: true });
  });

  it('lets the first matching rule win', () => {
    const checker = staticPermissions([
      { tool: 'delete_all', allow: false, reason: 'never from an agent' },
      { allow: true },
      { tool: 'delete_all', allow: true },
    ]);
    expect(checker.check(ask('delete_all'))).toEqual({ allow: false, reason: 'never from an agent' });
    expect(checker.check(ask('search'))).toEqual({ allow: true });
  });

  it('matches by tool list, source, capability, tenant and principal', () => {
    const checker = staticPermissions([
      { tool: ['a', 'b'], tenant: 'acme', allow: true },
      { source: 'crm', capability: 'tool_call', allow: true },
      { source: null, principal: 'root', allow: true },
    ]);
    expect(checker.check(ask('b', { identity: { tenant: 'acme' } }))).toEqual({ allow: true });
    expect(checker.check(ask('b', { identity: { tenant: 'globex' } })).allow).toBe(false);
    expect(checker.check(ask('c', { toolSource: 'crm' }))).toEqual({ allow: true });
    expect(checker.check(ask('c', { toolSource: 'crm', capability: 'payments' })).allow).toBe(false);
    expect(checker.check(ask('c', { identity: { principal: 'root' } }))).toEqual({ allow: true });
    expect(
      checker.check(ask('c', { toolSource: 'crm', identity: { principal: 'root' }, capability: 'payments' }))
        .allow,
    ).toBe(false);
  });

  it('names the denying rule when it gives no reason', () => {
    expect(staticPermissions([{ allow: true, tool: 'x' }, { allow: false }]).check(ask('y'))).toEqual({
      allow: false,
      reason: 'rule #2 denies it',
    });
  });

  it('governs every capability its rules name, unless told otherwise', () => {
    const rules = [
      { capability: 'payments', allow: false },
      { capability: 'tool_call', allow: true },
      { capability: 'user_data', allow: true },
    ];
    expect(staticPermissions(rules).governs).toEqual(['payments', 'user_data']);
    expect(staticPermissions(rules, { governs: ['filesystem'] }).governs).toEqual(['filesystem']);
  });

  it('records every request without its signal', () => {
    const checker = staticPermissions([{ allow: true }]);
    checker.check(ask('search', { identity: { tenant: 'acme' }, args: { q: 1 } }));
    expect(checker.requests).toEqual([
      { capability: 'tool_call', target: 'search', identity: { tenant: 'acme' }, args: { q: 1 } },
    ]);
    checker.reset();
    expect(checker.requests).toEqual([]);
  });

  it('refuses rules with typos or without allow', () => {
    expect(() => staticPermissions([{ tools: 'x', allow: true } as never])).toThrow(
      "unknown field(s) 'tools'",
    );
    expect(() => staticPermissions([{ tool: 'x' } as never])).toThrow(
      "needs 'allow: true' or 'allow: false'",
    );
    expect(() => staticPermissions([], { default: 'maybe' as never })).toThrow("'allow' or 'deny'");
  });

  it('decides both the permission and the capabilities gates in a canonical chain', async () => {
    const permissions = staticPermissions([
      { tool: 'delete_account', allow: false, reason: 'accounts are closed by staff only' },
      { capability: 'payments', tenant: 'acme', allow: true },
      { capability: 'payments', allow: false, reason: 'payments are off for this tenant' },
      { allow: true },
    ]);
    const refund = mockTool({ name: 'refund', capabilities: ['payments'] });
    const dispatcher = createDispatcher({
      tools: [refund, mockTool({ name: 'delete_account' })],
      chain: canonicalChain({ permissions }),
    });
    expect(await dispatcher.dispatch({ toolName: 'refund' }, { identity: { tenant: 'acme' } })).toMatchObject(
      { kind: 'result' },
    );
    const globex = await dispatcher.dispatch({ toolName: 'refund' }, { identity: { tenant: 'globex' } });
    expect(globex).toMatchObject({ kind: 'refused', gate: 'capabilities', code: 'CAPABILITY_DENIED' });
    expect(globex.content).toContain('payments are off for this tenant');
    const deleted = await dispatcher.dispatch({ toolName: 'delete_account' });
    expect(deleted).toMatchObject({ kind: 'refused', gate: 'permission' });
    expect(deleted.content).toContain('accounts are closed by staff only');
    expect(refund.callCount).toBe(1);
    expect(permissions.requests.map((r) => `${r.target}/${r.capability}`)).toEqual([
      'refund/tool_call',
      'refund/payments',
      'refund/tool_call',
      'refund/payments',
      'delete_account/tool_call',
    ]);
  });
});
