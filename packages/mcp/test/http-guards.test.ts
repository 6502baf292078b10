// serveHttp's guards: which Origins may call (and the CORS answers they get), the Host guard, the
// caps on open sessions (in total and per client), header and body timeouts, idle expiry that counts
// streams, memory after a burst of sessions, and what a bind off loopback refuses and says.

import { request } from 'node:http';
import { connect, type Socket } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { defineTool } from '@toolgate/core';
import { canonicalChain } from '@toolgate/middleware';
import {
  mcpServe,
  serveHttp,
  type HttpServing,
  type McpServed,
  type ServeHttpOptions,
  type ServeHttpWarning,
} from '@toolgate/mcp';
import { exposeGc } from '../../../test-support/gc';
import { governedServe } from './fixtures/governed';

interface Reply {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: string;
}

const INITIALIZE = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: {
    protocolVersion: '2025-06-18',
    capabilities: {},
    clientInfo: { name: 'guard-test', version: '1.0.0' },
  },
});

function send(url: URL, method: string, headers: Record<string, string>, body?: string): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          body: Buffer.concat(chunks).toString('utf8'),
        }),
      );
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

const initialize = (url: URL, extra: Record<string, string> = {}) =>
  send(
    url,
    'POST',
    { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...extra },
    INITIALIZE,
  );

let served: McpServed;
const servings: HttpServing[] = [];
async function serve(options: ServeHttpOptions = {}): Promise<HttpServing> {
  const http = await serveHttp(served, options);
  servings.push(http);
  return http;
}

beforeEach(() => {
  served = governedServe();
});
afterEach(async () => {
  jest.useRealTimers();
  await Promise.all(servings.splice(0).map((http) => http.close()));
  await served.close();
});

/** Fakes Date and intervals only, so the idle sweep runs on demand while sockets and timeouts stay real. */
function useFakeClock(): void {
  jest.useFakeTimers({
    doNotFake: [
      'nextTick',
      'setImmediate',
      'clearImmediate',
      'setTimeout',
      'clearTimeout',
      'queueMicrotask',
      'hrtime',
      'performance',
    ],
  });
}

/** Polls `condition` every few milliseconds, at most `limitMs`. */
async function eventually(condition: () => boolean, limitMs = 5_000): Promise<void> {
  const until = Date.now() + limitMs;
  while (!condition()) {
    if (Date.now() > until) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('serveHttp Origin checks', () => {
  it('refuses a browser request from another site with 403, bound to loopback', async () => {
    const http = await serve();

    const reply = await initialize(http.url, { origin: 'https://evil.example' });

    expect(reply.status).toBe(403);
    expect(reply.body).toContain('Origin not allowed');
    expect(http.sessionCount).toBe(0);
  });

  it('lets a loopback page call, with CORS headers that expose the session id', async () => {
    const http = await serve();

    const reply = await initialize(http.url, { origin: 'http://localhost:5173' });

    expect(reply.status).toBe(200);
    expect(reply.headers['access-control-allow-origin']).toBe('http://localhost:5173');
    expect(reply.headers['access-control-expose-headers']).toContain('mcp-session-id');
    expect(reply.headers['mcp-session-id']).toBeDefined();
  });

  it('answers an allowed preflight with 204 and the methods and headers MCP uses', async () => {
    const http = await serve();

    const reply = await send(http.url, 'OPTIONS', {
      origin: 'http://127.0.0.1:3000',
      'access-control-request-method': 'POST',
    });

    expect(reply.status).toBe(204);
    expect(reply.headers['access-control-allow-methods']).toContain('POST');
    expect(reply.headers['access-control-allow-headers']).toContain('mcp-session-id');
  });

  it('applies the Origin rule to the MCP path only: an app `intercept` mounts elsewhere judges its own', async () => {
    const seen: string[] = [];
    const http = await serve({
      intercept: (req, res) => {
        if (!req.url?.startsWith('/app')) return false;
        seen.push(String(req.headers.origin));
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.end('app');
        return true;
      },
    });
    const app = new URL('/app/sign-in', http.url);

    const form = await send(app, 'POST', { origin: 'null', 'content-length': '0' }, '');
    const mcp = await initialize(http.url, { origin: 'null' });

    expect(form.status).toBe(200);
    expect(seen).toEqual(['null']);
    expect(mcp.status).toBe(403);
    expect(mcp.body).toContain('Origin not allowed');
    expect(http.sessionCount).toBe(0);
    // The MCP path's metadata keeps the rule and its CORS answer, even when `intercept` serves it.
    const metadata = new URL('/.well-known/oauth-protected-resource/mcp', http.url);
    expect((await send(metadata, 'GET', { origin: 'https://evil.example' })).status).toBe(403);
    const allowed = await send(metadata, 'GET', { origin: 'http://localhost:5173' });
    expect(allowed.headers['access-control-allow-origin']).toBe('http://localhost:5173');
  });

  it('with allowedOrigins, exactly those origins may call', async () => {
    const http = await serve({ allowedOrigins: ['https://app.example'] });

    expect((await initialize(http.url, { origin: 'https://app.example' })).status).toBe(200);
    expect((await initialize(http.url, { origin: 'http://localhost:5173' })).status).toBe(403);
  });

  it('a request without an Origin, as from a non-browser client, is served', async () => {
    const http = await serve();

    expect((await initialize(http.url)).status).toBe(200);
  });

  it('keeps the Host guard: a non-loopback Host is refused on a loopback server', async () => {
    const http = await serve();

    const reply = await initialize(http.url, { host: 'evil.example' });

    expect(reply.status).toBe(403);
    expect(reply.body).toContain('Host not allowed');
  });

  it('judges each Host alike however many a client sends: past the remembered ones, and again after', async () => {
    const http = await serve();
    const port = http.url.port;
    const hostOf = (host: string) => send(http.url, 'GET', { host });

    // Enough foreign names to fill what the guard remembers, and loopback ones in among them.
    for (let i = 0; i < 80; i += 1) expect((await hostOf(`evil${i}.example:${port}`)).status).toBe(403);
    expect((await hostOf(`localhost:${port}`)).status).not.toBe(403);
    expect((await hostOf(`[::1]:${port}`)).status).not.toBe(403);
    // Asked again, remembered or not: a rebinding name that resembles loopback stays out.
    for (const host of [
      'evil0.example',
      `localhost.evil.example:${port}`,
      `127.0.0.1.evil.example`,
      `evil79.example:${port}`,
    ])
      expect((await hostOf(host)).status).toBe(403);
    expect((await hostOf(`127.0.0.1:${port}`)).status).not.toBe(403);
    expect((await hostOf(`localhost:${port}`)).status).not.toBe(403);
  });

  it('serves the endpoint by its parsed path: a query reaches it, a longer or escaped path does not', async () => {
    const http = await serve();
    const at = (path: string) => new URL(path, http.url);

    expect((await initialize(at('/mcp'))).status).toBe(200);
    expect((await initialize(at('/mcp?x=1'))).status).toBe(200);
    expect((await initialize(at('/mcp/'))).status).toBe(404);
    expect((await initialize(at('/%6Dcp'))).status).toBe(404);
  });
});

describe('serveHttp session bounds', () => {
  it('over maxSessions, an initialize gets 503 with Retry-After; a closed session frees its slot', async () => {
    const http = await serve({ maxSessions: 2, sessionIdleMs: 60_000 });
    const first = await initialize(http.url);
    await initialize(http.url);

    const refused = await initialize(http.url);

    expect(refused.status).toBe(503);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(Number(refused.headers['retry-after'])).toBeLessThanOrEqual(60);
    expect(http.sessionCount).toBe(2);
    const closed = await send(http.url, 'DELETE', {
      'mcp-session-id': String(first.headers['mcp-session-id']),
    });
    expect(closed.status).toBe(200);
    await eventually(() => http.sessionCount === 1);
    expect((await initialize(http.url)).status).toBe(200);
  });

  it('closes a session idle past sessionIdleMs; its id is then unknown', async () => {
    useFakeClock();
    const http = await serve({ sessionIdleMs: 60_000 });
    const opened = await initialize(http.url);
    const id = String(opened.headers['mcp-session-id']);
    jest.advanceTimersByTime(59_000);
    expect(http.sessionCount).toBe(1);

    jest.advanceTimersByTime(31_000);
    await eventually(() => http.sessionCount === 0);

    const later = await send(
      http.url,
      'POST',
      {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-session-id': id,
      },
      JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }),
    );
    expect(later.status).toBe(404);
  });

  it('refuses bounds that make no sense at start', async () => {
    await expect(serveHttp(served, { maxSessions: 0 })).rejects.toThrow(/maxSessions/);
    await expect(serveHttp(served, { sessionIdleMs: -1 })).rejects.toThrow(/sessionIdleMs/);
  });

  it('after 2,000 sessions open and idle out, memory returns to its baseline', async () => {
    const gc = exposeGc()!;
    useFakeClock();
    const http = await serve({ maxSessions: 2_500, maxSessionsPerClient: 2_500, sessionIdleMs: 60_000 });
    const heap = () => {
      gc();
      return process.memoryUsage().heapUsed;
    };
    /** Opens 2,000 sessions, lets them idle out; answers the heap with them open. */
    const round = async () => {
      for (let batch = 0; batch < 40; batch++) {
        const replies = await Promise.all(Array.from({ length: 50 }, () => initialize(http.url)));
        expect(replies.every((reply) => reply.status === 200)).toBe(true);
      }
      expect(http.sessionCount).toBe(2_000);
      const open = heap();
      jest.advanceTimersByTime(90_000);
      await eventually(() => http.sessionCount === 0, 20_000);
      return open;
    };
    // The first round warms code and caches, and lets garbage from earlier tests in this worker go;
    // the baseline is taken after it, so only what sessions keep can show.
    await round();
    const baseline = heap();

    const loaded = await round();
    const after = heap();

    // 2,000 open sessions must show (about 2.4 kB each on the SDK v2, 4.8 MB measured), so a leak can.
    // Measured from the lower of the two closed heaps: on a busy machine the first round's leftovers
    // can still sit in the baseline and go during the second round.
    const held = loaded - Math.min(baseline, after);
    expect(held).toBeGreaterThan(2 * 1024 * 1024);
    // A leak of each session would keep most of what they held open.
    expect(after - baseline).toBeLessThan(held / 4);
  }, 90_000);
});

// ——— One client cannot take the server over (#20 item 13) ———

const INITIALIZED = JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' });
const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

/** An initialize sent from a given loopback source address (127.0.0.0/8 is all this host's). */
function initializeFrom(url: URL, localAddress: string, extra: Record<string, string> = {}): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      { method: 'POST', headers: { ...MCP_HEADERS, ...extra }, agent: false, localAddress },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: Buffer.concat(chunks).toString(),
          }),
        );
      },
    );
    req.on('error', reject);
    req.end(INITIALIZE);
  });
}

/** A raw TCP connection that sends `text` and then nothing; resolves with what came back once it closed. */
function stalled(url: URL, text: string): { closed: Promise<string>; socket: Socket } {
  const socket = connect(Number(url.port), url.hostname);
  socket.write(text);
  let received = '';
  socket.on('data', (chunk: Buffer) => (received += chunk.toString()));
  const closed = new Promise<string>((resolve) => socket.on('close', () => resolve(received)));
  socket.on('error', () => undefined);
  return { closed, socket };
}

/** Resolves with `value`, or rejects after `ms` of real time: a generous bound, not a measurement. */
function within<T>(value: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not happen within ${ms} ms`)), ms);
  });
  return Promise.race([value, late]).finally(() => clearTimeout(timer));
}

describe('serveHttp per-client session caps', () => {
  it('one unauthenticated client holds at most 32 sessions by default (429 after), and others still get in', async () => {
    const http = await serve();
    const replies: Reply[] = [];
    for (let batch = 0; batch < 5; batch++)
      replies.push(...(await Promise.all(Array.from({ length: 20 }, () => initialize(http.url)))));

    const statuses = replies.map((reply) => reply.status);
    expect(statuses.filter((status) => status === 200)).toHaveLength(32);
    expect(statuses.filter((status) => status === 429)).toHaveLength(68);
    const refused = replies.find((reply) => reply.status === 429)!;
    expect(refused.body).toContain('Too many open sessions for this client');
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(http.sessionCount).toBe(32);
    expect((await initializeFrom(http.url, '127.0.0.2')).status).toBe(200);
    expect(http.sessionCount).toBe(33);
  });

  it('a client that closes a session (DELETE) may open another', async () => {
    const http = await serve({ maxSessionsPerClient: 2 });
    const first = await initialize(http.url);
    await initialize(http.url);
    expect((await initialize(http.url)).status).toBe(429);

    await send(http.url, 'DELETE', { 'mcp-session-id': String(first.headers['mcp-session-id']) });
    await eventually(() => http.sessionCount === 1);

    expect((await initialize(http.url)).status).toBe(200);
  });

  it('with authentication, the cap counts per authenticated client, not per address', async () => {
    const http = await serve({
      maxSessionsPerClient: 2,
      authenticate: (req) => {
        const token = String(req.headers['authorization'] ?? '').replace(/^Bearer /, '');
        return ['alice', 'bob'].includes(token) ? { token, clientId: token, scopes: [] } : undefined;
      },
    });
    const as = (who: string) => initialize(http.url, { authorization: `Bearer ${who}` });

    expect([(await as('alice')).status, (await as('alice')).status, (await as('alice')).status]).toEqual([
      200, 200, 429,
    ]);
    expect((await as('bob')).status).toBe(200);
  });
});

describe('serveHttp request timeouts', () => {
  it('a body that never finishes holds no session slot, and gets 408 after bodyTimeoutMs', async () => {
    const http = await serve({ maxSessions: 1, bodyTimeoutMs: 300 });
    const slow = stalled(
      http.url,
      `POST ${http.url.pathname} HTTP/1.1\r\nHost: ${http.url.host}\r\ncontent-type: application/json\r\n` +
        `accept: application/json, text/event-stream\r\ncontent-length: ${INITIALIZE.length}\r\n\r\n` +
        INITIALIZE.slice(0, 20),
    );

    // While it is still sending, the one session slot is free for a client that finishes.
    expect((await initialize(http.url)).status).toBe(200);
    expect(http.sessionCount).toBe(1);

    const answer = await within(slow.closed, 5_000, 'closing the stalled body');
    expect(answer).toMatch(/^HTTP\/1\.1 408 /);
    expect(answer).toContain('Request body not received in time');
  });

  it('headers that never finish are cut off after headersTimeoutMs', async () => {
    const http = await serve({ headersTimeoutMs: 200 });
    const slow = stalled(
      http.url,
      `POST ${http.url.pathname} HTTP/1.1\r\nHost: ${http.url.host}\r\nx-slow: `,
    );

    // Node's default would hold it for a minute; the bound is far above 200 ms and far below that.
    await within(slow.closed, 5_000, 'closing the stalled headers');
  });

  it('a body over 4 MB gets 413, and a body that is not JSON a parse error', async () => {
    const http = await serve();

    const large = await send(http.url, 'POST', MCP_HEADERS, ' '.repeat(4 * 1024 * 1024 + 1));
    const broken = await send(http.url, 'POST', MCP_HEADERS, '{"jsonrpc":');

    expect(large.status).toBe(413);
    expect(broken.status).toBe(400);
    expect(JSON.parse(broken.body)).toMatchObject({ error: { code: -32700 } });
    expect(http.sessionCount).toBe(0);
  });

  it('refuses timeouts and caps that make no sense at start', async () => {
    await expect(serveHttp(served, { maxSessionsPerClient: 0 })).rejects.toThrow(/maxSessionsPerClient/);
    await expect(serveHttp(served, { headersTimeoutMs: 0 })).rejects.toThrow(/headersTimeoutMs/);
    await expect(serveHttp(served, { bodyTimeoutMs: 1.5 })).rejects.toThrow(/bodyTimeoutMs/);
  });
});

describe('serveHttp idle expiry counts streams', () => {
  /** Opens a session over raw HTTP and its standalone SSE stream; resolves once the stream is open. */
  async function sessionWithStream(url: URL) {
    const opened = await initialize(url);
    const id = String(opened.headers['mcp-session-id']);
    await send(url, 'POST', { ...MCP_HEADERS, 'mcp-session-id': id }, INITIALIZED);
    let ended = false;
    let events = '';
    const stream = request(url, {
      method: 'GET',
      headers: { accept: 'text/event-stream', 'mcp-session-id': id },
      agent: false,
    });
    const open = new Promise<void>((resolve, reject) => {
      stream.on('response', (res) => {
        expect(res.statusCode).toBe(200);
        res.on('data', (chunk: Buffer) => (events += chunk.toString()));
        res.on('end', () => (ended = true));
        res.on('close', () => (ended = true));
        resolve();
      });
      stream.on('error', reject);
    });
    stream.end();
    await open;
    return { id, isEnded: () => ended, events: () => events };
  }

  it('a session holding an SSE stream with no traffic is closed after sessionIdleMs, and its stream ends', async () => {
    useFakeClock();
    const http = await serve({ sessionIdleMs: 60_000 });
    const { isEnded, events } = await sessionWithStream(http.url);
    expect(http.sessionCount).toBe(1);

    // Keep-alive comments cross the stream meanwhile; they are not traffic.
    jest.advanceTimersByTime(59_000);
    expect(http.sessionCount).toBe(1);
    jest.advanceTimersByTime(31_000);

    await eventually(() => http.sessionCount === 0 && isEnded());
    expect(events()).not.toContain('data:');
  });

  it('traffic on the session, a request from the client, puts off its expiry', async () => {
    useFakeClock();
    const http = await serve({ sessionIdleMs: 60_000 });
    const { id, isEnded } = await sessionWithStream(http.url);
    const ping = () =>
      send(
        http.url,
        'POST',
        { ...MCP_HEADERS, 'mcp-session-id': id },
        JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'ping' }),
      );

    jest.advanceTimersByTime(45_000);
    expect((await ping()).status).toBe(200);
    jest.advanceTimersByTime(45_000);
    expect(http.sessionCount).toBe(1);
    expect(isEnded()).toBe(false);

    jest.advanceTimersByTime(61_000);
    await eventually(() => http.sessionCount === 0 && isEnded());
  });

  it("the SDK client's own session, with the stream it opens, idles out; its next call then fails", async () => {
    useFakeClock();
    const http = await serve({ sessionIdleMs: 60_000 });
    const client = new Client({ name: 'idle-client', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(http.url));
    expect((await client.listTools()).tools.length).toBeGreaterThan(0);
    // The client opens its listening stream on its own; a second one is refused while it is open.
    await eventuallyAsync(async () => {
      const second = await send(http.url, 'GET', {
        accept: 'text/event-stream',
        'mcp-session-id': String((client.transport as StreamableHTTPClientTransport).sessionId),
      });
      return second.status === 409;
    });

    jest.advanceTimersByTime(91_000);
    await eventually(() => http.sessionCount === 0);

    await expect(client.listTools()).rejects.toThrow();
    await client.close();
  });
});

describe('serveHttp bound off loopback (#20 item 14)', () => {
  function countingServe() {
    let runs = 0;
    const echo = defineTool({
      name: 'echo',
      description: 'Echoes.',
      inputSchema: { type: 'object', properties: { text: { type: 'string' } } },
      execute: ({ text }) => {
        runs++;
        return String(text);
      },
    });
    const custom = mcpServe([echo], { name: 'open', version: '1.0.0', chain: canonicalChain() });
    return { custom, runs: () => runs };
  }
  const local = (http: HttpServing) => new URL(`http://127.0.0.1:${http.url.port}${http.url.pathname}`);

  it('without allowedOrigins it warns at start and refuses a DNS-rebinding page (Origin equal to Host); the tool never runs', async () => {
    const { custom, runs } = countingServe();
    const warnings: ServeHttpWarning[] = [];
    const http = await serveHttp(custom, { host: '0.0.0.0', onWarning: (w) => warnings.push(w) });
    servings.push(http);
    const url = local(http);
    const rebound = `evil.example:${url.port}`;
    try {
      expect(warnings).toEqual([
        {
          code: 'BROWSER_ORIGINS_REFUSED',
          message: expect.stringContaining('not loopback, without allowedOrigins: every browser request'),
        },
      ]);
      // A non-browser client (no Origin) is served: the real SDK client runs the tool.
      const client = new Client({ name: 'agent', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(url));
      expect(await client.callTool({ name: 'echo', arguments: { text: 'hi' } })).toMatchObject({
        content: [{ type: 'text', text: 'hi' }],
      });
      expect(runs()).toBe(1);

      const page = { host: rebound, origin: `http://${rebound}` };
      const opened = await initialize(url, page);
      const sessionId = String((client.transport as StreamableHTTPClientTransport).sessionId);
      const call = await send(
        url,
        'POST',
        { ...MCP_HEADERS, ...page, 'mcp-session-id': sessionId },
        JSON.stringify({
          jsonrpc: '2.0',
          id: 9,
          method: 'tools/call',
          params: { name: 'echo', arguments: {} },
        }),
      );
      const preflight = await send(url, 'OPTIONS', { ...page, 'access-control-request-method': 'POST' });

      expect(opened.status).toBe(403);
      expect(opened.body).toContain('not on loopback and lists no allowedOrigins');
      expect(call.status).toBe(403);
      expect(preflight.status).toBe(403);
      expect(preflight.headers['access-control-allow-origin']).toBeUndefined();
      expect(runs()).toBe(1);
      await client.close();
    } finally {
      await custom.close();
    }
  });

  it('with allowedOrigins, it does not warn and exactly those origins may call', async () => {
    const { custom } = countingServe();
    const warnings: ServeHttpWarning[] = [];
    const http = await serveHttp(custom, {
      host: '0.0.0.0',
      allowedOrigins: ['https://app.example'],
      onWarning: (w) => warnings.push(w),
    });
    servings.push(http);
    try {
      expect(warnings).toEqual([]);
      expect((await initialize(local(http), { origin: 'https://app.example' })).status).toBe(200);
      expect((await initialize(local(http), { origin: `http://${local(http).host}` })).status).toBe(403);
    } finally {
      await custom.close();
    }
  });

  it('by default the warning is one line on stderr, and a throwing logger does not stop the start', async () => {
    const { custom } = countingServe();
    const lines: string[] = [];
    const spy = jest.spyOn(console, 'warn').mockImplementation((line: unknown) => lines.push(String(line)));
    try {
      servings.push(await serveHttp(custom, { host: '0.0.0.0' }));
      servings.push(
        await serveHttp(custom, {
          host: '0.0.0.0',
          onWarning: () => {
            throw new Error('logger down');
          },
        }),
      );
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(
        /^toolgate serveHttp: http:\/\/0\.0\.0\.0:\d+\/mcp is bound to 0\.0\.0\.0, not loopback/,
      );
      expect(lines[0]).not.toContain('\n');
    } finally {
      spy.mockRestore();
      await custom.close();
    }
  });
});

/** Polls an async `condition` every few milliseconds, at most `limitMs`. */
async function eventuallyAsync(condition: () => Promise<boolean>, limitMs = 5_000): Promise<void> {
  const until = Date.now() + limitMs;
  while (!(await condition())) {
    if (Date.now() > until) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
