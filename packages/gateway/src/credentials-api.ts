// The operator API of per-principal credentials, `/api/credentials`:
//
//   GET    /api/credentials/NAME[?tenant=T]            who has one (never a value)
//   PUT    /api/credentials/NAME/TENANT/PRINCIPAL      body {"value": "…"}: store or replace it
//   DELETE /api/credentials/NAME/TENANT/PRINCIPAL      remove it
//
// Only a caller with the operator role, and only for its own tenant: an operator of one tenant
// cannot read the list of, or plant a credential for, another tenant's principals. Each change is
// recorded in the audit log first (when one is configured; a change that cannot be recorded is not
// made) and logged, naming the credential, tenant and principal, never the value.

import type { IncomingMessage, ServerResponse } from 'node:http';
import type { GatewayLog } from './log';
import type { Runtime } from './runtime';

export const CREDENTIALS_API_PATH = '/api/credentials';

/** The longest value accepted; a credential is a token or a key, not a document. */
export const MAX_CREDENTIAL_CHARS = 16 * 1024;
const MAX_BODY_BYTES = MAX_CREDENTIAL_CHARS * 2 + 1024;
const OPERATOR_ROLE = 'operator';

export interface CredentialsApiHost {
  current(): Runtime;
  readonly log: GatewayLog;
}

function send(res: ServerResponse, status: number, body?: unknown): void {
  if (body === undefined) {
    res.writeHead(status, { 'cache-control': 'no-store' }).end();
    return;
  }
  res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' });
  res.end(JSON.stringify(body));
}

const problem = (res: ServerResponse, status: number, error: string, message: string) =>
  send(res, status, { error, message });

/** A path segment: decoded, non-empty, short, without control characters; undefined when not. */
function segment(raw: string | undefined): string | undefined {
  if (raw === undefined || raw === '') return undefined;
  let decoded: string;
  try {
    decoded = decodeURIComponent(raw);
  } catch {
    return undefined;
  }
  const control = [...decoded].some((char) => char.charCodeAt(0) < 0x20 || char.charCodeAt(0) === 0x7f);
  return decoded.length <= 200 && !control ? decoded : undefined;
}

async function readBody(req: IncomingMessage): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) return undefined;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

export async function credentialsApi(
  host: CredentialsApiHost,
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
): Promise<void> {
  const runtime = host.current();
  const header = req.headers.authorization;
  const answer = await runtime.auth.authenticate(Array.isArray(header) ? header[0] : header);
  if (!answer.ok) return problem(res, 401, 'unauthorized', "Send an operator's bearer token");
  const { tenant: own, principal: by } = answer.identity;
  if (!(answer.identity.roles ?? []).includes(OPERATOR_ROLE))
    return problem(res, 403, 'forbidden', 'Only a caller with the operator role manages credentials');
  const vault = runtime.principalCredentials;
  const parts = path.slice(CREDENTIALS_API_PATH.length).split('/').slice(1);
  const name = segment(parts[0]);
  if (vault === undefined || name === undefined || !vault.has(name))
    return problem(
      res,
      404,
      'unknown-credential',
      `Name a per-principal credential: ${vault?.names().join(', ') || '(none configured)'}`,
    );

  if (parts.length === 1) {
    if (req.method !== 'GET')
      return problem(res, 405, 'method', 'Use GET to list, PUT or DELETE on /NAME/TENANT/PRINCIPAL');
    const asked = new URL(req.url ?? '/', 'http://localhost').searchParams.get('tenant') ?? own;
    if (asked !== own)
      return problem(res, 403, 'other-tenant', "An operator manages its own tenant's credentials only");
    const entries = await vault.list(name, own);
    return send(res, 200, {
      credential: name,
      entries: entries.map(({ tenant, principal, updatedAt }) => ({ tenant, principal, updatedAt })),
    });
  }
  const tenant = segment(parts[1]);
  const principal = segment(parts[2]);
  if (parts.length !== 3 || tenant === undefined || principal === undefined)
    return problem(res, 404, 'path', `Use ${CREDENTIALS_API_PATH}/NAME/TENANT/PRINCIPAL`);
  if (tenant !== own)
    return problem(res, 403, 'other-tenant', "An operator manages its own tenant's credentials only");

  if (req.method === 'PUT') {
    const body = await readBody(req);
    let value: unknown;
    try {
      value = body === undefined ? undefined : (JSON.parse(body) as { value?: unknown }).value;
    } catch {
      value = undefined;
    }
    if (typeof value !== 'string' || value === '' || value.length > MAX_CREDENTIAL_CHARS)
      return problem(
        res,
        400,
        'value',
        `Send {"value": "…"}: a non-empty string of at most ${MAX_CREDENTIAL_CHARS} characters`,
      );
    if (!(await recorded(runtime, 'credential.set', name, tenant, principal, by)))
      return problem(
        res,
        503,
        'audit',
        'The change could not be recorded in the audit log, so it was not made',
      );
    await vault.set(name, tenant, principal, value);
    host.log({
      msg: 'credential.set',
      credential: name,
      tenant,
      principal,
      ...(by !== undefined ? { by } : {}),
    });
    return send(res, 204);
  }
  if (req.method === 'DELETE') {
    if (!(await recorded(runtime, 'credential.deleted', name, tenant, principal, by)))
      return problem(
        res,
        503,
        'audit',
        'The change could not be recorded in the audit log, so it was not made',
      );
    const deleted = await vault.delete(name, tenant, principal);
    host.log({
      msg: 'credential.deleted',
      credential: name,
      tenant,
      principal,
      found: deleted,
      ...(by !== undefined ? { by } : {}),
    });
    return deleted ? send(res, 204) : problem(res, 404, 'not-found', 'This principal has no such credential');
  }
  return problem(res, 405, 'method', 'Use PUT {"value": "…"} or DELETE');
}

async function recorded(
  runtime: Runtime,
  kind: string,
  credential: string,
  tenant: string,
  principal: string,
  by: string | undefined,
): Promise<boolean> {
  if (runtime.audit === undefined) return true;
  try {
    await runtime.audit.record({
      kind,
      tenant,
      principal,
      source: credential,
      code: kind === 'credential.set' ? 'CREDENTIAL_SET' : 'CREDENTIAL_DELETED',
      ...(by !== undefined ? { approver: by } : {}),
    });
    return true;
  } catch {
    return false;
  }
}
