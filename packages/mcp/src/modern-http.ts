// A 2026-07-28 request over Node HTTP: told from a 2025-11-25 one without converting it twice, and
// handed to the SDK's per-request handler as one web Request beside the body already parsed.

import type { IncomingMessage, ServerResponse } from 'node:http';
import { PROTOCOL_VERSION_META_KEY, type AuthInfo } from '@modelcontextprotocol/server';

/** The SDK's modern entry (`createMcpHandler(...).fetch`). */
export type ModernFetch = (
  request: Request,
  options: { authInfo?: AuthInfo; parsedBody?: unknown },
) => Promise<Response>;

const plainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * Whether a parsed POST body is one the SDK's routing can only answer on its modern path (served, or
 * refused there): a single message, not a response, carrying the per-request envelope claim (the
 * protocol-version key in `params._meta`), and not an `initialize` (whose claim the SDK must judge
 * valid before it overrides the legacy handshake). False says nothing: ask `isLegacyRequest`.
 */
export function claimsModernEnvelope(body: unknown): boolean {
  if (!plainObject(body) || 'result' in body || 'error' in body || body['method'] === 'initialize')
    return false;
  const params = body['params'];
  if (!plainObject(params)) return false;
  const meta = params['_meta'];
  return plainObject(meta) && PROTOCOL_VERSION_META_KEY in meta;
}

// What describes a body the Request does not carry.
const BODY_HEADERS = new Set(['content-length', 'content-encoding', 'transfer-encoding']);

const first = (value: string | string[] | undefined): string | undefined =>
  Array.isArray(value) ? value[0] : value;

/**
 * The request as the web handler reads it: the client's method, URL and headers. The body travels
 * parsed (`parsedBody`), which the SDK then reads instead of the stream, so the Request carries none
 * (building one from bytes costs a copy and a stream per request for nobody to read).
 */
function webRequestOf(req: IncomingMessage, signal: AbortSignal): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined || name.startsWith(':') || BODY_HEADERS.has(name)) continue;
    if (Array.isArray(value)) for (const item of value) headers.append(name, item);
    else headers.set(name, value);
  }
  return new Request(`http://${first(req.headers.host) ?? 'localhost'}${req.url ?? '/'}`, {
    method: (req.method ?? 'GET').toUpperCase(),
    headers,
    signal,
  });
}

/** The JSON-RPC id an adapter-made error may echo: a request's string or number id, else null. */
function echoableId(body: unknown): string | number | null {
  if (!plainObject(body) || typeof body['method'] !== 'string') return null;
  const id = body['id'];
  return typeof id === 'string' || typeof id === 'number' ? id : null;
}

/**
 * Answers one 2026-07-28 request through the SDK's web handler, as its Node adapter does (the exchange
 * is aborted when the client goes away; a streamed answer waits for the socket to drain), with the
 * body already read and parsed rather than serialized again.
 */
export async function serveModernRequest(
  fetch: ModernFetch,
  req: IncomingMessage,
  res: ServerResponse,
  exchange: { readonly body: unknown; readonly auth?: AuthInfo },
): Promise<void> {
  let finished = false;
  const abort = new AbortController();
  res.on('close', () => {
    if (!finished) abort.abort();
  });
  if (res.destroyed) abort.abort();
  let response: Response;
  try {
    response = await fetch(webRequestOf(req, abort.signal), {
      ...(exchange.auth !== undefined ? { authInfo: exchange.auth } : {}),
      ...(exchange.body !== undefined ? { parsedBody: exchange.body } : {}),
    });
  } catch {
    response = Response.json(
      {
        jsonrpc: '2.0',
        error: { code: -32603, message: 'Internal server error' },
        id: echoableId(exchange.body),
      },
      { status: 500 },
    );
  }
  const headers: Record<string, string> = {};
  response.headers.forEach((value, name) => (headers[name] = value));
  res.writeHead(response.status, headers);
  if (response.body === null) {
    finished = true;
    res.end();
    return;
  }
  const reader = response.body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      // The client left: cancelling the stream ends the exchange on the server's side too.
      if (abort.signal.aborted) {
        await reader.cancel();
        break;
      }
      if (!res.write(value)) await writable(res, abort.signal);
    }
  } catch {
    // The stream failed or the client left: end what was sent.
  }
  finished = true;
  res.end();
}

/** Resolves once `res` drains or its client leaves: a stream waits only when the socket is behind. */
function writable(res: ServerResponse, left: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      res.off('drain', done);
      left.removeEventListener('abort', done);
      resolve();
    };
    res.once('drain', done);
    left.addEventListener('abort', done, { once: true });
    if (left.aborted) done();
  });
}
