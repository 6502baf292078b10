// Who is calling: static tokens and JWTs verified against a JWKS, mapped to tenant, principal, roles.

import { createAuthenticator } from '@toolgate/gateway';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { tempDir, type TempDir } from './helpers';

describe('createAuthenticator', () => {
  const tenants = ['acme', 'globex'];

  it('maps a static token to its identity, and refuses a missing, malformed or wrong one', async () => {
    const auth = createAuthenticator(
      {
        tokens: [
          {
            token: 'token-of-the-bot-0123',
            identity: { tenant: 'acme', principal: 'bot', roles: ['approver'] },
          },
        ],
      },
      { tenants, baseDir: '/' },
    );
    expect(await auth.authenticate('Bearer token-of-the-bot-0123')).toEqual({
      ok: true,
      identity: { tenant: 'acme', principal: 'bot', roles: ['approver'] },
      clientId: 'acme/bot',
    });
    expect(await auth.authenticate(undefined)).toEqual({ ok: false, why: 'missing' });
    expect(await auth.authenticate('Basic dXNlcjpwYXNz')).toEqual({ ok: false, why: 'missing' });
    expect(await auth.authenticate('Bearer token-of-the-bot-0124')).toEqual({ ok: false, why: 'invalid' });
    expect(await auth.authenticate('Bearer token-of-the-bot-012')).toEqual({ ok: false, why: 'invalid' });
  });

  describe('JWT against a JWKS file', () => {
    let dir: TempDir;
    let sign: (
      claims: Record<string, unknown>,
      options?: { issuer?: string; audience?: string; expires?: string },
    ) => Promise<string>;
    let otherKey: CryptoKey;

    beforeAll(async () => {
      dir = tempDir();
      const { publicKey, privateKey } = await generateKeyPair('ES256');
      otherKey = (await generateKeyPair('ES256')).privateKey;
      dir.write(
        'jwks.json',
        JSON.stringify({ keys: [{ ...(await exportJWK(publicKey)), kid: 'k1', alg: 'ES256' }] }),
      );
      sign = (claims, options = {}) =>
        new SignJWT(claims)
          .setProtectedHeader({ alg: 'ES256', kid: 'k1' })
          .setIssuer(options.issuer ?? 'https://id.example')
          .setAudience(options.audience ?? 'toolgate')
          .setIssuedAt()
          .setExpirationTime(options.expires ?? '5m')
          .sign(privateKey);
    });
    afterAll(() => dir.remove());

    const authenticator = () =>
      createAuthenticator(
        {
          jwt: {
            issuer: 'https://id.example',
            audience: 'toolgate',
            jwks: './jwks.json',
            claims: { tenant: 'org', principal: 'sub', roles: 'roles' },
          },
        },
        { tenants, baseDir: dir.path },
      );

    it('maps the claims to tenant, principal and roles', async () => {
      const token = await sign({ org: 'globex', sub: 'ana', roles: ['approver', 'intern'] });
      expect(await authenticator().authenticate(`Bearer ${token}`)).toEqual({
        ok: true,
        identity: { tenant: 'globex', principal: 'ana', roles: ['approver', 'intern'] },
        clientId: 'globex/ana',
      });
    });

    it('reads space-separated roles too', async () => {
      const token = await sign({ org: 'acme', sub: 'bo', roles: 'approver auditor' });
      const answer = await authenticator().authenticate(`Bearer ${token}`);
      expect(answer.ok && answer.identity.roles).toEqual(['approver', 'auditor']);
    });

    it('refuses a wrong issuer, a wrong audience, an expired token, a foreign signature and a tampered payload', async () => {
      const auth = authenticator();
      const claims = { org: 'acme', sub: 'bo' };
      const tokens = [
        await sign(claims, { issuer: 'https://evil.example' }),
        await sign(claims, { audience: 'someone-else' }),
        await sign(claims, { expires: '-1m' }),
        await new SignJWT(claims)
          .setProtectedHeader({ alg: 'ES256', kid: 'k1' })
          .setIssuer('https://id.example')
          .setAudience('toolgate')
          .setExpirationTime('5m')
          .sign(otherKey),
      ];
      const good = await sign(claims);
      const [header, , signature] = good.split('.');
      const forged = Buffer.from(
        JSON.stringify({ org: 'globex', sub: 'bo', iss: 'https://id.example', aud: 'toolgate', exp: 9e9 }),
      ).toString('base64url');
      tokens.push(`${header}.${forged}.${signature}`);
      for (const token of tokens)
        expect(await auth.authenticate(`Bearer ${token}`)).toEqual({ ok: false, why: 'invalid' });
    });

    it('answers tenant (403) for a valid token of a tenant this gateway does not serve, and invalid when a claim is missing', async () => {
      const auth = authenticator();
      expect(await auth.authenticate(`Bearer ${await sign({ org: 'initech', sub: 'x' })}`)).toEqual({
        ok: false,
        why: 'tenant',
      });
      expect(await auth.authenticate(`Bearer ${await sign({ sub: 'x' })}`)).toEqual({
        ok: false,
        why: 'invalid',
      });
    });
  });
});
