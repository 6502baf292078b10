// Standing grants in the inbox: read what the approver asked for (form fields or JSON), refuse a
// grant that would widen the call shown before anything is recorded, and list and revoke grants an
// approver may see (own tenants; another tenant's grant reads exactly like an unknown one).

import { standingGrantFor, type CheckInRequest, type GrantBound, type StandingGrant } from '@toolgate/core';
import { mayDecide, type Approver } from './approvers';
import type { InboxContext } from './options';

/** Grant ids as the core mints them; anything else is unknown without a store read. */
const GRANT_ID = /^grt_[A-Za-z0-9]{1,64}$/;
const HOUR_MS = 3_600_000;

/** What an approver asked for: bounds per argument, how many calls, until when. */
export interface GrantInput {
  readonly bounds?: unknown;
  readonly uses?: unknown;
  /** An ISO 8601 time, or a number of hours from now (the form's field). */
  readonly until?: unknown;
  readonly hours?: unknown;
}

/** The grant input a form posted (`grant=on`, `grant_uses`, `grant_hours`, `bound:<arg>`, `value:<arg>`), or undefined. */
export function grantFromForm(
  form: Record<string, unknown>,
  shown: Readonly<Record<string, unknown>>,
): GrantInput | undefined {
  if (form['grant'] !== 'on') return undefined;
  const bounds: Record<string, unknown> = {};
  for (const name of Object.keys(shown)) {
    const kind = form[`bound:${name}`];
    const raw = form[`value:${name}`];
    if (kind === undefined || kind === 'equals') continue;
    let value: unknown = raw;
    if (typeof raw === 'string') {
      try {
        value = JSON.parse(raw);
      } catch {
        value = raw;
      }
    }
    bounds[name] =
      kind === 'atMost' ? { atMost: value } : kind === 'oneOf' ? { oneOf: value } : { [String(kind)]: value };
  }
  const number = (value: unknown) =>
    typeof value === 'string' && value.trim() !== '' ? Number(value) : undefined;
  return { bounds, uses: number(form['grant_uses']), hours: number(form['grant_hours']) };
}

/** The grant the approver asked for on `request` (as approved: changed args when given), or why not. */
export async function grantToCreate(
  inbox: InboxContext,
  request: CheckInRequest,
  approvedArgs: Readonly<Record<string, unknown>> | undefined,
  by: string,
  input: GrantInput,
): Promise<StandingGrant | string> {
  if (inbox.grants === undefined || inbox.definitionOf === undefined)
    return 'Standing grants are not enabled on this inbox.';
  if (typeof input !== 'object' || input === null)
    return "'grant' must be an object { bounds?, uses?, until? }.";
  const uses = input.uses;
  if (
    uses !== undefined &&
    !(typeof uses === 'number' && Number.isInteger(uses) && uses > 0 && uses <= 10_000)
  )
    return "'uses' must be a whole number from 1 to 10,000.";
  const now = inbox.now();
  let until: number;
  if (input.until !== undefined)
    until = typeof input.until === 'string' ? Date.parse(input.until) : Number.NaN;
  else if (input.hours !== undefined)
    until = typeof input.hours === 'number' ? now + input.hours * HOUR_MS : Number.NaN;
  else until = now + inbox.maxGrantMs;
  if (!Number.isFinite(until) || until <= now) return "'until' must be a time in the future.";
  if (until - now > inbox.maxGrantMs)
    return `A standing grant lasts at most ${Math.round(inbox.maxGrantMs / HOUR_MS)} hours.`;
  if (uses === undefined && input.until === undefined && input.hours === undefined)
    return "Say how long the grant lasts: 'uses' (a number of calls), 'until', or both.";
  let definitionDigest: string | undefined;
  try {
    definitionDigest = await inbox.definitionOf(request);
  } catch {
    definitionDigest = undefined;
  }
  if (definitionDigest === undefined)
    return `'${request.toolName}' is not served any more; no grant was made.`;
  try {
    return standingGrantFor(approvedArgs === undefined ? request : { ...request, review: approvedArgs }, {
      bounds: input.bounds,
      ...(uses !== undefined ? { maxUses: uses as number } : {}),
      expiresAt: new Date(until).toISOString(),
      definitionDigest,
      createdBy: by,
      now,
    });
  } catch (error) {
    return `This grant would not stay within the call shown: ${(error as Error).message}. Nothing was recorded.`;
  }
}

const requestLike = (grant: StandingGrant) =>
  ({
    identity: grant.tenant === undefined ? undefined : { tenant: grant.tenant },
  }) as unknown as CheckInRequest;

/** The grant when `approver` may see it; undefined otherwise, whatever the reason. */
export async function visibleGrant(
  inbox: InboxContext,
  approver: Approver,
  id: string,
): Promise<StandingGrant | undefined> {
  if (inbox.grants === undefined || !GRANT_ID.test(id)) return undefined;
  const grant = await inbox.grants.get(id);
  return grant !== undefined && mayDecide(approver, requestLike(grant)) ? grant : undefined;
}

/** The grants `approver` may see, newest first. */
export async function visibleGrants(inbox: InboxContext, approver: Approver): Promise<StandingGrant[]> {
  if (inbox.grants === undefined) return [];
  const batches =
    approver.tenants === 'all'
      ? [await inbox.grants.list({})]
      : await Promise.all(approver.tenants.map((tenant) => inbox.grants!.list({ tenant })));
  return batches
    .flat()
    .filter((grant) => mayDecide(approver, requestLike(grant)))
    .sort((a, b) => Date.parse(b.createdAt) - Date.parse(a.createdAt) || (a.id < b.id ? 1 : -1));
}

/**
 * Revokes `grant` for `by`, then tells the host. A revocation only narrows what runs, so it stands
 * even when the host cannot record it; the answer then says so (undefined: nothing to report).
 */
export async function revokeGrant(
  inbox: InboxContext,
  grant: StandingGrant,
  by: string,
): Promise<string | undefined> {
  if (!(await inbox.grants!.revoke(grant.id))) return undefined;
  if (await inbox.onGrant({ kind: 'revoked', grant, by })) return undefined;
  return 'The grant is revoked, but its revocation could not be recorded.';
}

/** A bound as one line for people. */
export function boundText(bound: GrantBound): string {
  if ('equals' in bound) return `= ${JSON.stringify(bound.equals)}`;
  if ('atMost' in bound) return `≤ ${bound.atMost}`;
  return `one of ${bound.oneOf.map((value) => JSON.stringify(value)).join(', ')}`;
}
