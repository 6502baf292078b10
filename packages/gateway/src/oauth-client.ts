// The gateway as an OAuth client of an authorization server (oauth4webapi): its client
// authentication (a secret, or private_key_jwt), and the failures of a token request as typed facts
// that name no token, no secret and nothing the server wrote in prose.

import { createPrivateKey, type KeyObject } from 'node:crypto';
import * as oauth from 'oauth4webapi';
import type { OAuthClientConfig } from './config/types';

/** Why no token could be had for an upstream; the refusal's words come from these fields. */
export class UpstreamAuthError extends Error {
  override readonly name = 'UpstreamAuthError';
  constructor(
    /** What failed, as a clause naming no token (`the authorization server answered invalid_grant`). */
    readonly problem: string,
    /** Whether the same call may pass later (a timeout, a server error) or not until something changes. */
    readonly retryable: boolean,
    /** For the operator: what to change, when the configuration or the caller must change. */
    readonly fix?: string,
  ) {
    super(problem);
  }
}

export interface OAuthClient {
  readonly client: oauth.Client;
  readonly auth: oauth.ClientAuth;
}

/** The client id and its authentication from the configuration. */
export function oauthClient(config: OAuthClientConfig): OAuthClient {
  const client: oauth.Client = { client_id: config.id };
  if (config.secret !== undefined) return { client, auth: oauth.ClientSecretBasic(config.secret) };
  const { key, alg } = privateKeyOf(config.privateKeyJwt!);
  // Imported on first use: WebCrypto import is asynchronous, the configuration is read synchronously.
  let imported: Promise<CryptoKey> | undefined;
  const cryptoKey = () =>
    (imported ??= crypto.subtle.importKey('jwk', key.export({ format: 'jwk' }), importParams(alg), false, [
      'sign',
    ]));
  const auth: oauth.ClientAuth = async (as, c, body, headers) =>
    oauth.PrivateKeyJwt({ key: await cryptoKey() })(as, c, body, headers);
  return { client, auth };
}

function privateKeyOf(text: string): { key: KeyObject; alg: string } {
  let key: KeyObject;
  try {
    const trimmed = text.trim();
    key = trimmed.startsWith('{')
      ? createPrivateKey({ key: JSON.parse(trimmed) as never, format: 'jwk' })
      : createPrivateKey(trimmed);
  } catch {
    throw new UpstreamAuthError(
      'the client privateKeyJwt is not a private key',
      false,
      'give a PKCS#8 PEM or a private JWK (RSA, EC P-256 or Ed25519)',
    );
  }
  const type = key.asymmetricKeyType;
  if (type === 'rsa') return { key, alg: 'RS256' };
  if (type === 'ed25519') return { key, alg: 'EdDSA' };
  if (type === 'ec' && key.asymmetricKeyDetails?.namedCurve === 'prime256v1') return { key, alg: 'ES256' };
  throw new UpstreamAuthError(
    `the client privateKeyJwt is a ${type ?? 'unknown'} key, which private_key_jwt here does not sign with`,
    false,
    'use an RSA, EC P-256 or Ed25519 key',
  );
}

function importParams(alg: string): RsaHashedImportParams | EcKeyImportParams | Algorithm {
  if (alg === 'RS256') return { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' };
  if (alg === 'ES256') return { name: 'ECDSA', namedCurve: 'P-256' };
  return { name: 'Ed25519' };
}

/** oauth4webapi's options for a request: plain http only to loopback, a deadline, the caller's signal. */
export function requestOptions(
  url: URL,
  timeoutMs: number,
  signal?: AbortSignal,
): { signal: AbortSignal; [oauth.allowInsecureRequests]?: boolean } {
  const deadline = AbortSignal.timeout(timeoutMs);
  return {
    signal: signal === undefined ? deadline : AbortSignal.any([deadline, signal]),
    ...(url.protocol === 'http:' && isLoopback(url.hostname) ? { [oauth.allowInsecureRequests]: true } : {}),
  };
}

export function isLoopback(hostname: string): boolean {
  return hostname === 'localhost' || hostname === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(hostname);
}

/** A failed token request as an UpstreamAuthError: the OAuth error code at most, never its description. */
export function tokenRequestProblem(error: unknown, what: string, timeoutMs: number): UpstreamAuthError {
  if (error instanceof UpstreamAuthError) return error;
  if (error instanceof DOMException && (error.name === 'TimeoutError' || error.name === 'AbortError'))
    return new UpstreamAuthError(
      `${what}: the authorization server did not answer within ${timeoutMs} ms`,
      true,
    );
  if (error instanceof oauth.ResponseBodyError) {
    const code = /^[a-z_]{1,40}$/.test(error.error) ? error.error : 'an error';
    const retryable = error.status >= 500 || error.status === 429 || code === 'temporarily_unavailable';
    return new UpstreamAuthError(
      `${what}: the authorization server answered ${code} (HTTP ${error.status})`,
      retryable,
      retryable
        ? undefined
        : 'check the client id, its secret or key, and what the authorization server allows it',
    );
  }
  if (error instanceof oauth.OperationProcessingError || error instanceof oauth.UnsupportedOperationError) {
    const status = (error.cause as { status?: unknown } | undefined)?.status;
    const retryable = typeof status === 'number' && (status >= 500 || status === 429);
    return new UpstreamAuthError(
      `${what}: the authorization server's answer was not a usable token response${typeof status === 'number' ? ` (HTTP ${status})` : ''}`,
      retryable,
    );
  }
  // A network failure: fetch's own error names the address at most; only its kind is passed on.
  return new UpstreamAuthError(
    `${what}: the authorization server could not be reached (${error instanceof Error ? error.name : 'error'})`,
    true,
  );
}
