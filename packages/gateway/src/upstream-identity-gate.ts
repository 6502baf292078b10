// The upstream-identity gate: for a tool whose upstream is called on behalf of each caller
// (upstream-identity.ts), it obtains that caller's headers — an exchanged token, the principal's own
// credentials — and hands them to the call as its credential, right inside `credentials`, so only
// the upstream request carries them. A caller it cannot act for is refused before anything is sent:
// UPSTREAM_AUTH_FAILED (the exchange failed, or the caller has no JWT), CREDENTIAL_MISSING (the
// principal has not stored its credential). No refusal, event or note names a token or a value.

import { Credential, refusalReason, type Middleware } from '@toolgate/core';
import { downstreamOf } from '@toolgate/mcp';
import { callerTokenFromExtra } from './caller-token';
import { UpstreamAuthError } from './oauth-client';
import { CredentialUnreadableError } from './principal-credentials';
import {
  authRefusal,
  CREDENTIAL_MISSING,
  CredentialMissingError,
  type UpstreamIdentity,
} from './upstream-identity';

const NOT_ON_BEHALF = Object.freeze({ why: 'its upstream is not called on behalf of the caller' });

export function upstreamIdentityGate(
  identityOf: (source: string) => UpstreamIdentity | undefined,
): Middleware {
  return {
    name: 'upstream-identity',
    after: ['credentials'],
    fingerprint: 'upstream identity',
    passThrough: (tool) =>
      tool.source === undefined || identityOf(tool.source) === undefined ? NOT_ON_BEHALF : undefined,
    run: async function upstreamIdentity(ctx, next) {
      const identity = ctx.toolSource === undefined ? undefined : identityOf(ctx.toolSource);
      if (identity === undefined) return next();
      const caller = callerTokenFromExtra(downstreamOf(ctx.toolCallId)?.authInfo?.extra);
      let headers: Record<string, string>;
      try {
        headers = await identity.headersFor(ctx.identity, caller, ctx.signal);
      } catch (error) {
        if (error instanceof CredentialMissingError) {
          ctx.emit({
            type: 'credential.failed',
            kind: 'per-principal',
            service: identity.upstream,
            failure: 'missing',
          });
          return ctx.deny(
            refusalReason(
              `'${ctx.toolName}' did not run: it needs your own '${error.credential}' credential for '${identity.upstream}', and none is stored for you`,
              'Retrying will not help until it is stored',
              `Ask an operator to store your '${error.credential}' credential (toolgate credentials set ${error.credential}), then call it again`,
            ),
            {
              code: CREDENTIAL_MISSING,
              retryable: false,
              detail: `per-principal credential '${error.credential}' not set`,
            },
          );
        }
        if (error instanceof CredentialUnreadableError) {
          ctx.emit({
            type: 'credential.failed',
            kind: 'per-principal',
            service: identity.upstream,
            failure: 'unreadable',
          });
          return ctx.deny(
            refusalReason(
              `'${ctx.toolName}' did not run: your stored '${error.credential}' credential for '${identity.upstream}' cannot be read`,
              'Retrying will not help until it is stored again',
              `Ask an operator to store your '${error.credential}' credential again`,
            ),
            {
              code: CREDENTIAL_MISSING,
              retryable: false,
              detail: `per-principal credential '${error.credential}' does not open with the configured key (edited, moved or sealed under another key)`,
            },
          );
        }
        const refusal = authRefusal(identity.upstream, error);
        const failure =
          error instanceof UpstreamAuthError ? (error.retryable ? 'retryable' : 'refused') : 'threw';
        ctx.emit({ type: 'credential.failed', kind: 'upstream-token', service: identity.upstream, failure });
        return ctx.deny(refusal.reason, {
          code: refusal.code,
          retryable: refusal.retryable,
          ...(refusal.detail !== undefined ? { detail: refusal.detail } : {}),
        });
      }
      if (Object.keys(headers).length > 0)
        ctx.provideCredential(
          new Credential(
            { kind: 'headers', service: identity.upstream },
            { kind: 'headers', value: headers },
          ),
        );
      ctx.emit({ type: 'credential.resolved', kind: 'upstream-identity', service: identity.upstream });
      try {
        await next();
      } finally {
        identity.done(headers);
      }
    },
  };
}
