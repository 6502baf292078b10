// What keeps one HTTP client from taking serveHttp over: who a client is (for its session cap), and a
// request body read whole, within a size and a time, before it may hold anything of the server's.

import { isIP } from 'node:net';
import type { IncomingMessage } from 'node:http';
import type { AuthInfo } from '@modelcontextprotocol/server';

/** The SDK's own limit on one JSON-RPC message. */
export const MAX_BODY_BYTES = 4 * 1024 * 1024;

/**
 * Whose sessions a request counts against: the authenticated client when there is one, else the
 * remote address (an IPv6 address by its /64, which one host can rotate through). Proxy headers are
 * not read: anyone can write them.
 */
export function clientKeyOf(req: IncomingMessage, auth: AuthInfo | undefined): string {
  if (auth !== undefined && typeof auth.clientId === 'string' && auth.clientId !== '')
    return `client ${auth.clientId}`;
  const address = req.socket.remoteAddress ?? 'unknown';
  const v4 = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1];
  if (v4 !== undefined) return `address ${v4}`;
  return isIP(address) === 6 ? `address ${ipv6Prefix64(address)}::/64` : `address ${address}`;
}

/** The first four groups of an IPv6 address, written out in full. */
function ipv6Prefix64(address: string): string {
  const [head = '', tail = ''] = address.split('%')[0]!.split('::');
  const headGroups = head === '' ? [] : head.split(':');
  const tailGroups = address.includes('::') && tail !== '' ? tail.split(':') : [];
  const missing = 8 - headGroups.length - tailGroups.length;
  const groups = address.includes('::')
    ? [...headGroups, ...new Array<string>(Math.max(0, missing)).fill('0'), ...tailGroups]
    : headGroups;
  return groups
    .slice(0, 4)
    .map((group) => group.toLowerCase().padStart(4, '0'))
    .join(':');
}

export type BodyRead =
  | { readonly ok: true; readonly body: unknown }
  | { readonly ok: false; readonly status: number; readonly code: number; readonly message: string };

/**
 * Reads a request's JSON body whole, or says why not: too large (413), not finished within
 * `timeoutMs` (408), or not JSON (400, a JSON-RPC parse error). Nothing of the server's is held for
 * the client while it sends.
 */
export function readJsonBody(req: IncomingMessage, timeoutMs: number): Promise<BodyRead> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const finish = (result: BodyRead): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      resolve(result);
    };
    const timer = setTimeout(
      () => finish({ ok: false, status: 408, code: -32000, message: 'Request body not received in time' }),
      timeoutMs,
    );
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES)
        finish({ ok: false, status: 413, code: -32000, message: 'Request body too large' });
      else chunks.push(chunk);
    };
    const onEnd = (): void => {
      try {
        // Nearly every body arrives as one chunk: read in place, not copied first.
        const whole = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
        finish({ ok: true, body: JSON.parse(whole.toString('utf8')) as unknown });
      } catch {
        finish({ ok: false, status: 400, code: -32700, message: 'Parse error: the body is not JSON' });
      }
    };
    const onError = (): void =>
      finish({ ok: false, status: 400, code: -32000, message: 'Request body could not be read' });
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
  });
}
