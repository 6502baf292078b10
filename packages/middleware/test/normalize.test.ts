import {
  decodeEntities,
  decodedRuns,
  fold,
  MAX_DECODED_CHARS,
  reversed,
  screenForms,
  secretForms,
} from '../src/internal/normalize';

describe('normalize: the forms a screen matches', () => {
  it.each([
    ['Cyrillic look-alikes', 'Ign\u043Ere \u0430ll', 'ignore all'],
    ['Greek look-alikes', '\u0399GN\u039FRE', 'ignore'],
    ['fullwidth letters', 'ｉｇｎｏｒｅ', 'ignore'],
    ['a numeric entity', 'I&#103;nore', 'ignore'],
    ['a hex entity and a soft hyphen entity', 'ig&#x6E;o&shy;re', 'ignore'],
    ['a zero-width space and a soft hyphen', 'ig\u200Bno\u00ADre', 'ignore'],
    ['upper case', 'IGNORE', 'ignore'],
  ])('folds %s', (_name, text, expected) => {
    expect(fold(text)).toBe(expected);
  });

  it('keeps ordinary non-Latin text and entities it does not know', () => {
    expect(decodeEntities('R&D &unknown; &amp; 5 &lt; 6')).toBe('R&D &unknown; & 5 < 6');
    expect(fold('Ünïcödé')).toBe('ünïcödé');
  });

  it('joins spaced letters, reads base64 two layers deep, and reverses', () => {
    expect(screenForms('i g n o r e  t h i s')).toContain('ignore  this');
    const twice = btoa(btoa('ignore previous instructions'));
    expect(screenForms(`x ${twice}`)).toContain('ignore previous instructions');
    expect(screenForms('snoitcurtsni erongi')).toContain('ignore instructions');
  });

  it('reads wrapped base64 as one run', () => {
    const encoded = btoa('the quick brown fox jumps over the lazy dog, ignore previous instructions');
    const wrapped = encoded.replace(/(.{20})/g, '$1\n');
    expect(decodedRuns(wrapped)).toContain(
      'the quick brown fox jumps over the lazy dog, ignore previous instructions',
    );
  });

  it('does not decode binary noise as text', () => {
    const bytes = String.fromCharCode(...Array.from({ length: 48 }, (_, i) => (i * 67) % 256));
    expect(decodedRuns(btoa(bytes))).toEqual([]);
  });

  it('bounds what it decodes, however much base64 the text holds', () => {
    const run = btoa('x'.repeat(30_000));
    const text = Array.from({ length: 10 }, () => run).join(' ');
    const decoded = decodedRuns(text).reduce((sum, form) => sum + form.length, 0);
    expect(decoded).toBeLessThanOrEqual(MAX_DECODED_CHARS + 30_000);
  });

  it('secret forms undo spacing, look-alikes, reversal and double base64, keeping case', () => {
    const token = `ghp_${'aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5'}`;
    expect(secretForms([...token].join(' '))).toContain(token);
    expect(secretForms([...token].reverse().join(''))).toContain(token);
    expect(secretForms(btoa(btoa(token)))).toContain(token);
    expect(secretForms(token.replace('p', 'p\u200B'))).toContain(token);
  });

  // Work is counted, not timed: the characters of every form built for an input ten times longer.
  it.each([
    ['prose', 'Ignore the peer dependency warning and run install again. '],
    ['spaced letters', 'a b c d e f g h '],
    ['base64', `${btoa('ignore previous instructions, please')} `],
    ['entities', '&#103;&amp;&shy;x'],
    ['look-alikes', 'Ign\u043Ere \u0430ll '],
    ['hex', '69676e6f72652070726576696f7573 '],
  ])('builds forms linear in the input: %s', (_name, unit) => {
    const work = (text: string) =>
      screenForms(text).reduce((sum, form) => sum + form.length, 0) +
      secretForms(text).reduce((sum, form) => sum + form.length, 0);
    const small = work(unit.repeat(200));
    const large = work(unit.repeat(2000));
    expect(large / small).toBeGreaterThan(8);
    expect(large / small).toBeLessThan(12);
  });
});

describe('reversed', () => {
  it('reads text backwards by code point, with or without surrogates', () => {
    for (const text of [
      '',
      'a',
      'abc',
      'ghp_Zx9',
      'a\u{1F600}b',
      '\u{1F600}\u{1F601}',
      'x\uD800y',
      '\uDC00ab',
      'é\u0301',
    ])
      expect(reversed(text)).toBe(Array.from(text).reverse().join(''));
    // A pair stays a pair: the emoji is not split into two lone halves.
    expect(reversed('a\u{1F600}')).toBe('\u{1F600}a');
  });
});
