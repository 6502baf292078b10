// What the gateway answers over HTTP besides MCP itself: /healthz, /readyz, the mounted inbox, and
// the guards in front of /mcp (body size, bearer token, tenant). Every
// refusal is a short JSON answer that names no token, header value or configuration detail, plus
// a log line and an event.

import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AuthInfo } from '@modelcontextprotocol/server';
import type { Identity } from '@toolgate/core';
import { callerTokenOf, type CallerToken } from './caller-token';
import { CREDENTIALS_API_PATH, credentialsApi } from './credentials-api';
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
  /** Other apps mounted under a path prefix (the inbox). */
  mounts(): readonly Mount[];
}

export interface Mount {
  readonly prefix: string;
  handle(req: IncomingMessage, res: ServerResponse): Promise<void>;
}

export interface Readiness {
  readonly ready: boolean;
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
    upstreams: {
      total: upstreams.length,
      connected: upstreams.filter((upstream) => upstream.state === 'connected').length,
    },
    stores: { total: stores.length, ok: stores.filter((store) => store.ok).length },
  };
}

function send(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store', ...headers });
  res.end(JSON.stringify(body));
}

function mcpError(
  res: ServerResponse,
  status: number,
  message: string,
  headers: Record<string, string> = {},
): void {
  send(res, status, { jsonrpc: '2.0', error: { code: -32000, message }, id: null }, headers);
}

/** `intercept` and `authenticate` for `serveHttp`: the first answers everything but a good /mcp request. */
export function httpRoutes(host: HttpHost): {
  intercept(req: IncomingMessage, res: ServerResponse): Promise<boolean>;
  authenticate(req: IncomingMessage): AuthInfo | undefined;
} {
  const verified = new WeakMap<IncomingMessage, AuthInfo>();

  const refuse = (
    req: IncomingMessage,
    res: ServerResponse,
    status: number,
    why: string,
    message: string,
    headers?: Record<string, string>,
  ) => {
    host.log({ msg: 'http.refused', level: 'warn', status, why, method: req.method, path: pathOf(req) });
    mcpError(res, status, message, headers);
    return true;
  };

  async function intercept(req: IncomingMessage, res: ServerResponse): Promise<boolean> {
    const path = pathOf(req);
    if (path === '/healthz') {
      send(res, 200, { status: 'ok' });
      return true;
    }
    if (path === '/readyz') {
      const readiness = await host.readiness();
      // Names of upstreams and stores, their errors and tool counts, are for an operator only.
      const answer = await host.current().auth.authenticate(header(req.headers.authorization));
      const operator = answer.ok && (answer.identity.roles ?? []).includes(OPERATOR_ROLE);
      send(res, readiness.ready ? 200 : 503, operator ? readiness : readinessCounts(readiness));
      return true;
    }
    if (path === CREDENTIALS_API_PATH || path.startsWith(`${CREDENTIALS_API_PATH}/`)) {
      await credentialsApi(host, req, res, path);
      return true;
    }
    for (const mount of host.mounts()) {
      if (path === mount.prefix || path.startsWith(`${mount.prefix}/`)) {
        await mount.handle(req, res);
        return true;
      }
    }
    if (path !== MCP_PATH) return false;

    if (req.method === 'POST') {
      const length = req.headers['content-length'];
      if (length === undefined)
        return refuse(req, res, 411, 'no-length', 'Send the request body with a Content-Length header');
      if (!/^\d+$/.test(length) || Number(length) > host.maxBody())
        return refuse(
          req,
          res,
          413,
          'too-large',
          `Request body too large; the limit is ${host.maxBody()} bytes`,
        );
      if (req.headers['mcp-session-id'] === undefined && host.draining())
        return refuse(req, res, 503, 'draining', 'The gateway is shutting down; retry shortly', {
          'retry-after': '1',
        });
    }
    const runtime = host.current();
    const answer = await runtime.auth.authenticate(header(req.headers.authorization));
    if (!answer.ok) {
      const metadata = `resource_metadata="${host.baseUrl()}${RESOURCE_METADATA_PATH}"`;
      if (answer.why === 'tenant')
        return refuse(
          req,
          res,
          403,
          'unknown-tenant',
          'Forbidden: these credentials belong to no tenant this gateway serves',
        );
      return refuse(
        req,
        res,
        401,
        answer.why === 'missing' ? 'no-token' : 'bad-token',
        'Unauthorized: send a valid bearer token',
        {
          'www-authenticate':
            answer.why === 'missing' ? `Bearer ${metadata}` : `Bearer error="invalid_token", ${metadata}`,
        },
      );
    }
    if (req.method === 'POST') host.track((finished) => res.once('close', finished));
    verified.set(req, {
      // The SDK wants a string here; the token itself stays out of every object a handler sees.
      token: '[verified]',
      clientId: answer.clientId,
      scopes: [...(answer.identity.roles ?? [])],
      extra: { identity: answer.identity, ...callerExtra(answer.identity) },
    });
    return false;
  }

  return { intercept, authenticate: (req) => verified.get(req) };
}

function pathOf(req: IncomingMessage): string {
  try {
    return new URL(req.url ?? '/', 'http://localhost').pathname;
  } catch {
    return '/';
  }
}

function header(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** The verified JWT behind a caller's identity, for an upstream that exchanges it (caller-token.ts). */
function callerExtra(identity: Identity): { caller?: CallerToken } {
  const caller = callerTokenOf(identity);
  return caller === undefined ? {} : { caller };
}
