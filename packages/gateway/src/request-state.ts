// The gateway's own `requestState` for an input-required answer (GATEWAY.md §6 item 1): it travels
// through the client, so it is signed with the check-in key, expires with its check-in, is spent on
// first use, and names the call it was minted for. Anything else is refused as CHECKIN_STATE_INVALID.

import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { CheckInRequest, Identity, SpentNonces } from '@toolgate/core';

/** How the person is asked: the inbox page (URL elicitation), or a form at the client. */
export type StateMode = 'url' | 'form';

/** What a `requestState` binds: who asked, for which call, about which check-in, until when. */
export interface RequestStateClaims {
  readonly tenant: string | null;
  readonly principal: string | null;
  readonly tool: string;
  readonly chainId: string;
  readonly argsDigest: string;
  readonly checkInId: string;
  readonly mode: StateMode;
  /** Milliseconds since the epoch. */
  readonly expiresAt: number;
  /** Makes each minted state distinct, so spending one spends only it. */
  readonly nonce: string;
}

const VERSION = 'v1';
// Domain-separates these MACs from every other use of the check-in key.
const CONTEXT = 'toolgate.requestState.v1:';
const MAX_STATE_CHARS = 4096;

const mac = (key: string, payload: string): Buffer =>
  createHmac('sha256', key).update(CONTEXT).update(payload).digest();

/** A signed state for `request`, asked in `mode`, expiring with the check-in. */
export function mintState(key: string, request: CheckInRequest, mode: StateMode): string {
  const claims: RequestStateClaims = {
    tenant: request.identity?.tenant ?? null,
    principal: request.identity?.principal ?? null,
    tool: request.toolName,
    chainId: request.chainId,
    argsDigest: request.argsDigest,
    checkInId: request.id,
    mode,
    expiresAt: Date.parse(request.expiresAt),
    nonce: randomBytes(16).toString('base64url'),
  };
  const payload = Buffer.from(JSON.stringify(claims)).toString('base64url');
  return `${VERSION}.${payload}.${mac(key, payload).toString('base64url')}`;
}

/** Why a state was refused: for the operator's log line and tests, never shown with the state itself. */
export type StateProblem = 'malformed' | 'signature' | 'expired' | 'caller' | 'tool' | 'replayed';

export type ReadState =
  | { readonly ok: true; readonly state: RequestStateClaims }
  | { readonly ok: false; readonly problem: StateProblem };

/**
 * The claims of a state this gateway minted, unspent and unexpired, for this caller and tool.
 * Spending happens here: a second read of the same state is `replayed`.
 */
export function readState(
  key: string,
  token: string,
  caller: { readonly identity: Identity | undefined; readonly toolName: string },
  spent: SpentNonces,
  now = Date.now(),
): ReadState {
  if (token.length > MAX_STATE_CHARS) return { ok: false, problem: 'malformed' };
  const parts = token.split('.');
  if (parts.length !== 3 || parts[0] !== VERSION) return { ok: false, problem: 'malformed' };
  const [, payload = '', signature = ''] = parts;
  const expected = mac(key, payload);
  const given = Buffer.from(signature, 'base64url');
  if (given.length !== expected.length || !timingSafeEqual(given, expected))
    return { ok: false, problem: 'signature' };
  let state: RequestStateClaims;
  try {
    state = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as RequestStateClaims;
  } catch {
    return { ok: false, problem: 'malformed' };
  }
  if (typeof state !== 'object' || state === null || typeof state.expiresAt !== 'number')
    return { ok: false, problem: 'malformed' };
  if (state.expiresAt <= now) return { ok: false, problem: 'expired' };
  if (
    state.tenant !== (caller.identity?.tenant ?? null) ||
    state.principal !== (caller.identity?.principal ?? null)
  )
    return { ok: false, problem: 'caller' };
  if (state.tool !== caller.toolName) return { ok: false, problem: 'tool' };
  if (spent.spend(state.nonce, state.expiresAt, now) !== 'taken') return { ok: false, problem: 'replayed' };
  return { ok: true, state };
}
