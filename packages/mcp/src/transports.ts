// Running a served set of tools: over stdio (one client, the parent process), or over Streamable
// HTTP (one SDK server per session, all sharing the dispatcher), bound to loopback by default.

import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { McpServed } from './serve';

export interface Serving {
  close(): Promise<void>;
}

/** Serves over this process's stdin/stdout. Log to stderr: stdout carries the protocol. */
export async function serveStdio(served: McpServed): Promise<Serving> {
  const transport = new StdioServerTransport();
  await served.server.connect(transport);
  return { close: () => served.server.close() };
}

export interface ServeHttpOptions {
  /** Default 127.0.0.1. On a loopback host, requests whose Host header is not loopback are refused. */
  readonly host?: string;
  /** Default 0: any free port; read it from `url`. */
  readonly port?: number;
  /** Default `/mcp`. */
  readonly path?: string;
  /**
   * Verifies the caller (e.g. a bearer token) and returns the auth info `identityFrom` reads;
   * undefined or a throw answers 401. Without it, requests carry no auth info.
   */
  readonly authenticate?: (request: IncomingMessage) => AuthInfo | undefined | Promise<AuthInfo | undefined>;
  /**
   * Origins a browser may call from; a request carrying another `Origin` gets 403 (a request with
   * no `Origin`, as from a non-browser client, is not affected). Default: bound to loopback, the
   * loopback origins (any port); bound elsewhere, only the origin the request itself names in
   * `Host`. An allowed origin gets CORS headers, including for the preflight.
   */
  readonly allowedOrigins?: readonly string[];
  /**
   * Answers a request before the MCP endpoint does, after the Host and Origin checks: resolve true
   * when it answered. A gateway serves its other routes (health, inbox) and its own 401s this way.
   */
  readonly intercept?: (request: IncomingMessage, response: ServerResponse) => boolean | Promise<boolean>;
  /** Open sessions at most; an initialize over the cap gets 503 with `Retry-After`. Default 1,000. */
  readonly maxSessions?: number;
  /** A session with no request for this long is closed. Default 10 minutes. */
  readonly sessionIdleMs?: number;
  /**
   * OAuth 2.1 resource server metadata (RFC 9728), served with `authenticate` at
   * `/.well-known/oauth-protected-resource` (and that path followed by `path`); a 401 names it in
   * `WWW-Authenticate: Bearer resource_metadata="…"`, so a standard client knows where to sign in.
   */
  readonly oauth?: ProtectedResourceOptions;
}

export interface ProtectedResourceOptions {
  /** Issuer URLs of the authorization servers whose tokens `authenticate` accepts. */
  readonly authorizationServers: readonly string[];
  readonly scopesSupported?: readonly string[];
  /** A name for people, e.g. 'Acme tools gateway'. */
  readonly resourceName?: string;
  /** The URL clients use, when it differs from what they send in `Host` (e.g. behind a TLS proxy). */
  readonly publicUrl?: string | URL;
}

export interface HttpServing extends Serving {
  /** Where clients connect, e.g. `http://127.0.0.1:43121/mcp`. */
  readonly url: URL;
  /** Sessions open now. */
  readonly sessionCount: number;
}

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '::1', '[::1]']);

interface Session {
  readonly transport: StreamableHTTPServerTransport;
  /** Who opened it: later requests in the session must come from the same client. */
  readonly clientId: string | undefined;
  /** When its last request ended; a session with a request in flight is never idle. */
  lastSeen: number;
  inFlight: number;
}

const DEFAULT_MAX_SESSIONS = 1_000;
const DEFAULT_SESSION_IDLE_MS = 10 * 60_000;

const CORS_HEADERS = {
  'access-control-allow-methods': 'GET, POST, DELETE, OPTIONS',
  'access-control-allow-headers':
    'authorization, content-type, last-event-id, mcp-protocol-version, mcp-session-id',
  'access-control-expose-headers': 'mcp-session-id, www-authenticate',
  'access-control-max-age': '600',
};

function loopbackOrigin(origin: string): boolean {
  try {
    const url = new URL(origin);
    return (url.protocol === 'http:' || url.protocol === 'https:') && LOOPBACK.has(url.hostname);
  } catch {
    return false;
  }
}

/** Whether `origin` may call: listed, or by the default for the bound host. */
function originAllowed(
  origin: string,
  req: IncomingMessage,
  allowed: readonly string[] | undefined,
  loopback: boolean,
): boolean {
  if (allowed !== undefined) return allowed.includes(origin);
  if (loopback) return loopbackOrigin(origin);
  try {
    return new URL(origin).host === req.headers.host;
  } catch {
    return false;
  }
}

function sendJson(
  res: ServerResponse,
  status: number,
  message: string,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message }, id: null }));
}

function loopbackHost(header: string | undefined): boolean {
  if (header === undefined) return false;
  try {
    return LOOPBACK.has(new URL(`http://${header}`).hostname);
  } catch {
    return false;
  }
}

const METADATA_PATH = '/.well-known/oauth-protected-resource';

/** This server's URL as the client reached it: the configured public URL, or the request's own Host. */
function resourceUrl(req: IncomingMessage, path: string, oauth: ProtectedResourceOptions | undefined): URL {
  if (oauth?.publicUrl !== undefined) return new URL(oauth.publicUrl);
  return new URL(path, `http://${req.headers.host ?? 'localhost'}`);
}

/** RFC 9728 metadata for the resource at `resource`. */
function protectedResource(
  resource: URL,
  oauth: ProtectedResourceOptions | undefined,
): Record<string, unknown> {
  return {
    resource: resource.href,
    authorization_servers: [...(oauth?.authorizationServers ?? [])],
    ...(oauth?.scopesSupported !== undefined ? { scopes_supported: [...oauth.scopesSupported] } : {}),
    bearer_methods_supported: ['header'],
    ...(oauth?.resourceName !== undefined ? { resource_name: oauth.resourceName } : {}),
  };
}

/** Where the metadata for `resource` lives (RFC 9728 §3.1: the well-known path, then the resource's path). */
function metadataUrl(resource: URL): string {
  const path = resource.pathname === '/' ? '' : resource.pathname;
  return new URL(`${METADATA_PATH}${path}`, resource.origin).href;
}

/** Serves over Streamable HTTP with sessions, so check-ins can ride elicitation mid-call. */
export async function serveHttp(served: McpServed, options: ServeHttpOptions = {}): Promise<HttpServing> {
  const host = options.host ?? '127.0.0.1';
  const path = options.path ?? '/mcp';
  const guardHost = LOOPBACK.has(host);
  const maxSessions = options.maxSessions ?? DEFAULT_MAX_SESSIONS;
  const idleMs = options.sessionIdleMs ?? DEFAULT_SESSION_IDLE_MS;
  if (!Number.isInteger(maxSessions) || maxSessions < 1)
    throw new TypeError('serveHttp: maxSessions must be a positive integer.');
  if (!(idleMs > 0))
    throw new TypeError('serveHttp: sessionIdleMs must be a positive number of milliseconds.');
  const sessions = new Map<string, Session>();
  // Initializes in progress count against the cap too, so a burst cannot overshoot it.
  let opening = 0;

  const closeIdle = (): void => {
    const now = Date.now();
    for (const session of sessions.values()) {
      if (session.inFlight === 0 && now - session.lastSeen >= idleMs) void session.transport.close();
    }
  };
  const sweeper = setInterval(closeIdle, Math.max(10, Math.min(idleMs / 2, 30_000)));
  sweeper.unref?.();

  /** Seconds until a slot may free up: the soonest idle expiry, at least one. */
  const retryAfter = (): string => {
    const now = Date.now();
    let soonest = idleMs;
    for (const session of sessions.values()) {
      if (session.inFlight === 0) soonest = Math.min(soonest, session.lastSeen + idleMs - now);
    }
    return String(Math.max(1, Math.ceil(soonest / 1000)));
  };

  async function open(req: IncomingMessage, res: ServerResponse, auth: AuthInfo | undefined): Promise<void> {
    if (sessions.size + opening >= maxSessions) {
      return sendJson(res, 503, 'Too many open sessions; retry later', { 'retry-after': retryAfter() });
    }
    opening += 1;
    try {
      const server = served.createServer();
      const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => {
          sessions.set(id, { transport, clientId: auth?.clientId, lastSeen: Date.now(), inFlight: 0 });
        },
      });
      transport.onclose = () => {
        if (transport.sessionId !== undefined) sessions.delete(transport.sessionId);
      };
      await server.connect(transport);
      await transport.handleRequest(Object.assign(req, auth === undefined ? {} : { auth }), res);
      // Anything but an initialize leaves no session behind; drop the transport it made.
      if (transport.sessionId === undefined) await transport.close();
    } finally {
      opening -= 1;
    }
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (guardHost && !loopbackHost(req.headers.host)) return sendJson(res, 403, 'Host not allowed');
    // A browser page on another site must not drive a local server (DNS rebinding, CSRF).
    const origin = req.headers.origin;
    if (origin !== undefined) {
      if (!originAllowed(origin, req, options.allowedOrigins, guardHost))
        return sendJson(res, 403, 'Origin not allowed');
      res.setHeader('access-control-allow-origin', origin);
      res.setHeader('vary', 'Origin');
      for (const [name, value] of Object.entries(CORS_HEADERS)) res.setHeader(name, value);
      if (req.method === 'OPTIONS') {
        res.writeHead(204);
        res.end();
        return;
      }
    }
    if (options.intercept !== undefined && (await options.intercept(req, res))) return;
    const pathname = new URL(req.url ?? '/', 'http://localhost').pathname;
    if (
      options.authenticate !== undefined &&
      (pathname === METADATA_PATH || pathname === `${METADATA_PATH}${path}`)
    ) {
      if (req.method !== 'GET') return sendJson(res, 405, 'Method not allowed', { allow: 'GET' });
      res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'max-age=3600' });
      res.end(JSON.stringify(protectedResource(resourceUrl(req, path, options.oauth), options.oauth)));
      return;
    }
    if (pathname !== path) return sendJson(res, 404, 'Not found');
    let auth: AuthInfo | undefined;
    if (options.authenticate !== undefined) {
      try {
        auth = await options.authenticate(req);
      } catch {
        auth = undefined;
      }
      if (auth === undefined)
        return sendJson(res, 401, 'Unauthorized', {
          'www-authenticate': `Bearer resource_metadata="${metadataUrl(resourceUrl(req, path, options.oauth))}"`,
        });
    }
    const header = req.headers['mcp-session-id'];
    const sessionId = Array.isArray(header) ? header[0] : header;
    if (sessionId === undefined) {
      if (req.method !== 'POST') return sendJson(res, 400, 'No session: initialize with a POST first');
      return open(req, res, auth);
    }
    const session = sessions.get(sessionId);
    if (session === undefined || session.clientId !== auth?.clientId)
      return sendJson(res, 404, 'Session not found');
    session.inFlight += 1;
    try {
      await session.transport.handleRequest(Object.assign(req, auth === undefined ? {} : { auth }), res);
    } finally {
      session.inFlight -= 1;
      session.lastSeen = Date.now();
    }
  }

  const http = createServer((req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) sendJson(res, 500, 'Internal server error');
      else res.end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(options.port ?? 0, host, () => {
      http.off('error', reject);
      resolve();
    });
  });
  const { port } = http.address() as AddressInfo;
  const url = new URL(`http://${host.includes(':') ? `[${host}]` : host}:${port}${path}`);
  return {
    url,
    get sessionCount() {
      return sessions.size;
    },
    async close() {
      clearInterval(sweeper);
      await Promise.all([...sessions.values()].map((session) => session.transport.close()));
      sessions.clear();
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}
