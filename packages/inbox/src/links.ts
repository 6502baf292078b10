// Signed approve / decline links for webhook messages. A link names one check-in and one action and
// expires; it is single-use because the decision it records can be recorded only once. Opening a
// link only shows the check-in: the decision is a POST from that page, so a chat app's link preview
// can never approve anything.

import { fromBase64Url, toBase64Url } from './keys';
import type { InboxContext } from './options';

export type LinkAction = 'approve' | 'decline';

export interface LinkClaim {
  readonly id: string;
  readonly action: LinkAction;
  readonly expiresAt: number;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export async function linkToken(inbox: InboxContext, claim: LinkClaim): Promise<string> {
  const payload = toBase64Url(
    encoder.encode(JSON.stringify({ i: claim.id, a: claim.action, e: claim.expiresAt })),
  );
  return `${payload}.${await inbox.keys.links.sign(`link:${payload}`)}`;
}

/** The claim a token makes when this inbox signed it and it has not expired. */
export async function readLink(inbox: InboxContext, token: string): Promise<LinkClaim | undefined> {
  if (typeof token !== 'string' || token.length > 1024) return undefined;
  const [payload, mac, extra] = token.split('.');
  if (payload === undefined || mac === undefined || extra !== undefined) return undefined;
  if (!(await inbox.keys.links.verify(`link:${payload}`, mac))) return undefined;
  const bytes = fromBase64Url(payload);
  if (bytes === undefined) return undefined;
  let claim: { i?: unknown; a?: unknown; e?: unknown };
  try {
    claim = JSON.parse(decoder.decode(bytes)) as typeof claim;
  } catch {
    return undefined;
  }
  const { i, a, e } = claim;
  if (typeof i !== 'string' || (a !== 'approve' && a !== 'decline') || typeof e !== 'number')
    return undefined;
  if (e <= inbox.now()) return undefined;
  return { id: i, action: a, expiresAt: e };
}

/** The CSRF token of the page a link opens. */
export const linkCsrf = (inbox: InboxContext, token: string): Promise<string> =>
  inbox.keys.links.sign(`csrf:${token}`);

export const linkCsrfValid = (inbox: InboxContext, token: string, csrf: unknown): Promise<boolean> =>
  typeof csrf === 'string' ? inbox.keys.links.verify(`csrf:${token}`, csrf) : Promise.resolve(false);
