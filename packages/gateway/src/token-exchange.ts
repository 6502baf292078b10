// RFC 8693 token exchange for one upstream (`upstreams.<name>.auth.tokenExchange`): the caller's
// verified JWT is exchanged at the authorization server for a token the upstream accepts, kept per
// (tenant, principal) — the audience is this exchanger's own — until shortly before it expires, in a
// bounded cache, and fetched once for calls that arrive together. A token that names another
// audience is refused, not sent. Nothing here writes a token anywhere: errors carry typed facts only.

import { createHash } from 'node:crypto';
import type { Identity } from '@toolgate/core';
import { decodeJwt } from 'jose';
import * as oauth from 'oauth4webapi';
import type { CallerToken } from './caller-token';
import type { ResolvedConfig, TokenExchangeConfig } from './config/types';
import { oauthClient, requestOptions, tokenRequestProblem, UpstreamAuthError } from './oauth-client';

export const TOKEN_EXCHANGE_GRANT = 'urn:ietf:params:oauth:grant-type:token-exchange';
const JWT_TYPE = 'urn:ietf:params:oauth:token-type:jwt';
const ACCESS_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:access_token';

const DEFAULT_TIMEOUT_MS = 5_000;
const DEFAULT_MAX_ENTRIES = 10_000;
/** A cached token is given up this long before it expires (or a tenth of its life, if shorter). */
const EARLY_MS = 30_000;

export interface ExchangedToken {
  readonly token: string;
  /** When it expires, ms since the epoch; undefined when neither the answer nor the token says. */
  readonly expiresMs?: number;
}

export interface TokenExchangerOptions {
  readonly now?: () => number;
  /** Most tokens kept; the oldest go first. Default 10,000. */
  readonly maxEntries?: number;
}

export interface TokenExchanger {
  /** A token for this caller, cached or exchanged now; throws UpstreamAuthError. */
  tokenFor(identity: Identity, caller: CallerToken, signal?: AbortSignal): Promise<ExchangedToken>;
  /** Forgets this caller's token (the upstream refused it), unless a newer one replaced it already. */
  forget(identity: Identity, token: string): void;
  /** Tokens cached now. */
  readonly size: number;
  /** Exchanges made (not answered from the cache), for tests and metrics. */
  readonly exchanges: number;
}

interface Entry {
  readonly token: ExchangedToken;
  readonly untilMs: number;
}

export function tokenExchanger(
  upstream: string,
  config: TokenExchangeConfig<ResolvedConfig>,
  options: TokenExchangerOptions = {},
): TokenExchanger {
  const now = options.now ?? Date.now;
  const maxEntries = options.maxEntries ?? DEFAULT_MAX_ENTRIES;
  const timeoutMs = config.timeout ?? DEFAULT_TIMEOUT_MS;
  const tokenUrl = new URL(config.tokenUrl);
  // Only the token endpoint is known. It stands as the issuer too: a token response without an
  // id_token checks no issuer, and a private_key_jwt assertion is addressed to it (RFC 7523 allows it).
  const as: oauth.AuthorizationServer = { issuer: tokenUrl.href, token_endpoint: tokenUrl.href };
  const { client, auth } = oauthClient(config.client);
  const audience = config.audience ?? config.resource!;
  const entries = new Map<string, Entry>();
  const pending = new Map<string, Promise<ExchangedToken>>();
  let exchanges = 0;

  const keyOf = (identity: Identity) => JSON.stringify([identity.tenant ?? '', identity.principal ?? '']);

  async function exchange(caller: CallerToken, signal?: AbortSignal): Promise<ExchangedToken> {
    exchanges += 1;
    const parameters = new URLSearchParams({
      subject_token: caller.reveal(),
      subject_token_type: JWT_TYPE,
      requested_token_type: ACCESS_TOKEN_TYPE,
    });
    if (config.audience !== undefined) parameters.set('audience', config.audience);
    if (config.resource !== undefined) parameters.set('resource', config.resource);
    if (config.scope !== undefined) parameters.set('scope', config.scope);
    let answer: oauth.TokenEndpointResponse;
    try {
      const response = await oauth.genericTokenEndpointRequest(
        as,
        client,
        auth,
        TOKEN_EXCHANGE_GRANT,
        parameters,
        requestOptions(tokenUrl, timeoutMs, signal),
      );
      answer = await oauth.processGenericTokenEndpointResponse(as, client, response);
    } catch (error) {
      throw tokenRequestProblem(error, 'the token exchange failed', timeoutMs);
    }
    const issuedType = answer['issued_token_type'];
    if (issuedType !== undefined && issuedType !== ACCESS_TOKEN_TYPE && issuedType !== JWT_TYPE)
      throw new UpstreamAuthError(
        'the token exchange answered a token that is not an access token',
        false,
        'ask the authorization server for requested_token_type access_token',
      );
    if (answer.token_type !== 'bearer')
      throw new UpstreamAuthError(
        `the token exchange answered a ${/^[a-z_-]{1,20}$/.test(answer.token_type) ? answer.token_type : 'non-bearer'} token, and only bearer tokens are sent`,
        false,
      );
    const claims = jwtClaims(answer.access_token);
    if (claims !== undefined && !audienceMatches(claims.aud, audience))
      throw new UpstreamAuthError(
        `the token exchange answered a token for another audience than '${audience}'`,
        false,
        `check the authorization server's audience for '${audience}'`,
      );
    const expiresMs =
      typeof answer.expires_in === 'number'
        ? now() + answer.expires_in * 1000
        : typeof claims?.exp === 'number'
          ? claims.exp * 1000
          : undefined;
    return { token: answer.access_token, ...(expiresMs !== undefined ? { expiresMs } : {}) };
  }

  function remember(key: string, token: ExchangedToken): void {
    // A token without a known expiry is used for its call only.
    if (token.expiresMs === undefined) return;
    const at = now();
    const life = token.expiresMs - at;
    const untilMs = token.expiresMs - Math.min(EARLY_MS, life / 10);
    if (untilMs <= at || maxEntries === 0) return;
    entries.delete(key);
    entries.set(key, { token, untilMs });
    while (entries.size > maxEntries) entries.delete(entries.keys().next().value!);
  }

  return {
    async tokenFor(identity, caller, signal) {
      const key = keyOf(identity);
      const entry = entries.get(key);
      if (entry !== undefined) {
        if (now() < entry.untilMs) return entry.token;
        entries.delete(key);
      }
      // Calls that arrive together share one exchange; each keeps its own signal for the wait.
      let shared = pending.get(key);
      if (shared === undefined) {
        shared = exchange(caller).then((token) => {
          remember(key, token);
          return token;
        });
        const settled = shared.finally(() => pending.delete(key));
        settled.catch(() => undefined);
        pending.set(key, shared);
      }
      return signal === undefined ? shared : raceSignal(shared, signal, timeoutMs);
    },
    forget(identity, token) {
      const key = keyOf(identity);
      if (entries.get(key)?.token.token === token) entries.delete(key);
    },
    get size() {
      return entries.size;
    },
    get exchanges() {
      return exchanges;
    },
  };
}

function raceSignal<T>(promise: Promise<T>, signal: AbortSignal, timeoutMs: number): Promise<T> {
  if (signal.aborted)
    return Promise.reject(tokenRequestProblem(signal.reason, 'the token exchange', timeoutMs));
  return new Promise<T>((resolve, reject) => {
    const stop = () => reject(new UpstreamAuthError('the token exchange was cancelled with the call', true));
    signal.addEventListener('abort', stop, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', stop);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', stop);
        reject(error);
      },
    );
  });
}

/** The claims of a JWT access token (read, not verified: the upstream verifies it), or undefined when opaque. */
function jwtClaims(token: string): { aud?: unknown; exp?: unknown } | undefined {
  if (token.split('.').length !== 3) return undefined;
  try {
    return decodeJwt(token);
  } catch {
    return undefined;
  }
}

function audienceMatches(aud: unknown, audience: string): boolean {
  if (typeof aud === 'string') return aud === audience;
  return Array.isArray(aud) && aud.includes(audience);
}

/** A short digest of a token, the only form of it an event or audit record may carry. */
export function tokenDigest(token: string): string {
  return `sha256:${createHash('sha256').update(token).digest('base64url').slice(0, 16)}`;
}
