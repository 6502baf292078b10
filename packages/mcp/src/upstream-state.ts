// An upstream's input-required answer, relayed (GATEWAY.md §9): the client sees the upstream's
// `inputRequests` and a `requestState` of ours that seals the upstream's own state inside, encrypted
// and authenticated (AES-256-GCM), bound to the caller, the method, its target, the upstream and the
// arguments, and expiring. The client cannot read the upstream's state, edit it, or hand it to
// another principal, tenant, tool or upstream: any of those opens to nothing and nothing is sent on.

import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes } from 'node:crypto';
import type { Identity } from '@toolgate/core';

/** Marks a state this module sealed; a host's own states (a gateway's check-ins) use another prefix. */
export const UPSTREAM_STATE_PREFIX = 'u1.';
/** How long a client may take to answer an upstream's question before its state expires. */
export const DEFAULT_UPSTREAM_STATE_TTL_MS = 10 * 60_000;
// Larger states are not ours: refused before any work is spent on them.
const MAX_STATE_CHARS = 64 * 1024;
const IV_BYTES = 12;
const TAG_BYTES = 16;
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

/** The digest arguments are bound by: what a retry sends must be what the upstream was asked with. */
function argsDigest(args: unknown): string {
  return createHash('sha256')
    .update(JSON.stringify(args ?? {}) ?? '')
    .digest('base64url');
}

/**
 * Upstream states under a key derived from `secret` (every process given the same secret opens
 * another's states: scale-out without affinity). Without a secret, a random one: states open only in
 * this process.
 */
export function upstreamStates(
  secret?: string | Uint8Array,
  ttlMs: number = DEFAULT_UPSTREAM_STATE_TTL_MS,
): UpstreamStates {
  const material = secret === undefined ? randomBytes(32) : Buffer.from(secret);
  const key = Buffer.from(hkdfSync('sha256', material, Buffer.alloc(0), KEY_INFO, 32));
  const bound = (binding: UpstreamStateBinding) => ({
    t: binding.identity?.tenant ?? null,
    p: binding.identity?.principal ?? null,
    m: binding.method,
    g: binding.target,
    u: binding.upstream,
    a: argsDigest(binding.args),
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
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      const sealed = Buffer.concat([cipher.update(JSON.stringify(claims), 'utf8'), cipher.final()]);
      return `${UPSTREAM_STATE_PREFIX}${Buffer.concat([iv, sealed, cipher.getAuthTag()]).toString('base64url')}`;
    },
    open(token, binding, now = Date.now()) {
      if (!isUpstreamState(token) || token.length > MAX_STATE_CHARS)
        return { ok: false, problem: 'malformed' };
      const body = token.slice(UPSTREAM_STATE_PREFIX.length);
      if (!/^[A-Za-z0-9_-]+$/.test(body)) return { ok: false, problem: 'malformed' };
      const bytes = Buffer.from(body, 'base64url');
      if (bytes.length <= IV_BYTES + TAG_BYTES) return { ok: false, problem: 'malformed' };
      let claims: Claims;
      try {
        const decipher = createDecipheriv('aes-256-gcm', key, bytes.subarray(0, IV_BYTES));
        decipher.setAuthTag(bytes.subarray(bytes.length - TAG_BYTES));
        const plain = Buffer.concat([
          decipher.update(bytes.subarray(IV_BYTES, bytes.length - TAG_BYTES)),
          decipher.final(),
        ]);
        claims = JSON.parse(plain.toString('utf8')) as Claims;
      } catch {
        return { ok: false, problem: 'seal' };
      }
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
