// The JWT a caller presented, kept for the one thing that may use it: an RFC 8693 exchange for a
// token an upstream accepts. The token lives in a private field (absent from JSON, inspection,
// spread and clones) and is tied to the identity object the verifier made from it, so only a caller
// that really presented a verified JWT has one; a static token never does.

import type { Identity } from '@toolgate/core';

export class CallerToken {
  readonly #token: string;

  constructor(
    token: string,
    /** When the JWT expires, in ms since the epoch. */
    readonly expiresMs: number,
  ) {
    this.#token = token;
  }

  /** The JWT. Call it where it is sent to the authorization server, never to log. */
  reveal(): string {
    return this.#token;
  }

  toJSON(): string {
    return '[caller token]';
  }

  toString(): string {
    return 'CallerToken([redacted])';
  }

  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return this.toString();
  }
}

const tokens = new WeakMap<Identity, CallerToken>();

/** Ties a verified JWT to the identity the verifier made of it. */
export function rememberCallerToken(identity: Identity, token: CallerToken): void {
  tokens.set(identity, token);
}

/** The verified JWT behind `identity`, when it came from one. */
export function callerTokenOf(identity: Identity): CallerToken | undefined {
  return tokens.get(identity);
}

/** The caller's token the HTTP layer put in the auth info, if any. */
export function callerTokenFromExtra(extra: unknown): CallerToken | undefined {
  const caller = (extra as { caller?: unknown } | undefined)?.caller;
  return caller instanceof CallerToken ? caller : undefined;
}
