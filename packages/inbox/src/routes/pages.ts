// The pages people use: sign in and out, the list (and its live fragment), a check-in, and the
// approve / decline forms. Every form carries the session's CSRF token; every page is escaped HTML.

import type { CheckInRecord } from '@toolgate/core';
import type { Context } from 'hono';
import { Hono } from 'hono';
import { createMiddleware } from 'hono/factory';
import { html } from 'hono/html';
import { decide, type DecisionInput } from '../decide';
import { grantFromForm, revokeGrant, visibleGrant, visibleGrants } from '../grants';
import type { InboxContext } from '../options';
import { decidable, listQuery, pendingPage, visibleRecord, visibleRecords } from '../records';
import {
  authenticate,
  csrfValid,
  signIn,
  signInToken,
  signInTokenValid,
  signOut,
  type Session,
} from '../session';
import { checkInPage, noticeFor, type Notice } from '../views/check-in';
import { pinDiffView } from '../views/diff';
import type { Html } from '../views/html';
import { grantsPage } from '../views/grants';
import { layout } from '../views/layout';
import { listPage, liveBlock, type ListView } from '../views/list';
import { screenView } from '../views/screen';
import { statusPage } from '../views/status';

/** The role that opens the status page. */
export const OPERATOR_ROLE = 'operator';

type Env = { Variables: { session: Session } };

const DECIDED_SHOWN = 20;

function signInPage(base: string, csrf: string, failed: boolean): Html {
  return html`<h1>Sign in</h1>
    ${failed ? html`<p class="notice bad" role="alert">That token is not an approver's.</p>` : ''}
    <form class="sign-in" method="post" action="${base}/sign-in">
      <input type="hidden" name="_csrf" value="${csrf}" />
      <label
        >Approver token<input type="password" name="token" autocomplete="current-password" required
      /></label>
      <button class="approve" type="submit">Sign in</button>
    </form>`;
}

export function notFoundPage(
  inbox: InboxContext,
  c: Context,
  session?: Session,
): Response | Promise<Response> {
  const body = html`<h1>Not found</h1>
    <p>There is no check-in here that you may see.</p>
    <p><a href="${inbox.base}/">Back to the list</a></p>`;
  return c.html(layout({ base: inbox.base, title: 'Not found', ...(session ? { session } : {}) }, body), 404);
}

function forbiddenPage(inbox: InboxContext, c: Context): Response | Promise<Response> {
  const body = html`<h1>This form cannot be used</h1>
    <p>It expired or did not come from this inbox. Reload the page and try again.</p>`;
  return c.html(layout({ base: inbox.base, title: 'Refused' }, body), 403);
}

async function listView(inbox: InboxContext, session: Session, c: Context): Promise<ListView> {
  const query = listQuery((name) => c.req.query(name));
  const [pending, decided] = await Promise.all([
    pendingPage(inbox, session.approver, query),
    visibleRecords(inbox, session.approver, true, DECIDED_SHOWN),
  ]);
  return { base: inbox.base, now: inbox.now(), pending, query, decided };
}

async function checkInResponse(
  inbox: InboxContext,
  c: Context<Env>,
  id: string,
  notice?: Notice,
  status: 200 | 400 | 409 = 200,
): Promise<Response> {
  const session = c.get('session');
  const record = await visibleRecord(inbox, session.approver, id);
  if (record === undefined) return notFoundPage(inbox, c, session);
  const { request } = record;
  const [screen, pinDiff] = await Promise.all([
    screenView(inbox, request),
    (async () => {
      if (inbox.pinDiffs === undefined) return '';
      try {
        const diff = await inbox.pinDiffs(request);
        return diff === undefined ? '' : pinDiffView(diff);
      } catch {
        return html`<p class="warning">Whether this tool's definition changed could not be checked.</p>`;
      }
    })(),
  ]);
  const path = `${inbox.base}/check-ins/${encodeURIComponent(request.id)}`;
  const body = checkInPage({
    now: inbox.now(),
    record,
    screen,
    pinDiff,
    ...(decidable(inbox, record)
      ? { actions: { path, csrf: session.csrf ?? '', grants: inbox.grants !== undefined } }
      : {}),
    ...(notice !== undefined ? { notice } : {}),
  });
  return c.html(layout({ base: inbox.base, title: request.toolName, session }, body), status);
}

const field = (form: Record<string, unknown>, name: string): string | undefined =>
  typeof form[name] === 'string' ? (form[name] as string) : undefined;

export function pageRoutes(inbox: InboxContext): Hono<Env> {
  const app = new Hono<Env>();
  const base = inbox.base;

  app.get('/sign-in', async (c) => {
    if ((await authenticate(inbox, c)) !== undefined) return c.redirect(`${base}/`, 303);
    const csrf = await signInToken(inbox, c);
    return c.html(layout({ base, title: 'Sign in' }, signInPage(base, csrf, false)));
  });

  app.post('/sign-in', async (c) => {
    const form = await c.req.parseBody();
    if (!(await signInTokenValid(inbox, c, form['_csrf']))) return forbiddenPage(inbox, c);
    if (await signIn(inbox, c, field(form, 'token') ?? '')) return c.redirect(`${base}/`, 303);
    const csrf = await signInToken(inbox, c);
    return c.html(layout({ base, title: 'Sign in' }, signInPage(base, csrf, true)), 401);
  });

  // The pages below need an approver; a person without a session is sent to sign in.
  const signedIn = createMiddleware<Env>(async (c, next) => {
    const session = await authenticate(inbox, c);
    if (session === undefined) return c.redirect(`${base}/sign-in`, 303);
    c.set('session', session);
    return next();
  });

  app.post('/sign-out', signedIn, async (c) => {
    const form = await c.req.parseBody();
    if (!csrfValid(c.get('session'), form['_csrf'])) return forbiddenPage(inbox, c);
    signOut(inbox, c);
    return c.redirect(`${base}/sign-in`, 303);
  });

  app.get('/', signedIn, async (c) => {
    const session = c.get('session');
    const view = await listView(inbox, session, c);
    return c.html(layout({ base, title: 'Waiting for approval', session }, listPage(view)));
  });

  app.get('/fragments/live', signedIn, async (c) =>
    c.html(liveBlock(await listView(inbox, c.get('session'), c))),
  );

  // Only for operators; anyone else (and every approver when the host gives no status) gets 404.
  app.get('/status', signedIn, async (c) => {
    const session = c.get('session');
    if (inbox.status === undefined || !(session.approver.roles ?? []).includes(OPERATOR_ROLE))
      return notFoundPage(inbox, c, session);
    let body: Html;
    try {
      body = statusPage(await inbox.status());
    } catch {
      body = html`<h1>Gateway status</h1>
        <p class="notice bad" role="alert">The status could not be read; try again shortly.</p>`;
    }
    return c.html(layout({ base, title: 'Status', session }, body));
  });

  app.get('/check-ins/:id', signedIn, (c) => checkInResponse(inbox, c, c.req.param('id')));

  /** The decision a submitted form asks for. */
  type ReadDecision = (form: Record<string, unknown>, record: CheckInRecord) => DecisionInput;
  const approval: ReadDecision = (form, record) => {
    const grant = grantFromForm(form, record.request.review);
    return {
      approve: true,
      note: field(form, 'note'),
      args: field(form, 'args'),
      ...(grant !== undefined ? { grant } : {}),
    };
  };
  const declining: ReadDecision = (form) => ({ approve: false, reason: field(form, 'reason') });

  const decision = (read: ReadDecision) => async (c: Context<Env>) => {
    const session = c.get('session');
    const id = c.req.param('id') ?? '';
    const form = await c.req.parseBody();
    if (!csrfValid(session, form['_csrf'])) return forbiddenPage(inbox, c);
    const record = await visibleRecord(inbox, session.approver, id);
    if (record === undefined) return notFoundPage(inbox, c, session);
    const input = read(form, record);
    const answer = await decide(inbox, record, session.approver.id, input);
    if (!answer.ok)
      return checkInResponse(inbox, c, id, { tone: 'bad', text: answer.message }, answer.status);
    const notice = noticeFor(answer.outcome, input.approve);
    return checkInResponse(
      inbox,
      c,
      id,
      answer.grant !== undefined
        ? { ...notice, text: `${notice.text} Standing grant ${answer.grant.id} made; see Grants.` }
        : answer.grantError !== undefined
          ? { tone: 'bad', text: `${notice.text} ${answer.grantError}` }
          : notice,
    );
  };
  app.post('/check-ins/:id/approve', signedIn, decision(approval));
  app.post('/check-ins/:id/decline', signedIn, decision(declining));

  const grantsResponse = async (c: Context<Env>, notice?: Notice) => {
    const session = c.get('session');
    const grants = await visibleGrants(inbox, session.approver);
    return c.html(
      layout(
        { base, title: 'Standing grants', session },
        grantsPage({
          base,
          now: inbox.now(),
          grants,
          csrf: session.csrf ?? '',
          enabled: inbox.grants !== undefined,
          ...(notice !== undefined ? { notice } : {}),
        }),
      ),
    );
  };
  app.get('/grants', signedIn, (c) => grantsResponse(c));

  app.post('/grants/:id/revoke', signedIn, async (c) => {
    const session = c.get('session');
    const form = await c.req.parseBody();
    if (!csrfValid(session, form['_csrf'])) return forbiddenPage(inbox, c);
    const id = c.req.param('id');
    const grant = await visibleGrant(inbox, session.approver, id);
    if (grant === undefined) return notFoundPage(inbox, c, session);
    const recordError = await revokeGrant(inbox, grant, session.approver.id);
    // Shown here rather than lost behind the redirect: the revocation stands, unrecorded.
    if (recordError !== undefined) return grantsResponse(c, { tone: 'bad', text: recordError });
    return c.redirect(`${base}/grants`, 303);
  });

  return app;
}
