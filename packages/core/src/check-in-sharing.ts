// One check-in per pending call: a model that retries a paused call raises a new, identical request
// each time. The identical ones (tenant, principal, tool, asker, chain, args digest) share the oldest
// one, so the inbox shows one row and one approval runs the call once; and each principal has a cap
// on how many check-ins it may keep waiting, so a flood from one caller cannot bury the others'.

import type { CheckInRecord, CheckInRequest, CheckInStore } from './check-in';

/** Pending check-ins one principal may keep waiting, when no cap is given. */
export const DEFAULT_MAX_PENDING = 50;

export type SharedCheckIn =
  /** No identical call waits: `request` is this call's own check-in. */
  | { readonly kind: 'own'; readonly request: CheckInRequest }
  /** An identical, older call waits on `request`: this call's own was revoked, wait on that one. */
  | { readonly kind: 'shared'; readonly request: CheckInRequest }
  /** The principal already keeps `pending` check-ins waiting, the cap or more: this call's was revoked. */
  | { readonly kind: 'limit'; readonly pending: number; readonly maxPending: number };

export interface ShareCheckInOptions {
  /** Pending check-ins one principal may keep waiting; default `DEFAULT_MAX_PENDING`. */
  readonly maxPending?: number;
  /** Milliseconds since the epoch; default `Date.now`. */
  readonly now?: () => number;
}

/** Whether two requests ask a person about the same call by the same caller. */
export function sameCall(a: CheckInRequest, b: CheckInRequest): boolean {
  return (
    a.identity?.tenant === b.identity?.tenant &&
    a.identity?.principal === b.identity?.principal &&
    a.toolName === b.toolName &&
    a.toolSource === b.toolSource &&
    a.asker === b.asker &&
    a.chainId === b.chainId &&
    a.argsDigest === b.argsDigest
  );
}

const older = (a: CheckInRequest, b: CheckInRequest) =>
  Date.parse(a.createdAt) - Date.parse(b.createdAt) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

/**
 * Decides which check-in `request` (already in `store`, as a paused call leaves it) waits on. Two
 * identical retries racing agree: each picks the oldest identical request it sees, and the later of
 * the two always sees the earlier. The cap counts the principal's other undecided, unexpired
 * check-ins; two calls racing at the cap may both get in, so it bounds a flood, not an exact count.
 * Rejects when the store fails (the caller fails closed).
 */
export async function shareCheckIn(
  store: CheckInStore,
  request: CheckInRequest,
  options: ShareCheckInOptions = {},
): Promise<SharedCheckIn> {
  const maxPending = options.maxPending ?? DEFAULT_MAX_PENDING;
  if (!(Number.isInteger(maxPending) && maxPending > 0))
    throw new TypeError('shareCheckIn: maxPending must be a positive integer.');
  const now = (options.now ?? Date.now)();
  const tenant = request.identity?.tenant;
  const principal = request.identity?.principal;
  const records: CheckInRecord[] = await store.list({
    state: 'pending',
    decided: false,
    ...(tenant !== undefined ? { tenant } : {}),
    ...(principal !== undefined ? { principal } : {}),
  });
  const waiting = records
    .map((record) => record.request)
    .filter(
      (other) =>
        other.id !== request.id &&
        Date.parse(other.expiresAt) > now &&
        other.identity?.tenant === tenant &&
        other.identity?.principal === principal,
    );
  const identical = waiting.filter((other) => sameCall(other, request)).sort(older);
  const oldest = identical[0];
  if (oldest !== undefined && older(oldest, request) < 0) {
    await store.revoke(request.id);
    return { kind: 'shared', request: oldest };
  }
  // Newer identical requests are about to revoke themselves in favour of this one: not counted.
  const others = waiting.filter((other) => !sameCall(other, request)).length;
  if (others >= maxPending) {
    await store.revoke(request.id);
    return { kind: 'limit', pending: others, maxPending };
  }
  return { kind: 'own', request };
}
