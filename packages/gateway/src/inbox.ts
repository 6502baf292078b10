// The approval inbox (@toolgate/inbox) at /inbox on the gateway's HTTP server, over the check-in
// store in `stores.state`. Approvers are the configured identities with the `approver` role (static
// tokens or JWTs), each deciding its own tenant's check-ins. The inbox only records decisions: the
// held request (or the model's identical retry, as a grant) carries them out, so an approval runs the
// call once, in whichever gateway process the model is connected to.

import type { IncomingMessage, ServerResponse } from 'node:http';
import { getRequestListener } from '@hono/node-server';
import type { CheckInRequest } from '@toolgate/core';
import {
  inboxApp,
  OPERATOR_ROLE,
  type Approvers,
  type InboxApp,
  type InboxWebhook,
  type OperatorStatus,
} from '@toolgate/inbox';
import { ajvValidator } from '@toolgate/middleware';
import type { ConfigIssue } from './config/errors';
import { fingerprint } from './config/fingerprint';
import type { LoadedConfig } from './config/load';
import type { ResolvedConfig } from './config/types';
import type { Mount } from './http';
import type { GatewayLog } from './log';
import type { Runtime } from './runtime';
import { OPERATOR_TENANT } from './held-reload';
import { pinDiffOf } from './pin-review';
import { definitionOf, grantChangeRecorder } from './standing-grants';

export const INBOX_PATH = '/inbox';
/** The role that lets an identity decide its tenant's check-ins. */
export const APPROVER_ROLE = 'approver';

/** Problems with `inbox` that would leave it unable to serve; checked with the rest of the configuration. */
export function inboxIssues(loaded: LoadedConfig): ConfigIssue[] {
  const { resolved: config } = loaded;
  const issues: ConfigIssue[] = [];
  if (
    config.checkIns === undefined &&
    (config.inbox?.enabled === true || config.inbox?.webhook !== undefined)
  )
    issues.push(
      loaded.issue(
        ['inbox'],
        'the inbox decides check-ins, and no check-in key is configured',
        'add checkIns: { key: "${env:TOOLGATE_CHECKIN_KEY}" }, or remove inbox',
      ),
    );
  if (
    config.reload?.requireApproval === 'weakening' &&
    (config.checkIns === undefined || config.inbox?.enabled === false)
  )
    issues.push(
      loaded.issue(
        ['reload', 'requireApproval'],
        'a reload that weakens security waits for an operator in the inbox, and this configuration has no inbox',
        'add checkIns: { key: "${env:TOOLGATE_CHECKIN_KEY}" } (and leave inbox enabled), or remove reload.requireApproval',
      ),
    );
  if (config.inbox?.webhook !== undefined && webhookOf(config) === undefined)
    issues.push(
      loaded.issue(
        ['inbox', 'webhook'],
        "the webhook's links need the inbox's public address",
        'set listen.publicUrl (the gateway as clients reach it), or webhook.publicUrl',
      ),
    );
  return issues;
}

/** The webhook as inboxApp takes it, or undefined when none is configured (or it has no public address). */
function webhookOf(config: ResolvedConfig): InboxWebhook | undefined {
  const configured = config.inbox?.webhook;
  if (configured === undefined) return undefined;
  const webhook = typeof configured === 'string' ? { url: configured } : configured;
  const publicUrl =
    webhook.publicUrl ??
    (config.listen?.publicUrl === undefined
      ? undefined
      : `${config.listen.publicUrl.replace(/\/+$/, '')}${INBOX_PATH}`);
  if (publicUrl === undefined) return undefined;
  return {
    url: webhook.url,
    publicUrl,
    // The configured tenants by default, never the operators' check-ins (a reload, a pin review):
    // those are decided by a signed-in operator, not through a link in a channel.
    tenants: webhook.tenants ?? Object.keys(config.tenants),
    ...(webhook.by !== undefined ? { by: webhook.by } : {}),
    ...(webhook.linkTtl !== undefined ? { linkTtlMs: webhook.linkTtl } : {}),
    ...(webhook.headers !== undefined ? { headers: webhook.headers } : {}),
  };
}

export interface GatewayInbox {
  readonly mount: Mount;
  /** Follows the live configuration: rebuilds the app only when its store, key or settings changed. */
  refresh(): void;
  close(): void;
}

/**
 * The inbox of a gateway. Approvers and the argument check read the live configuration on every
 * request, so a reload that revokes a token or changes a tool takes effect at once.
 */
export function gatewayInbox(host: {
  readonly current: () => Runtime;
  readonly maxBody: () => number;
  readonly log: GatewayLog;
  /** The operator's status page (identities with the `operator` role); none without it. */
  readonly status?: () => Promise<OperatorStatus>;
}): GatewayInbox {
  let app: InboxApp | undefined;
  let listener: ReturnType<typeof getRequestListener> | undefined;
  let built: { state: unknown; fingerprint: string } | undefined;

  const approvers: Approvers = async (token) => {
    const answer = await host.current().auth.authenticate(`Bearer ${token}`);
    if (!answer.ok) return undefined;
    const roles = answer.identity.roles ?? [];
    const approves = roles.includes(APPROVER_ROLE);
    const operates = roles.includes(OPERATOR_ROLE);
    if (!approves && !operates) return undefined;
    const { tenant, principal } = answer.identity;
    if (tenant === undefined || principal === undefined) return undefined;
    // An operator who is not an approver signs in to the status page and sees no tenant's check-in.
    // Operators also decide the gateway's own check-ins (a weakening reload), under a tenant no
    // configuration can name.
    return {
      id: principal,
      tenants: [...(approves ? [tenant] : []), ...(operates ? [OPERATOR_TENANT] : [])],
      ...(operates ? { roles: [OPERATOR_ROLE] } : {}),
    };
  };

  // Changed args are checked against the tool's schema before the decision is recorded, so the
  // approver can fix them; the chain judges the changed call again either way.
  const validator = ajvValidator({ useDefaults: false });
  const checkArgs = (request: CheckInRequest, args: Readonly<Record<string, unknown>>): string[] => {
    const tenant =
      request.identity?.tenant === undefined
        ? undefined
        : host.current().tenants.get(request.identity.tenant);
    const tool = tenant?.dispatcher.tools.get(request.toolName);
    if (tool === undefined) return [`'${request.toolName}' is no longer served to this tenant`];
    const result = validator.compile(tool.schema.inputSchema)(args);
    return result.valid
      ? []
      : result.problems.map((problem) => `'${problem.path || '(args)'}' ${problem.expected}`);
  };

  function refresh(): void {
    const runtime = host.current();
    const { config } = runtime;
    const enabled = config.checkIns !== undefined && config.inbox?.enabled !== false;
    const settings = fingerprint(config.checkIns?.key, config.inbox, config.listen?.publicUrl);
    if (built !== undefined && built.state === runtime.state && built.fingerprint === settings) return;
    app?.close();
    app = undefined;
    listener = undefined;
    built = { state: runtime.state, fingerprint: settings };
    if (!enabled) return;
    const webhook = webhookOf(config);
    app = inboxApp({
      checkIns: runtime.state.checkIns,
      checkInKey: config.checkIns!.key,
      approvers,
      checkArgs,
      basePath: INBOX_PATH,
      ...(host.status !== undefined ? { status: host.status } : {}),
      grants: runtime.state.grants,
      definitionOf: (request: CheckInRequest) => definitionOf(host.current(), request),
      // The live runtime's audit log: a reload that changes the log records there.
      pinDiffs: (request: CheckInRequest) => pinDiffOf(host.current(), request),
      onGrant: (change) => grantChangeRecorder(host.current().audit, host.log)(change),
      ...(webhook !== undefined ? { webhook } : {}),
      ...(config.listen?.publicUrl?.startsWith('https:') === true ? { secureCookies: true } : {}),
      ...(config.listen?.publicUrl !== undefined
        ? { origins: [new URL(config.listen.publicUrl).origin] }
        : {}),
    });
    const served = app;
    // Hono's own Request/Response stay out of the globals the MCP SDK uses.
    listener = getRequestListener((request) => served.fetch(request), { overrideGlobalObjects: false });
  }

  const mount: Mount = {
    prefix: INBOX_PATH,
    async handle(req: IncomingMessage, res: ServerResponse) {
      if (listener === undefined) {
        send(res, 404, {
          error: 'not_found',
          message:
            'The approval inbox is not enabled on this gateway (it needs checkIns, and inbox.enabled not false)',
        });
        return;
      }
      if (req.method === 'POST' || req.method === 'PUT') {
        const length = req.headers['content-length'];
        if (length === undefined) {
          refused(req, res, 411, 'no-length', 'Send the request body with a Content-Length header');
          return;
        }
        if (!/^\d+$/.test(length) || Number(length) > host.maxBody()) {
          refused(req, res, 413, 'too-large', `Request body too large; the limit is ${host.maxBody()} bytes`);
          return;
        }
      }
      // A request that says nothing of a body has none (RFC 9112 §6.3); saying so keeps hono's body
      // limit from re-wrapping the node-server request, which fails (a 500) for a bodiless DELETE.
      if (req.headers['content-length'] === undefined && req.headers['transfer-encoding'] === undefined) {
        req.headers['content-length'] = '0';
        req.rawHeaders.push('content-length', '0');
      }
      await listener(req, res);
    },
  };

  function refused(req: IncomingMessage, res: ServerResponse, status: number, why: string, message: string) {
    host.log({ msg: 'http.refused', level: 'warn', status, why, method: req.method, path: INBOX_PATH });
    send(res, status, { error: why, message });
  }

  return {
    mount,
    refresh,
    close() {
      app?.close();
      app = undefined;
      listener = undefined;
    },
  };
}

function send(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' });
  res.end(JSON.stringify(body));
}
