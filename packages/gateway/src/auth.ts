// Who is calling: a bearer token compared in constant time against the configured static tokens,
// or a JWT verified against a JWKS (jose) with its claims mapped to tenant, principal and roles.
// A JWT must carry `exp` and live no longer than `maxLifetime`; once verified it is remembered (by
// digest) until it expires, at most a few minutes, so a busy client is not verified on every call.
// The answer names no token and no claim value; the HTTP layer turns it into 401 or 403.

import { hash, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Identity } from '@toolgate/core';
import {
  createLocalJWKSet,
  createRemoteJWKSet,
  jwtVerify,
  type JWTPayload,
  type JWTVerifyGetKey,
} from 'jose';
import { CallerToken, rememberCallerToken } from './caller-token';
import { jwksProblem } from './config/check-names';
import { resolvePart } from './config/resolve';
import type { AuthConfig, IdentityConfig, JwtConfig, ResolvedConfig } from './config/types';
import { VerifiedTokens } from './verified-tokens';

export type AuthAnswer =
  | { readonly ok: true; readonly identity: Identity; readonly clientId: string }
  | {
      readonly ok: false;
      /** missing: no bearer token; invalid: not a token we accept; tenant: valid, but for no configured tenant. */
      readonly why: 'missing' | 'invalid' | 'tenant';
    };

export interface Authenticator {
  /** Reads an `Authorization` header. Never throws. */
  authenticate(header: string | undefined): Promise<AuthAnswer>;
  /** Whether any way of authenticating is configured (without one, every request is refused). */
  readonly configured: boolean;
}

// One-shot: no Hash object per request.
const digest = (text: string): Buffer => hash('sha256', text, 'buffer');

export function identityOf(config: IdentityConfig): Identity {
  return Object.freeze({
    tenant: config.tenant,
    principal: config.principal,
    ...(config.roles !== undefined ? { roles: Object.freeze([...config.roles]) } : {}),
  });
}

export interface AuthenticatorOptions {
  /** The configured tenant names. */
  readonly tenants: readonly string[];
  readonly baseDir: string;
  /** The clock, in ms since the epoch (tests move it). */
  readonly now?: () => number;
}

/** Builds the authenticator of `auth` as a file writes it (durations as text). */
export function createAuthenticator(
  config: AuthConfig | undefined,
  options: AuthenticatorOptions,
): Authenticator {
  return authenticatorOf(
    config === undefined
      ? undefined
      : resolvePart<AuthConfig<ResolvedConfig>>(['auth'], config, options.baseDir),
    options,
  );
}

/** Builds the authenticator of a loaded configuration's `auth`. */
export function authenticatorOf(
  config: AuthConfig<ResolvedConfig> | undefined,
  options: AuthenticatorOptions,
): Authenticator {
  const tokens = (config?.tokens ?? []).map((entry) => ({
    digest: digest(entry.token),
    identity: identityOf(entry.identity),
  }));
  const jwt =
    config?.jwt === undefined ? undefined : jwtVerifier(config.jwt, options.baseDir, options.now ?? Date.now);
  const tenants = new Set(options.tenants);

  return {
    configured: tokens.length > 0 || jwt !== undefined,
    async authenticate(header) {
      const match = header === undefined ? null : /^Bearer\s+(\S+)\s*$/i.exec(header);
      if (match === null) return { ok: false, why: 'missing' };
      const token = match[1]!;
      // Every configured token is compared, so timing says nothing about which one nearly matched.
      const presented = digest(token);
      let found: Identity | undefined;
      for (const entry of tokens) {
        if (timingSafeEqual(entry.digest, presented) && found === undefined) found = entry.identity;
      }
      if (found === undefined && jwt !== undefined) {
        const verified = await jwt(token);
        if (verified === undefined) return { ok: false, why: 'invalid' };
        found = verified;
      }
      if (found === undefined) return { ok: false, why: 'invalid' };
      if (found.tenant === undefined || !tenants.has(found.tenant)) return { ok: false, why: 'tenant' };
      return { ok: true, identity: found, clientId: `${found.tenant}/${found.principal ?? ''}` };
    },
  };
}

/** `auth.jwt.jwks` names no usable key set; `problem` says why, as a clause. */
export class JwksError extends TypeError {
  override readonly name = 'JwksError';
  constructor(readonly problem: string) {
    super(`auth.jwt.jwks: ${problem}.`);
  }
}

/** A token may live a day unless `auth.jwt.maxLifetime` says otherwise. */
const DEFAULT_MAX_LIFETIME_MS = 24 * 60 * 60 * 1000;

function jwtVerifier(
  config: JwtConfig<ResolvedConfig>,
  baseDir: string,
  now: () => number,
): (token: string) => Promise<Identity | undefined> {
  let keys: JWTVerifyGetKey;
  const problem = jwksProblem(config.jwks);
  if (problem !== undefined) throw new JwksError(problem);
  if (/^https?:\/\//i.test(config.jwks)) {
    keys = createRemoteJWKSet(new URL(config.jwks));
  } else {
    const path = resolve(baseDir, config.jwks);
    let set: unknown;
    try {
      set = JSON.parse(readFileSync(path, 'utf8'));
    } catch {
      throw new JwksError('the file is not a readable JSON Web Key Set');
    }
    try {
      keys = createLocalJWKSet(set as Parameters<typeof createLocalJWKSet>[0]);
    } catch {
      throw new JwksError('the file is not a JSON Web Key Set');
    }
  }
  const claims = {
    tenant: config.claims?.tenant ?? 'tenant',
    principal: config.claims?.principal ?? 'sub',
    roles: config.claims?.roles ?? 'roles',
  };
  const maxLifetimeMs = config.maxLifetime ?? DEFAULT_MAX_LIFETIME_MS;
  const verifyOptions = {
    issuer: config.issuer,
    audience: typeof config.audience === 'string' ? config.audience : [...config.audience],
    requiredClaims: ['exp'],
    currentDate: undefined as Date | undefined,
    ...(config.algorithms !== undefined ? { algorithms: [...config.algorithms] } : {}),
    ...(config.clockTolerance !== undefined
      ? { clockTolerance: Math.round(config.clockTolerance / 1000) }
      : {}),
  };
  const verify = async (token: string): Promise<{ identity: Identity; expiresMs: number } | undefined> => {
    let payload: JWTPayload;
    const at = now();
    try {
      ({ payload } = await jwtVerify(token, keys, { ...verifyOptions, currentDate: new Date(at) }));
    } catch {
      return undefined;
    }
    // jose checked exp is present and not past; what it does not check is how long the token lives.
    if (typeof payload.exp !== 'number') return undefined;
    const expiresMs = payload.exp * 1000;
    const issuedMs = typeof payload.iat === 'number' ? Math.min(payload.iat * 1000, at) : at;
    if (expiresMs - issuedMs > maxLifetimeMs) return undefined;
    const tenant = claim(payload, claims.tenant);
    const principal = claim(payload, claims.principal);
    if (typeof tenant !== 'string' || tenant === '' || typeof principal !== 'string' || principal === '')
      return undefined;
    const rolesClaim = claim(payload, claims.roles);
    const roles = Array.isArray(rolesClaim)
      ? rolesClaim.filter((role): role is string => typeof role === 'string')
      : typeof rolesClaim === 'string'
        ? rolesClaim.split(/\s+/).filter(Boolean)
        : undefined;
    const identity = Object.freeze({
      tenant,
      principal,
      ...(roles !== undefined ? { roles: Object.freeze(roles) } : {}),
    });
    return { identity, expiresMs };
  };
  const cache = new VerifiedTokens({ now });
  return async (token) => {
    const known = cache.get(token);
    if (known !== undefined) return known;
    const verified = await verify(token);
    if (verified === undefined) return undefined;
    // An upstream with token exchange sends this JWT (only it) to its authorization server.
    rememberCallerToken(verified.identity, new CallerToken(token, verified.expiresMs));
    cache.set(token, verified.identity, verified.expiresMs);
    return verified.identity;
  };
}

/** A claim by name, or by a dotted path into nested objects (`org.id`) when no claim has the whole name. */
function claim(payload: JWTPayload, name: string): unknown {
  if (name in payload) return payload[name];
  let value: unknown = payload;
  for (const part of name.split('.')) {
    if (typeof value !== 'object' || value === null) return undefined;
    value = (value as Record<string, unknown>)[part];
  }
  return value;
}
