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
});
