import { isArtifactRef, newArtifactRef, newId, randomBase62 } from '@toolgate/core';

describe('ids', () => {
  it('randomBase62 returns exactly the asked number of base62 characters', () => {
    for (const length of [1, 7, 22, 100])
      expect(randomBase62(length)).toMatch(new RegExp(`^[0-9A-Za-z]{${length}}$`));
    expect(randomBase62(0)).toBe('');
  });

  it('draws every base62 character over many draws', () => {
    expect(new Set(randomBase62(5000)).size).toBe(62);
  });

  it('newArtifactRef is art_ and 22 base62 characters, and refs do not repeat', () => {
    const refs = Array.from({ length: 1000 }, newArtifactRef);
    for (const ref of refs) expect(ref).toMatch(/^art_[0-9A-Za-z]{22}$/);
    expect(new Set(refs).size).toBe(1000);
  });

  it('isArtifactRef accepts only the ref shape', () => {
    expect(isArtifactRef(newArtifactRef())).toBe(true);
    expect(isArtifactRef('art_short')).toBe(false);
    expect(isArtifactRef(`art_${'a'.repeat(21)}-`)).toBe(false);
    expect(isArtifactRef(` ${newArtifactRef()}`)).toBe(false);
    expect(isArtifactRef(42)).toBe(false);
  });

  it('newId puts a readable prefix before 20 random characters', () => {
    expect(newId('chk')).toMatch(/^chk_[0-9A-Za-z]{20}$/);
    expect(newId('call')).not.toBe(newId('call'));
  });

  it('randomBase62 draws exactly the length asked, long ones too, and nothing for none', () => {
    expect(randomBase62(1000)).toMatch(/^[0-9A-Za-z]{1000}$/);
    expect(randomBase62(257)).toHaveLength(257);
    expect(randomBase62(0)).toBe('');
    expect(randomBase62(-3)).toBe('');
  });

  it('ids across many pools are well formed and never repeat', () => {
    // 20,000 ids draw 400,000 characters: about a hundred pools refilled along the way.
    const ids = Array.from({ length: 20_000 }, () => newId('call'));
    for (const id of ids) expect(id).toMatch(/^call_[0-9A-Za-z]{20}$/);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('draws every character equally often, ids and other lengths alike (no modulo bias)', () => {
    const counts = new Map<string, number>();
    const count = (text: string) => {
      for (const char of text) counts.set(char, (counts.get(char) ?? 0) + 1);
    };
    // About 460,000 characters: 7,400 expected each, a standard deviation of about 85. A byte taken
    // modulo 62 without dropping 248–255 makes eight characters a quarter more likely.
    for (let i = 0; i < 15_500; i++) count(newId('x').slice(2));
    for (let i = 0; i < 1_000; i++) count(randomBase62(i % 2 === 0 ? 300 : 1));
    const drawn = [...counts.values()].reduce((a, b) => a + b, 0);
    expect(counts.size).toBe(62);
    for (const n of counts.values()) {
      expect(n).toBeGreaterThan((drawn / 62) * 0.94);
      expect(n).toBeLessThan((drawn / 62) * 1.06);
    }
  });
});
