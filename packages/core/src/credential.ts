// A resolved credential. The secret lives in a private field: it is absent from JSON.stringify,
// util.inspect, spread and structuredClone, and readable only through `reveal()`.

import type { CredentialNeed, ResolvedCredential } from './ports';

export type CredentialValue = ResolvedCredential['value'];

export class Credential {
  readonly kind: string;
  readonly service: string;
  // `declare`: absent, not undefined, when the provider gave no expiry.
  declare readonly expiresAt?: string | number;
  readonly #value: CredentialValue;

  constructor(need: CredentialNeed, resolved: ResolvedCredential) {
    this.kind = resolved.kind;
    this.service = need.service;
    if (resolved.expiresAt !== undefined) this.expiresAt = resolved.expiresAt;
    this.#value = typeof resolved.value === 'string' ? resolved.value : Object.freeze({ ...resolved.value });
  }

  /** The secret. Call it where the secret is used, never to log. */
  reveal(): CredentialValue {
    return this.#value;
  }

  /** Every secret string inside, for redaction. */
  secrets(): string[] {
    const value = this.#value;
    const all = typeof value === 'string' ? [value] : Object.values(value);
    return all.filter((secret) => secret.length > 0);
  }

  toJSON(): { kind: string; service: string; value: '[redacted]' } {
    return { kind: this.kind, service: this.service, value: '[redacted]' };
  }

  toString(): string {
    return `Credential(${this.kind} for ${this.service})`;
  }

  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return this.toString();
  }
}
