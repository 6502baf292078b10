// The inbox's secrets, all derived from the check-in key with a label each, so one configured secret
// serves request verification, sessions, CSRF tokens and webhook links without any of them
// standing in for another.

import { createSigner, type Signer } from '@toolgate/core';

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export function toBase64Url(bytes: Uint8Array): string {
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replaceAll('+', '-').replaceAll('/', '_').replace(/=+$/, '');
}

export function fromBase64Url(text: string): Uint8Array<ArrayBuffer> | undefined {
  if (!/^[A-Za-z0-9_-]*$/.test(text)) return undefined;
  try {
    const binary = atob(text.replaceAll('-', '+').replaceAll('_', '/'));
    const bytes = new Uint8Array(binary.length);
    for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
    return bytes;
  } catch {
    return undefined;
  }
}

export const randomToken = (bytes = 18): string =>
  toBase64Url(globalThis.crypto.getRandomValues(new Uint8Array(bytes)));

/** A MAC over text, compared in constant time by Web Crypto. */
export interface TextMac {
  sign(text: string): Promise<string>;
  verify(text: string, mac: string): Promise<boolean>;
}

/** Authenticated encryption of short text (the session cookie). */
export interface Sealer {
  seal(text: string): Promise<string>;
  open(sealed: string): Promise<string | undefined>;
}

export interface InboxKeys {
  /** Verifies check-in requests: the chain's own key, as given. */
  readonly requests: Signer;
  readonly csrf: TextMac;
  readonly links: TextMac;
  readonly sessions: Sealer;
}

function keyBytes(key: string | Uint8Array): Uint8Array<ArrayBuffer> {
  if (typeof key === 'string') return encoder.encode(key);
  const copy = new Uint8Array(key.length);
  copy.set(key);
  return copy;
}

/** HMAC(key, label): an independent 32-byte key for one purpose. */
async function derive(master: Promise<CryptoKey>, label: string): Promise<ArrayBuffer> {
  return globalThis.crypto.subtle.sign('HMAC', await master, encoder.encode(`toolgate-inbox/${label}`));
}

function textMac(master: Promise<CryptoKey>, label: string): TextMac {
  const key = derive(master, label).then((raw) =>
    globalThis.crypto.subtle.importKey('raw', raw, { name: 'HMAC', hash: 'SHA-256' }, false, [
      'sign',
      'verify',
    ]),
  );
  key.catch(() => undefined);
  return {
    async sign(text) {
      return toBase64Url(
        new Uint8Array(await globalThis.crypto.subtle.sign('HMAC', await key, encoder.encode(text))),
      );
    },
    async verify(text, mac) {
      const bytes = typeof mac === 'string' ? fromBase64Url(mac) : undefined;
      if (bytes === undefined || bytes.length !== 32) return false;
      return globalThis.crypto.subtle.verify('HMAC', await key, bytes, encoder.encode(text));
    },
  };
}

function sealer(master: Promise<CryptoKey>, label: string): Sealer {
  const key = derive(master, label).then((raw) =>
    globalThis.crypto.subtle.importKey('raw', raw, { name: 'AES-GCM' }, false, ['encrypt', 'decrypt']),
  );
  key.catch(() => undefined);
  return {
    async seal(text) {
      const iv = globalThis.crypto.getRandomValues(new Uint8Array(12));
      const sealed = new Uint8Array(
        await globalThis.crypto.subtle.encrypt({ name: 'AES-GCM', iv }, await key, encoder.encode(text)),
      );
      const out = new Uint8Array(iv.length + sealed.length);
      out.set(iv);
      out.set(sealed, iv.length);
      return toBase64Url(out);
    },
    async open(value) {
      const bytes = fromBase64Url(value);
      if (bytes === undefined || bytes.length < 12 + 16) return undefined;
      try {
        const plain = await globalThis.crypto.subtle.decrypt(
          { name: 'AES-GCM', iv: bytes.slice(0, 12) },
          await key,
          bytes.slice(12),
        );
        return decoder.decode(plain);
      } catch {
        return undefined;
      }
    },
  };
}

export function inboxKeys(checkInKey: string | Uint8Array): InboxKeys {
  const raw = keyBytes(checkInKey);
  const master = globalThis.crypto.subtle.importKey('raw', raw, { name: 'HMAC', hash: 'SHA-256' }, false, [
    'sign',
  ]);
  master.catch(() => undefined);
  return {
    requests: createSigner(checkInKey),
    csrf: textMac(master, 'csrf'),
    links: textMac(master, 'links'),
    sessions: sealer(master, 'sessions'),
  };
}
