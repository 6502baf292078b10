import { SpentNonces } from '@toolgate/core';

describe('SpentNonces', () => {
  it('takes a nonce once while it lasts, and again only after it expired', () => {
    const spent = new SpentNonces();
    expect(spent.spend('n1', 100, 0)).toBe('taken');
    expect(spent.spend('n1', 100, 99)).toBe('replayed');
    expect(spent.spend('n1', 200, 100)).toBe('taken');
  });

  it('never takes a nonce that is not a non-empty string', () => {
    const spent = new SpentNonces();
    for (const nonce of ['', undefined, 42, null]) expect(spent.spend(nonce, 100, 0)).toBe('replayed');
  });

  it('when full of unexpired nonces takes no other, and makes room as they expire', () => {
    const spent = new SpentNonces(2);
    expect(spent.spend('a', 10, 0)).toBe('taken');
    expect(spent.spend('b', 20, 0)).toBe('taken');
    expect(spent.spend('c', 30, 5)).toBe('full');
    // Full is not forgetting: both kept nonces are still spent.
    expect(spent.spend('a', 10, 5)).toBe('replayed');
    expect(spent.spend('b', 20, 5)).toBe('replayed');
    expect(spent.spend('c', 30, 10)).toBe('taken');
    expect(spent.spend('b', 20, 10)).toBe('replayed');
  });

  it('keeps every unexpired nonce through the sweeps of a large record', () => {
    const spent = new SpentNonces();
    // Half expire at 10, half last: the sweeps past 1,024 and 2,048 entries drop only the first.
    for (let i = 0; i < 5_000; i++) expect(spent.spend(`n${i}`, i % 2 === 0 ? 10 : 1_000, 0)).toBe('taken');
    for (let i = 5_000; i < 6_000; i++) expect(spent.spend(`n${i}`, 1_000, 20)).toBe('taken');
    for (let i = 1; i < 6_000; i += 2) expect(spent.spend(`n${i}`, 1_000, 30)).toBe('replayed');
  });
});
