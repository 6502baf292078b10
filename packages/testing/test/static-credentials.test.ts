import { createDispatcher } from '@toolgate/core';
import { canonicalChain } from '@toolgate/middleware';
import { mockTool, staticCredentials } from '@toolgate/testing';

const signal = new AbortController().signal;

describe('staticCredentials', () => {
  it('resolves a service to its secret with the need’s kind', () => {
    const provider = staticCredentials({ billing: 'sk_test_1' });
    expect(provider.resolve({ kind: 'api_key', service: 'billing' }, { toolName: 'charge', signal })).toEqual(
      { kind: 'api_key', value: 'sk_test_1' },
    );
  });

  it('prefers a kind:service key, and passes a full credential through', () => {
    const provider = staticCredentials({
      github: 'plain',
      'oauth2:github': { value: { access_token: 'gho_1' }, expiresAt: '2031-01-01T00:00:00Z' },
    });
    expect(provider.resolve({ kind: 'oauth2', service: 'github' }, { toolName: 't', signal })).toEqual({
      kind: 'oauth2',
      value: { access_token: 'gho_1' },
      expiresAt: '2031-01-01T00:00:00Z',
    });
    expect(provider.resolve({ kind: 'api_key', service: 'github' }, { toolName: 't', signal }).value).toBe(
      'plain',
    );
  });

  it('throws for an unknown service, and records every request', () => {
    const provider = staticCredentials({});
    expect(() =>
      provider.resolve(
        { kind: 'api_key', service: 'payroll' },
        { toolName: 'pay', toolSource: 'hr', identity: { tenant: 'acme' }, signal },
      ),
    ).toThrow("no credential for 'api_key' 'payroll'");
    expect(provider.requests).toEqual([
      {
        need: { kind: 'api_key', service: 'payroll' },
        toolName: 'pay',
        toolSource: 'hr',
        identity: { tenant: 'acme' },
      },
    ]);
  });

  it('makes the credentials gate refuse an unknown service without leaking its message', async () => {
    const tool = mockTool({ name: 'pay', needs: { kind: 'api_key', service: 'payroll' } });
    const dispatcher = createDispatcher({
      tools: [tool],
      chain: canonicalChain({ credentials: staticCredentials({ billing: 'sk' }) }),
    });
    const outcome = await dispatcher.dispatch({ toolName: 'pay' });
    expect(outcome).toMatchObject({ kind: 'refused', gate: 'credentials', code: 'CREDENTIAL_FAILED' });
    expect(outcome.content).not.toContain('staticCredentials');
    expect(tool.callCount).toBe(0);
  });
});
