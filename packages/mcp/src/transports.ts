// Running a served set of tools: over stdio (one client, the parent process), or over Streamable
// HTTP (one SDK server per session, all sharing the dispatcher), bound to loopback by default.

import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  NodeStreamableHTTPServerTransport as StreamableHTTPServerTransport,
  toWebRequest,
  type NodeIncomingMessageLike,
} from '@modelcontextprotocol/node';
import { createMcpHandler, isLegacyRequest, type AuthInfo } from '@modelcontextprotocol/server';
import { StdioServerTransport } from '@modelcontextprotocol/server/stdio';
import { clientKeyOf, readJsonBody } from './http-limits';
import { headersWithFirstEvent } from './headers-with-first-event';
import { claimsModernEnvelope, serveModernRequest } from './modern-http';
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
   * loopback origins (any port); bound elsewhere, none: every request with an `Origin` is refused
   * (a DNS-rebinding page sends one equal to `Host`), and `onWarning` says so at start. An allowed
   * origin gets CORS headers, including for the preflight.
   */
  readonly allowedOrigins?: readonly string[];
  /**
   * Answers a request before the MCP endpoint does, after the Host check: resolve true when it
   * answered. A gateway serves its other routes (health, inbox) and its own 401s this way. The
   * Origin check applies to `path` and its protected-resource metadata only: a request for another
   * path reaches `intercept` whatever its Origin, so an app mounted there guards its own forms
   * (CSRF token, same-origin check).
   */
  readonly intercept?: (request: IncomingMessage, response: ServerResponse) => boolean | Promise<boolean>;
  /** Open sessions at most; an initialize over the cap gets 503 with `Retry-After`. Default 1,000. */
  readonly maxSessions?: number;
  /**
   * Open sessions one client may hold: the authenticated client (`AuthInfo.clientId`), else the
   * remote address (IPv6 by /64). An initialize over it gets 429 with `Retry-After`. Default 32.
   */
  readonly maxSessionsPerClient?: number;
  /**
   * A session with no traffic for this long is closed: no request from the client and no message
   * from the server. An open SSE stream does not keep it alive (keep-alive comments are not
   * traffic); a request still being answered does. Default 10 minutes.
   */
  readonly sessionIdleMs?: number;
  /** Time a client has to send a request's headers; the connection is closed after. Default 10 s. */
  readonly headersTimeoutMs?: number;
  /** Time a client has to send a request's body once its headers are in: 408 after. Default 30 s. */
  readonly bodyTimeoutMs?: number;
  /**
   * Told at start about a setting that weakens what the server guards (a non-loopback bind without
   * `allowedOrigins`). Default: one line on stderr.
   */
  readonly onWarning?: (warning: ServeHttpWarning) => void;
  /**
   * OAuth 2.1 resource server metadata (RFC 9728), served with `authenticate` at
   * `/.well-known/oauth-protected-resource` (and that path followed by `path`); a 401 names it in
   * `WWW-Authenticate: Bearer resource_metadata="…"`, so a standard client knows where to sign in.
   */
  readonly oauth?: ProtectedResourceOptions | (() => ProtectedResourceOptions);
}

/** Something an operator should know about how the server was started. */
export interface ServeHttpWarning {
  readonly code: 'BROWSER_ORIGINS_REFUSED';
  readonly message: string;
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
  /** Whose per-client cap it counts against. */
  readonly clientKey: string;
  /** Its last traffic: a request from the client, or a message from the server. */
  lastSeen: number;
  /** POST and DELETE requests still being answered; an open GET stream is not one. */
  inFlight: number;
}

const DEFAULT_MAX_SESSIONS = 1_000;
const DEFAULT_MAX_SESSIONS_PER_CLIENT = 32;
const DEFAULT_SESSION_IDLE_MS = 10 * 60_000;
const DEFAULT_HEADERS_TIMEOUT_MS = 10_000;
const DEFAULT_BODY_TIMEOUT_MS = 30_000;

const positiveInteger = (value: number, name: string): number => {
  if (!Number.isInteger(value) || value < 1)
    throw new TypeError(`serveHttp: ${name} must be a positive integer.`);
  return value;
};

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

/** Whether `origin` may call: listed, or a loopback page by default on a loopback bind; else none. */
function originAllowed(origin: string, allowed: readonly string[] | undefined, loopback: boolean): boolean {
  if (allowed !== undefined) return allowed.includes(origin);
  // Off loopback, an Origin equal to Host proves nothing: a DNS-rebinding page sends exactly that.
  return loopback && loopbackOrigin(origin);
}

function sendJson(
  res: ServerResponse,
  status: number,
  message: string,
  headers: Record<string, string> = {},
  code = -32000,
): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }));
}

// Host headers already judged: a client sends the same one on every request. Bounded, since the
// header is the client's to choose; past the bound a header is judged again, not cached.
const HOSTS_JUDGED_MAX = 64;
const hostsJudged = new Map<string, boolean>();

function safePathname(url: string): string | undefined {
  try {
    return new URL(url, 'http://localhost').pathname;
  } catch {
    return undefined;
  }
}

function loopbackHost(header: string | undefined): boolean {
  if (header === undefined) return false;
  const judged = hostsJudged.get(header);
  if (judged !== undefined) return judged;
  let loopback: boolean;
  try {
    loopback = LOOPBACK.has(new URL(`http://${header}`).hostname);
  } catch {
    loopback = false;
  }
  if (hostsJudged.size < HOSTS_JUDGED_MAX) hostsJudged.set(header, loopback);
  return loopback;
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
  // Whether a request sent to exactly `path` parses to `path` (no dot segments or escapes to resolve).
  const pathIsCanonical = safePathname(path) === path;
  const guardHost = LOOPBACK.has(host);
  const maxSessions = positiveInteger(options.maxSessions ?? DEFAULT_MAX_SESSIONS, 'maxSessions');
  const perClient = positiveInteger(
    options.maxSessionsPerClient ?? DEFAULT_MAX_SESSIONS_PER_CLIENT,
    'maxSessionsPerClient',
  );
  const headersTimeoutMs = positiveInteger(
    options.headersTimeoutMs ?? DEFAULT_HEADERS_TIMEOUT_MS,
    'headersTimeoutMs',
  );
  const bodyTimeoutMs = positiveInteger(options.bodyTimeoutMs ?? DEFAULT_BODY_TIMEOUT_MS, 'bodyTimeoutMs');
  const idleMs = options.sessionIdleMs ?? DEFAULT_SESSION_IDLE_MS;
  if (!(idleMs > 0))
    throw new TypeError('serveHttp: sessionIdleMs must be a positive number of milliseconds.');
  const warn = options.onWarning ?? ((warning: ServeHttpWarning) => console.warn(warning.message));
  if (typeof warn !== 'function') throw new TypeError('serveHttp: onWarning must be a function.');
  const sessions = new Map<string, Session>();
  // Initializes in progress count against the caps too, so a burst cannot overshoot them.
  let opening = 0;
  // Per client: sessions open plus initializes in progress.
  const heldBy = new Map<string, number>();
  const hold = (clientKey: string, change: 1 | -1): void => {
    const held = (heldBy.get(clientKey) ?? 0) + change;
    if (held <= 0) heldBy.delete(clientKey);
    else heldBy.set(clientKey, held);
  };

  const closeIdle = (): void => {
    const now = Date.now();
    for (const session of sessions.values()) {
      if (session.inFlight === 0 && now - session.lastSeen >= idleMs) void session.transport.close();
    }
  };
  const sweeper = setInterval(closeIdle, Math.max(10, Math.min(idleMs / 2, 30_000)));
  sweeper.unref?.();

  /** Seconds until a slot (of this client's, when given) may free up: the soonest idle expiry, at least one. */
  const retryAfter = (clientKey?: string): string => {
    const now = Date.now();
    let soonest = idleMs;
    for (const session of sessions.values()) {
      if (session.inFlight === 0 && (clientKey === undefined || session.clientKey === clientKey))
        soonest = Math.min(soonest, session.lastSeen + idleMs - now);
    }
    return String(Math.max(1, Math.ceil(soonest / 1000)));
  };

  async function open(
    req: IncomingMessage,
    res: ServerResponse,
    auth: AuthInfo | undefined,
    body: unknown,
  ): Promise<void> {
    if (sessions.size + opening >= maxSessions) {
      return sendJson(res, 503, 'Too many open sessions; retry later', { 'retry-after': retryAfter() });
    }
    const clientKey = clientKeyOf(req, auth);
    if ((heldBy.get(clientKey) ?? 0) >= perClient) {
      return sendJson(res, 429, 'Too many open sessions for this client; close one (DELETE) or retry later', {
        'retry-after': retryAfter(clientKey),
      });
    }
    opening += 1;
    hold(clientKey, 1);
    let initialized = false;
    try {
      const server = served.createServer();
      const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => {
          initialized = true;
          sessions.set(id, {
            transport,
            clientId: auth?.clientId,
            clientKey,
            lastSeen: Date.now(),
            inFlight: 0,
          });
        },
      });
      transport.onclose = () => {
        // The session's hold on its client's cap, taken when the initialize came in, ends with it.
        if (transport.sessionId !== undefined && sessions.delete(transport.sessionId)) hold(clientKey, -1);
      };
      await server.connect(transport);
      // A message the server sends is traffic (an SSE keep-alive comment is not): the session is alive.
      const send = transport.send.bind(transport);
      transport.send = (message, sendOptions) => {
        const session = transport.sessionId === undefined ? undefined : sessions.get(transport.sessionId);
        if (session !== undefined) session.lastSeen = Date.now();
        return send(message, sendOptions);
      };
      await transport.handleRequest(Object.assign(req, auth === undefined ? {} : { auth }), res, body);
      // Anything but an initialize leaves no session behind; drop the transport it made.
      if (transport.sessionId === undefined) await transport.close();
    } finally {
      opening -= 1;
      // An initialize that opened no session gives its hold back; one that did keeps it for the session.
      if (!initialized) hold(clientKey, -1);
    }
  }

  // 2026-07-28 requests carry their revision and capabilities in each request's _meta and need no
  // session: each gets a fresh server over the same dispatcher. Older clients keep their sessions below.
  const modern = createMcpHandler(() => served.createServer(), {
    legacy: 'reject',
    ...(served.bus !== undefined ? { bus: served.bus } : {}),
  });

  const oauthNow = (): ProtectedResourceOptions | undefined =>
    typeof options.oauth === 'function' ? options.oauth() : options.oauth;

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (guardHost && !loopbackHost(req.headers.host)) return sendJson(res, 403, 'Host not allowed');
    // A request to exactly the endpoint's path, nearly every one, needs no parse to know it.
    const pathname =
      req.url === path && pathIsCanonical ? path : new URL(req.url ?? '/', 'http://localhost').pathname;
    // The MCP endpoint and its OAuth metadata (which browser clients read, with CORS) keep the Origin
    // rule. Another app `intercept` answers (a gateway's inbox: its own pages post to it, with its own
    // CSRF token and same-origin check) is not MCP, so the rule is not its to apply.
    const mcp = pathname === path || pathname === METADATA_PATH || pathname === `${METADATA_PATH}${path}`;
    if (!mcp && options.intercept !== undefined && (await options.intercept(req, res))) return;
    // A browser page on another site must not drive a local server (DNS rebinding, CSRF).
    const origin = req.headers.origin;
    if (origin !== undefined) {
      if (!originAllowed(origin, options.allowedOrigins, guardHost))
        return sendJson(
          res,
          403,
          guardHost || options.allowedOrigins !== undefined
            ? 'Origin not allowed'
            : 'Origin not allowed: this server is not on loopback and lists no allowedOrigins',
        );
      res.setHeader('access-control-allow-origin', origin);
      res.setHeader('vary', 'Origin');
      for (const [name, value] of Object.entries(CORS_HEADERS)) res.setHeader(name, value);
      if (req.method === 'OPTIONS') {
        res.writeHead(204);
        res.end();
        return;
      }
    }
    if (mcp && options.intercept !== undefined && (await options.intercept(req, res))) return;
    if (pathname === path) headersWithFirstEvent(res);
    if (
      options.authenticate !== undefined &&
      (pathname === METADATA_PATH || pathname === `${METADATA_PATH}${path}`)
    ) {
      if (req.method !== 'GET') return sendJson(res, 405, 'Method not allowed', { allow: 'GET' });
      res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'max-age=3600' });
      const oauth = oauthNow();
      res.end(JSON.stringify(protectedResource(resourceUrl(req, path, oauth), oauth)));
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
          'www-authenticate': `Bearer resource_metadata="${metadataUrl(resourceUrl(req, path, oauthNow()))}"`,
        });
    }
    const header = req.headers['mcp-session-id'];
    const sessionId = Array.isArray(header) ? header[0] : header;
    if (sessionId === undefined && req.method !== 'POST')
      return sendJson(res, 400, 'No session: initialize with a POST first');
    // The whole body first, within its time and size: a client still sending holds no session slot.
    let body: unknown;
    if (req.method === 'POST') {
      const read = await readJsonBody(req, bodyTimeoutMs);
      if (!read.ok) {
        res.once('finish', () => req.destroy());
        return sendJson(res, read.status, read.message, { connection: 'close' }, read.code);
      }
      body = read.body;
    }
    if (sessionId === undefined) {
      // A body with the envelope claim is the modern path's whatever else it holds: no second
      // conversion and classification to learn that (the SDK's own classification still runs on it).
      if (
        claimsModernEnvelope(body) ||
        !(await isLegacyRequest(await toWebRequest(req as unknown as NodeIncomingMessageLike, body), body))
      ) {
        const listening = await served.governListen?.(body, auth);
        if (listening !== undefined && typeof listening !== 'function') {
          res.writeHead(200, { 'content-type': 'application/json' });
          const id = (body as { id?: unknown }).id ?? null;
          res.end(JSON.stringify({ jsonrpc: '2.0', id, error: listening }));
          return;
        }
        if (listening !== undefined) res.once('close', listening);
        return serveModernRequest(modern.fetch, req, res, {
          body,
          ...(auth !== undefined ? { auth } : {}),
        });
      }
      return open(req, res, auth, body);
    }
    const session = sessions.get(sessionId);
    if (session === undefined || session.clientId !== auth?.clientId)
      return sendJson(res, 404, 'Session not found');
    // A GET is the client's listening stream: it keeps the session alive only by what crosses it.
    const answering = req.method !== 'GET';
    session.lastSeen = Date.now();
    if (answering) session.inFlight += 1;
    try {
      await session.transport.handleRequest(
        Object.assign(req, auth === undefined ? {} : { auth }),
        res,
        body,
      );
    } finally {
      if (answering) session.inFlight -= 1;
      session.lastSeen = Date.now();
    }
  }

  const http = createServer(
    {
      headersTimeout: headersTimeoutMs,
      requestTimeout: headersTimeoutMs + bodyTimeoutMs,
      // Node checks both timeouts on this beat; its default (30 s) would make short ones late.
      connectionsCheckingInterval: Math.max(50, Math.min(1_000, Math.floor(headersTimeoutMs / 4))),
    },
    (req, res) => {
      handle(req, res).catch(() => {
        if (!res.headersSent) sendJson(res, 500, 'Internal server error');
        else res.end();
      });
    },
  );
  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(options.port ?? 0, host, () => {
      http.off('error', reject);
      resolve();
    });
  });
  const { port } = http.address() as AddressInfo;
  const url = new URL(`http://${host.includes(':') ? `[${host}]` : host}:${port}${path}`);
  if (!guardHost && options.allowedOrigins === undefined) {
    try {
      warn({
        code: 'BROWSER_ORIGINS_REFUSED',
        message:
          `toolgate serveHttp: ${url.href} is bound to ${host}, not loopback, without allowedOrigins: every browser request ` +
          `(one with an Origin header) is refused. Set allowedOrigins to let a web app call.`,
      });
    } catch {
      // A throwing logger must not stop the server from starting.
    }
  }
  return {
    url,
    get sessionCount() {
      return sessions.size;
    },
    async close() {
      clearInterval(sweeper);
      await modern.close();
      await Promise.all([...sessions.values()].map((session) => session.transport.close()));
      sessions.clear();
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}
