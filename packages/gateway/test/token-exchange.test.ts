// The token exchanger on its own, against a token endpoint on loopback that verifies the client's
// private_key_jwt assertion: client authentication by key, one exchange for calls that arrive
// together, the cache's clock and bound, and a caller's JWT that no serialization shows.

import { generateKeyPairSync } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { inspect } from 'node:util';
import type { Identity } from '@toolgate/core';
import { createLocalJWKSet, jwtVerify, type JWK } from 'jose';
import { CallerToken } from '../src/caller-token';
import { tokenExchanger } from '../src/token-exchange';

const AUDIENCE = 'https://crm.example';

/** A JWT-shaped access token (unsigned: the exchanger reads `aud` and `exp`, the upstream verifies). */
const accessToken = (claims: Record<string, unknown>) =>
  ['{"alg":"none"}', JSON.stringify(claims), 'sig']
    .map((part) => Buffer.from(part).toString('base64url'))
    .join('.');

interface Endpoint {
  readonly url: string;
  readonly subjects: string[];
  delayMs: number;
  lifeSeconds: number;
  close(): Promise<void>;
}

async function tokenEndpoint(publicJwk: JWK): Promise<Endpoint> {
  const keys = createLocalJWKSet({ keys: [publicJwk] });
  const endpoint: Endpoint = { url: '', subjects: [], delayMs: 0, lifeSeconds: 600, close: async () => {} };
  let minted = 0;
  const http: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      void (async () => {
        const form = new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
        try {
          // The assertion is addressed to the token endpoint and signed by the configured key.
          await jwtVerify(form.get('client_assertion') ?? '', keys, {
            issuer: 'toolgate',
            subject: 'toolgate',
            audience: endpoint.url,
          });
        } catch {
          res.writeHead(401, { 'content-type': 'application/json' }).end('{"error":"invalid_client"}');
          return;
        }
        endpoint.subjects.push(form.get('subject_token') ?? '');
        await new Promise((resolve) => setTimeout(resolve, endpoint.delayMs));
        minted += 1;
        res.writeHead(200, { 'content-type': 'application/json' }).end(
          JSON.stringify({
            access_token: accessToken({ aud: form.get('audience'), n: minted }),
            issued_token_type: 'urn:ietf:params:oauth:token-type:access_token',
            token_type: 'Bearer',
            expires_in: endpoint.lifeSeconds,
          }),
        );
      })();
    });
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  (endpoint as { url: string }).url = `http://127.0.0.1:${(http.address() as AddressInfo).port}/token`;
  endpoint.close = async () => {
    http.closeAllConnections();
    await new Promise<void>((resolve) => http.close(() => resolve()));
  };
  return endpoint;
}

const identity = (principal: string): Identity => ({ tenant: 'acme', principal });
const caller = (principal: string) => new CallerToken(`jwt-of-${principal}`, Date.now() + 600_000);

describe.each([
  ['an EC P-256 key as PEM', 'ec'],
  ['an Ed25519 key as a JWK', 'ed25519'],
] as const)('token exchange with private_key_jwt (%s)', (_case, type) => {
  let endpoint: Endpoint;
  let privateKeyJwt: string;

  beforeAll(async () => {
    const pair =
      type === 'ec' ? generateKeyPairSync('ec', { namedCurve: 'P-256' }) : generateKeyPairSync('ed25519');
    privateKeyJwt =
      type === 'ec'
        ? pair.privateKey.export({ format: 'pem', type: 'pkcs8' }).toString()
        : JSON.stringify(pair.privateKey.export({ format: 'jwk' }));
    endpoint = await tokenEndpoint(pair.publicKey.export({ format: 'jwk' }) as JWK);
  });
  afterAll(() => endpoint.close());

  const exchanger = (now: () => number = Date.now, maxEntries?: number) =>
    tokenExchanger(
      'crm',
      { tokenUrl: endpoint.url, audience: AUDIENCE, client: { id: 'toolgate', privateKeyJwt } },
      { now, ...(maxEntries !== undefined ? { maxEntries } : {}) },
    );

  it('authenticates with the key, and exchanges once for calls of one principal that arrive together', async () => {
    endpoint.delayMs = 50;
    const before = endpoint.subjects.length;
    const exchange = exchanger();
    const tokens = await Promise.all(
      Array.from({ length: 5 }, () => exchange.tokenFor(identity('ana'), caller('ana'))),
    );
    expect(new Set(tokens.map((token) => token.token)).size).toBe(1);
    expect(endpoint.subjects.slice(before)).toEqual(['jwt-of-ana']);
    const bo = await exchange.tokenFor(identity('bo'), caller('bo'));
    expect(bo.token).not.toBe(tokens[0]!.token);
    expect(exchange.exchanges).toBe(2);
    endpoint.delayMs = 0;
  });

  it('keeps a token until shortly before it expires, and forgets one the upstream refused', async () => {
    let now = Date.now();
    const exchange = exchanger(() => now);
    endpoint.lifeSeconds = 100;
    const first = await exchange.tokenFor(identity('ana'), caller('ana'));
    now += 89_000; // 100 s less a tenth is 90 s
    expect((await exchange.tokenFor(identity('ana'), caller('ana'))).token).toBe(first.token);
    now += 2_000;
    const second = await exchange.tokenFor(identity('ana'), caller('ana'));
    expect(second.token).not.toBe(first.token);
    exchange.forget(identity('ana'), first.token); // an old token: the newer one stays
    expect((await exchange.tokenFor(identity('ana'), caller('ana'))).token).toBe(second.token);
    exchange.forget(identity('ana'), second.token);
    expect((await exchange.tokenFor(identity('ana'), caller('ana'))).token).not.toBe(second.token);
    expect(exchange.exchanges).toBe(3);
    endpoint.lifeSeconds = 600;
  });

  it('holds at most maxEntries tokens, the oldest going first', async () => {
    const exchange = exchanger(Date.now, 2);
    for (const principal of ['ana', 'bo', 'cy'])
      await exchange.tokenFor(identity(principal), caller(principal));
    expect(exchange.size).toBe(2);
    await exchange.tokenFor(identity('cy'), caller('cy'));
    expect(exchange.exchanges).toBe(3);
    await exchange.tokenFor(identity('ana'), caller('ana'));
    expect(exchange.exchanges).toBe(4);
  });
});

describe('CallerToken', () => {
  it('shows its JWT to no serialization, only to reveal()', () => {
    const token = new CallerToken('eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJhbmEifQ.c2lnbmF0dXJl', 0);
    const shown = [
      JSON.stringify({ token }),
      inspect({ token }),
      String(token),
      JSON.stringify({ ...token }),
      JSON.stringify(structuredClone({ at: token.expiresMs })),
    ].join('\n');
    expect(shown).not.toContain('eyJ');
    expect(token.reveal()).toContain('eyJ');
  });
});
