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
import type { GatewayAudit } from './audit';
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

/** Writes `grant.used` to the audit log: who granted it, for which call; the grant's id and bounds as its digested args. */
export function grantUseRecorder(audit: GatewayAudit) {
  return async (grant: StandingGrant, request: CheckInRequest): Promise<void> => {
    await audit.record({
      kind: 'grant.used',
      ...(request.identity?.tenant !== undefined ? { tenant: request.identity.tenant } : {}),
      ...(request.identity?.principal !== undefined ? { principal: request.identity.principal } : {}),
      tool: request.toolName,
      ...(request.toolSource !== undefined ? { source: request.toolSource } : {}),
      chainId: request.chainId,
      checkInId: request.id,
      approver: grant.createdBy,
      args: { grantId: grant.id, bounds: grant.bounds, fromCheckIn: grant.fromCheckIn },
    });
  };
}
