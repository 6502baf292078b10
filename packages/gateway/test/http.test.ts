// The gateway's HTTP router alone, in front of a stand-in for the MCP server: what it answers itself
// (health, readiness, mounted apps, the limits and auth of /mcp) and what it leaves to the MCP server,
// with the request's body unread and the verified caller attached.

import { createServer, request, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { AuthAnswer } from '../src/auth';
import { httpRoutes, type HttpHost, type Mount, type Readiness } from '../src/http';
import type { Runtime } from '../src/runtime';

const TOKEN = 'good-token-0123456789abcdef';
const readiness: Readiness = { ready: true, upstreams: {}, stores: {} };

let authentications = 0;

async function authenticate(header: string | undefined): Promise<AuthAnswer> {
  authentications += 1;
  if (header === undefined) return { ok: false, why: 'missing' };
  if (header !== `Bearer ${TOKEN}`) return { ok: false, why: 'invalid' };
  return {
    ok: true,
    identity: { tenant: 'acme', principal: 'ana', roles: ['operator'] },
    clientId: 'acme/ana',
  };
}

interface Answer {
  readonly status: number;
  readonly headers: IncomingMessage['headers'];
  readonly body: string;
}

describe('the gateway HTTP router', () => {
  let server: Server;
  let port: number;
  const logged: Record<string, unknown>[] = [];
  const mounted: string[] = [];
  let tracked = 0;
  let draining = false;

  beforeAll(async () => {
    const inbox: Mount = {
      prefix: '/inbox',
      async handle(req, res) {
        mounted.push(req.url ?? '');
        res.writeHead(200, { 'content-type': 'text/plain' }).end('inbox');
      },
    };
    const host: HttpHost = {
      current: () => ({ auth: { authenticate } }) as unknown as Runtime,
      log: ((line: Record<string, unknown>) => logged.push(line)) as unknown as HttpHost['log'],
      baseUrl: () => 'https://gateway.example',
      maxBody: () => 64,
      draining: () => draining,
      track: () => (tracked += 1),
      readiness: async () => readiness,
      mounts: [inbox],
    };
    const routes = httpRoutes(host);
    // The stand-in MCP server: answers what the router passed, echoing the body and the caller.
    server = createServer((req, res) => {
      void routes.intercept(req, res).then(async (answered) => {
        if (answered) return;
        let body = '';
        for await (const chunk of req) body += String(chunk);
        const auth = routes.authenticate(req);
        res.writeHead(299, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ body, clientId: auth?.clientId, token: auth?.token }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  function send(
    method: string,
    path: string,
    headers: Record<string, string | string[]> = {},
    body?: string,
  ) {
    return new Promise<Answer>((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port, method, path, headers }, (res) => {
        let text = '';
        res.on('data', (chunk) => (text += String(chunk)));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
      });
      req.on('error', reject);
      req.end(body);
    });
  }

  it('answers /healthz itself, with secure headers and no cache', async () => {
    const answer = await send('GET', '/healthz');
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.body)).toEqual({ status: 'ok' });
    expect(answer.headers['content-type']).toBe('application/json');
    expect(answer.headers['cache-control']).toBe('no-store');
    expect(answer.headers['x-content-type-options']).toBe('nosniff');
    expect(answer.headers['x-frame-options']).toBe('SAMEORIGIN');
  });

  it('tells /readyz in counts to anyone and in detail to an operator', async () => {
    expect(JSON.parse((await send('GET', '/readyz')).body)).toEqual({
      ready: true,
      upstreams: { total: 0, connected: 0 },
      stores: { total: 0, ok: 0 },
    });
    const detailed = await send('GET', '/readyz', { authorization: `Bearer ${TOKEN}` });
    expect(JSON.parse(detailed.body)).toEqual(readiness);
  });

  it('puts secure headers on the credentials API, whose handler writes the Node response', async () => {
    const answer = await send('GET', '/api/credentials/crm');
    expect(answer.status).toBe(401);
    expect(answer.headers['x-content-type-options']).toBe('nosniff');
    expect(answer.headers['cache-control']).toBe('no-store');
  });

  it('routes a mounted prefix and its paths to the mount, and nothing that only starts like it', async () => {
    mounted.length = 0;
    expect((await send('GET', '/inbox')).body).toBe('inbox');
    expect((await send('GET', '/inbox/status?x=1')).body).toBe('inbox');
    expect((await send('GET', '/inboxes')).status).toBe(299);
    expect(mounted).toEqual(['/inbox', '/inbox/status?x=1']);
  });

  it('matches paths as sent: a percent-encoded /healthz is not health', async () => {
    expect((await send('GET', '/%68ealthz')).status).toBe(299);
    expect((await send('GET', '/healthz/')).status).toBe(299);
  });

  it('refuses a POST to /mcp without a length, or over the limit, before reading a token', async () => {
    const unsized = await send('POST', '/mcp', { 'transfer-encoding': 'chunked' }, '{}');
    expect(unsized.status).toBe(411);
    const large = await send('POST', '/mcp', { authorization: `Bearer ${TOKEN}` }, 'x'.repeat(65));
    expect(large.status).toBe(413);
    expect(JSON.parse(large.body)).toEqual({
      jsonrpc: '2.0',
      error: { code: -32000, message: 'Request body too large; the limit is 64 bytes' },
      id: null,
    });
    expect(logged.map((line) => line['why'])).toEqual(expect.arrayContaining(['no-length', 'too-large']));
  });

  it('refuses /mcp without a valid token, naming where to sign in and never the token', async () => {
    const missing = await send('POST', '/mcp', {}, '{}');
    expect(missing.status).toBe(401);
    expect(missing.headers['www-authenticate']).toBe(
      'Bearer resource_metadata="https://gateway.example/.well-known/oauth-protected-resource"',
    );
    const wrong = await send('POST', '/mcp', { authorization: 'Bearer stolen-token-value' }, '{}');
    expect(wrong.status).toBe(401);
    expect(wrong.headers['www-authenticate']).toContain('error="invalid_token"');
    expect(JSON.stringify([wrong, logged])).not.toContain('stolen-token-value');
  });

  it('passes a good /mcp request to the MCP server with its body unread and its caller verified', async () => {
    const before = tracked;
    const answer = await send('POST', '/mcp', { authorization: `Bearer ${TOKEN}` }, '{"id":1}');
    expect(answer.status).toBe(299);
    expect(JSON.parse(answer.body)).toEqual({ body: '{"id":1}', clientId: 'acme/ana', token: '[verified]' });
    expect(tracked).toBe(before + 1);
  });

  it('leaves the protected-resource metadata and unknown paths to the MCP server', async () => {
    expect((await send('GET', '/.well-known/oauth-protected-resource')).status).toBe(299);
    expect((await send('GET', '/nothing-here')).status).toBe(299);
  });

  it('authenticates each /mcp request once, passed or refused, however it is spelled', async () => {
    for (const [path, token, status] of [
      ['/mcp', TOKEN, 299],
      ['/mcp', 'stolen-token-value', 401],
      ['/mcp?session=1', TOKEN, 299],
      ['/mcp?session=1', 'stolen-token-value', 401],
    ] as const) {
      const before = authentications;
      const answer = await send('POST', path, { authorization: `Bearer ${token}` }, '{}');
      expect([path, token, answer.status]).toEqual([path, token, status]);
      expect(authentications - before).toBe(1);
    }
  });

  it('passes a GET or DELETE to /mcp with its caller, tracking only a POST', async () => {
    for (const method of ['GET', 'DELETE']) {
      const before = tracked;
      const answer = await send(method, '/mcp', { authorization: `Bearer ${TOKEN}` });
      expect(answer.status).toBe(299);
      expect(JSON.parse(answer.body)).toMatchObject({ clientId: 'acme/ana', token: '[verified]' });
      expect(tracked).toBe(before);
    }
    expect((await send('GET', '/mcp')).status).toBe(401);
  });

  it('refuses a token sent twice, the good one first or last, as one joined header', async () => {
    for (const authorization of [
      [`Bearer ${TOKEN}`, 'Bearer stolen-token-value'],
      ['Bearer stolen-token-value', `Bearer ${TOKEN}`],
      [`Bearer ${TOKEN}`, `Bearer ${TOKEN}`],
    ]) {
      const answer = await send('POST', '/mcp', { authorization }, '{}');
      expect(answer.status).toBe(401);
      expect(JSON.stringify([answer, logged])).not.toContain('stolen-token-value');
    }
  });

  it('refuses a new session while draining and keeps serving an open one, with a good token', async () => {
    draining = true;
    try {
      const fresh = await send('POST', '/mcp', { authorization: `Bearer ${TOKEN}` }, '{}');
      expect(fresh.status).toBe(503);
      expect(fresh.headers['retry-after']).toBe('1');
      const open = await send(
        'POST',
        '/mcp',
        { authorization: `Bearer ${TOKEN}`, 'mcp-session-id': 's1' },
        '{}',
      );
      expect(open.status).toBe(299);
      // A 2026-07-28 tools/call goes on to the serving, which admits only a parked call's retry; any
      // other sessionless request is turned away here.
      const call = { authorization: `Bearer ${TOKEN}` };
      const modern = { ...call, 'mcp-protocol-version': '2026-07-28' };
      expect((await send('POST', '/mcp', { ...modern, 'mcp-method': 'tools/call' }, '{}')).status).toBe(299);
      for (const headers of [
        { ...modern, 'mcp-method': 'tools/list' },
        { ...call, 'mcp-method': 'tools/call' },
        { ...call, 'mcp-method': 'tools/call', 'mcp-protocol-version': '2025-11-25' },
        { ...call, 'mcp-method': 'tools/call', 'mcp-protocol-version': '2026-07-28x' },
      ])
        expect((await send('POST', '/mcp', headers, '{}')).status).toBe(503);
    } finally {
      draining = false;
    }
  });
});
