// The in-thread SHA-256 that chains records agrees with Web Crypto's on the FIPS 180-4 examples and on
// random inputs of every length around the padding boundaries.

import fc from 'fast-check';
import { sha256Hex } from '../src/sha256';

const webCrypto = async (bytes: Uint8Array) =>
  Buffer.from(await crypto.subtle.digest('SHA-256', new Uint8Array(bytes))).toString('hex');
const text = (s: string) => new TextEncoder().encode(s);

describe('sha256Hex()', () => {
  it.each([
    ['', 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855'],
    ['abc', 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad'],
    [
      'abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq',
      '248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1',
    ],
    [
      'abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu',
      'cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1',
    ],
  ])('hashes the FIPS 180-4 example %#', (message, hex) => {
    expect(sha256Hex(text(message))).toBe(hex);
  });

  it('hashes a million a’s', () => {
    expect(sha256Hex(new Uint8Array(1_000_000).fill(0x61))).toBe(
      'cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0',
    );
  });

  it('agrees with Web Crypto on random bytes of every length from 0 to 300', async () => {
    for (let length = 0; length <= 300; length++) {
      const bytes = crypto.getRandomValues(new Uint8Array(length));
      expect(sha256Hex(bytes)).toBe(await webCrypto(bytes));
    }
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ maxLength: 5_000 }), async (bytes) => {
        expect(sha256Hex(bytes)).toBe(await webCrypto(bytes));
      }),
      { numRuns: 300 },
    );
  });
});
