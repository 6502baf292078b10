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
}

export interface HttpServing extends Serving {
  /** Where clients connect, e.g. `http://127.0.0.1:43121/mcp`. */
  readonly url: URL;
}

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '::1', '[::1]']);

interface Session {
  readonly transport: StreamableHTTPServerTransport;
  /** Who opened it: later requests in the session must come from the same client. */
  readonly clientId: string | undefined;
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

/** Serves over Streamable HTTP with sessions, so check-ins can ride elicitation mid-call. */
export async function serveHttp(served: McpServed, options: ServeHttpOptions = {}): Promise<HttpServing> {
  const host = options.host ?? '127.0.0.1';
  const path = options.path ?? '/mcp';
  const guardHost = LOOPBACK.has(host);
  const sessions = new Map<string, Session>();

  async function open(req: IncomingMessage, res: ServerResponse, auth: AuthInfo | undefined): Promise<void> {
    const server = served.createServer();
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        sessions.set(id, { transport, clientId: auth?.clientId });
      },
    });
    transport.onclose = () => {
      if (transport.sessionId !== undefined) sessions.delete(transport.sessionId);
    };
    await server.connect(transport);
    await transport.handleRequest(Object.assign(req, auth === undefined ? {} : { auth }), res);
    // Anything but an initialize leaves no session behind; drop the transport it made.
    if (transport.sessionId === undefined) await transport.close();
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (guardHost && !loopbackHost(req.headers.host)) return sendJson(res, 403, 'Host not allowed');
    if (new URL(req.url ?? '/', 'http://localhost').pathname !== path) return sendJson(res, 404, 'Not found');
    let auth: AuthInfo | undefined;
    if (options.authenticate !== undefined) {
      try {
        auth = await options.authenticate(req);
      } catch {
        auth = undefined;
      }
      if (auth === undefined) return sendJson(res, 401, 'Unauthorized', { 'www-authenticate': 'Bearer' });
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
    await session.transport.handleRequest(Object.assign(req, auth === undefined ? {} : { auth }), res);
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
    async close() {
      await Promise.all([...sessions.values()].map((session) => session.transport.close()));
      sessions.clear();
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}
