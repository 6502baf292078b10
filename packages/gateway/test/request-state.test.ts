// The gateway's requestState as an attacker would try it: forged, edited, expired, spent, another
// caller's, another tool's. Each is refused, and a refusal never spends the owner's state.

import type { CheckInRequest } from '@toolgate/core';
import { SpentNonces } from '@toolgate/core';
import { mintState, readState } from '../src/request-state';

const KEY = 'request-state-test-key-0123456789abcdef-0123';
const NOW = Date.parse('2026-12-04T12:00:00Z');
const identity = { tenant: 'acme', principal: 'support-bot' };

const request = {
  id: 'chk_1',
  asker: 'policy',
  toolName: 'shop_refund',
  toolCallId: 'mcp_1',
  args: { amount: 300 },
  review: { amount: 300 },
  argsDigest: 'digest-1',
  chainId: 'chain-1',
  question: 'refund?',
  identity,
  createdAt: new Date(NOW).toISOString(),
  expiresAt: new Date(NOW + 60_000).toISOString(),
  signature: 'sig',
} as CheckInRequest;

const caller = { identity, toolName: 'shop_refund' };

describe('requestState', () => {
  it('reads back the claims of a state it minted, once', () => {
    const spent = new SpentNonces();
    const token = mintState(KEY, request, 'form');
    const read = readState(KEY, token, caller, spent, NOW);
    expect(read).toMatchObject({
      ok: true,
      state: { checkInId: 'chk_1', tenant: 'acme', principal: 'support-bot', mode: 'form' },
    });
    expect(readState(KEY, token, caller, spent, NOW)).toEqual({ ok: false, problem: 'replayed' });
    // Each mint is its own state.
    expect(readState(KEY, mintState(KEY, request, 'form'), caller, spent, NOW).ok).toBe(true);
  });

  it('refuses an edited payload, an edited mode, another key and garbage', () => {
    const spent = new SpentNonces();
    const token = mintState(KEY, request, 'url');
    const [version, payload, signature] = token.split('.') as [string, string, string];
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString()) as Record<string, unknown>;
    const edited = Buffer.from(JSON.stringify({ ...claims, mode: 'form' })).toString('base64url');
    expect(readState(KEY, `${version}.${edited}.${signature}`, caller, spent, NOW)).toEqual({
      ok: false,
      problem: 'signature',
    });
    expect(readState(`${KEY}x`, token, caller, spent, NOW)).toEqual({ ok: false, problem: 'signature' });
    for (const junk of ['', 'v1..', 'v2.a.b', 'x'.repeat(5000), `${version}.${payload}`])
      expect(readState(KEY, junk, caller, spent, NOW).ok).toBe(false);
    // None of that spent the real one.
    expect(readState(KEY, token, caller, spent, NOW).ok).toBe(true);
  });

  it('refuses a state once its check-in expired', () => {
    const token = mintState(KEY, request, 'form');
    expect(readState(KEY, token, caller, new SpentNonces(), NOW + 60_000)).toEqual({
      ok: false,
      problem: 'expired',
    });
  });

  it("refuses another principal's, another tenant's and another tool's use, without spending it", () => {
    const spent = new SpentNonces();
    const token = mintState(KEY, request, 'form');
    const as = (tenant: string, principal: string) => ({
      identity: { tenant, principal },
      toolName: 'shop_refund',
    });
    expect(readState(KEY, token, as('acme', 'eve'), spent, NOW)).toEqual({ ok: false, problem: 'caller' });
    expect(readState(KEY, token, as('globex', 'support-bot'), spent, NOW)).toEqual({
      ok: false,
      problem: 'caller',
    });
    expect(readState(KEY, token, { identity, toolName: 'shop_echo' }, spent, NOW)).toEqual({
      ok: false,
      problem: 'tool',
    });
    expect(readState(KEY, token, { identity: undefined, toolName: 'shop_refund' }, spent, NOW).ok).toBe(
      false,
    );
    expect(readState(KEY, token, caller, spent, NOW).ok).toBe(true);
  });
});
