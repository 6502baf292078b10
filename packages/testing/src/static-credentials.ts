// A CredentialProvider from a fixed map, for testing tools that declare `needs`.

import type {
  CredentialNeed,
  CredentialProvider,
  CredentialRequestContext,
  Identity,
  ResolvedCredential,
} from '@toolgate/core';

/** A secret string (its kind is the need's), or a full credential. */
export type StaticCredential =
  | string
  | {
      readonly kind?: string;
      readonly value: ResolvedCredential['value'];
      readonly expiresAt?: string | number;
    };

/** A resolve call as the provider saw it, without its signal. */
export interface SeenCredentialRequest {
  readonly need: CredentialNeed;
  readonly toolName: string;
  readonly toolSource?: string;
  readonly identity?: Identity;
}

export interface StaticCredentials extends CredentialProvider {
  /** Answers synchronously; throws for an unknown service. */
  resolve(need: CredentialNeed, context: CredentialRequestContext): ResolvedCredential;
  /** Every resolve call, in order, including the ones that failed. */
  readonly requests: readonly SeenCredentialRequest[];
  reset(): void;
}

/**
 * Resolves a need by its service: the map is keyed `'<service>'` or, to tell kinds apart, `'<kind>:<service>'`
 * (tried first). An unknown service throws, so the credentials gate refuses the call.
 *
 * @example
 * const credentials = staticCredentials({ billing: 'sk_test_123', 'oauth2:github': { value: 'gho_abc', expiresAt: '2031-01-01T00:00:00Z' } });
 */
export function staticCredentials(map: Readonly<Record<string, StaticCredential>>): StaticCredentials {
  if (typeof map !== 'object' || map === null)
    throw new TypeError('staticCredentials: expected a map of service to secret.');
  const entries = new Map(Object.entries(map));
  const requests: SeenCredentialRequest[] = [];
  return {
    get requests(): readonly SeenCredentialRequest[] {
      return requests;
    },
    reset() {
      requests.length = 0;
    },
    resolve(need: CredentialNeed, context: CredentialRequestContext): ResolvedCredential {
      requests.push({
        need,
        toolName: context.toolName,
        ...(context.toolSource !== undefined ? { toolSource: context.toolSource } : {}),
        ...(context.identity !== undefined ? { identity: context.identity } : {}),
      });
      const found = entries.get(`${need.kind}:${need.service}`) ?? entries.get(need.service);
      if (found === undefined)
        throw new Error(`staticCredentials: no credential for '${need.kind}' '${need.service}'`);
      if (typeof found === 'string') return { kind: need.kind, value: found };
      return {
        kind: found.kind ?? need.kind,
        value: found.value,
        ...(found.expiresAt !== undefined ? { expiresAt: found.expiresAt } : {}),
      };
    },
  };
}
