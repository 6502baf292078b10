// serveHttp's guards: which Origins may call (and the CORS answers they get), the Host guard, the
// cap on open sessions and idle expiry, and memory after a burst of sessions.

import { request } from 'node:http';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { serveHttp, type HttpServing, type McpServed, type ServeHttpOptions } from '@toolgate/mcp';
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
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    useFakeClock();
    const http = await serve({ maxSessions: 2_500, sessionIdleMs: 60_000 });
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

    expect(loaded - baseline).toBeGreaterThan(5 * 1024 * 1024);
    // A leak of each session would keep most of what they held open.
    expect(after - baseline).toBeLessThan((loaded - baseline) / 4);
  }, 90_000);
});
