// The credentials gate: resolves the tool's `needs` into `ctx.credential`, only after consent.

import {
  Credential,
  DeadlineError,
  refusalReason,
  withDeadline,
  type CredentialNeed,
  type CredentialProvider,
  type CredentialRequestContext,
  type Middleware,
  type Next,
  type ResolvedCredential,
  type ToolMiddlewareContext,
} from '@toolgate/core';
import { assertDeadline } from './internal/consult';
import { PortSignal } from './internal/port-signal';

export interface CredentialsGateOptions {
  /** How long the provider may take; default 5000 ms. */
  readonly deadlineMs?: number;
  /** Milliseconds since the epoch, to judge `expiresAt`; default the dispatcher's clock. */
  readonly now?: () => number;
}

const NO_CREDENTIAL_NEEDED = Object.freeze({ why: 'no credential needed' });

function isResolved(value: unknown): value is ResolvedCredential {
  if (typeof value !== 'object' || value === null) return false;
  const { kind, value: secret } = value as Partial<ResolvedCredential>;
  if (typeof kind !== 'string' || kind === '') return false;
  if (typeof secret === 'string') return secret !== '';
  return (
    typeof secret === 'object' && secret !== null && Object.values(secret).every((v) => typeof v === 'string')
  );
}

function expired(expiresAt: string | number | undefined, now: number): boolean {
  if (expiresAt === undefined) return false;
  const at = typeof expiresAt === 'number' ? expiresAt : Date.parse(expiresAt);
  return Number.isNaN(at) || at <= now;
}

/**
 * Resolves `tool.needs` with `provider.resolve(need, { identity, toolName, toolSource, signal })`.
 * A failure names the need (kind, service), never the secret or the provider's error text.
 */
export function credentialsGate(
  provider?: CredentialProvider,
  options: CredentialsGateOptions = {},
): Middleware {
  if (provider !== undefined && typeof provider?.resolve !== 'function') {
    throw new TypeError('credentialsGate: provider must have a resolve(need, context) method.');
  }
  const deadlineMs = assertDeadline('credentialsGate', options.deadlineMs);
  const now = options.now;
  const resolve = async (
    provider: CredentialProvider,
    need: CredentialNeed,
    ctx: ToolMiddlewareContext,
    next: Next,
  ): Promise<void> => {
    const { kind, service } = need;
    let failure: string | undefined;
    let resolved: unknown;
    const port = new PortSignal();
    const request: CredentialRequestContext = {
      ...(ctx.identity !== undefined ? { identity: ctx.identity } : {}),
      toolName: ctx.toolName,
      ...(ctx.toolSource !== undefined ? { toolSource: ctx.toolSource } : {}),
      get signal() {
        return port.signal;
      },
    };
    try {
      resolved = await withDeadline(() => provider.resolve(need, request), deadlineMs, ctx.signal);
      if (!isResolved(resolved)) failure = 'malformed';
      else if (expired(resolved.expiresAt, now?.() ?? ctx.now())) failure = 'expired';
    } catch (error) {
      port.stopped(error);
      failure = error instanceof DeadlineError ? 'timeout' : 'threw';
    }
    if (failure !== undefined) {
      ctx.emit({ type: 'credential.failed', kind, service, failure });
      return ctx.deny(
        refusalReason(
          `'${ctx.toolName}' needs its '${kind}' credential for '${service}', which could not be obtained`,
          'Retrying later may help',
          'Continue without it for now',
        ),
        { code: 'CREDENTIAL_FAILED', retryable: true, detail: `credential provider ${failure}` },
      );
    }
    ctx.provideCredential(new Credential(need, resolved as ResolvedCredential));
    ctx.emit({ type: 'credential.resolved', kind, service });
    ctx.note(`resolved '${kind}' for '${service}'`);
    return next();
  };
  return {
    name: 'credentials',
    after: ['check-in'],
    fingerprint: provider === undefined ? 'no provider' : 'provider',
    checkTool(tool) {
      if (tool.needs !== undefined && provider === undefined) {
        return `it needs a credential of kind '${tool.needs.kind}' for '${tool.needs.service}' but the chain has no credential provider; pass 'credentials' to canonicalChain`;
      }
      return undefined;
    },
    passThrough: (tool) =>
      tool.needs === undefined || provider === undefined ? NO_CREDENTIAL_NEEDED : undefined,
    // A tool that needs no credential passes without an async frame.
    run: function credentials(ctx, next) {
      const need = ctx.tool.needs;
      if (need === undefined || provider === undefined) {
        ctx.note('no credential needed');
        return next();
      }
      return resolve(provider, need, ctx, next);
    },
  };
}
