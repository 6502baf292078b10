// inboxApp: the approval inbox as one Hono app any server can mount. Route groups live in routes/,
// views in views/; this file adds the security headers every response carries and wires them up.

import { Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { secureHeaders } from 'hono/secure-headers';
import { SCRIPT, STYLE } from './assets';
import { inboxContext, type InboxOptions } from './options';
import { apiRoutes } from './routes/api';
import { eventRoutes } from './routes/events';
import { linkRoutes } from './routes/links';
import { pageRoutes } from './routes/pages';
import { sameOriginGuard } from './same-origin';
import { webhookDelivery } from './webhook';

/** No inline script or style, nothing from elsewhere, no framing, forms only to this inbox. */
const CSP = {
  defaultSrc: ["'none'"],
  scriptSrc: ["'self'"],
  styleSrc: ["'self'"],
  imgSrc: ["'self'", 'data:'],
  connectSrc: ["'self'"],
  formAction: ["'self'"],
  frameAncestors: ["'none'"],
  baseUri: ["'none'"],
};

const MAX_BODY_BYTES = 2 * 1024 * 1024;

/** The Hono app, plus the webhook's delivery when one is configured. */
export type InboxApp = Hono & {
  /** Posts new check-ins to the webhook now (a scheduled worker calls it); answers how many. 0 without a webhook. */
  deliverWebhook(): Promise<number>;
  /** Stops the webhook's poller. */
  close(): void;
};

/**
 * The approval inbox: lists the check-ins an approver may decide, shows each in full, and records
 * approve / approve with changes / decline in the check-in store, as pages and as a JSON API.
 *
 * @example
 * const inbox = inboxApp({ checkIns, checkInKey, approvers: staticApprovers([...]), basePath: '/inbox' });
 * server.route('/', inbox); // or serve(inbox) on its own
 */
export function inboxApp(options: InboxOptions): InboxApp {
  const inbox = inboxContext(options);
  const root = new Hono({ strict: false });
  const app = root.basePath(inbox.base === '' ? '/' : inbox.base);

  app.use(
    '*',
    secureHeaders({
      contentSecurityPolicy: CSP,
      // Same-origin only: the inbox's own form posts then carry its real Origin, nothing leaves for elsewhere.
      referrerPolicy: 'same-origin',
      xFrameOptions: 'DENY',
      crossOriginOpenerPolicy: 'same-origin',
      // Whether a host is HTTPS-only is its operator's to declare (the inbox is often served on loopback).
      strictTransportSecurity: false,
    }),
  );
  app.use('*', async (c, next) => {
    await next();
    if (!c.res.headers.has('Cache-Control')) c.header('Cache-Control', 'no-store');
  });
  app.use(
    '*',
    bodyLimit({
      maxSize: MAX_BODY_BYTES,
      onError: (c) => c.json({ error: 'too_large', message: 'The request body is too large.' }, 413),
    }),
  );

  app.use('*', sameOriginGuard(inbox));

  app.get('/static/inbox.js', (c) => {
    c.header('Cache-Control', 'public, max-age=300');
    return c.body(SCRIPT, 200, { 'Content-Type': 'text/javascript; charset=utf-8' });
  });
  app.get('/static/inbox.css', (c) => {
    c.header('Cache-Control', 'public, max-age=300');
    return c.body(STYLE, 200, { 'Content-Type': 'text/css; charset=utf-8' });
  });

  app.route('/api', apiRoutes(inbox));
  app.route('/', eventRoutes(inbox));
  const delivery = inbox.webhook === undefined ? undefined : webhookDelivery(inbox, inbox.webhook);
  if (inbox.webhook !== undefined) app.route('/', linkRoutes(inbox, inbox.webhook));
  app.route('/', pageRoutes(inbox));

  return Object.assign(root, {
    deliverWebhook: () => delivery?.deliver() ?? Promise.resolve(0),
    close: () => delivery?.stop(),
  });
}
