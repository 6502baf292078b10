// The `requestState` of a check-in asked at a 2026-07-28 client (modern-check-in.ts): it travels
// through the client, so it is sealed (AES-256-GCM under a key derived from mcpServe's
// `requestStateKey`, domain-separated from the upstream states), bound to the caller, the tool, the
// arguments as sent, and the check-in asked about (its chain and digest), expires with that check-in,
// and is spent on its first use in this process. Anything else is refused before the chain runs.

import { randomBytes } from 'node:crypto';
import { SpentNonces, type CheckInRequest, type Identity } from '@toolgate/core';
import { sealedStates, sentArgsDigest } from './sealed-state';

/** Marks a state of this module; upstream states use `u1.`, a gateway's its own. */
export const CHECK_IN_STATE_PREFIX = 'c1.';
// Domain-separates this key from every other use of the secret it is derived from.
const KEY_INFO = 'toolgate.checkInState.v1';
// A state of ours is a few hundred characters; anything much longer is not one.
const MAX_STATE_CHARS = 4096;
/** Spent states kept at once; past it, a retry is refused rather than a spent state forgotten. */
export const DEFAULT_MAX_SPENT_STATES = 100_000;

/** The call a state is presented with: who calls, which tool, with which arguments as sent. */
export interface CheckInStateCall {
  readonly identity: Identity | undefined;
  readonly toolName: string;
  readonly args: unknown;
}

/** What an opened state names: the check-in the person was asked about, and the round it was. */
export interface CheckInStateClaims {
  readonly checkInId: string;
  /** The chain the check-in was raised under, and the digest of the args the person was shown. */
  readonly chainId: string;
  readonly argsDigest: string;
  /** How many times this call was asked before (a loop of check-ins ends at a bound). */
  readonly round: number;
}

interface Sealed {
  readonly t: string | null;
  readonly p: string | null;
  readonly g: string;
  readonly a: string;
  readonly c: string;
  readonly d: string;
  readonly i: string;
  readonly r: number;
  readonly e: number;
  readonly n: string;
}

/** Why a state was refused: for tests, never shown with the state. */
export type CheckInStateProblem = 'malformed' | 'seal' | 'expired' | 'binding' | 'replayed' | 'full';

export type ReadCheckInState =
  | { readonly ok: true; readonly claims: CheckInStateClaims }
  | { readonly ok: false; readonly problem: CheckInStateProblem };

export interface CheckInStates {
  /** A state asking about `request` for `call`, expiring with the check-in. */
  seal(call: CheckInStateCall, request: CheckInRequest, round: number): string;
  /** The claims of a state sealed for this very call, unexpired and unspent; spends it. */
  read(token: string, call: CheckInStateCall, now?: number): ReadCheckInState;
}

export const isCheckInState = (token: unknown): token is string =>
  typeof token === 'string' && token.startsWith(CHECK_IN_STATE_PREFIX);

/**
 * Check-in states under a key derived from `secret`: every process given the same secret opens
 * another's states (the check-in store must then be shared too, for the check-in they name).
 */
export function checkInStates(
  secret: string | Uint8Array,
  options: { readonly maxSpent?: number } = {},
): CheckInStates {
  const box = sealedStates(secret, {
    info: KEY_INFO,
    prefix: CHECK_IN_STATE_PREFIX,
    maxChars: MAX_STATE_CHARS,
  });
  const spent = new SpentNonces(options.maxSpent ?? DEFAULT_MAX_SPENT_STATES);
  return {
    seal(call, request, round) {
      const sealed: Sealed = {
        t: call.identity?.tenant ?? null,
        p: call.identity?.principal ?? null,
        g: call.toolName,
        a: sentArgsDigest(call.args),
        c: request.chainId,
        d: request.argsDigest,
        i: request.id,
        r: round,
        e: Date.parse(request.expiresAt),
        n: randomBytes(16).toString('base64url'),
      };
      return box.seal(sealed);
    },
    read(token, call, now = Date.now()) {
      const opened = box.open(token);
      if (!opened.ok) return opened;
      const sealed = opened.claims as Sealed;
      if (
        typeof sealed !== 'object' ||
        sealed === null ||
        typeof sealed.e !== 'number' ||
        typeof sealed.i !== 'string' ||
        typeof sealed.n !== 'string' ||
        typeof sealed.r !== 'number'
      )
        return { ok: false, problem: 'malformed' };
      if (!(sealed.e > now)) return { ok: false, problem: 'expired' };
      if (
        sealed.t !== (call.identity?.tenant ?? null) ||
        sealed.p !== (call.identity?.principal ?? null) ||
        sealed.g !== call.toolName ||
        sealed.a !== sentArgsDigest(call.args)
      )
        return { ok: false, problem: 'binding' };
      const spending = spent.spend(sealed.n, sealed.e, now);
      if (spending !== 'taken') return { ok: false, problem: spending };
      return {
        ok: true,
        claims: { checkInId: sealed.i, chainId: sealed.c, argsDigest: sealed.d, round: sealed.r },
      };
    },
  };
}
