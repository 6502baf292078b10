// The pages webhook links open: the check-in in full and one form, approve or decline, as the link
// says. The link is the credential, so no sign-in is needed; the decision records `webhook.by`.

import type { Context } from 'hono';
import { Hono } from 'hono';
import { html } from 'hono/html';
import { mayDecide } from '../approvers';
import { decide } from '../decide';
import { linkCsrf, linkCsrfValid, readLink, type LinkClaim } from '../links';
import type { InboxContext, InboxWebhook } from '../options';
import { decidable } from '../records';
import { checkInPage, noticeFor, type Notice } from '../views/check-in';
import { layout } from '../views/layout';
import { screenView } from '../views/screen';

const DEFAULT_BY = 'webhook link';

function invalid(inbox: InboxContext, c: Context): Response | Promise<Response> {
  const body = html`<h1>This link cannot be used</h1>
    <p>It is not valid, or it has expired. Open the check-in in the inbox instead.</p>`;
  return c.html(layout({ base: inbox.base, title: 'Link expired' }, body), 404);
}

async function linkedRecord(inbox: InboxContext, webhook: InboxWebhook, claim: LinkClaim) {
  const record = await inbox.checkIns.get(claim.id);
  if (
    record === undefined ||
    !mayDecide({ id: 'webhook', tenants: webhook.tenants ?? 'all' }, record.request)
  )
    return undefined;
  return record;
}

export function linkRoutes(inbox: InboxContext, webhook: InboxWebhook): Hono {
  const app = new Hono();

  const page = async (
    c: Context,
    token: string,
    claim: LinkClaim,
    notice?: Notice,
    status: 200 | 400 | 409 = 200,
  ) => {
    const record = await linkedRecord(inbox, webhook, claim);
    if (record === undefined) return invalid(inbox, c);
    const path = `${inbox.base}/links/${token}`;
    const body = checkInPage({
      now: inbox.now(),
      record,
      screen: await screenView(inbox, record.request),
      ...(decidable(inbox, record)
        ? { actions: { path, csrf: await linkCsrf(inbox, token), only: claim.action } }
        : {}),
      ...(notice !== undefined ? { notice } : {}),
    });
    return c.html(layout({ base: inbox.base, title: record.request.toolName }, body), status);
  };

  app.get('/links/:token', async (c) => {
    const token = c.req.param('token');
    const claim = await readLink(inbox, token);
    return claim === undefined ? invalid(inbox, c) : page(c, token, claim);
  });

  app.post('/links/:token/:action', async (c) => {
    const token = c.req.param('token');
    const claim = await readLink(inbox, token);
    if (claim === undefined || claim.action !== c.req.param('action')) return invalid(inbox, c);
    const form = await c.req.parseBody();
    if (!(await linkCsrfValid(inbox, token, form['_csrf']))) return invalid(inbox, c);
    const record = await linkedRecord(inbox, webhook, claim);
    if (record === undefined) return invalid(inbox, c);
    const text = (name: string) => (typeof form[name] === 'string' ? form[name] : undefined);
    const answer = await decide(
      inbox,
      record,
      webhook.by ?? DEFAULT_BY,
      claim.action === 'approve'
        ? { approve: true, note: text('note') }
        : { approve: false, reason: text('reason') },
    );
    if (!answer.ok) return page(c, token, claim, { tone: 'bad', text: answer.message }, answer.status);
    return page(c, token, claim, noticeFor(answer.outcome, claim.action === 'approve'));
  });

  return app;
}
