// The one-shot HMAC the log digests args and results with agrees with node:crypto's createHmac and
// with Web Crypto's HMAC (what verification and the portable path use): on RFC 4231's vectors, and on
// random ASCII keys up to one block and random texts, non-ASCII and empty ones included. A key it
// cannot take (a byte of 0x80 or more, longer than a block) is left to createHmac, with equal digests.

import { createHmac, hash } from 'node:crypto';
import fc from 'fast-check';
import { oneShotHmac, syncTextDigester } from '../src/record';

const bytes = (text: string) => new TextEncoder().encode(text);
const reference = (key: Uint8Array, text: string) => createHmac('sha256', key).update(text).digest('hex');
const webCrypto = async (key: Uint8Array, text: string) => {
  const imported = await crypto.subtle.importKey(
    'raw',
    new Uint8Array(key),
    { name: 'HMAC', hash: 'SHA-256' },
    false,
    ['sign'],
  );
  return Buffer.from(await crypto.subtle.sign('HMAC', imported, bytes(text))).toString('hex');
};
const asciiKey = fc.uint8Array({ minLength: 0, maxLength: 64, max: 0x7f });

describe('oneShotHmac()', () => {
  it.each([
    [
      new Uint8Array(20).fill(0x0b),
      'Hi There',
      'b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7',
    ],
    [
      bytes('Jefe'),
      'what do ya want for nothing?',
      '5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843',
    ],
  ])('computes RFC 4231 test case %#', (key, text, hex) => {
    expect(oneShotHmac(hash, key)!(text)).toBe(hex);
  });

  it('agrees with createHmac and Web Crypto on random ASCII keys of up to a block and random texts', async () => {
    await fc.assert(
      fc.asyncProperty(asciiKey, fc.string({ unit: 'binary', maxLength: 300 }), async (key, text) => {
        const digest = oneShotHmac(hash, key)!(text);
        expect(digest).toBe(reference(key, text));
        // Web Crypto refuses an empty HMAC key.
        if (key.length > 0) expect(digest).toBe(await webCrypto(key, text));
      }),
      { numRuns: 300 },
    );
  });

  it('gives each text its own digest when one digester digests many in a row (no state carried over)', () => {
    const key = bytes('a-digest-key-0123456789abcdef0123456789');
    const digester = oneShotHmac(hash, key)!;
    const texts = ['{"a":1}', '', '{"a":2}', 'é'.repeat(200), '{"a":1}'];
    expect(texts.map(digester)).toEqual(texts.map((text) => reference(key, text)));
  });

  it('declines a key with a byte of 0x80 or more, or longer than a block', () => {
    expect(oneShotHmac(hash, bytes('clé-secrète-0123456789abcdef0123'))).toBeUndefined();
    expect(oneShotHmac(hash, new Uint8Array(65).fill(0x41))).toBeUndefined();
    expect(oneShotHmac(hash, new Uint8Array(64).fill(0x41))).toBeDefined();
  });
});

describe('syncTextDigester()', () => {
  it.each([
    ['an ASCII key of one block (the derived key)', bytes('f'.repeat(64))],
    ['a non-ASCII key', bytes('clé-secrète-0123456789abcdef0123')],
    ['a key longer than a block', bytes('k'.repeat(100))],
  ])('digests as HMAC-SHA-256 with %s', async (_, key) => {
    const digester = syncTextDigester(key)!;
    for (const text of ['{"order":"A-1"}', '', '{"note":"ünïcode ✓"}']) {
      expect(digester(text)).toBe(reference(key, text));
      expect(digester(text)).toBe(await webCrypto(key, text));
    }
  });
});
