// Standing grants at the gateway: which store keeps them, the definition digest that voids them when a
// tool changes, and using one for a paused call. A grant only answers the ask; the call it covers is
// resumed through the whole chain, so policy and every gate judge it again, and its use is logged.

import { createHash } from 'node:crypto';
import {
  canonicalJson,
  checkInApproved,
  grantCovers,
  type CheckInDecision,
  type CheckInRequest,
  type StandingGrant,
  type StandingGrantStore,
  type Tool,
} from '@toolgate/core';
import type { GrantChange } from '@toolgate/inbox';
import type { GatewayAudit } from './audit';
import type { GrantFields } from './events';
import type { GatewayLog } from './log';
import type { Runtime } from './runtime';

/**
 * The digest of a tool's definition as this gateway serves it (name, description, input schema,
 * annotations, upstream): a pinned definition that changes changes it, and every grant for the tool is void.
 */
export function definitionDigest(tool: Tool): string {
  const definition = canonicalJson({
    name: tool.schema.name,
    description: tool.schema.description,
    inputSchema: tool.schema.inputSchema,
    annotations: tool.annotations ?? null,
    source: tool.source ?? null,
  });
  return createHash('sha256').update(definition).digest('hex');
}

/** The definition digest of the tool `request` asked about, as its tenant serves it now; undefined when not served. */
export function definitionOf(runtime: Runtime, request: CheckInRequest): string | undefined {
  const tenant =
    request.identity?.tenant === undefined ? undefined : runtime.tenants.get(request.identity.tenant);
  const tool = tenant?.dispatcher.tools.get(request.toolName);
  return tool === undefined ? undefined : definitionDigest(tool);
}

/** A grant that covers `request`, counted as used: the approval to resume with, and the grant's id. */
export async function useStandingGrant(
  grants: StandingGrantStore | undefined,
  request: CheckInRequest,
  definition: string | undefined,
  now = Date.now(),
): Promise<{ readonly decision: CheckInDecision; readonly grant: StandingGrant } | undefined> {
  if (grants === undefined || definition === undefined) return undefined;
  let candidates;
  try {
    candidates = await grants.list({
      active: true,
      toolName: request.toolName,
      ...(request.identity?.tenant !== undefined ? { tenant: request.identity.tenant } : {}),
      ...(request.identity?.principal !== undefined ? { principal: request.identity.principal } : {}),
    });
  } catch {
    return undefined;
  }
  for (const grant of candidates) {
    if (!grantCovers(grant, request, definition, now)) continue;
    let used = false;
    try {
      used = await grants.use(grant.id);
    } catch {
      used = false;
    }
    if (!used) continue;
    return {
      grant,
      decision: checkInApproved({
        by: grant.createdBy,
        note: `standing grant ${grant.id} (from check-in ${grant.fromCheckIn})`,
      }),
    };
  }
  return undefined;
}

/** Each argument's kind of bound: what a grant allows, in shape, never its values. */
export function boundsShape(grant: StandingGrant): Record<string, 'equals' | 'atMost' | 'oneOf'> {
  const shape: Record<string, 'equals' | 'atMost' | 'oneOf'> = {};
  for (const [name, bound] of Object.entries(grant.bounds))
    shape[name] = 'equals' in bound ? 'equals' : 'atMost' in bound ? 'atMost' : 'oneOf';
  return shape;
}

/**
 * The audit record's `rule` for a grant: its id and the shape of what it allows (which argument has
 * which kind of bound, how many calls, until when). The bounds' values go only into the keyed digest.
 */
function grantRule(grant: StandingGrant): string {
  const bounds = Object.entries(boundsShape(grant))
    .map(([name, kind]) => `${name} ${kind}`)
    .join(', ');
  const uses = grant.maxUses === undefined ? 'any number of calls' : `${grant.maxUses} calls`;
  return `standing grant ${grant.id}: ${bounds || 'no arguments'}; ${uses} until ${grant.expiresAt}`;
}

const grantEntry = (grant: StandingGrant) => ({
  ...(grant.tenant !== undefined ? { tenant: grant.tenant } : {}),
  ...(grant.principal !== undefined ? { principal: grant.principal } : {}),
  tool: grant.toolName,
  ...(grant.toolSource !== undefined ? { source: grant.toolSource } : {}),
  chainId: grant.chainId,
  rule: grantRule(grant),
  args: { grantId: grant.id, bounds: grant.bounds, fromCheckIn: grant.fromCheckIn },
});

/** The fields of a grant's event line: names and shapes, no argument value. */
export const grantFields = (grant: StandingGrant, by: string): GrantFields => ({
  grantId: grant.id,
  ...(grant.tenant !== undefined ? { tenant: grant.tenant } : {}),
  ...(grant.principal !== undefined ? { principal: grant.principal } : {}),
  tool: grant.toolName,
  by,
  bounds: boundsShape(grant),
  ...(grant.maxUses !== undefined ? { maxUses: grant.maxUses } : {}),
  expiresAt: grant.expiresAt,
});

/**
 * Writes `grant.used` to the audit log (who granted it, for which check-in) and logs the event; a
 * rejection means the use is not recorded and the call does not run on the grant.
 */
export function grantUseRecorder(audit: GatewayAudit | undefined, log?: GatewayLog) {
  return async (grant: StandingGrant, request: CheckInRequest): Promise<void> => {
    await audit?.record({
      kind: 'grant.used',
      ...grantEntry(grant),
      ...(request.identity?.tenant !== undefined ? { tenant: request.identity.tenant } : {}),
      ...(request.identity?.principal !== undefined ? { principal: request.identity.principal } : {}),
      tool: request.toolName,
      ...(request.toolSource !== undefined ? { source: request.toolSource } : {}),
      chainId: request.chainId,
      checkInId: request.id,
      approver: grant.createdBy,
    });
    log?.({ msg: 'grant.used', ...grantFields(grant, grant.createdBy), checkInId: request.id });
  };
}

/**
 * Records a grant made or revoked in the inbox: `grant.created` / `grant.revoked` in the audit log
 * (the approver, the check-in it came from, the bounds' shape; values only as a keyed digest) and
 * the event of the same name. A creation is told before the grant is stored: a rejection (the log
 * cannot hold it) means the grant is not made. Either failure is logged as `grant.unrecorded`.
 */
export function grantChangeRecorder(audit: GatewayAudit | undefined, log: GatewayLog) {
  return async (change: GrantChange): Promise<void> => {
    const { grant, by } = change;
    // A revocation has already taken effect, whatever the log can hold.
    if (change.kind === 'revoked') log({ msg: 'grant.revoked', ...grantFields(grant, by) });
    try {
      await audit?.record({
        kind: `grant.${change.kind}`,
        ...grantEntry(grant),
        ...(change.kind === 'created' ? { checkInId: grant.fromCheckIn } : {}),
        approver: by,
      });
    } catch (error) {
      log({
        msg: 'grant.unrecorded',
        // An unrecorded creation did not happen; an unrecorded revocation is a gap in the log.
        level: change.kind === 'created' ? 'warn' : 'error',
        ...grantFields(grant, by),
        change: change.kind,
        // The class only: a store's error text could carry its connection string.
        error: (error as Error | undefined)?.name ?? 'Error',
      });
      throw error;
    }
    if (change.kind === 'created')
      log({ msg: 'grant.created', ...grantFields(grant, by), fromCheckIn: grant.fromCheckIn });
  };
}
