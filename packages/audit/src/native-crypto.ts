// Node's (and Bun's, Deno's) crypto, found without an import so a worker bundle names no node:
// module: a SHA-256 or HMAC computed here, in the calling thread, costs no trip to Web Crypto's
// thread pool, and an Ed25519 signature made here costs half the CPU of Web Crypto's and no thread
// hand-off. Where it is absent, the log takes the portable path (the JS SHA-256, Web Crypto's HMAC
// and Ed25519).

interface Hash {
  /** A string is hashed as its UTF-8 bytes. */
  update(data: Uint8Array | string): Hash;
  digest(encoding: 'hex'): string;
}

/** node:crypto's KeyObject, opaque here. */
export type NativeKey = object;

interface NodeCrypto {
  createHash(algorithm: 'sha256'): Hash;
  /** One-shot digest (Node 21.7+): no Hash object made per record. A string is hashed as its UTF-8 bytes. */
  hash?(algorithm: 'sha256', data: string | Uint8Array, encoding: 'hex' | 'binary'): string;
  createHmac(algorithm: 'sha256', key: Uint8Array | NativeKey): Hash;
  createSecretKey?(key: Uint8Array): NativeKey;
  /** Ed25519 signs with no digest named: `sign(null, data, key)`. */
  sign?(algorithm: null, data: Uint8Array, key: NativeKey): { toString(encoding: 'hex'): string };
  createPrivateKey?(
    key:
      | { key: Uint8Array; format: 'der'; type: 'pkcs8' }
      | { key: string; format: 'pem' }
      | { key: JsonWebKey; format: 'jwk' },
  ): NativeKey;
}

let found: NodeCrypto | null | undefined;

/** The runtime's node:crypto, or undefined (looked up once). */
export function nativeCrypto(): NodeCrypto | undefined {
  if (found === undefined) {
    const host: { getBuiltinModule?: (id: string) => unknown } | undefined = Reflect.get(
      globalThis,
      'process',
    );
    const crypto = host?.getBuiltinModule?.('node:crypto') as Partial<NodeCrypto> | undefined;
    found =
      typeof crypto?.createHash === 'function' && typeof crypto.createHmac === 'function'
        ? (crypto as NodeCrypto)
        : null;
  }
  return found ?? undefined;
}
