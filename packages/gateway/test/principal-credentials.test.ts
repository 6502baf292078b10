// Issue 39, per-principal credentials: a value per tenant and principal, sealed (AES-256-GCM) in the
// state store, set through the operator API or `toolgate credentials`, sent in an HTTP upstream's
// header on that principal's calls only. A principal without one is refused (CREDENTIAL_MISSING);
// a row copied from another principal or edited in the database does not open and is never sent.

import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { DatabaseSync as Database } from 'node:sqlite';
import { createMcpHandler, fromJsonSchema, McpServer } from '@modelcontextprotocol/server';
import { createGateway, type Gateway, type GatewayConfig } from '@toolgate/gateway';
import { CredentialUnreadableError, openCredential, sealCredential } from '../src/principal-credentials';
import { cliIn, connectClient, tempDir, textOf, type TempDir } from './helpers';

type Client = Awaited<ReturnType<typeof connectClient>>;

const KEY = randomBytes(32).toString('base64');
const OPERATOR = 'operator-token-of-acme-0123456789abcdef';
const ANA = 'token-of-ana-at-acme-0123456789abcdef0';
const BO = 'token-of-bo-at-acme-0123456789abcdef01';
const GLOBEX_OPERATOR = 'operator-token-of-globex-0123456789abcd';
const ANA_SECRET = 'crm-key-of-ana-zq81f0c2d9e7a6b5';
const BO_SECRET = 'crm-key-of-bo-zq19a7c3e5b2d8f4';

describe('sealing', () => {
  const key = randomBytes(32);

  it('opens what it sealed, for the same credential, tenant and principal only', () => {
    const sealed = sealCredential(key, 'crm', 'acme', 'ana', ANA_SECRET);
    expect(sealed).not.toContain(ANA_SECRET);
    expect(openCredential(key, 'crm', 'acme', 'ana', sealed)).toBe(ANA_SECRET);
    // Sealing twice gives two different texts (a fresh IV each time).
    expect(sealCredential(key, 'crm', 'acme', 'ana', ANA_SECRET)).not.toBe(sealed);
    for (const [name, tenant, principal] of [
      ['crm', 'acme', 'bo'],
      ['crm', 'globex', 'ana'],
      ['mail', 'acme', 'ana'],
    ] as const)
      expect(() => openCredential(key, name, tenant, principal, sealed)).toThrow(CredentialUnreadableError);
  });

  it('refuses an edited value, a truncated one and one sealed under another key', () => {
    const sealed = sealCredential(key, 'crm', 'acme', 'ana', ANA_SECRET);
    const bytes = Buffer.from(sealed.slice(3), 'base64url');
    bytes[14] = bytes[14]! ^ 1;
    const edited = `v1.${bytes.toString('base64url')}`;
    for (const bad of [edited, sealed.slice(0, 20), 'v2.' + sealed.slice(3), ''])
      expect(() => openCredential(key, 'crm', 'acme', 'ana', bad)).toThrow(CredentialUnreadableError);
    expect(() => openCredential(randomBytes(32), 'crm', 'acme', 'ana', sealed)).toThrow(
      CredentialUnreadableError,
    );
  });
});

/** An SDK v2 server that records the X-Crm-Key header of each tools/call. */
async function recordingUpstream(): Promise<{
  url: string;
  keys: (string | undefined)[];
  close(): Promise<void>;
}> {
  const keys: (string | undefined)[] = [];
  const handler = createMcpHandler(() => {
    const server = new McpServer({ name: 'crm', version: '1.0.0' });
    server.registerTool(
      'lookup',
      { description: 'Looks a customer up', inputSchema: fromJsonSchema({ type: 'object', properties: {} }) },
      () => ({ content: [{ type: 'text', text: 'found' }] }),
    );
    return server;
  });
  const http: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      void (async () => {
        const body = Buffer.concat(chunks).toString('utf8');
        if (body.includes('"tools/call"')) keys.push(req.headers['x-crm-key'] as string | undefined);
        const headers = new Headers();
        for (const [key, value] of Object.entries(req.headers))
          if (typeof value === 'string') headers.set(key, value);
        const response = await handler.fetch(
          new Request(`http://127.0.0.1${req.url}`, {
            method: req.method!,
            headers,
            ...(body !== '' ? { body } : {}),
          }),
        );
        const out: Record<string, string> = {};
        response.headers.forEach((value, key) => {
          out[key] = value;
        });
        res.writeHead(response.status, out).end(Buffer.from(await response.arrayBuffer()));
      })().catch(() => {
        if (!res.headersSent) res.writeHead(500);
        res.end();
      });
    });
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    keys,
    close: async () => {
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

describe('per-principal credentials through the gateway', () => {
  let dir: TempDir;
  let upstream: Awaited<ReturnType<typeof recordingUpstream>>;
  let gateway: Gateway;
  const logLines: string[] = [];
  const outputs: string[] = [];
  const clients: Client[] = [];
  let base: string;

  const api = async (token: string | undefined, method: string, path: string, body?: unknown) => {
    const response = await fetch(`${base}/api/credentials${path}`, {
      method,
      headers: {
        ...(token !== undefined ? { authorization: `Bearer ${token}` } : {}),
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    const text = await response.text();
    outputs.push(text);
    return {
      status: response.status,
      body: text === '' ? undefined : (JSON.parse(text) as Record<string, unknown>),
    };
  };
  const call = async (client: Client) => {
    const result = await client.callTool({ name: 'lookup', arguments: {} });
    outputs.push(JSON.stringify(result));
    return result;
  };
  const refusalOf = (result: unknown) =>
    (result as { _meta?: Record<string, { code?: string; retryable?: boolean }> })._meta?.[
      'io.toolgate/refusal'
    ];

  beforeAll(async () => {
    dir = tempDir();
    upstream = await recordingUpstream();
    const config: GatewayConfig = {
      auth: {
        tokens: [
          { token: OPERATOR, identity: { tenant: 'acme', principal: 'ops', roles: ['operator'] } },
          { token: ANA, identity: { tenant: 'acme', principal: 'ana' } },
          { token: BO, identity: { tenant: 'acme', principal: 'bo' } },
          { token: GLOBEX_OPERATOR, identity: { tenant: 'globex', principal: 'ops', roles: ['operator'] } },
        ],
      },
      stores: { state: `sqlite:${join(dir.path, 'state.db')}` },
      credentials: { crm: { perPrincipal: { key: '${env:CRED_KEY}' } } },
      upstreams: { crm: { url: upstream.url, headers: { 'X-Crm-Key': '${credential:crm}' } } },
      tenants: { acme: { upstreams: ['crm'] }, globex: { upstreams: ['crm'] } },
    };
    gateway = await createGateway(config, {
      port: 0,
      host: '127.0.0.1',
      log: (line) => logLines.push(line),
      env: { CRED_KEY: KEY },
    });
    base = new URL(gateway.url).origin;
  });

  afterAll(async () => {
    await Promise.all(clients.map((client) => client.close().catch(() => undefined)));
    await gateway?.close();
    await upstream?.close();
    dir?.remove();
  });

  const connect = async (token: string) => {
    const client = await connectClient(gateway.url, token);
    clients.push(client);
    return client;
  };

  it('lets only an operator of the same tenant manage them', async () => {
    expect((await api(undefined, 'GET', '/crm')).status).toBe(401);
    expect((await api(ANA, 'PUT', '/crm/acme/ana', { value: ANA_SECRET })).status).toBe(403);
    expect((await api(GLOBEX_OPERATOR, 'PUT', '/crm/acme/ana', { value: ANA_SECRET })).status).toBe(403);
    expect((await api(GLOBEX_OPERATOR, 'GET', '/crm?tenant=acme')).status).toBe(403);
    expect((await api(OPERATOR, 'PUT', '/nope/acme/ana', { value: ANA_SECRET })).status).toBe(404);
    expect((await api(OPERATOR, 'PUT', '/crm/acme/ana', { value: '' })).status).toBe(400);
    expect((await api(OPERATOR, 'PUT', '/crm/acme/ana', { value: 'x'.repeat(16 * 1024 + 1) })).status).toBe(
      400,
    );
    expect((await api(OPERATOR, 'GET', '/crm')).body).toEqual({ credential: 'crm', entries: [] });
  });

  it("sends each principal's own value, and refuses one without (CREDENTIAL_MISSING), never with another's", async () => {
    expect((await api(OPERATOR, 'PUT', '/crm/acme/ana', { value: ANA_SECRET })).status).toBe(204);
    const ana = await connect(ANA);
    const bo = await connect(BO);
    expect(textOf(await call(ana))).toBe('found');
    expect(upstream.keys.at(-1)).toBe(ANA_SECRET);
    const reached = upstream.keys.length;
    const refused = await call(bo);
    expect(refusalOf(refused)).toMatchObject({ code: 'CREDENTIAL_MISSING', retryable: false });
    expect(textOf(refused)).toContain("Ask an operator to store your 'crm' credential");
    expect(upstream.keys.length).toBe(reached);

    expect((await api(OPERATOR, 'PUT', '/crm/acme/bo', { value: BO_SECRET })).status).toBe(204);
    expect(textOf(await call(bo))).toBe('found');
    expect(upstream.keys.at(-1)).toBe(BO_SECRET);
    const listed = (await api(OPERATOR, 'GET', '/crm')).body as { entries: { principal: string }[] };
    expect(listed.entries.map((entry) => entry.principal)).toEqual(['ana', 'bo']);
  });

  it("refuses a row copied from another principal in the database, rather than send the other's value", async () => {
    const db = new Database(join(dir.path, 'state.db'));
    try {
      const row = db
        .prepare(`SELECT sealed FROM toolgate_principal_credentials WHERE name = 'crm' AND principal = 'ana'`)
        .get() as { sealed: string };
      expect(row.sealed).not.toContain(ANA_SECRET);
      db.prepare(
        `UPDATE toolgate_principal_credentials SET sealed = ? WHERE name = 'crm' AND principal = 'bo'`,
      ).run(row.sealed);
    } finally {
      db.close();
    }
    const bo = await connect(BO);
    const reached = upstream.keys.length;
    const refused = await call(bo);
    expect(refusalOf(refused)).toMatchObject({ code: 'CREDENTIAL_MISSING' });
    expect(textOf(refused)).toContain('cannot be read');
    expect(upstream.keys.length).toBe(reached);
  });

  it('forgets a deleted value: the next call is refused', async () => {
    expect((await api(OPERATOR, 'DELETE', '/crm/acme/ana')).status).toBe(204);
    expect((await api(OPERATOR, 'DELETE', '/crm/acme/ana')).status).toBe(404);
    const ana = await connect(ANA);
    expect(refusalOf(await call(ana))).toMatchObject({ code: 'CREDENTIAL_MISSING' });
  });

  it('sets, lists and deletes from the command line, never printing or taking the value as an argument', async () => {
    dir.write(
      'toolgate.yaml',
      [
        'auth: { tokens: [] }',
        `stores: { state: "sqlite:./state.db" }`,
        'credentials: { crm: { perPrincipal: { key: "${env:CRED_KEY}" } } }',
        `upstreams: { crm: { url: "${upstream.url}", headers: { X-Crm-Key: "\${credential:crm}" } } }`,
        'tenants: { acme: { upstreams: [crm] } }',
        '',
      ].join('\n'),
    );
    const cli = cliIn(dir, { CRED_KEY: KEY, CY_KEY: 'crm-key-of-cy-zq55e1d2c3b4a' });
    const set = await cli([
      'credentials',
      'set',
      'crm',
      '--tenant',
      'acme',
      '--principal',
      'cy',
      '--from-env',
      'CY_KEY',
    ]);
    expect(set).toMatchObject({ code: 0 });
    const listed = await cli(['credentials', 'list', 'crm']);
    expect(listed.out).toContain('acme/cy');
    expect((await cli(['credentials', 'set', 'crm', '--tenant', 'acme', '--principal', 'cy'])).code).toBe(2);
    expect(
      (
        await cli([
          'credentials',
          'set',
          'crm',
          '--tenant',
          'nowhere',
          '--principal',
          'cy',
          '--from-env',
          'CY_KEY',
        ])
      ).code,
    ).toBe(2);
    expect((await cli(['credentials', 'delete', 'crm', '--tenant', 'acme', '--principal', 'cy'])).code).toBe(
      0,
    );
    expect((await cli(['credentials', 'list', 'crm'])).out).not.toContain('acme/cy');
    for (const result of [set, listed]) outputs.push(result.out, result.err);
    expect(JSON.stringify(outputs)).not.toContain('crm-key-of-cy');
  });

  it('shows no value to a client, the operator API, the log or the state store file', () => {
    const stateFiles = ['state.db', 'state.db-wal']
      .filter((file) => existsSync(join(dir.path, file)))
      .map((file) => readFileSync(join(dir.path, file)).toString('latin1'))
      .join('\n');
    const haystack = [...outputs, ...logLines, stateFiles].join('\n');
    expect(logLines.some((line) => line.includes('"credential.set"'))).toBe(true);
    for (const secret of [ANA_SECRET, BO_SECRET, KEY]) expect(haystack.includes(secret)).toBe(false);
  });
});

const postgresUrl = process.env['TOOLGATE_POSTGRES_URL'];
const onPostgres = postgresUrl !== undefined ? describe : describe.skip;

onPostgres('per-principal credentials in PostgreSQL, shared by two gateways', () => {
  let upstream: Awaited<ReturnType<typeof recordingUpstream>>;
  const gateways: Gateway[] = [];
  // The table outlives the run: each run stores for a principal of its own.
  const principal = `ana-${Date.now().toString(36)}`;
  const secret = `crm-key-of-${principal}-zq7c1e9a`;

  beforeAll(async () => {
    upstream = await recordingUpstream();
    const config: GatewayConfig = {
      auth: {
        tokens: [
          { token: OPERATOR, identity: { tenant: 'acme', principal: 'ops', roles: ['operator'] } },
          { token: ANA, identity: { tenant: 'acme', principal } },
        ],
      },
      credentials: { crm: { perPrincipal: { key: '${env:CRED_KEY}', store: '${env:PG}' } } },
      upstreams: { crm: { url: upstream.url, headers: { 'X-Crm-Key': '${credential:crm}' } } },
      tenants: { acme: { upstreams: ['crm'] } },
    };
    for (let i = 0; i < 2; i += 1)
      gateways.push(
        await createGateway(config, {
          port: 0,
          host: '127.0.0.1',
          log: () => undefined,
          env: { CRED_KEY: KEY, PG: postgresUrl! },
        }),
      );
  });
  afterAll(async () => {
    await Promise.all(gateways.map((gateway) => gateway.close()));
    await upstream?.close();
  });

  it('is set through one gateway and sent by the other; deleted through the other, refused by the first', async () => {
    const [first, second] = gateways as [Gateway, Gateway];
    const at = (gateway: Gateway, method: string, body?: unknown) =>
      fetch(`${new URL(gateway.url).origin}/api/credentials/crm/acme/${principal}`, {
        method,
        headers: { authorization: `Bearer ${OPERATOR}`, 'content-type': 'application/json' },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      });
    expect((await at(first, 'PUT', { value: secret })).status).toBe(204);
    const client = await connectClient(second.url, ANA);
    try {
      expect(textOf(await client.callTool({ name: 'lookup', arguments: {} }))).toBe('found');
      expect(upstream.keys.at(-1)).toBe(secret);
    } finally {
      await client.close();
    }
    expect((await at(second, 'DELETE')).status).toBe(204);
    const again = await connectClient(first.url, ANA);
    try {
      const refused = await again.callTool({ name: 'lookup', arguments: {} });
      expect(
        (refused as { _meta?: Record<string, { code?: string }> })._meta?.['io.toolgate/refusal']?.code,
      ).toBe('CREDENTIAL_MISSING');
    } finally {
      await again.close();
    }
  });
});
