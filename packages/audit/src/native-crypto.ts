// Node's (and Bun's, Deno's) crypto, found without an import so a worker bundle names no node:
// module: a SHA-256 or HMAC computed here, in the calling thread, costs no trip to Web Crypto's
// thread pool. Where it is absent, the log takes the portable path (the JS SHA-256, Web Crypto's HMAC).

interface Hash {
  update(data: Uint8Array): Hash;
  digest(encoding: 'hex'): string;
}

interface NodeCrypto {
  createHash(algorithm: 'sha256'): Hash;
  createHmac(algorithm: 'sha256', key: Uint8Array): Hash;
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
