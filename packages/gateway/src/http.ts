// The gateway's HTTP side as one Hono router: every route it answers beside MCP itself, with its
// auth and its limits, listed in `gatewayRouter` below. `@toolgate/mcp`'s `serveHttp` owns the
// socket, the Host and Origin checks, the protected-resource metadata and the MCP endpoint; it hands
// each request to this router first (`intercept`), and serves it itself only when the router passes
// (a good /mcp request, the metadata, an unknown path). A good request to exactly /mcp, nearly every
// call, is admitted before the router builds anything (`admittedDirectly`). Every refusal is a short JSON answer that
// names no token, header value or configuration detail, plus a log line and an event.

import type { IncomingMessage, ServerResponse } from 'node:http';
import { getRequestListener, type HttpBindings } from '@hono/node-server';
import { RESPONSE_ALREADY_SENT } from '@hono/node-server/utils/response';
import type { AuthInfo } from '@modelcontextprotocol/server';
import type { Identity } from '@toolgate/core';
import { Hono, type Context, type MiddlewareHandler } from 'hono';
import { secureHeaders } from 'hono/secure-headers';
import { callerTokenOf, type CallerToken } from './caller-token';
import { CREDENTIALS_API_PATH, credentialsApi } from './credentials-api';
import type { AuthAnswer } from './auth';
import type { GatewayLog } from './log';
import type { Runtime } from './runtime';

export const MCP_PATH = '/mcp';
export const RESOURCE_METADATA_PATH = '/.well-known/oauth-protected-resource';

export interface HttpHost {
  current(): Runtime;
  readonly log: GatewayLog;
  /** The gateway's base URL as clients reach it (no trailing slash). */
  baseUrl(): string;
  /** Largest request body, in bytes. */
  maxBody(): number;
  readonly draining: () => boolean;
  /** A POST to /mcp is being answered; `done` runs once its response has been sent or dropped. */
  track(done: (finished: () => void) => void): void;
  /** /readyz's body. */
  readiness(): Promise<Readiness>;
  /** Other apps mounted under a path prefix (the inbox, metrics). */
  readonly mounts: readonly Mount[];
}

export interface Mount {
  readonly prefix: string;
  handle(req: IncomingMessage, res: ServerResponse): Promise<void>;
}

export interface Readiness {
  readonly ready: boolean;
  /** Shutting down: in-flight work finishes, new work goes elsewhere (so never ready). */
  readonly draining?: true;
  readonly upstreams: Readonly<
    Record<
      string,
      {
        readonly state: string;
        readonly tools: number;
        readonly error?: string;
        readonly stderr?: readonly string[];
        readonly skipped?: readonly { readonly tool: string; readonly reason: string }[];
      }
    >
  >;
  readonly stores: Readonly<
    Record<string, { readonly kind: string; readonly ok: boolean; readonly error?: string }>
  >;
}

/** The role whose token sees /readyz in detail. */
export const OPERATOR_ROLE = 'operator';

/** What /readyz tells anyone: whether the gateway is ready, and how many of its parts are. */
export function readinessCounts(readiness: Readiness): {
  readonly ready: boolean;
  readonly upstreams: { readonly total: number; readonly connected: number };
  readonly stores: { readonly total: number; readonly ok: number };
} {
  const upstreams = Object.values(readiness.upstreams);
  const stores = Object.values(readiness.stores);
  return {
    ready: readiness.ready,
    ...(readiness.draining === true ? { draining: true } : {}),
    upstreams: {
      total: upstreams.length,
      connected: upstreams.filter((upstream) => upstream.state === 'connected').length,
    },
    stores: { total: stores.length, ok: stores.filter((store) => store.ok).length },
  };
}

type Env = { Bindings: HttpBindings };

const JSON_HEADERS = { 'content-type': 'application/json', 'cache-control': 'no-store' } as const;

/** A JSON answer with exactly the headers the gateway has always sent (Hono's `c.json` adds a charset). */
function send(
  c: Context<Env>,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): Response {
  return c.body(JSON.stringify(body), status as 200, { ...JSON_HEADERS, ...headers });
}

/** The MCP error shape, for refusals in front of /mcp. */
function mcpError(c: Context<Env>, status: number, message: string, headers: Record<string, string> = {}) {
  return send(c, status, { jsonrpc: '2.0', error: { code: -32000, message }, id: null }, headers);
}

/** The router, as `serveHttp` takes it: `intercept` answers everything but what MCP serves itself. */
export function httpRoutes(host: HttpHost): {
  intercept(req: IncomingMessage, res: ServerResponse): Promise<boolean>;
  authenticate(req: IncomingMessage): AuthInfo | undefined;
} {
  const verified = new WeakMap<IncomingMessage, AuthInfo>();
  // Requests the router leaves to the MCP server: nothing was written for them.
  const passed = new WeakSet<IncomingMessage>();
  // A refused token's answer, for the router to refuse with (each request is authenticated once).
  const answered = new WeakMap<IncomingMessage, AuthAnswer>();
  const app = gatewayRouter(host, verified, passed, answered);
  const mcpMounted = host.mounts.some((mount) => mount.prefix === MCP_PATH);
  // Hono's own Request/Response stay out of the globals the MCP SDK uses; the body stays unread, for
  // the MCP server to read when the router passes.
  const listener = getRequestListener((request, env) => app.fetch(request, env), {
    overrideGlobalObjects: false,
    autoCleanupIncoming: false,
    // An HTTP/1.0 request may name no host; it is routed by its path like any other.
    hostname: 'localhost',
  });
  return {
    async intercept(req, res) {
      if (!mcpMounted && (await admittedDirectly(host, req, res, verified, answered))) return false;
      await listener(req, res);
      return !passed.has(req);
    },
    authenticate: (req) => verified.get(req),
  };
}

/** Every route of the gateway's HTTP side, its auth and its limits. */
function gatewayRouter(
  host: HttpHost,
  verified: WeakMap<IncomingMessage, AuthInfo>,
  passed: WeakSet<IncomingMessage>,
  answered: WeakMap<IncomingMessage, AuthAnswer>,
): Hono<Env> {
  // The path as sent, percent-encoding kept: a route matches exactly what it matched by hand.
  const app = new Hono<Env>({ getPath: (request) => pathOf(request.url) });

  /** Leaves the request to the MCP server (`serveHttp`), which answers it on the same response. */
  const pass = (c: Context<Env>): Response => {
    passed.add(c.env.incoming);
    return RESPONSE_ALREADY_SENT;
  };
  /** A route whose handler writes the Node response itself (an app with its own framework, a stream). */
  const node =
    (handle: (req: IncomingMessage, res: ServerResponse, path: string) => Promise<void>) =>
    async (c: Context<Env>): Promise<Response> => {
      await handle(c.env.incoming, c.env.outgoing, pathOf(c.req.url));
      return RESPONSE_ALREADY_SENT;
    };
  const refuse = (
    c: Context<Env>,
    status: number,
    why: string,
    message: string,
    headers?: Record<string, string>,
  ) => {
    host.log({
      msg: 'http.refused',
      level: 'warn',
      status,
      why,
      method: c.req.method,
      path: pathOf(c.req.url),
    });
    return mcpError(c, status, message, headers);
  };

  // Health: anyone, any method; the details of /readyz for an operator's token only.
  app.all('/healthz', secureHeaders(), (c) => send(c, 200, { status: 'ok' }));
  app.all('/readyz', secureHeaders(), async (c) => {
    const readiness = await host.readiness();
    // Names of upstreams and stores, their errors and tool counts, are for an operator only.
    const answer = await host.current().auth.authenticate(c.req.header('authorization'));
    const operator = answer.ok && (answer.identity.roles ?? []).includes(OPERATOR_ROLE);
    return send(c, readiness.ready ? 200 : 503, operator ? readiness : readinessCounts(readiness));
  });

  // The operator API: its own operator check, tenant scoping and body limit (credentials-api.ts).
  const credentials = node((req, res, path) => credentialsApi(host, req, res, path));
  app.all(CREDENTIALS_API_PATH, secureNodeHeaders, credentials);
  app.all(`${CREDENTIALS_API_PATH}/*`, secureNodeHeaders, credentials);

  // Mounted apps (the inbox, metrics): each checks its own auth, CSRF and body limit.
  for (const mount of host.mounts) {
    const handle = node((req, res) => mount.handle(req, res));
    app.all(mount.prefix, handle);
    app.all(`${mount.prefix}/*`, handle);
  }

  // MCP: a body with a declared size within listen.maxBody, no new session while draining, and a
  // verified bearer token of a served tenant; then the MCP server answers.
  app.all(MCP_PATH, mcpLimits(host, refuse), async (c) => {
    const req = c.env.incoming;
    const answer =
      answered.get(req) ?? (await host.current().auth.authenticate(c.req.header('authorization')));
    if (!answer.ok) {
      const metadata = `resource_metadata="${host.baseUrl()}${RESOURCE_METADATA_PATH}"`;
      if (answer.why === 'tenant')
        return refuse(
          c,
          403,
          'unknown-tenant',
          'Forbidden: these credentials belong to no tenant this gateway serves',
        );
      return refuse(
        c,
        401,
        answer.why === 'missing' ? 'no-token' : 'bad-token',
        'Unauthorized: send a valid bearer token',
        {
          'www-authenticate':
            answer.why === 'missing' ? `Bearer ${metadata}` : `Bearer error="invalid_token", ${metadata}`,
        },
      );
    }
    admit(host, req, c.env.outgoing, answer, verified);
    return pass(c);
  });

  // The protected-resource metadata and anything unknown: the MCP server's (it answers 404).
  app.notFound(pass);
  app.onError((_error, c) => mcpError(c, 500, 'Internal server error'));
  return app;
}

/** The headers `secureHeaders()` sets, worked out once by Hono itself. */
let secureHeaderSet: Promise<readonly [string, string][]> | undefined;

/**
 * Hono's secure headers for a route whose handler writes the Node response itself (Hono's own
 * middleware sets them on a `Response` such a handler never returns): set on the Node response first.
 */
const secureNodeHeaders: MiddlewareHandler<Env> = async (c, next) => {
  secureHeaderSet ??= Promise.resolve(
    new Hono().all('*', secureHeaders(), (probe) => probe.body(null)).request('/'),
  ).then((response) => {
    const headers: [string, string][] = [];
    response.headers.forEach((value, name) => headers.push([name, value]));
    return headers;
  });
  for (const [name, value] of await secureHeaderSet) c.env.outgoing.setHeader(name, value);
  await next();
};

/** The first revision whose requests stand alone (no session), dated as revisions are. */
const FIRST_SESSIONLESS_REVISION = '2026-07-28';

/**
 * A tools/call of a revision without sessions, by its headers, which the MCP server holds to the body
 * (an `initialize` under such a version header is refused there): while draining it goes on to the
 * serving, which admits it only when it answers a call parked here (work in flight). Nothing that
 * opens a session passes this way.
 */
function modernToolCall(c: Context<Env>): boolean {
  const revision = c.req.header('mcp-protocol-version') ?? '';
  return (
    c.req.header('mcp-method') === 'tools/call' &&
    /^\d{4}-\d{2}-\d{2}$/.test(revision) &&
    revision >= FIRST_SESSIONLESS_REVISION
  );
}

/** The limits on a POST to /mcp, checked before its token: a declared, bounded body; no new session while draining. */
function mcpLimits(
  host: HttpHost,
  refuse: (
    c: Context<Env>,
    status: number,
    why: string,
    message: string,
    headers?: Record<string, string>,
  ) => Response,
): MiddlewareHandler<Env> {
  return async (c, next) => {
    if (c.req.method === 'POST') {
      const length = c.req.header('content-length');
      if (length === undefined)
        return refuse(c, 411, 'no-length', 'Send the request body with a Content-Length header');
      if (!/^\d+$/.test(length) || Number(length) > host.maxBody())
        return refuse(c, 413, 'too-large', `Request body too large; the limit is ${host.maxBody()} bytes`);
      if (c.req.header('mcp-session-id') === undefined && host.draining() && !modernToolCall(c))
        return refuse(c, 503, 'draining', 'The gateway is shutting down; retry shortly', {
          'retry-after': '1',
        });
    }
    await next();
    return undefined;
  };
}

/** A verified /mcp request, handed to the MCP server with its caller. */
function admit(
  host: HttpHost,
  req: IncomingMessage,
  res: ServerResponse,
  answer: Extract<AuthAnswer, { ok: true }>,
  verified: WeakMap<IncomingMessage, AuthInfo>,
): void {
  if (req.method === 'POST') host.track((finished) => res.once('close', finished));
  verified.set(req, {
    // The SDK wants a string here; the token itself stays out of every object a handler sees.
    token: '[verified]',
    clientId: answer.clientId,
    scopes: [...(answer.identity.roles ?? [])],
    extra: { identity: answer.identity, ...callerExtra(answer.identity) },
  });
}

// Headers whose value the /mcp route reads, each a bit of a mask: sent twice, the router (which joins
// them) decides.
const ROUTE_HEADERS: ReadonlyMap<string, number> = new Map([
  ['authorization', 1],
  ['content-length', 2],
  ['mcp-session-id', 4],
]);

/**
 * The /mcp route without building the router's request, for what nearly every call is: exactly
 * `/mcp`, within the limits `mcpLimits` checks, each header it reads sent once, and a good token.
 * Anything else goes on to the router, which checks it all again and refuses it as it always has (a
 * refused token with the answer already had, so no token is verified twice).
 */
async function admittedDirectly(
  host: HttpHost,
  req: IncomingMessage,
  res: ServerResponse,
  verified: WeakMap<IncomingMessage, AuthInfo>,
  answered: WeakMap<IncomingMessage, AuthAnswer>,
): Promise<boolean> {
  if (req.url !== MCP_PATH) return false;
  let seen = 0;
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    const bit = ROUTE_HEADERS.get(req.rawHeaders[i]!.toLowerCase());
    if (bit === undefined) continue;
    if ((seen & bit) !== 0) return false;
    seen |= bit;
  }
  const { authorization } = req.headers;
  if (req.method === 'POST') {
    const length = req.headers['content-length'];
    if (length === undefined || !/^\d+$/.test(length) || Number(length) > host.maxBody()) return false;
    if (req.headers['mcp-session-id'] === undefined && host.draining()) return false;
  }
  const answer = await host.current().auth.authenticate(authorization);
  if (!answer.ok) {
    answered.set(req, answer);
    return false;
  }
  admit(host, req, res, answer, verified);
  return true;
}

function pathOf(url: string): string {
  try {
    return new URL(url, 'http://localhost').pathname;
  } catch {
    return '/';
  }
}

/** The verified JWT behind a caller's identity, for an upstream that exchanges it (caller-token.ts). */
function callerExtra(identity: Identity): { caller?: CallerToken } {
  const caller = callerTokenOf(identity);
  return caller === undefined ? {} : { caller };
}
