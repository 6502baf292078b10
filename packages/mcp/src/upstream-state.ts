// An upstream's input-required answer, relayed (GATEWAY.md §9): the client sees the upstream's
// `inputRequests` and a `requestState` of ours that seals the upstream's own state inside, encrypted
// and authenticated (AES-256-GCM), bound to the caller, the method, its target, the upstream and the
// arguments, and expiring. The client cannot read the upstream's state, edit it, or hand it to
// another principal, tenant, tool or upstream: any of those opens to nothing and nothing is sent on.

import { randomBytes } from 'node:crypto';
import type { Identity } from '@toolgate/core';
import { sealedStates, sentArgsDigest } from './sealed-state';

/** Marks a state this module sealed; a host's own states (a gateway's check-ins) use another prefix. */
export const UPSTREAM_STATE_PREFIX = 'u1.';
/** How long a client may take to answer an upstream's question before its state expires. */
export const DEFAULT_UPSTREAM_STATE_TTL_MS = 10 * 60_000;
// Larger states are not ours: refused before any work is spent on them.
const MAX_STATE_CHARS = 64 * 1024;
// Domain-separates this key from every other use of the secret it is derived from.
const KEY_INFO = 'toolgate.upstreamState.v1';

/** What a sealed state is bound to: who asked, what, of which upstream, with which arguments. */
export interface UpstreamStateBinding {
  readonly identity: Identity | undefined;
  /** `tools/call`, `prompts/get`, `resources/read`. */
  readonly method: string;
  /** The tool or prompt name, or the resource URI, as the client named it. */
  readonly target: string;
  /** The upstream's name (its `source`). */
  readonly upstream: string;
  /** The request's arguments, as the client sent them. */
  readonly args: unknown;
}

/** What the upstream asked with: its own opaque state, and the keys of its input requests. */
export interface UpstreamAsk {
  readonly requestState?: string;
  readonly keys: readonly string[];
  /** The upstream task (SEP-2663) whose questions these are: the retry answers it with tasks/update. */
  readonly upstreamTask?: string;
  /** The parked call of a 2025-era upstream whose question this is (parked-calls.ts). */
  readonly parkedCall?: string;
}

interface Claims {
  readonly t: string | null;
  readonly p: string | null;
  readonly m: string;
  readonly g: string;
  readonly u: string;
  readonly a: string;
  readonly s: string | null;
  readonly k: readonly string[];
  /** The upstream task asking, when a task asked. */
  readonly j?: string | null;
  /** The parked call asking, when a 2025-era upstream asked. */
  readonly c?: string | null;
  readonly e: number;
}

/** Why a state was refused: for tests and the operator, never shown with the state. */
export type UpstreamStateProblem = 'malformed' | 'seal' | 'expired' | 'binding';

export type OpenedUpstreamState =
  | { readonly ok: true; readonly ask: UpstreamAsk }
  | { readonly ok: false; readonly problem: UpstreamStateProblem };

/** Seals and opens upstream states with one key. */
export interface UpstreamStates {
  seal(binding: UpstreamStateBinding, ask: UpstreamAsk, now?: number): string;
  open(token: string, binding: UpstreamStateBinding, now?: number): OpenedUpstreamState;
}

export const isUpstreamState = (token: unknown): token is string =>
  typeof token === 'string' && token.startsWith(UPSTREAM_STATE_PREFIX);

/**
 * Upstream states under a key derived from `secret` (every process given the same secret opens
 * another's states: scale-out without affinity). Without a secret, a random one: states open only in
 * this process.
 */
export function upstreamStates(
  secret?: string | Uint8Array,
  ttlMs: number = DEFAULT_UPSTREAM_STATE_TTL_MS,
): UpstreamStates {
  const box = sealedStates(secret ?? randomBytes(32), {
    info: KEY_INFO,
    prefix: UPSTREAM_STATE_PREFIX,
    maxChars: MAX_STATE_CHARS,
  });
  const bound = (binding: UpstreamStateBinding) => ({
    t: binding.identity?.tenant ?? null,
    p: binding.identity?.principal ?? null,
    m: binding.method,
    g: binding.target,
    u: binding.upstream,
    a: sentArgsDigest(binding.args),
  });
  return {
    seal(binding, ask, now = Date.now()) {
      const claims: Claims = {
        ...bound(binding),
        s: ask.requestState ?? null,
        k: [...ask.keys],
        j: ask.upstreamTask ?? null,
        c: ask.parkedCall ?? null,
        e: now + ttlMs,
      };
      return box.seal(claims);
    },
    open(token, binding, now = Date.now()) {
      const opened = box.open(token);
      if (!opened.ok) return opened;
      const claims = opened.claims as Claims;
      if (
        typeof claims !== 'object' ||
        claims === null ||
        typeof claims.e !== 'number' ||
        !Array.isArray(claims.k)
      )
        return { ok: false, problem: 'malformed' };
      if (claims.e <= now) return { ok: false, problem: 'expired' };
      const expected = bound(binding);
      for (const field of ['t', 'p', 'm', 'g', 'u', 'a'] as const)
        if (claims[field] !== expected[field]) return { ok: false, problem: 'binding' };
      return {
        ok: true,
        ask: {
          ...(typeof claims.s === 'string' ? { requestState: claims.s } : {}),
          keys: claims.k.filter((k): k is string => typeof k === 'string'),
          ...(typeof claims.j === 'string' ? { upstreamTask: claims.j } : {}),
          ...(typeof claims.c === 'string' ? { parkedCall: claims.c } : {}),
        },
      };
    },
  };
}
