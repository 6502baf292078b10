// The JSON API, for bots and scripts with an approver's bearer token: list, read, approve (with a note
// or changed args), decline (with the reason the model reads). Same rules as the pages: another
// tenant's check-in is answered exactly like an unknown one.

import type { CheckInRecord } from '@toolgate/core';
import type { Context } from 'hono';
import { Hono } from 'hono';
import { createMiddleware } from 'hono/factory';
import { decide, type DecisionInput } from '../decide';
import { revokeGrant, visibleGrant, visibleGrants, type GrantInput } from '../grants';
import type { InboxContext } from '../options';
import { expired, listQuery, pendingPage, visibleRecord, visibleRecords } from '../records';
import { argsSummary } from '../views/values';
import { authenticate, csrfValid, type Session } from '../session';

type Env = { Variables: { session: Session } };

/** A check-in as the API shows it: the request without its signature, and what became of it. */
export function checkInJson(inbox: InboxContext, record: CheckInRecord) {
  const { signature: _signature, ...request } = record.request;
  return {
    ...request,
    argsSummary: argsSummary(request.review),
    expired: expired(inbox, record),
    state: record.state,
    ...(record.decision !== undefined ? { decision: record.decision } : {}),
    ...(record.receipt !== undefined ? { receipt: record.receipt } : {}),
  };
}

const notFound = (c: Context) =>
  c.json({ error: 'not_found', message: 'There is no check-in here that you may see.' }, 404);

/**
 * The body as a JSON object, whatever its Content-Type (a script's fetch often sends text/plain):
 * a cross-site form cannot reach here anyway, since a cookie session must send X-CSRF-Token.
 */
async function jsonBody(c: Context): Promise<Record<string, unknown> | undefined> {
  const text = await c.req.text();
  if (text.trim() === '') return {};
  try {
    const body: unknown = JSON.parse(text);
    return typeof body === 'object' && body !== null && !Array.isArray(body)
      ? (body as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

export function apiRoutes(inbox: InboxContext): Hono<Env> {
  const app = new Hono<Env>();

  const approver = createMiddleware<Env>(async (c, next) => {
    const session = await authenticate(inbox, c);
    if (session === undefined) {
      c.header('WWW-Authenticate', 'Bearer realm="toolgate inbox"');
      return c.json(
        { error: 'unauthorized', message: "Send an approver's token as 'Authorization: Bearer <token>'." },
        401,
      );
    }
    // A signed-in browser must also prove the request came from the inbox's own pages.
    if (
      c.req.method !== 'GET' &&
      c.req.method !== 'HEAD' &&
      !csrfValid(session, c.req.header('x-csrf-token'))
    )
      return c.json(
        { error: 'forbidden', message: "A signed-in session must send its CSRF token as 'X-CSRF-Token'." },
        403,
      );
    c.set('session', session);
    return next();
  });

  // Pending ones page (`?page=`, filters `tenant`, `tool`, `principal`); decided ones are the latest.
  app.get('/check-ins', approver, async (c) => {
    const approver = c.get('session').approver;
    if (c.req.query('decided') === 'true') {
      const records = await visibleRecords(inbox, approver, true);
      return c.json({ checkIns: records.map((record) => checkInJson(inbox, record)) });
    }
    const page = await pendingPage(
      inbox,
      approver,
      listQuery((name) => c.req.query(name)),
    );
    return c.json({
      checkIns: page.records.map((record) => checkInJson(inbox, record)),
      page: page.page,
      pages: page.pages,
      total: page.total,
      byPrincipal: page.byPrincipal,
    });
  });

  app.get('/check-ins/:id', approver, async (c) => {
    const record = await visibleRecord(inbox, c.get('session').approver, c.req.param('id'));
    return record === undefined ? notFound(c) : c.json({ checkIn: checkInJson(inbox, record) });
  });

  /** The decision a request body asks for, or why the body cannot say one. */
  type ReadDecision = (body: Record<string, unknown>) => DecisionInput | { readonly bad: string };
  const approval: ReadDecision = (body) => {
    const grant = body['grant'];
    if (grant !== undefined && (typeof grant !== 'object' || grant === null || Array.isArray(grant)))
      return { bad: "'grant' must be an object { bounds?, uses?, until? }." };
    if (typeof body['args'] === 'string') return { bad: "'args' must be a JSON object." };
    return {
      approve: true,
      note: body['note'],
      args: body['args'],
      ...(grant !== undefined ? { grant: grant as GrantInput } : {}),
    };
  };
  const declining: ReadDecision = (body) => ({ approve: false, reason: body['reason'] });

  const decision = (read: ReadDecision) => async (c: Context<Env>) => {
    const session = c.get('session');
    const record = await visibleRecord(inbox, session.approver, c.req.param('id') ?? '');
    if (record === undefined) return notFound(c);
    const body = await jsonBody(c);
    if (body === undefined)
      return c.json({ error: 'bad_request', message: 'The body must be a JSON object.' }, 400);
    const input = read(body);
    if ('bad' in input) return c.json({ error: 'bad_request', message: input.bad }, 400);
    const answer = await decide(inbox, record, session.approver.id, input);
    if (!answer.ok) {
      const shown = answer.record === undefined ? {} : { checkIn: checkInJson(inbox, answer.record) };
      return c.json({ error: answer.error, message: answer.message, ...shown }, answer.status);
    }
    return c.json({
      checkIn: checkInJson(inbox, answer.record),
      ...(answer.outcome !== undefined ? { outcome: answer.outcome } : {}),
      ...(answer.grant !== undefined ? { grant: answer.grant } : {}),
      ...(answer.grantError !== undefined ? { grantError: answer.grantError } : {}),
    });
  };
  app.post('/check-ins/:id/approve', approver, decision(approval));
  app.post('/check-ins/:id/decline', approver, decision(declining));

  const noGrant = (c: Context) =>
    c.json({ error: 'not_found', message: 'There is no grant here that you may see.' }, 404);
  app.get('/grants', approver, async (c) => {
    const grants = await visibleGrants(inbox, c.get('session').approver);
    return c.json({ grants });
  });
  app.get('/grants/:id', approver, async (c) => {
    const grant = await visibleGrant(inbox, c.get('session').approver, c.req.param('id'));
    return grant === undefined ? noGrant(c) : c.json({ grant });
  });
  app.delete('/grants/:id', approver, async (c) => {
    const id = c.req.param('id');
    const grant = await visibleGrant(inbox, c.get('session').approver, id);
    if (grant === undefined) return noGrant(c);
    const recordError = await revokeGrant(inbox, grant, c.get('session').approver.id);
    return c.json({
      grant: (await inbox.grants!.get(id)) ?? grant,
      ...(recordError !== undefined ? { recordError } : {}),
    });
  });

  return app;
}
