import { request } from 'node:http';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import { serveHttp, type HttpServing, type McpServed } from '@toolgate/mcp';
import { describeServedTools } from './fixtures/conformance';
import { governedServe } from './fixtures/governed';

const tokens: Record<string, AuthInfo> = {
  'token-alice': { token: 'token-alice', clientId: 'alice', scopes: ['tools'], extra: { tenant: 'acme' } },
  'token-bob': { token: 'token-bob', clientId: 'bob', scopes: ['tools'], extra: { tenant: 'acme' } },
};

/** Bearer tokens from a fixed table: the verified token's auth info is what identityFrom reads. */
function authenticate(request: {
  headers: Record<string, string | string[] | undefined>;
}): AuthInfo | undefined {
  const header = request.headers['authorization'];
  const token = typeof header === 'string' ? header.replace(/^Bearer /, '') : '';
  return tokens[token];
}

const bearer = (token: string) => ({ requestInit: { headers: { authorization: `Bearer ${token}` } } });

let served: McpServed;
let http: HttpServing;

describeServedTools(
  'Streamable HTTP on 127.0.0.1',
  async () => {
    served = governedServe();
    http = await serveHttp(served, { port: 0, authenticate });
    return {
      identity: { principal: 'alice', tenant: 'acme' },
      transport: () => new StreamableHTTPClientTransport(http.url, bearer('token-alice')),
    };
  },
  async () => {
    await http.close();
    await served.close();
  },
);

describe('serveHttp', () => {
  let served: McpServed;
  let http: HttpServing;

  beforeAll(async () => {
    served = governedServe();
    http = await serveHttp(served, { authenticate });
  });

  afterAll(async () => {
    await http.close();
    await served.close();
  });

  it('binds to 127.0.0.1 on a free port by default and serves at /mcp', () => {
    expect(http.url.hostname).toBe('127.0.0.1');
    expect(Number(http.url.port)).toBeGreaterThan(0);
    expect(http.url.pathname).toBe('/mcp');
  });

  it('answers 401 to a client without a valid token, so it never gets a session', async () => {
    const response = await fetch(http.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        authorization: 'Bearer wrong',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } },
      }),
    });
    expect(response.status).toBe(401);
    const client = new Client({ name: 'no-token', version: '1.0.0' });
    await expect(client.connect(new StreamableHTTPClientTransport(http.url))).rejects.toThrow();
  });

  it('refuses a request whose Host header is not loopback', async () => {
    // fetch will not send a forged Host header; node:http will, as a rebinding page's browser would.
    const status = await new Promise<number | undefined>((resolve, reject) => {
      const req = request(
        http.url,
        { method: 'POST', headers: { host: 'evil.example', authorization: 'Bearer token-alice' } },
        (res) => {
          res.resume();
          resolve(res.statusCode);
        },
      );
      req.on('error', reject);
      req.end('{}');
    });
    expect(status).toBe(403);
  });

  it('gives each client its own session over one dispatcher', async () => {
    const first = new Client({ name: 'first', version: '1.0.0' });
    const second = new Client({ name: 'second', version: '1.0.0' });
    await first.connect(new StreamableHTTPClientTransport(http.url, bearer('token-alice')));
    await second.connect(new StreamableHTTPClientTransport(http.url, bearer('token-alice')));
    const [a, b] = await Promise.all([
      first.callTool({ name: 'echo', arguments: { text: 'one' } }),
      second.callTool({ name: 'echo', arguments: { text: 'two' } }),
    ]);
    expect([a.structuredContent, b.structuredContent]).toEqual([{ echoed: 'one' }, { echoed: 'two' }]);
    await Promise.all([first.close(), second.close()]);
  });

  it('does not let another client use a session it did not open', async () => {
    const owner = new Client({ name: 'owner', version: '1.0.0' });
    const transport = new StreamableHTTPClientTransport(http.url, bearer('token-alice'));
    await owner.connect(transport);
    const response = await fetch(http.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        authorization: 'Bearer token-bob',
        'mcp-session-id': transport.sessionId!,
        'mcp-protocol-version': transport.protocolVersion!,
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 9,
        method: 'tools/call',
        params: { name: 'provenance', arguments: {} },
      }),
    });
    expect(response.status).toBe(404);
    expect((await owner.callTool({ name: 'provenance', arguments: {} })).structuredContent).toMatchObject({
      principal: 'alice',
    });
    await owner.close();
  });
});
