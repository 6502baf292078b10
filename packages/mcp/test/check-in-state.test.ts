// mcpServe's own check-in states, unit by unit: the spent set is bounded without forgetting a state
// that could still be used, and a state opens only for the call, and under the key, it was sealed for.

import type { CheckInRequest } from '@toolgate/core';
import { checkInStates } from '../src/check-in-state';
import { upstreamStates } from '../src/upstream-state';

const SECRET = 'check-in-state-secret-0123456789abcdef';
const call = {
  identity: { tenant: 'acme', principal: 'alice' },
  toolName: 'refund',
  args: { orderId: 'A-1' },
};
const checkIn = (expiresAt: number) =>
  ({
    id: `chk_${expiresAt}`,
    chainId: 'chain_1',
    argsDigest: 'digest',
    expiresAt: new Date(expiresAt).toISOString(),
  }) as CheckInRequest;

describe('check-in states', () => {
  it('opens once for its call, with the claims it was sealed with', () => {
    const states = checkInStates(SECRET);
    const asked = checkIn(Date.now() + 60_000);
    const token = states.seal(call, asked, 2);
    expect(states.read(token, call)).toEqual({
      ok: true,
      claims: { checkInId: asked.id, chainId: 'chain_1', argsDigest: 'digest', round: 2 },
    });
    expect(states.read(token, call)).toEqual({ ok: false, problem: 'replayed' });
  });

  it('does not open under another secret, nor an upstream state relabelled as one', () => {
    const token = checkInStates(SECRET).seal(call, checkIn(Date.now() + 60_000), 0);
    expect(checkInStates('another-secret-0123456789abcdef-xyz').read(token, call)).toEqual({
      ok: false,
      problem: 'seal',
    });
    // Same secret, another use: the keys differ, so it does not even decrypt.
    const upstream = upstreamStates(SECRET).seal(
      { identity: call.identity, method: 'tools/call', target: 'refund', upstream: '', args: call.args },
      { keys: ['approval'] },
    );
    expect(checkInStates(SECRET).read(`c1.${upstream.slice('u1.'.length)}`, call)).toEqual({
      ok: false,
      problem: 'seal',
    });
  });

  it('when full of unexpired states, refuses a new one rather than forget one; takes it once some expired', () => {
    const states = checkInStates(SECRET, { maxSpent: 2 });
    const now = Date.now();
    const soon = now + 1_000;
    const later = now + 60_000;
    const [a, b, c] = [
      states.seal(call, checkIn(soon), 0),
      states.seal(call, checkIn(later), 0),
      states.seal(call, checkIn(later), 0),
    ];
    expect(states.read(a, call, now).ok).toBe(true);
    expect(states.read(b, call, now).ok).toBe(true);
    expect(states.read(c, call, now)).toEqual({ ok: false, problem: 'full' });
    // b is still unexpired: it stays spent however full the set is.
    expect(states.read(b, call, now + 2_000)).toEqual({ ok: false, problem: 'replayed' });
    // a expired, so its room is taken by c.
    expect(states.read(c, call, now + 2_000).ok).toBe(true);
  });
});
