import { staticApprovers } from '@toolgate/inbox';

describe('staticApprovers', () => {
  const approvers = staticApprovers([
    { token: 'ana-token-0123456789', id: 'ana', tenants: ['acme'] },
    { token: 'ops-token-0123456789', id: 'ops', tenants: 'all' },
  ]);

  it('answers the approver a token belongs to, without its token', async () => {
    expect(await approvers('ana-token-0123456789')).toEqual({ id: 'ana', tenants: ['acme'] });
    expect(await approvers('ops-token-0123456789')).toEqual({ id: 'ops', tenants: 'all' });
  });

  it('answers undefined for an unknown, empty or near-miss token', async () => {
    for (const token of ['', 'ana-token-012345678', 'ana-token-01234567890', 'ANA-TOKEN-0123456789']) {
      expect(await approvers(token)).toBeUndefined();
    }
  });

  it('refuses a short token or an approver without an id or tenants at build', () => {
    expect(() => staticApprovers([{ token: 'short', id: 'a', tenants: [] }])).toThrow(/at least 16/);
    expect(() => staticApprovers([{ token: 'x'.repeat(20), id: '', tenants: [] }])).toThrow(/'id'/);
    expect(() => staticApprovers([{ token: 'x'.repeat(20), id: 'a', tenants: 'some' as never }])).toThrow(
      /'tenants'/,
    );
  });
});
