// On whose behalf one HTTP upstream is called. Per call: the caller's JWT exchanged for the
// upstream's own token (RFC 8693, token-exchange.ts) and the caller's own credentials (per-principal
// `${credential:…}` in `headers`), handed to the call as its credential so @toolgate/mcp sends them as
// that request's headers and nothing else sees them. Per connection: when the upstream answers 401
// with RFC 9728 metadata, a token for the gateway itself (client credentials) from the authorization
// server the metadata names. A per-call token the upstream refuses is exchanged again once; refused
// again, the call is refused (UPSTREAM_AUTH_FAILED, retryable).

import { Refusal, refusalReason, type Identity } from '@toolgate/core';
import * as oauth from 'oauth4webapi';
import type { CallerToken } from './caller-token';
import type { ClientCredentialsConfig, ResolvedConfig, UpstreamConfig } from './config/types';
import { fillCredentials } from './credentials';
import { oauthClient, requestOptions, tokenRequestProblem, UpstreamAuthError } from './oauth-client';
import { tokenExchanger, type TokenExchanger } from './token-exchange';

export const UPSTREAM_AUTH_FAILED = 'UPSTREAM_AUTH_FAILED';
export const CREDENTIAL_MISSING = 'CREDENTIAL_MISSING';

/** A principal has no value of a per-principal credential an upstream's headers use. */
export class CredentialMissingError extends Error {
  override readonly name = 'CredentialMissingError';
  constructor(readonly credential: string) {
    super(`the credential '${credential}' has no value for this principal`);
  }
}

/** Per-principal credentials by name, tenant and principal (credential-store.ts). */
export interface PrincipalCredentials {
  /** Whether `name` is a per-principal credential. */
  has(name: string): boolean;
  /** The principal's value, or undefined when it has none. Throws when the store cannot answer. */
  get(name: string, tenant: string, principal: string): Promise<string | undefined>;
}

export interface UpstreamIdentity {
  readonly upstream: string;
  /** The headers this caller's call carries; throws UpstreamAuthError or CredentialMissingError. */
  headersFor(
    identity: Identity | undefined,
    caller: CallerToken | undefined,
    signal?: AbortSignal,
  ): Promise<Record<string, string>>;
  /** Forgets the per-call tokens registered for a call that ended. */
  done(headers: Readonly<Record<string, string>>): void;
  /** The fetch every request to the upstream goes through: adds the gateway's token, answers a 401. */
  readonly fetch: typeof fetch;
  /** Whether the upstream's last answer to the gateway's own requests was 401 (it needs authorization). */
  needsAuthorization(): boolean;
  /** The token exchanger, when the upstream exchanges callers' tokens. */
  readonly exchanger?: TokenExchanger;
}

export interface UpstreamIdentityOptions {
  readonly now?: () => number;
  readonly principalCredentials?: PrincipalCredentials;
  /** The fetch underneath (tests count requests); default the global one. */
  readonly fetch?: typeof fetch;
}

const DEFAULT_TIMEOUT_MS = 5_000;

/** Whether `config` needs per-call identity: token exchange, or headers with a per-principal credential. */
export function needsUpstreamIdentity(
  config: UpstreamConfig<ResolvedConfig>,
  principalCredentials: PrincipalCredentials | undefined,
): boolean {
  return config.auth !== undefined || perPrincipalHeaders(config, principalCredentials).length > 0;
}

/** The header names whose values use a per-principal credential. */
export function perPrincipalHeaders(
  config: UpstreamConfig<ResolvedConfig>,
  principalCredentials: PrincipalCredentials | undefined,
): string[] {
  if (principalCredentials === undefined) return [];
  return Object.entries(config.headers ?? {})
    .filter(([, value]) => credentialNames(value).some((name) => principalCredentials.has(name)))
    .map(([key]) => key);
}

function credentialNames(text: string): string[] {
  return [...text.matchAll(/\$\{credential:([^}]*)\}/g)].map((match) => match[1]!.trim());
}

export function upstreamIdentity(
  upstream: string,
  config: UpstreamConfig<ResolvedConfig>,
  options: UpstreamIdentityOptions = {},
): UpstreamIdentity {
  const base = options.fetch ?? fetch;
  const now = options.now ?? Date.now;
  const exchange = config.auth?.tokenExchange;
  const exchanger = exchange === undefined ? undefined : tokenExchanger(upstream, exchange, { now });
  const principalCredentials = options.principalCredentials;
  const personal = perPrincipalHeaders(config, principalCredentials);
  // Per-call tokens in flight, by value: a 401 to a request carrying one exchanges again for its caller.
  const inFlight = new Map<string, { identity: Identity; caller: CallerToken; uses: number }>();
  const connection = config.auth?.clientCredentials;
  const own = connection === undefined ? undefined : gatewayToken(upstream, config.url!, connection, now);
  let unauthorized = false;

  async function headersFor(
    identity: Identity | undefined,
    caller: CallerToken | undefined,
    signal?: AbortSignal,
  ): Promise<Record<string, string>> {
    const headers: Record<string, string> = {};
    if (personal.length > 0) {
      if (identity?.tenant === undefined || identity.principal === undefined)
        throw new CredentialMissingError(credentialNames(config.headers![personal[0]!]!)[0]!);
      for (const key of personal) {
        const names = credentialNames(config.headers![key]!);
        const values = new Map<string, string>();
        for (const name of names) {
          if (!principalCredentials!.has(name)) continue;
          const value = await principalCredentials!.get(name, identity.tenant, identity.principal);
          if (value === undefined) throw new CredentialMissingError(name);
          values.set(name, value);
        }
        // Only per-principal credentials here: load.ts refuses a header that mixes in a shared one.
        headers[key] = fillCredentials(config.headers![key]!, (name) => values.get(name) ?? unfilled(name));
      }
    }
    if (exchanger !== undefined) {
      if (identity === undefined || caller === undefined)
        throw new UpstreamAuthError(
          `'${upstream}' acts on behalf of each caller by exchanging the caller's JWT, and this caller presented no JWT (a static token)`,
          false,
          `give this caller a JWT (auth.jwt), or remove upstreams.${upstream}.auth.tokenExchange`,
        );
      const token = await exchanger.tokenFor(identity, caller, signal);
      headers['authorization'] = `Bearer ${token.token}`;
      const known = inFlight.get(token.token);
      if (known !== undefined) known.uses += 1;
      else inFlight.set(token.token, { identity, caller, uses: 1 });
    }
    return headers;
  }

  // Fail closed should a header ever name a credential this call has no value of.
  const unfilled = (name: string): string => {
    throw new CredentialMissingError(name);
  };

  function done(headers: Readonly<Record<string, string>>): void {
    const token = bearerOf(headers['authorization']);
    if (token === undefined) return;
    const known = inFlight.get(token);
    if (known === undefined) return;
    known.uses -= 1;
    if (known.uses <= 0) inFlight.delete(token);
  }

  const authFetch: typeof fetch = async (input, init) => {
    const headers = new Headers(init?.headers);
    const presented = bearerOf(headers.get('authorization') ?? undefined);
    const perCall = presented === undefined ? undefined : inFlight.get(presented);
    // An Authorization the request already carries (configured, or a principal's own credential) is
    // never replaced by the gateway's token: a call must not run as the gateway instead of its caller.
    const carried = headers.has('authorization');
    if (!carried && own !== undefined) {
      const token = own.current();
      if (token !== undefined) headers.set('authorization', `Bearer ${token}`);
    }
    const response = await base(input, { ...init, headers });
    if (response.status !== 401) {
      if (perCall === undefined) unauthorized = false;
      return response;
    }
    await response.body?.cancel().catch(() => undefined);
    if (perCall !== undefined && exchanger !== undefined) {
      // Refused mid-session: the token may have been revoked or rotated; exchange once more.
      exchanger.forget(perCall.identity, presented!);
      let fresh: string;
      try {
        fresh = (await exchanger.tokenFor(perCall.identity, perCall.caller, init?.signal ?? undefined)).token;
      } catch (error) {
        throw authRefusal(upstream, error);
      }
      headers.set('authorization', `Bearer ${fresh}`);
      const again = await base(input, { ...init, headers });
      if (again.status !== 401) return again;
      await again.body?.cancel().catch(() => undefined);
      exchanger.forget(perCall.identity, fresh);
      throw authRefusal(
        upstream,
        new UpstreamAuthError(`'${upstream}' refused the caller's exchanged token twice`, true),
      );
    }
    if (carried) return rebuilt(response);
    unauthorized = true;
    if (own === undefined) return rebuilt(response);
    let token: string;
    try {
      token = await own.renew(response);
    } catch {
      // The upstream stays unauthorized; its status says so and the next connection tries again.
      return rebuilt(response);
    }
    headers.set('authorization', `Bearer ${token}`);
    const again = await base(input, { ...init, headers });
    if (again.status !== 401) unauthorized = false;
    return again;
  };

  return {
    upstream,
    headersFor,
    done,
    fetch: authFetch,
    needsAuthorization: () => unauthorized,
    ...(exchanger !== undefined ? { exchanger } : {}),
  };
}

/** A 401 whose body was already read: the same status and headers, an empty body. */
function rebuilt(response: Response): Response {
  return new Response(null, { status: response.status, headers: response.headers });
}

function bearerOf(header: string | undefined): string | undefined {
  const match = header === undefined ? null : /^Bearer\s+(\S+)$/i.exec(header.trim());
  return match?.[1];
}

/** The refusal a call gets when its upstream's authorization failed; it names no token. */
export function authRefusal(upstream: string, error: unknown): Refusal {
  const problem =
    error instanceof UpstreamAuthError
      ? error
      : new UpstreamAuthError(`authorization for '${upstream}' failed`, true);
  return new Refusal(
    'upstream-identity',
    refusalReason(
      `The call did not run: ${problem.problem}`,
      problem.retryable
        ? 'Retrying in a moment may help'
        : 'Retrying will not help until an operator changes the setup',
      !problem.retryable && problem.fix !== undefined && `An operator can fix it: ${problem.fix}`,
      problem.retryable ? undefined : 'Tell the user this tool is not available to them now',
    ),
    {
      code: UPSTREAM_AUTH_FAILED,
      retryable: problem.retryable,
      beforeRun: true,
      ...(problem.fix !== undefined ? { detail: `fix: ${problem.fix}` } : {}),
    },
  );
}

interface GatewayToken {
  /** The token for the gateway's own requests, while it is good. */
  current(): string | undefined;
  /** A new token after the upstream answered `unauthorized` (401); throws UpstreamAuthError. */
  renew(unauthorized: Response): Promise<string>;
}

/**
 * The gateway's own token for an upstream (client credentials): its authorization server is the
 * configured `tokenUrl`, or discovered from the RFC 9728 metadata the 401 names.
 */
function gatewayToken(
  upstream: string,
  url: string,
  config: ClientCredentialsConfig<ResolvedConfig>,
  now: () => number,
): GatewayToken {
  const timeoutMs = config.timeout ?? DEFAULT_TIMEOUT_MS;
  const { client, auth } = oauthClient(config.client);
  let token: { value: string; untilMs: number } | undefined;
  let renewing: Promise<string> | undefined;

  async function serverOf(unauthorized: Response): Promise<oauth.AuthorizationServer> {
    if (config.tokenUrl !== undefined) {
      const tokenUrl = new URL(config.tokenUrl);
      // As in token-exchange.ts: the token endpoint stands as the issuer (a private_key_jwt audience).
      return { issuer: tokenUrl.href, token_endpoint: tokenUrl.href };
    }
    // RFC 9728 §5.1: the challenge may name where the metadata is.
    const metadataUrl = /resource_metadata="([^"]+)"/i.exec(
      unauthorized.headers.get('www-authenticate') ?? '',
    )?.[1];
    const resource = new URL(url);
    let metadata: oauth.ResourceServer;
    if (metadataUrl !== undefined && new URL(metadataUrl).origin === resource.origin) {
      // The metadata the challenge names, on the upstream's own origin (another origin could redirect tokens).
      const response = await fetch(metadataUrl, {
        headers: { accept: 'application/json' },
        signal: AbortSignal.timeout(timeoutMs),
        redirect: 'manual',
      });
      if (!response.ok)
        throw new UpstreamAuthError(`'${upstream}' publishes no readable protected-resource metadata`, true);
      metadata = (await response.json()) as oauth.ResourceServer;
    } else {
      metadata = await oauth.processResourceDiscoveryResponse(
        resource,
        await oauth.resourceDiscoveryRequest(resource, requestOptions(resource, timeoutMs)),
      );
    }
    const issuer = metadata.authorization_servers?.[0];
    if (typeof issuer !== 'string')
      throw new UpstreamAuthError(
        `'${upstream}' answered 401 and its protected-resource metadata names no authorization server`,
        false,
        `set upstreams.${upstream}.auth.clientCredentials.tokenUrl`,
      );
    const issuerUrl = new URL(issuer);
    // RFC 8414 metadata first; an OpenID provider may publish only its openid-configuration.
    try {
      return await oauth.processDiscoveryResponse(
        issuerUrl,
        await oauth.discoveryRequest(issuerUrl, {
          algorithm: 'oauth2',
          ...requestOptions(issuerUrl, timeoutMs),
        }),
      );
    } catch {
      return oauth.processDiscoveryResponse(
        issuerUrl,
        await oauth.discoveryRequest(issuerUrl, {
          algorithm: 'oidc',
          ...requestOptions(issuerUrl, timeoutMs),
        }),
      );
    }
  }

  async function renew(unauthorized: Response): Promise<string> {
    try {
      const as = await serverOf(unauthorized);
      const parameters = new URLSearchParams();
      if (config.scope !== undefined) parameters.set('scope', config.scope);
      parameters.set('resource', url);
      const response = await oauth.clientCredentialsGrantRequest(
        as,
        client,
        auth,
        parameters,
        requestOptions(new URL(as.token_endpoint!), timeoutMs),
      );
      const answer = await oauth.processClientCredentialsResponse(as, client, response);
      const lifeMs = (answer.expires_in ?? 60) * 1000;
      token = { value: answer.access_token, untilMs: now() + lifeMs - Math.min(30_000, lifeMs / 10) };
      return answer.access_token;
    } catch (error) {
      throw tokenRequestProblem(error, `the token for '${upstream}' could not be had`, timeoutMs);
    }
  }

  return {
    current: () => (token !== undefined && now() < token.untilMs ? token.value : undefined),
    renew: (unauthorized) => {
      renewing ??= renew(unauthorized).finally(() => {
        renewing = undefined;
      });
      return renewing;
    },
  };
}
