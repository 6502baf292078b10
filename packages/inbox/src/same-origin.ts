// The inbox's own CSRF guard in front of every state-changing request, beside the CSRF token each
// form carries: a browser must say the request came from the inbox's own origin. The gateway's MCP
// Origin rule does not cover the inbox (it is not MCP), so this is the inbox's to apply.

import type { Context, MiddlewareHandler } from 'hono';
import type { InboxContext } from './options';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * Whether a state-changing request may come from where the browser says it came from.
 * `Sec-Fetch-Site` (set by the browser, no page can forge it) decides first: same-origin only, or
 * `none` for a request the person started. Without it, an `Origin` must be one of the inbox's own
 * (`null`, which sandboxed frames and `data:` pages send, is not). A request with neither comes from
 * no browser: the CSRF token and the credentials decide.
 */
export function fromOwnOrigin(inbox: InboxContext, c: Context): boolean {
  const site = c.req.header('sec-fetch-site');
  if (site !== undefined) return site === 'same-origin' || site === 'none';
  const origin = c.req.header('origin');
  if (origin === undefined) return true;
  return origin === new URL(c.req.url).origin || inbox.origins.includes(origin);
}

/** Refuses a cross-site state-changing request before any route reads it; a bearer request is not a browser's. */
export function sameOriginGuard(inbox: InboxContext): MiddlewareHandler {
  return async (c, next) => {
    if (
      SAFE_METHODS.has(c.req.method) ||
      c.req.header('authorization') !== undefined ||
      fromOwnOrigin(inbox, c)
    )
      return next();
    return c.json(
      {
        error: 'cross_origin',
        message: 'Refused: this request did not come from the inbox’s own pages.',
      },
      403,
    );
  };
}
