// The permission gate: may this identity call this tool (from this source) at all?

import {
  refusalReason,
  type Chain,
  type Middleware,
  type Next,
  type PermissionChecker,
  type ToolMiddlewareContext,
} from '@toolgate/core';
import { assertChecker, assertDeadline, boundedReason, consult } from './internal/consult';

export interface PermissionGateOptions {
  /** How long the checker may take before the call is refused; default 5000 ms. */
  readonly deadlineMs?: number;
}

/**
 * Asks `checker.check({ capability: 'tool_call', target, toolSource, identity, args })`.
 * No checker: every call passes and the ledger says so. A failing checker denies.
 *
 * @example
 * permissionGate({ check: ({ target }) => (target === 'delete_all' ? { allow: false, reason: 'never' } : { allow: true }) })
 */
const NO_CHECKER = Object.freeze({
  why: 'no checker',
  events: Object.freeze([{ type: 'permission.checked', allowed: true, checker: 'none' } as const]),
});

// The checker each permission gate asks, so decisions outside tool calls can ask the same one.
const checkers = new WeakMap<Middleware, { checker: PermissionChecker | undefined; deadlineMs: number }>();

/**
 * The checker `chain`'s permission gate asks, and its deadline: what an MCP server asks about reading a
 * resource or getting a prompt, which are not tool calls. Undefined when the chain has no permission gate.
 */
export function permissionCheckerOf(
  chain: Chain,
): { readonly checker: PermissionChecker | undefined; readonly deadlineMs: number } | undefined {
  const gate = chain.get('permission');
  return gate === undefined ? undefined : checkers.get(gate);
}

export function permissionGate(checker?: PermissionChecker, options: PermissionGateOptions = {}): Middleware {
  assertChecker('permissionGate', checker);
  const deadlineMs = assertDeadline('permissionGate', options.deadlineMs);
  const ask = async (checker: PermissionChecker, ctx: ToolMiddlewareContext, next: Next): Promise<void> => {
    const consulted = await consult(checker, 'tool_call', ctx, deadlineMs);
    if ('failure' in consulted) {
      ctx.emit({
        type: 'permission.checked',
        allowed: false,
        checker: 'configured',
        failure: consulted.failure,
      });
      return ctx.deny(
        refusalReason(
          `'${ctx.toolName}' could not be authorized because the permission check failed`,
          'Retrying later may help',
          'Continue without it for now',
        ),
        { code: 'CHECKER_FAILED', retryable: true, detail: `permission checker ${consulted.failure}` },
      );
    }
    const { decision } = consulted;
    ctx.emit({ type: 'permission.checked', allowed: decision.allow, checker: 'configured' });
    if (!decision.allow) {
      return ctx.deny(
        refusalReason(
          `'${ctx.toolName}' is not permitted: ${boundedReason(decision.reason)}`,
          'This will not change during this run; do not call it again',
          'Continue without it, or tell the user what you cannot do',
        ),
        { code: 'PERMISSION_DENIED' },
      );
    }
    return next();
  };
  const gate: Middleware = {
    name: 'permission',
    fingerprint: checker === undefined ? 'no checker' : `checker, ${deadlineMs} ms`,
    passThrough: () => (checker === undefined ? NO_CHECKER : undefined),
    // Without a checker nothing is awaited: the call passes without an async frame.
    run: function permission(ctx, next) {
      if (checker === undefined) {
        ctx.note('no checker');
        ctx.emit({ type: 'permission.checked', allowed: true, checker: 'none' });
        return next();
      }
      return ask(checker, ctx, next);
    },
  };
  checkers.set(gate, { checker, deadlineMs });
  return gate;
}
