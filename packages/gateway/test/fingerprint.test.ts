// One fingerprint for reload reuse: equal settings compare equal whatever their key order, and any
// change of value or of which part it belongs to tells them apart.

import { fingerprint } from '../src/config/fingerprint';

describe('fingerprint', () => {
  it('is the same for the same settings written in another key order', () => {
    expect(fingerprint({ url: 'u', headers: { a: '1', b: '2' } }, { kind: 'memory' })).toBe(
      fingerprint({ headers: { b: '2', a: '1' }, url: 'u' }, { kind: 'memory' }),
    );
  });

  it('differs when a value, or the part it sits in, changes', () => {
    const base = fingerprint({ timeout: 60_000 }, undefined);
    expect(fingerprint({ timeout: 60_001 }, undefined)).not.toBe(base);
    expect(fingerprint(undefined, { timeout: 60_000 })).not.toBe(base);
    expect(fingerprint({ timeout: 60_000 }, 'review')).not.toBe(base);
  });

  it('counts an absent part like a missing one', () => {
    expect(fingerprint(undefined)).toBe(fingerprint(null));
  });
});
