// Issue 39: upstream identity against a real authorization server (oidc-provider, in a child process,
// with RFC 8693 token exchange) and an upstream (SDK v2 Streamable HTTP) that verifies every
// request's bearer token — issuer, signature, audience — and answers 401 with RFC 9728 metadata.
// Each call is exchanged for its caller; the gateway connects with a token of its own (client
// credentials, its authorization server discovered from the metadata); no token reaches the
// client, the log or the audit log.

import { spawn, type ChildProcess } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { createMcpHandler, fromJsonSchema, McpServer } from '@modelcontextprotocol/server';
import {
  checkGateway,
  createGateway,
  parseConfig,
  type Gateway,
  type GatewayConfig,
} from '@toolgate/gateway';
import {
  createRemoteJWKSet,
  exportJWK,
  generateKeyPair,
  jwtVerify,
  SignJWT,
  type JWTVerifyGetKey,
} from 'jose';
import { connectClient, tempDir, textOf, type TempDir } from './helpers';

type Client = Awaited<ReturnType<typeof connectClient>>;

const IDP = 'https://idp.test';
const CLIENT_SECRET = 'as-client-secret-0123456789abcdef';
const STATIC_TOKEN = 'static-token-of-the-bot-0123456789abcdef';
const OPERATOR_TOKEN = 'operator-token-of-acme-0123456789abcdef0';
const KEY = Buffer.alloc(32, 7).toString('base64');

interface Seen {
  readonly rpc: string | undefined;
  readonly token: string | undefined;
  readonly sub: string | undefined;
  readonly status: number;
}

/** The MCP server behind the gateway: every request needs a bearer token the authorization server issued for it. */
interface ProtectedUpstream {
  readonly url: string;
  readonly seen: Seen[];
  /** Subjects whose tokens it refuses (revoked upstream). */
  readonly revoked: Set<string>;
  /** Tokens it refuses. */
  readonly refused: Set<string>;
  close(): Promise<void>;
}

function bodyOf(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

async function listen(server: Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

async function stop(server: Server): Promise<void> {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

async function protectedUpstream(issuer: string): Promise<ProtectedUpstream> {
  const seen: Seen[] = [];
  const revoked = new Set<string>();
  const refused = new Set<string>();
  const keys: JWTVerifyGetKey = createRemoteJWKSet(new URL(`${issuer}/jwks`));
  const handler = createMcpHandler((ctx) => {
    const server = new McpServer({ name: 'protected', version: '1.0.0' });
    const sub = (ctx.authInfo?.extra as { sub?: string } | undefined)?.sub;
    server.registerTool(
      'whoami',
      {
        description: 'Says whom the call is from',
        inputSchema: fromJsonSchema({ type: 'object', properties: {} }),
      },
      () => ({ content: [{ type: 'text', text: `you are ${sub}` }] }),
    );
    return server;
  });
  const http = createServer();
  const port = await listen(http);
  const url = `http://127.0.0.1:${port}/mcp`;
  const metadata = `http://127.0.0.1:${port}/.well-known/oauth-protected-resource/mcp`;
  http.on('request', (req, res) => {
    void (async () => {
      if (req.url?.startsWith('/.well-known/oauth-protected-resource')) {
        res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify({ resource: url, authorization_servers: [issuer] }));
        return;
      }
      const body = req.method === 'POST' ? await bodyOf(req) : '';
      let rpc: string | undefined;
      try {
        rpc = (JSON.parse(body) as { method?: string }).method;
      } catch {
        rpc = undefined;
      }
      const token = /^Bearer (\S+)$/.exec(req.headers.authorization ?? '')?.[1];
      let sub: string | undefined;
      if (token !== undefined) {
        try {
          ({
            payload: { sub },
          } = await jwtVerify(token, keys, { issuer, audience: url }));
        } catch {
          sub = undefined;
        }
      }
      if (sub !== undefined && (revoked.has(sub) || refused.has(token!))) sub = undefined;
      seen.push({ rpc, token, sub, status: sub === undefined ? 401 : 200 });
      if (sub === undefined) {
        res.writeHead(401, { 'www-authenticate': `Bearer resource_metadata="${metadata}"` }).end();
        return;
      }
      const headers = new Headers();
      for (const [key, value] of Object.entries(req.headers))
        if (typeof value === 'string') headers.set(key, value);
      const response = await handler.fetch(
        new Request(url, { method: req.method!, headers, ...(body !== '' ? { body } : {}) }),
        { authInfo: { token: token!, clientId: 'gateway', scopes: [], extra: { sub } } },
      );
      const answerHeaders: Record<string, string> = {};
      response.headers.forEach((value, key) => {
        answerHeaders[key] = value;
      });
      res.writeHead(response.status, answerHeaders);
      res.end(Buffer.from(await response.arrayBuffer()));
    })().catch(() => {
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
  });
  return { url, seen, revoked, refused, close: () => stop(http) };
}

/** The authorization server in a child process (fixtures/authorization-server.mjs). */
async function authorizationServer(idpJwk: object): Promise<{ issuer: string; child: ChildProcess }> {
  const child = spawn(process.execPath, [join(__dirname, 'fixtures', 'authorization-server.mjs')], {
    env: { ...process.env, IDP_JWK: JSON.stringify(idpJwk), IDP_ISSUER: IDP, CLIENT_SECRET },
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  const issuer = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error('the authorization server did not start in 20 s')),
      20_000,
    );
    let out = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const match = /listening (\S+)/.exec(out);
      if (match !== null) {
        clearTimeout(timer);
        resolve(match[1]!);
      }
    });
    child.once('exit', () => reject(new Error('the authorization server exited')));
  });
  return { issuer, child };
}

/** A token endpoint that misbehaves: answers 500 or 400 echoing what it was sent, or never answers. */
async function brokenTokenEndpoint(): Promise<{
  url: string;
  mode: { value: 'error' | 'invalid' | 'hang' };
  close(): Promise<void>;
}> {
  const mode = { value: 'error' as 'error' | 'invalid' | 'hang' };
  const http = createServer((req, res) => {
    void bodyOf(req).then((body) => {
      if (mode.value === 'hang') return;
      const echo = new URLSearchParams(body).get('subject_token') ?? '';
      res.writeHead(mode.value === 'error' ? 500 : 400, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          error: mode.value === 'error' ? 'server_error' : 'invalid_grant',
          error_description: `could not use ${echo}`,
        }),
      );
    });
  });
  const port = await listen(http);
  return { url: `http://127.0.0.1:${port}/token`, mode, close: () => stop(http) };
}

describe('upstream identity: token exchange against oidc-provider', () => {
  let dir: TempDir;
  let as: { issuer: string; child: ChildProcess };
  let upstream: ProtectedUpstream;
  let broken: Awaited<ReturnType<typeof brokenTokenEndpoint>>;
  let gateway: Gateway;
  let sign: (sub: string) => Promise<string>;
  const logLines: string[] = [];
  const results: unknown[] = [];
  const callerTokens: string[] = [];
  const clients: Client[] = [];

  const stats = async (): Promise<{ exchanges: number; clientCredentials: number }> =>
    (await fetch(`${as.issuer}/test/stats`)).json() as Promise<{
      exchanges: number;
      clientCredentials: number;
    }>;
  const connectAs = async (token: string): Promise<Client> => {
    const client = await connectClient(gateway.url, token);
    clients.push(client);
    return client;
  };
  const call = async (client: Client, name: string) => {
    const result = await client.callTool({ name, arguments: {} });
    results.push(result);
    return result;
  };
  const refusalOf = (result: unknown) =>
    (result as { _meta?: Record<string, { code?: string; retryable?: boolean }> })._meta?.[
      'io.toolgate/refusal'
    ];
  const toolCalls = () => upstream.seen.filter((seen) => seen.rpc === 'tools/call');

  beforeAll(async () => {
    dir = tempDir();
    const idp = await generateKeyPair('ES256');
    const idpJwk = await exportJWK(idp.publicKey);
    dir.write('jwks.json', JSON.stringify({ keys: [{ ...idpJwk, kid: 'idp-1', alg: 'ES256' }] }));
    sign = async (sub) => {
      const token = await new SignJWT({ tenant: 'acme', sub })
        .setProtectedHeader({ alg: 'ES256', kid: 'idp-1' })
        .setIssuer(IDP)
        .setAudience('toolgate')
        .setIssuedAt()
        .setExpirationTime('10m')
        .sign(idp.privateKey);
      callerTokens.push(token);
      return token;
    };
    as = await authorizationServer(idpJwk);
    upstream = await protectedUpstream(as.issuer);
    broken = await brokenTokenEndpoint();
    const client = { id: 'toolgate', secret: '${env:AS_SECRET}' };
    const auditKey = generateKeyPairSync('ed25519')
      .privateKey.export({ format: 'pem', type: 'pkcs8' })
      .toString();
    const config: GatewayConfig = {
      auth: {
        jwt: { issuer: IDP, audience: 'toolgate', jwks: join(dir.path, 'jwks.json') },
        tokens: [
          { token: STATIC_TOKEN, identity: { tenant: 'acme', principal: 'bot' } },
          { token: OPERATOR_TOKEN, identity: { tenant: 'acme', principal: 'ops', roles: ['operator'] } },
        ],
      },
      credentials: { mine: { perPrincipal: { key: KEY } } },
      audit: { signingKey: '${env:AUDIT_KEY}', store: `sqlite:${join(dir.path, 'audit.db')}` },
      upstreams: {
        tools: {
          url: upstream.url,
          prefix: 'a_',
          auth: {
            tokenExchange: { tokenUrl: `${as.issuer}/token`, audience: upstream.url, client },
            clientCredentials: { client },
          },
        },
        broken: {
          url: upstream.url,
          prefix: 'b_',
          auth: {
            tokenExchange: { tokenUrl: broken.url, audience: upstream.url, timeout: '1s', client },
            clientCredentials: { client },
          },
        },
        foreign: {
          url: upstream.url,
          prefix: 'c_',
          auth: {
            tokenExchange: { tokenUrl: `${as.issuer}/token`, audience: 'urn:test:foreign', client },
            clientCredentials: { client },
          },
        },
        // The caller's own bearer (a per-principal credential), and the gateway's token for connecting.
        personal: {
          url: upstream.url,
          prefix: 'd_',
          headers: { Authorization: 'Bearer ${credential:mine}' },
          auth: { clientCredentials: { client } },
        },
      },
      tenants: { acme: { upstreams: ['tools', 'broken', 'foreign', 'personal'] } },
    };
    gateway = await createGateway(config, {
      port: 0,
      host: '127.0.0.1',
      log: (line) => logLines.push(line),
      env: { AS_SECRET: CLIENT_SECRET, AUDIT_KEY: auditKey },
    });
  });

  afterAll(async () => {
    await Promise.all(clients.map((client) => client.close().catch(() => undefined)));
    await gateway?.close();
    await upstream?.close();
    await broken?.close();
    as?.child.kill('SIGTERM');
    dir?.remove();
  });

  it('connects with a token of its own, from the authorization server the 401 metadata names', async () => {
    // Every connection request the upstream accepted carried the gateway's own token (sub = its client id).
    const accepted = upstream.seen.filter((seen) => seen.status === 200 && seen.rpc !== 'tools/call');
    expect(accepted.length).toBeGreaterThan(0);
    expect(new Set(accepted.map((seen) => seen.sub))).toEqual(new Set(['toolgate']));
    expect(upstream.seen[0]!.status).toBe(401);
    expect((await stats()).clientCredentials).toBeGreaterThanOrEqual(1);
  });

  it('calls for two principals of one tenant with two exchanged tokens, each its own subject; the second call is a cache hit', async () => {
    const before = (await stats()).exchanges;
    const ana = await connectAs(await sign('ana'));
    const bo = await connectAs(await sign('bo'));
    expect(textOf(await call(ana, 'a_whoami'))).toBe('you are ana');
    expect(textOf(await call(bo, 'a_whoami'))).toBe('you are bo');
    expect((await stats()).exchanges).toBe(before + 2);
    const [first, second] = toolCalls().slice(-2);
    expect(first!.sub).toBe('ana');
    expect(second!.sub).toBe('bo');
    expect(first!.token).not.toBe(second!.token);
    // The caller's own JWT never reaches the upstream: only the exchanged token does.
    expect(callerTokens).not.toContain(first!.token);

    expect(textOf(await call(ana, 'a_whoami'))).toBe('you are ana');
    expect((await stats()).exchanges).toBe(before + 2);
    expect(toolCalls().at(-1)!.token).toBe(first!.token);
  });

  it('exchanges again once the cached token is about to expire', async () => {
    await fetch(`${as.issuer}/test/ttl?seconds=2`, { method: 'POST' });
    try {
      const cy = await connectAs(await sign('cy'));
      const before = (await stats()).exchanges;
      expect(textOf(await call(cy, 'a_whoami'))).toBe('you are cy');
      const firstToken = toolCalls().at(-1)!.token;
      // Kept until shortly before expiry (2 s, less a tenth): a call at once is a cache hit.
      expect(textOf(await call(cy, 'a_whoami'))).toBe('you are cy');
      expect((await stats()).exchanges).toBe(before + 1);
      await new Promise((resolve) => setTimeout(resolve, 2_100));
      expect(textOf(await call(cy, 'a_whoami'))).toBe('you are cy');
      expect((await stats()).exchanges).toBe(before + 2);
      expect(toolCalls().at(-1)!.token).not.toBe(firstToken);
    } finally {
      await fetch(`${as.issuer}/test/ttl?seconds=3600`, { method: 'POST' });
    }
  });

  it('exchanges once more when the upstream refuses a token mid-session, and refuses (retryable) when it refuses again', async () => {
    const dee = await connectAs(await sign('dee'));
    expect(textOf(await call(dee, 'a_whoami'))).toBe('you are dee');
    const revokedToken = toolCalls().at(-1)!.token!;
    upstream.refused.add(revokedToken);
    const before = (await stats()).exchanges;
    expect(textOf(await call(dee, 'a_whoami'))).toBe('you are dee');
    expect((await stats()).exchanges).toBe(before + 1);
    expect(
      toolCalls()
        .slice(-2)
        .map((seen) => seen.status),
    ).toEqual([401, 200]);

    upstream.revoked.add('dee');
    const refused = await call(dee, 'a_whoami');
    expect(refusalOf(refused)).toMatchObject({ code: 'UPSTREAM_AUTH_FAILED', retryable: true });
    expect(
      toolCalls()
        .slice(-2)
        .map((seen) => seen.status),
    ).toEqual([401, 401]);
  });

  it('refuses when the authorization server fails, times out or answers for another audience (UPSTREAM_AUTH_FAILED)', async () => {
    const eve = await connectAs(await sign('eve'));
    const reached = toolCalls().length;
    broken.mode.value = 'error';
    expect(refusalOf(await call(eve, 'b_whoami'))).toMatchObject({
      code: 'UPSTREAM_AUTH_FAILED',
      retryable: true,
    });
    broken.mode.value = 'invalid';
    const invalid = await call(eve, 'b_whoami');
    expect(refusalOf(invalid)).toMatchObject({ code: 'UPSTREAM_AUTH_FAILED', retryable: false });
    expect(textOf(invalid)).toContain('invalid_grant');
    broken.mode.value = 'hang';
    const hung = await call(eve, 'b_whoami');
    expect(refusalOf(hung)).toMatchObject({ code: 'UPSTREAM_AUTH_FAILED', retryable: true });
    expect(textOf(hung)).toContain('did not answer within 1000 ms');
    const foreign = await call(eve, 'c_whoami');
    expect(refusalOf(foreign)).toMatchObject({ code: 'UPSTREAM_AUTH_FAILED', retryable: false });
    expect(textOf(foreign)).toContain('another audience');
    // None of them reached the upstream.
    expect(toolCalls().length).toBe(reached);
  });

  it("never resends a call refused with the caller's own credential under the gateway's token", async () => {
    const stored = await fetch(`${new URL(gateway.url).origin}/api/credentials/mine/acme/fay`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${OPERATOR_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ value: 'not-a-token-the-upstream-accepts' }),
    });
    expect(stored.status).toBe(204);
    const fay = await connectAs(await sign('fay'));
    const reached = toolCalls().length;
    const result = await call(fay, 'd_whoami');
    expect((result as { isError?: boolean }).isError).toBe(true);
    expect(textOf(result)).not.toContain('you are');
    // One attempt, with fay's credential; none with the gateway's own token.
    expect(toolCalls().slice(reached)).toEqual([
      expect.objectContaining({ token: 'not-a-token-the-upstream-accepts', status: 401 }),
    ]);
  });

  it('refuses a caller with a static token for an upstream that exchanges, and names the fix for the operator', async () => {
    const bot = await connectAs(STATIC_TOKEN);
    const reached = toolCalls().length;
    const refused = await call(bot, 'a_whoami');
    expect(refusalOf(refused)).toMatchObject({ code: 'UPSTREAM_AUTH_FAILED', retryable: false });
    expect(textOf(refused)).toContain('presented no JWT');
    expect(toolCalls().length).toBe(reached);
    expect(textOf(refused)).toContain('An operator can fix it: give this caller a JWT (auth.jwt)');
  });

  it('shows no token — exchanged, the gateway’s own, or the caller’s — to the client, the log or the audit log', async () => {
    const issued = new Set(upstream.seen.flatMap((seen) => (seen.token !== undefined ? [seen.token] : [])));
    expect(issued.size).toBeGreaterThan(5);
    const secrets = [...issued, ...callerTokens, CLIENT_SECRET];
    // Long enough to be unmistakable; the payload alone (a token's middle part) must not appear either.
    const pieces = secrets.flatMap((secret) => [
      secret,
      ...secret.split('.').filter((part) => part.length > 20),
    ]);
    const haystacks = {
      client: JSON.stringify(results),
      log: logLines.join('\n'),
      // Written ahead: the newest records may still be in the WAL file.
      audit: ['audit.db', 'audit.db-wal']
        .filter((file) => existsSync(join(dir.path, file)))
        .map((file) => readFileSync(join(dir.path, file)).toString('latin1'))
        .join('\n'),
    };
    expect(haystacks.log.length).toBeGreaterThan(0);
    expect(haystacks.audit).toContain('whoami');
    for (const [where, text] of Object.entries(haystacks))
      for (const piece of pieces)
        if (text.includes(piece)) throw new Error(`a token appears in the ${where}`);
  });
});

describe('an upstream that requires OAuth the gateway cannot get yet', () => {
  let dir: TempDir;
  let as: { issuer: string; child: ChildProcess };
  let upstream: ProtectedUpstream;

  beforeAll(async () => {
    dir = tempDir();
    const idp = await generateKeyPair('ES256');
    as = await authorizationServer(await exportJWK(idp.publicKey));
    upstream = await protectedUpstream(as.issuer);
  });
  afterAll(async () => {
    await upstream?.close();
    as?.child.kill('SIGTERM');
    dir?.remove();
  });

  it.each([
    ['no auth configured', undefined],
    [
      'a client the authorization server refuses',
      { clientCredentials: { client: { id: 'toolgate', secret: 'not-the-secret-0123456789' } } },
    ],
  ])('starts anyway with %s, and reports the upstream as needing authorization', async (_case, auth) => {
    const config: GatewayConfig = {
      auth: {
        tokens: [
          { token: STATIC_TOKEN, identity: { tenant: 'acme', principal: 'ops', roles: ['operator'] } },
        ],
      },
      upstreams: { tools: { url: upstream.url, ...(auth !== undefined ? { auth } : {}) } },
      tenants: { acme: { upstreams: ['tools'] } },
    };
    // `toolgate check` says what the upstream waits for.
    const described = await checkGateway(parseConfig(JSON.stringify(config)), { env: {} });
    expect(described).toMatch(/tools \(http\): \w+, 0 tool\(s\)/);
    expect(described).toContain('needs authorization');
    const gateway = await createGateway(config, { port: 0, host: '127.0.0.1', log: () => undefined });
    try {
      const readiness = await gateway.readiness();
      expect(readiness.ready).toBe(false);
      expect(readiness.upstreams['tools']).toMatchObject({ tools: 0 });
      expect(readiness.upstreams['tools']!.error).toContain('needs authorization');
      const client = await connectClient(gateway.url, STATIC_TOKEN);
      try {
        expect((await client.listTools()).tools).toEqual([]);
      } finally {
        await client.close();
      }
    } finally {
      await gateway.close();
    }
  });

  it('serves the upstream once its authorization server answers, without a restart', async () => {
    let open = false;
    // The token endpoint, unavailable until `open`, then the real one.
    const proxy = createServer((req, res) => {
      void bodyOf(req).then(async (body) => {
        if (!open) {
          res
            .writeHead(503, { 'content-type': 'application/json' })
            .end('{"error":"temporarily_unavailable"}');
          return;
        }
        const answer = await fetch(`${as.issuer}/token`, {
          method: 'POST',
          headers: {
            'content-type': req.headers['content-type'] ?? '',
            authorization: req.headers.authorization ?? '',
          },
          body,
        });
        res.writeHead(answer.status, { 'content-type': 'application/json' }).end(await answer.text());
      });
    });
    const port = await listen(proxy);
    const client = { id: 'toolgate', secret: CLIENT_SECRET };
    const gateway = await createGateway(
      {
        auth: {
          tokens: [
            { token: STATIC_TOKEN, identity: { tenant: 'acme', principal: 'ops', roles: ['operator'] } },
          ],
        },
        upstreams: {
          tools: {
            url: upstream.url,
            auth: { clientCredentials: { client, tokenUrl: `http://127.0.0.1:${port}/token` } },
          },
        },
        tenants: { acme: { upstreams: ['tools'] } },
      },
      { port: 0, host: '127.0.0.1', log: () => undefined },
    );
    try {
      expect((await gateway.readiness()).upstreams['tools']!.error).toContain('needs authorization');
      open = true;
      // The connection retries on its own; the tenants are rebuilt once the tools are imported.
      const caller = await connectClient(gateway.url, STATIC_TOKEN);
      try {
        let listed: string[] = [];
        for (let waited = 0; waited < 15_000 && listed.length === 0; waited += 100) {
          await new Promise((resolve) => setTimeout(resolve, 100));
          listed = (await caller.listTools()).tools.map((tool) => tool.name);
        }
        expect(listed).toEqual(['whoami']);
        expect((await gateway.readiness()).upstreams['tools']).not.toHaveProperty('error');
        expect(textOf(await caller.callTool({ name: 'whoami', arguments: {} }))).toBe('you are toolgate');
      } finally {
        await caller.close();
      }
    } finally {
      await gateway.close();
      await stop(proxy);
    }
  });
});
