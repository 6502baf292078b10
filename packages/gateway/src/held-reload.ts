// A reload that weakens security, with `reload.requireApproval: weakening`, does not take effect on
// its own: it waits in the inbox as an operator check-in that shows what weakens (weakening.ts's
// sentences, never a configuration value). Approved there, it is applied; declined or expired, the
// configuration serving now keeps serving. Any later reload replaces a reload still waiting.

import {
  createSigner,
  DEFAULT_CHECK_IN_TTL_MS,
  digestOf,
  newId,
  type CheckInRecord,
  type CheckInRequest,
  type CheckInStore,
} from '@toolgate/core';
import { basename } from 'node:path';
import type { LoadedConfig } from './config/load';
import type { Runtime } from './runtime';

/**
 * The tenant of operator check-ins. Configured tenant names cannot contain ':', so no tenant's
 * approver sees these; the gateway's inbox lets identities with the operator role decide them.
 */
export const OPERATOR_TENANT = 'toolgate:operators';
/** The "tool" an operator check-in for a reload names, as the inbox lists it. */
export const RELOAD_TOOL = 'gateway.reload';

/** A weakening reload waiting for an operator: the configuration as read, and its check-in. */
export interface HeldReload {
  readonly loaded: LoadedConfig;
  readonly weakens: readonly string[];
  readonly request: CheckInRequest;
}

/** How a held reload ended: what the operator decided, or that nobody did in time. */
export type HeldReloadEnd =
  | { readonly kind: 'approved'; readonly by: string; readonly note?: string }
  | { readonly kind: 'declined'; readonly by: string; readonly reason: string }
  | { readonly kind: 'expired' };

/**
 * Puts a signed operator check-in for `loaded` in the serving runtime's check-in store. Its
 * arguments are the file's name and the weakenings, so the inbox shows exactly what weakens.
 */
export async function holdReload(
  live: Runtime,
  loaded: LoadedConfig,
  weakens: readonly string[],
  now = Date.now(),
): Promise<HeldReload> {
  const key = live.config.checkIns?.key;
  if (key === undefined)
    throw new Error('a reload that waits for approval needs checkIns.key (and the inbox)');
  const ttlMs = live.config.checkIns?.ttl ?? DEFAULT_CHECK_IN_TTL_MS;
  const review = { file: basename(loaded.file ?? 'configuration'), weakens: [...weakens] };
  const argsDigest = await digestOf(review);
  // Several gateway processes watching one file on one store ask once: the same change, the same check-in.
  const waiting = await live.state.checkIns
    .list({ tenant: OPERATOR_TENANT, state: 'pending', argsDigest })
    .catch(() => []);
  const shared = waiting.find(
    (record) =>
      record.decision === undefined &&
      record.request.toolName === RELOAD_TOOL &&
      Date.parse(record.request.expiresAt) > now,
  );
  if (shared !== undefined) return { loaded, weakens, request: shared.request };
  const unsigned = {
    id: newId('chk'),
    asker: 'reload',
    toolName: RELOAD_TOOL,
    toolCallId: newId('rld'),
    args: review,
    review,
    argsDigest,
    chainId: 'reload',
    question: `Apply the changed configuration? It weakens security in ${weakens.length} way${weakens.length === 1 ? '' : 's'}: ${weakens.join('; ')}.`,
    evidence: { weakens: [...weakens] },
    identity: { tenant: OPERATOR_TENANT, principal: 'configuration reload' },
    createdAt: new Date(now).toISOString(),
    expiresAt: new Date(now + ttlMs).toISOString(),
  };
  const request: CheckInRequest = { ...unsigned, signature: await createSigner(key).sign(unsigned) };
  await live.state.checkIns.put(request);
  return { loaded, weakens, request };
}

/** What became of a held reload's check-in, or undefined while it waits. */
export function heldReloadEnd(
  record: CheckInRecord | undefined,
  now = Date.now(),
): HeldReloadEnd | undefined {
  if (record === undefined || record.state === 'revoked') return { kind: 'expired' };
  const decision = record.decision;
  if (decision !== undefined)
    return decision.approved
      ? { kind: 'approved', by: decision.by, ...(decision.note !== undefined ? { note: decision.note } : {}) }
      : { kind: 'declined', by: decision.by, reason: decision.reason };
  if (record.state !== 'pending' || Date.parse(record.request.expiresAt) <= now) return { kind: 'expired' };
  return undefined;
}

/** Ends a held reload's check-in so nothing decides it again (consumed once carried out, revoked when replaced). */
export async function closeHeld(
  store: CheckInStore,
  held: HeldReload,
  how: 'consume' | 'revoke',
): Promise<void> {
  try {
    if (how === 'consume') await store.consume(held.request.id);
    else await store.revoke(held.request.id);
  } catch {
    // The reload's outcome does not depend on it: a check-in left pending expires with its ttl.
  }
}
