// JWTs already verified, so a busy client's token is not verified (a signature check, maybe a
// JWKS fetch) on every request. An entry is found only by the token's full digest, so a token
// differing in any byte (a forged signature, edited claims) is verified afresh; it is forgotten at
// the token's `exp` (never later than the verifier would accept it) and after a few minutes at
// most, no later than jose refreshes a remote key set, so a withdrawn key stops a token within that
// window. The oldest entries go first when the cache is full.

import { hash } from 'node:crypto';
import type { Identity } from '@toolgate/core';

export interface VerifiedTokensOptions {
  /** How many tokens to remember; default 10,000. */
  readonly max?: number;
  /** The longest an entry is trusted, whatever its exp; default 5 minutes. */
  readonly maxAgeMs?: number;
  readonly now?: () => number;
}

interface Entry {
  readonly identity: Identity;
  readonly untilMs: number;
}

export class VerifiedTokens {
  readonly #entries = new Map<string, Entry>();
  readonly #max: number;
  readonly #maxAgeMs: number;
  readonly #now: () => number;

  constructor(options: VerifiedTokensOptions = {}) {
    this.#max = options.max ?? 10_000;
    this.#maxAgeMs = options.maxAgeMs ?? 5 * 60_000;
    this.#now = options.now ?? Date.now;
  }

  get size(): number {
    return this.#entries.size;
  }

  /** The identity a still-valid token was verified as; undefined to verify it. */
  get(token: string): Identity | undefined {
    const key = keyOf(token);
    const entry = this.#entries.get(key);
    if (entry === undefined) return undefined;
    if (this.#now() >= entry.untilMs) {
      this.#entries.delete(key);
      return undefined;
    }
    return entry.identity;
  }

  /** Remembers a token the verifier accepted, until `expiresMs` (its exp) or the maximum age. */
  set(token: string, identity: Identity, expiresMs: number): void {
    const now = this.#now();
    const untilMs = Math.min(expiresMs, now + this.#maxAgeMs);
    if (untilMs <= now || this.#max === 0) return;
    const key = keyOf(token);
    this.#entries.delete(key);
    this.#entries.set(key, { identity, untilMs });
    while (this.#entries.size > this.#max) this.#entries.delete(this.#entries.keys().next().value!);
  }
}

// The digest, not the token: the cache holds nothing that could be replayed if it were dumped.
const keyOf = (token: string): string => hash('sha256', token, 'base64url');
