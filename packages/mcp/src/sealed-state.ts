// A `requestState` that travels through the client and comes back: its claims encrypted and
// authenticated (AES-256-GCM) under a key derived (HKDF) from a host's secret for one use, so the
// client can neither read nor edit them. What the claims bind, and when they expire, is the user's.

import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes } from 'node:crypto';

const IV_BYTES = 12;
const TAG_BYTES = 16;

export type OpenedState =
  | { readonly ok: true; readonly claims: unknown }
  | { readonly ok: false; readonly problem: 'malformed' | 'seal' };

export interface SealedStates {
  /** `prefix` and the sealed JSON of `claims`, base64url. */
  seal(claims: object): string;
  /** The claims of a state this box sealed, not yet checked for shape, binding or expiry. */
  open(token: string): OpenedState;
}

/**
 * States marked `prefix`, under a key derived from `secret` with `info` (which domain-separates each
 * use of one secret); a token over `maxChars` is refused before any work is spent on it.
 */
export function sealedStates(
  secret: string | Uint8Array,
  options: { readonly info: string; readonly prefix: string; readonly maxChars: number },
): SealedStates {
  const { info, prefix, maxChars } = options;
  const key = Buffer.from(hkdfSync('sha256', Buffer.from(secret), Buffer.alloc(0), info, 32));
  return {
    seal(claims) {
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      const body = Buffer.concat([cipher.update(JSON.stringify(claims), 'utf8'), cipher.final()]);
      return `${prefix}${Buffer.concat([iv, body, cipher.getAuthTag()]).toString('base64url')}`;
    },
    open(token) {
      if (typeof token !== 'string' || !token.startsWith(prefix) || token.length > maxChars)
        return { ok: false, problem: 'malformed' };
      const body = token.slice(prefix.length);
      if (!/^[A-Za-z0-9_-]+$/.test(body)) return { ok: false, problem: 'malformed' };
      const bytes = Buffer.from(body, 'base64url');
      if (bytes.length <= IV_BYTES + TAG_BYTES) return { ok: false, problem: 'malformed' };
      try {
        const decipher = createDecipheriv('aes-256-gcm', key, bytes.subarray(0, IV_BYTES));
        decipher.setAuthTag(bytes.subarray(bytes.length - TAG_BYTES));
        const plain = Buffer.concat([
          decipher.update(bytes.subarray(IV_BYTES, bytes.length - TAG_BYTES)),
          decipher.final(),
        ]);
        return { ok: true, claims: JSON.parse(plain.toString('utf8')) as unknown };
      } catch {
        return { ok: false, problem: 'seal' };
      }
    },
  };
}

/** The digest a state binds arguments by, as the client sent them: its retry must send the same ones. */
export function sentArgsDigest(args: unknown): string {
  return createHash('sha256')
    .update(JSON.stringify(args ?? {}) ?? '')
    .digest('base64url');
}
