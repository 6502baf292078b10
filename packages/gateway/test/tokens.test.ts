// Issue 32, finding 6 and 8 (tokens), and issue 35's cache of verified JWTs: a JWT needs `exp` and a
// bounded lifetime; a JWKS is read over https (or loopback http) only; a static token has at least
// 32 characters; a cached verification never outlives the token nor admits a token that differs in
// any byte from one the verifier accepted.

import { ConfigError, createAuthenticator, parseConfig } from '@toolgate/gateway';
import { VerifiedTokens } from '../src/verified-tokens';
import { exportJWK, generateKeyPair, SignJWT, type JWTPayload } from 'jose';
import { tempDir, type TempDir } from './helpers';

const tenants = ['acme'];

describe('JWTs', () => {
  let dir: TempDir;
  let sign: (claims: JWTPayload, configure?: (jwt: SignJWT) => SignJWT) => Promise<string>;

  beforeAll(async () => {
    dir = tempDir();
    const { publicKey, privateKey } = await generateKeyPair('ES256');
    dir.write(
      'jwks.json',
      JSON.stringify({ keys: [{ ...(await exportJWK(publicKey)), kid: 'k1', alg: 'ES256' }] }),
    );
    sign = (claims, configure = (jwt) => jwt.setIssuedAt().setExpirationTime('5m')) =>
      configure(
        new SignJWT({ tenant: 'acme', sub: 'bo', ...claims })
          .setProtectedHeader({ alg: 'ES256', kid: 'k1' })
          .setIssuer('https://id.example')
          .setAudience('toolgate'),
      ).sign(privateKey);
  });
  afterAll(() => dir.remove());

  const authenticator = (extra: { maxLifetime?: string } = {}, now?: () => number) =>
    createAuthenticator(
      { jwt: { issuer: 'https://id.example', audience: 'toolgate', jwks: './jwks.json', ...extra } },
      { tenants, baseDir: dir.path, ...(now !== undefined ? { now } : {}) },
    );

  it('refuses a token without exp, which would never expire', async () => {
    const token = await sign({}, (jwt) => jwt.setIssuedAt());
    expect(await authenticator().authenticate(`Bearer ${token}`)).toEqual({ ok: false, why: 'invalid' });
  });

  it('refuses a token that lives longer than auth.jwt.maxLifetime (default 24h), with or without iat', async () => {
    const long = await sign({}, (jwt) => jwt.setIssuedAt().setExpirationTime('25h'));
    const longNoIat = await sign({}, (jwt) => jwt.setExpirationTime('25h'));
    const hour = await sign({}, (jwt) => jwt.setIssuedAt().setExpirationTime('1h'));
    expect((await authenticator().authenticate(`Bearer ${long}`)).ok).toBe(false);
    expect((await authenticator().authenticate(`Bearer ${longNoIat}`)).ok).toBe(false);
    expect((await authenticator().authenticate(`Bearer ${hour}`)).ok).toBe(true);
    expect((await authenticator({ maxLifetime: '30m' }).authenticate(`Bearer ${hour}`)).ok).toBe(false);
    // A backdated iat does not stretch the window: exp - iat is what counts.
    const backdated = await sign({}, (jwt) => jwt.setIssuedAt('-2h').setExpirationTime('1h'));
    expect((await authenticator({ maxLifetime: '2h' }).authenticate(`Bearer ${backdated}`)).ok).toBe(false);
  });

  it('remembers a verified token until its exp, and no longer', async () => {
    let now = Date.now();
    const auth = authenticator({}, () => now);
    const token = await sign({}, (jwt) => jwt.setIssuedAt().setExpirationTime(Math.floor(now / 1000) + 60));
    expect((await auth.authenticate(`Bearer ${token}`)).ok).toBe(true);
    now += 30_000;
    expect((await auth.authenticate(`Bearer ${token}`)).ok).toBe(true);
    now += 31_000;
    expect(await auth.authenticate(`Bearer ${token}`)).toEqual({ ok: false, why: 'invalid' });
  });

  it('never lets a cached token vouch for another: a changed signature or payload is verified afresh', async () => {
    const auth = authenticator();
    const good = await sign({});
    expect((await auth.authenticate(`Bearer ${good}`)).ok).toBe(true);
    const [header, payload, signature] = good.split('.') as [string, string, string];
    const flipped = `${signature.slice(0, -2)}${signature.endsWith('AA') ? 'BB' : 'AA'}`;
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString()) as Record<string, unknown>;
    const edited = Buffer.from(JSON.stringify({ ...claims, sub: 'admin' })).toString('base64url');
    for (const token of [
      `${header}.${payload}.${flipped}`,
      `${header}.${edited}.${signature}`,
      `${good}x`,
      good.slice(0, -1),
    ])
      expect(await auth.authenticate(`Bearer ${token}`)).toEqual({ ok: false, why: 'invalid' });
    expect(await auth.authenticate(`Bearer ${good}`)).toMatchObject({
      ok: true,
      identity: { principal: 'bo' },
    });
  });

  it('refuses an http:// JWKS (loopback excepted), naming no part of the URL', () => {
    const make = (jwks: string) => () =>
      createAuthenticator({ jwt: { issuer: 'i', audience: 'a', jwks } }, { tenants, baseDir: dir.path });
    expect(make('http://keys.example/secret-path/jwks.json')).toThrow(/http:\/\/ URL/);
    expect(make('http://keys.example/secret-path/jwks.json')).not.toThrow(/secret-path/);
    expect(make('ftp://keys.example/jwks.json')).toThrow(/scheme/);
    expect(make('http://127.0.0.1:9/jwks.json')).not.toThrow();
    expect(make('http://[::1]:9/jwks.json')).not.toThrow();
    expect(make('https://keys.example/jwks.json')).not.toThrow();
    expect(make('./missing-secret-name.json')).toThrow(
      'auth.jwt.jwks: the file is not a readable JSON Web Key Set.',
    );
  });
});

describe('the verified-token cache', () => {
  it('forgets an entry at its expiry or at its maximum age, whichever is first, and keeps at most max', () => {
    let now = 1_000_000;
    const cache = new VerifiedTokens({ max: 2, maxAgeMs: 1000, now: () => now });
    const who = { tenant: 'acme', principal: 'bo' };
    cache.set('a', who, now + 10_000);
    cache.set('b', who, now + 500);
    cache.set('c', who, now - 1);
    expect(cache.get('c')).toBeUndefined();
    expect(cache.get('a')).toBe(who);
    now += 600;
    expect(cache.get('b')).toBeUndefined();
    now += 500;
    expect(cache.get('a')).toBeUndefined();
    cache.set('x', who, now + 5000);
    cache.set('y', who, now + 5000);
    cache.set('z', who, now + 5000);
    expect(cache.size).toBe(2);
    expect(cache.get('x')).toBeUndefined();
    expect(cache.get('z')).toBe(who);
  });
});

describe('configuration', () => {
  const base = (auth: string) => `${auth}
upstreams: { u: { command: [node, x.mjs] } }
tenants: { acme: { upstreams: [u] } }
`;
  const issues = (text: string, env: Record<string, string> = {}) => {
    try {
      parseConfig(text, { env, file: '/cfg/toolgate.yaml' });
      return [];
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      return error.issues.map(
        (issue) => `${issue.line}:${issue.column}: ${issue.path.join('.')}: ${issue.message}`,
      );
    }
  };

  it('refuses a static token shorter than 32 characters, at its position, naming no value', () => {
    const found = issues(
      base('auth: { tokens: [{ token: "${env:T}", identity: { tenant: acme, principal: bot } }] }'),
      {
        T: 'short-tok',
      },
    );
    expect(found).toEqual(['1:27: auth.tokens.0.token: the token is shorter than 32 characters']);
    expect(
      issues(base('auth: { tokens: [{ token: "${env:T}", identity: { tenant: acme, principal: bot } }] }'), {
        T: 'x'.repeat(32),
      }),
    ).toEqual([]);
  });

  it('refuses an http:// JWKS URL at its position, naming no part of it', () => {
    const found = issues(base('auth:\n  jwt: { issuer: i, audience: a, jwks: "${env:J}" }'), {
      J: 'http://keys.example/hidden-part',
    });
    expect(found).toHaveLength(1);
    expect(found[0]).toMatch(/^2:40: auth\.jwt\.jwks: is an http:\/\/ URL/);
    expect(found[0]).not.toContain('hidden-part');
    expect(issues(base('auth:\n  jwt: { issuer: i, audience: a, jwks: "http://127.0.0.1:8/j" }'))).toEqual(
      [],
    );
  });
});
