// Who may decide: `approvers` turns a credential (a bearer token, or the token a person signed in
// with) into an approver and the tenants whose check-ins it may see and decide.

import type { CheckInRequest } from '@toolgate/core';

export interface Approver {
  /** Who decided, as the decision and the receipt record it (`by`). */
  readonly id: string;
  /** Shown in the page header; `id` when absent. */
  readonly name?: string;
  /**
   * The tenants whose check-ins this approver sees and decides. `'all'` also sees check-ins made
   * without a tenant; a list never does.
   */
  readonly tenants: readonly string[] | 'all';
  /** Roles beyond deciding: `'operator'` may open the status page (when the host provides one). */
  readonly roles?: readonly string[];
}

/**
 * Authenticates a credential: the approver it belongs to, or undefined. Called on every request, so
 * a revoked credential stops working at once, also for a signed-in session.
 */
export type Approvers = (token: string) => Approver | undefined | Promise<Approver | undefined>;

export interface StaticApprover extends Approver {
  /** The secret this approver signs in with; at least 16 characters. */
  readonly token: string;
}

const encoder = new TextEncoder();

async function digest(text: string): Promise<Uint8Array> {
  return new Uint8Array(await globalThis.crypto.subtle.digest('SHA-256', encoder.encode(text)));
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  let diff = a.length ^ b.length;
  for (let i = 0; i < a.length && i < b.length; i++) diff |= a[i]! ^ b[i]!;
  return diff === 0;
}

/**
 * Approvers from a fixed list of tokens, compared in constant time (through their SHA-256, so the
 * comparison takes as long whatever the token's length).
 *
 * @example
 * const approvers = staticApprovers([{ token: process.env.ANA_TOKEN!, id: 'ana', tenants: ['acme'] }]);
 */
export function staticApprovers(list: readonly StaticApprover[]): Approvers {
  if (!Array.isArray(list))
    throw new TypeError('staticApprovers: expected a list of { token, id, tenants }.');
  const entries = list.map((entry, i) => {
    if (typeof entry?.token !== 'string' || entry.token.length < 16)
      throw new TypeError(`staticApprovers: entry ${i} needs a 'token' of at least 16 characters.`);
    const { token, ...approver } = entry;
    checkApprover(approver, `staticApprovers: entry ${i}`);
    return { hash: digest(token), approver: Object.freeze({ ...approver }) };
  });
  return async (token) => {
    if (typeof token !== 'string' || token === '') return undefined;
    const hash = await digest(token);
    let found: Approver | undefined;
    // Every entry is compared, so the time taken does not say which one matched.
    for (const entry of entries) if (sameBytes(hash, await entry.hash)) found = entry.approver;
    return found;
  };
}

export function checkApprover(value: unknown, where: string): asserts value is Approver {
  const approver = value as Partial<Approver> | null;
  if (typeof approver?.id !== 'string' || approver.id.trim() === '')
    throw new TypeError(`${where}: an approver needs a non-empty 'id'.`);
  const { tenants } = approver;
  if (tenants !== 'all' && !(Array.isArray(tenants) && tenants.every((t) => typeof t === 'string')))
    throw new TypeError(`${where}: 'tenants' must be a list of tenant names or 'all'.`);
}

/** Whether `approver` may see and decide `request`. */
export function mayDecide(approver: Approver, request: CheckInRequest): boolean {
  if (approver.tenants === 'all') return true;
  const tenant = request.identity?.tenant;
  return tenant !== undefined && approver.tenants.includes(tenant);
}
