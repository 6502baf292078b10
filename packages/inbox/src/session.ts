// Who is asking: a bearer token (bots, scripts), or a session cookie set at sign-in (people). The
// cookie holds the sign-in token sealed with AES-GCM, so every request authenticates it again through
// `approvers` (a revoked token signs its sessions out at once) and no process keeps session state.

import type { Context } from 'hono';
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';
import type { Approver } from './approvers';
import { randomToken } from './keys';
import type { InboxContext } from './options';

export interface Session {
  readonly approver: Approver;
  /** A bearer token needs no CSRF token; a cookie does, on every state-changing request. */
  readonly via: 'bearer' | 'cookie';
  /** The CSRF token forms of this session carry. */
  readonly csrf?: string;
}

const SESSION_COOKIE = 'toolgate_inbox';
const SIGN_IN_COOKIE = 'toolgate_inbox_sign_in';
const MAX_TOKEN_CHARS = 4096;

interface Sealed {
  readonly t: string;
  readonly s: string;
  readonly e: number;
}

function cookieOptions(inbox: InboxContext, c: Context, maxAge?: number) {
  const secure = inbox.secureCookies ?? new URL(c.req.url).protocol === 'https:';
  return {
    path: inbox.base === '' ? '/' : inbox.base,
    httpOnly: true,
    sameSite: 'Strict' as const,
    secure,
    ...(maxAge !== undefined ? { maxAge } : {}),
  };
}

/** The approver a token names; a throwing or malformed answer counts as nobody (fail closed). */
async function approverFor(inbox: InboxContext, token: string): Promise<Approver | undefined> {
  if (token === '' || token.length > MAX_TOKEN_CHARS) return undefined;
  try {
    const approver = await inbox.approvers(token);
    if (approver === undefined || approver === null) return undefined;
    const valid =
      typeof approver.id === 'string' &&
      approver.id.trim() !== '' &&
      (approver.tenants === 'all' ||
        (Array.isArray(approver.tenants) && approver.tenants.every((t) => typeof t === 'string')));
    return valid ? approver : undefined;
  } catch {
    return undefined;
  }
}

export async function authenticate(inbox: InboxContext, c: Context): Promise<Session | undefined> {
  const header = c.req.header('authorization');
  if (header !== undefined) {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    const approver = match === null ? undefined : await approverFor(inbox, match[1]!);
    return approver === undefined ? undefined : { approver, via: 'bearer' };
  }
  const cookie = getCookie(c, SESSION_COOKIE);
  if (cookie === undefined) return undefined;
  const opened = await inbox.keys.sessions.open(cookie);
  if (opened === undefined) return undefined;
  let sealed: Sealed;
  try {
    sealed = JSON.parse(opened) as Sealed;
  } catch {
    return undefined;
  }
  if (typeof sealed.t !== 'string' || typeof sealed.s !== 'string' || !(sealed.e > inbox.now()))
    return undefined;
  const approver = await approverFor(inbox, sealed.t);
  if (approver === undefined) return undefined;
  return { approver, via: 'cookie', csrf: await inbox.keys.csrf.sign(`session:${sealed.s}`) };
}

/** Starts a session for `token` when it names an approver; answers whether it did. */
export async function signIn(inbox: InboxContext, c: Context, token: string): Promise<boolean> {
  const approver = await approverFor(inbox, token);
  if (approver === undefined) return false;
  const sealed: Sealed = { t: token, s: randomToken(), e: inbox.now() + inbox.sessionTtlMs };
  const value = await inbox.keys.sessions.seal(JSON.stringify(sealed));
  setCookie(c, SESSION_COOKIE, value, cookieOptions(inbox, c, Math.floor(inbox.sessionTtlMs / 1000)));
  deleteCookie(c, SIGN_IN_COOKIE, cookieOptions(inbox, c));
  return true;
}

export function signOut(inbox: InboxContext, c: Context): void {
  deleteCookie(c, SESSION_COOKIE, cookieOptions(inbox, c));
}

/** Compares two strings in time that depends only on their lengths. */
function sameText(a: string, b: string): boolean {
  let diff = a.length ^ b.length;
  for (let i = 0; i < a.length && i < b.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

/** Whether `token` is this session's CSRF token. A bearer session needs none. */
export function csrfValid(session: Session, token: unknown): boolean {
  if (session.via === 'bearer') return true;
  return typeof token === 'string' && session.csrf !== undefined && sameText(token, session.csrf);
}

/** The sign-in form's CSRF token, bound to a nonce cookie set now (login CSRF). */
export async function signInToken(inbox: InboxContext, c: Context): Promise<string> {
  let nonce = getCookie(c, SIGN_IN_COOKIE);
  if (nonce === undefined || !/^[A-Za-z0-9_-]{24}$/.test(nonce)) {
    nonce = randomToken();
    setCookie(c, SIGN_IN_COOKIE, nonce, cookieOptions(inbox, c, 60 * 60));
  }
  return inbox.keys.csrf.sign(`sign-in:${nonce}`);
}

export async function signInTokenValid(inbox: InboxContext, c: Context, token: unknown): Promise<boolean> {
  const nonce = getCookie(c, SIGN_IN_COOKIE);
  if (nonce === undefined || typeof token !== 'string') return false;
  return inbox.keys.csrf.verify(`sign-in:${nonce}`, token);
}
