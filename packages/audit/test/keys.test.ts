// Keys in the forms a deployment has them: a PEM file from openssl, a JWK, raw bytes, a Web Crypto key.
// Whatever the form, records signed with a private key verify with its public key in any form, and a
// key that cannot work is refused with the fix, never printed.

import { webcrypto } from 'node:crypto';
import {
  AuditConfigError,
  auditLog,
  auditPublicKey,
  generateAuditKeys,
  inMemoryAuditStore,
  verifyAuditLog,
  type AuditPublicKey,
  type AuditSigningKey,
} from '@toolgate/audit';
import { DIGEST_KEY, PRIVATE_PEM, PUBLIC_PEM, recordsOf } from '../../../test-support/audit-fixtures';

const subtle = webcrypto.subtle as unknown as SubtleCrypto;
const derOf = (pem: string) => new Uint8Array(Buffer.from(pem.replace(/-----[^-]+-----|\s/g, ''), 'base64'));
const PKCS8 = derOf(PRIVATE_PEM);
const SPKI = derOf(PUBLIC_PEM);

async function jwks() {
  const key = await subtle.importKey('pkcs8', PKCS8, { name: 'Ed25519' }, true, ['sign']);
  const privateJwk = await subtle.exportKey('jwk', key);
  return { privateJwk, publicJwk: { kty: 'OKP', crv: 'Ed25519', x: privateJwk.x } as JsonWebKey };
}

/** Signs two records with `signingKey` and answers the records. */
async function signedWith(signingKey: AuditSigningKey) {
  const store = inMemoryAuditStore();
  const audit = auditLog({ store, signingKey, digestKey: DIGEST_KEY });
  await audit.record({ kind: 'config.reloaded' });
  await audit.record({ kind: 'pin.accepted', tool: 'fs_write' });
  return recordsOf(store);
}

describe('signing keys', () => {
  it('signs with the key as PEM, JWK, JWK text, PKCS#8 bytes, the 32-byte seed, a CryptoKey or a CryptoKeyPair', async () => {
    const { privateJwk } = await jwks();
    const cryptoKey = await subtle.importKey('pkcs8', PKCS8, { name: 'Ed25519' }, false, ['sign']);
    const publicKey = await subtle.importKey('spki', SPKI, { name: 'Ed25519' }, true, ['verify']);
    const forms: AuditSigningKey[] = [
      PRIVATE_PEM,
      `\n  ${PRIVATE_PEM}  \n`,
      privateJwk,
      JSON.stringify(privateJwk),
      PKCS8,
      PKCS8.slice(-32),
      cryptoKey,
      { privateKey: cryptoKey, publicKey },
    ];
    for (const form of forms) {
      expect(await verifyAuditLog(await signedWith(form), PUBLIC_PEM)).toEqual({ ok: true, count: 2 });
    }
  });

  it.each([
    [PUBLIC_PEM, 'got a public key (BEGIN PUBLIC KEY); signing needs the private key'],
    [
      '-----BEGIN ENCRYPTED PRIVATE KEY-----\nMIGbMFcGCSqGSIb3DQEFDTBKMCkGCSqG\n-----END ENCRYPTED PRIVATE KEY-----',
      'the PEM key is encrypted',
    ],
    [
      '-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUA\n-----END OPENSSH PRIVATE KEY-----',
      'got another kind of PEM block',
    ],
    ['{"kty":"OKP"', 'starts like a JWK but is not valid JSON'],
    [{ kty: 'EC', crv: 'P-256', x: 'a', y: 'b', d: 'c' }, 'the JWK is not an Ed25519 key'],
    [
      { kty: 'OKP', crv: 'Ed25519', x: 'a' },
      "the JWK is a public key; signing needs the private key (with 'd')",
    ],
    [12345, 'got number'],
    [null, 'got null'],
  ])('refuses a signing key that cannot sign, where the log is built (%#)', (signingKey, message) => {
    const build = () =>
      auditLog({ store: inMemoryAuditStore(), signingKey: signingKey as never, digestKey: DIGEST_KEY });
    expect(build).toThrow(AuditConfigError);
    expect(build).toThrow(message);
  });

  it('refuses a CryptoKey of another algorithm, or without the sign usage', async () => {
    const ecdsa = await subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, false, ['sign', 'verify']);
    const verifyOnly = await subtle.importKey('spki', SPKI, { name: 'Ed25519' }, false, ['verify']);
    const build = (signingKey: CryptoKey) => () =>
      auditLog({ store: inMemoryAuditStore(), signingKey, digestKey: DIGEST_KEY });
    expect(build(ecdsa.privateKey)).toThrow('the CryptoKey is ECDSA, not Ed25519');
    expect(build(verifyOnly)).toThrow("must be an Ed25519 private key with the 'sign' usage");
  });

  it('reports a PEM that is well formed but holds no Ed25519 key when the log gets ready, without the key', async () => {
    const rsa = (await subtle.generateKey(
      {
        name: 'RSASSA-PKCS1-v1_5',
        modulusLength: 1024,
        publicExponent: new Uint8Array([1, 0, 1]),
        hash: 'SHA-256',
      },
      true,
      ['sign', 'verify'],
    )) as CryptoKeyPair;
    const der = Buffer.from(await subtle.exportKey('pkcs8', rsa.privateKey)).toString('base64');
    const pem = `-----BEGIN PRIVATE KEY-----\n${der}\n-----END PRIVATE KEY-----\n`;
    const audit = auditLog({ store: inMemoryAuditStore(), signingKey: pem, digestKey: DIGEST_KEY });
    const ready = audit.ready();
    await expect(ready).rejects.toThrow(
      "auditLog: 'signingKey': the key is not a valid Ed25519 key in the form given.",
    );
    await ready.catch((error: Error) => expect(error.message).not.toContain(der.slice(0, 40)));
  });
});

describe('public keys', () => {
  it('verifies with the key as SPKI PEM, JWK, JWK text, SPKI bytes, the 32 raw bytes, a CryptoKey, a pair, or the private key', async () => {
    const records = await signedWith(PRIVATE_PEM);
    const { publicJwk, privateJwk } = await jwks();
    const cryptoKey = await subtle.importKey('spki', SPKI, { name: 'Ed25519' }, false, ['verify']);
    const privateKey = await subtle.importKey('pkcs8', PKCS8, { name: 'Ed25519' }, true, ['sign']);
    const forms: AuditPublicKey[] = [
      PUBLIC_PEM,
      publicJwk,
      JSON.stringify(publicJwk),
      SPKI,
      SPKI.slice(-32),
      cryptoKey,
      { privateKey, publicKey: cryptoKey },
      PRIVATE_PEM,
      PKCS8,
      privateJwk,
      privateKey,
    ];
    for (const form of forms) expect(await verifyAuditLog(records, form)).toEqual({ ok: true, count: 2 });
  });

  it('auditPublicKey() gives the SPKI PEM of a private key in any form, as openssl prints it', async () => {
    const { privateJwk, publicJwk } = await jwks();
    for (const key of [PRIVATE_PEM, privateJwk, PKCS8, PUBLIC_PEM, publicJwk, SPKI.slice(-32)]) {
      expect(await auditPublicKey(key)).toBe(PUBLIC_PEM);
    }
  });

  it('cannot derive the public key of a private CryptoKey that is not extractable, and says what to pass', async () => {
    const hidden = await subtle.importKey('pkcs8', PKCS8, { name: 'Ed25519' }, false, ['sign']);
    await expect(auditPublicKey(hidden)).rejects.toThrow('pass the public key (or the CryptoKeyPair)');
  });

  it('generateAuditKeys() makes a pair that signs and verifies', async () => {
    const keys = await generateAuditKeys();
    expect(keys.privateKey).toMatch(
      /^-----BEGIN PRIVATE KEY-----\n[A-Za-z0-9+/=\n]+-----END PRIVATE KEY-----\n$/,
    );
    expect(await auditPublicKey(keys.privateKey)).toBe(keys.publicKey);
    expect(await verifyAuditLog(await signedWith(keys.privateKey), keys.publicKey)).toEqual({
      ok: true,
      count: 2,
    });
    expect(await verifyAuditLog(await signedWith(keys.privateKey), PUBLIC_PEM)).toMatchObject({
      ok: false,
      seq: 1,
    });
  });
});

describe('digest keys', () => {
  it('takes a string or bytes of 32 bytes or more, or an HMAC CryptoKey, and refuses anything else', async () => {
    const hmac = await subtle.importKey(
      'raw',
      new Uint8Array(32).fill(7),
      { name: 'HMAC', hash: 'SHA-256' },
      false,
      ['sign'],
    );
    const aes = await subtle.generateKey({ name: 'AES-GCM', length: 256 }, false, ['encrypt']);
    const build = (digestKey: unknown) => () =>
      auditLog({ store: inMemoryAuditStore(), signingKey: PRIVATE_PEM, digestKey: digestKey as never });
    expect(build(new Uint8Array(32))).not.toThrow();
    expect(build(hmac)).not.toThrow();
    expect(build(new Uint8Array(31))).toThrow('the key has 31 bytes; use at least 32 random bytes');
    expect(build(aes)).toThrow("the CryptoKey must be an HMAC key with the 'sign' usage");
    expect(build({ key: 'x' })).toThrow('expected a string or bytes of at least 32 bytes');
    const a = auditLog({
      store: inMemoryAuditStore(),
      signingKey: PRIVATE_PEM,
      digestKey: new Uint8Array(32).fill(7),
    });
    const b = auditLog({ store: inMemoryAuditStore(), signingKey: PRIVATE_PEM, digestKey: hmac });
    expect(await a.digest({ amount: 500 })).toBe(await b.digest({ amount: 500 }));
  });
});
