// The capabilities gate: for each capability the tool declares and the checker governs, ask once.

import {
  refusalReason,
  type Middleware,
  type Next,
  type PermissionChecker,
  type Tool,
  type ToolMiddlewareContext,
} from '@toolgate/core';
import { assertChecker, assertDeadline, boundedReason, consult } from './internal/consult';

export interface CapabilitiesGateOptions {
  /** How long each capability check may take; default 5000 ms. */
  readonly deadlineMs?: number;
}

/**
 * Asks `checker.check({ capability, target, … })` for every capability that both the tool declares and
 * the checker lists in `governs`, in declaration order, stopping at the first denial.
 */
export function capabilitiesGate(
  checker?: PermissionChecker,
  options: CapabilitiesGateOptions = {},
): Middleware {
  assertChecker('capabilitiesGate', checker);
  const deadlineMs = assertDeadline('capabilitiesGate', options.deadlineMs);
  const governed = new Set(checker?.governs ?? []);
  const askedOf = (tool: Tool) => (tool.capabilities ?? []).filter((capability) => governed.has(capability));
  const ask = async (
    checker: PermissionChecker,
    asked: readonly string[],
    ctx: ToolMiddlewareContext,
    next: Next,
  ): Promise<void> => {
    for (const capability of asked) {
      const consulted = await consult(checker, capability, ctx, deadlineMs);
      if ('failure' in consulted) {
        ctx.emit({ type: 'capability.checked', capability, allowed: false, failure: consulted.failure });
        return ctx.deny(
          refusalReason(
            `'${ctx.toolName}' needs capability '${capability}', which could not be checked`,
            'Retrying later may help',
            'Continue without it for now',
          ),
          {
            code: 'CHECKER_FAILED',
            retryable: true,
            detail: `capability checker ${consulted.failure} on '${capability}'`,
          },
        );
      }
      const { decision } = consulted;
      ctx.emit({ type: 'capability.checked', capability, allowed: decision.allow });
      if (!decision.allow) {
        return ctx.deny(
          refusalReason(
            `'${ctx.toolName}' needs capability '${capability}', which is not allowed here: ${boundedReason(decision.reason)}`,
            'This will not change during this run; do not call it again',
            'Continue without it, or tell the user what you cannot do',
          ),
          { code: 'CAPABILITY_DENIED' },
        );
      }
    }
    ctx.note(`allowed: ${asked.join(', ')}`);
    return next();
  };
  return {
    name: 'capabilities',
    after: ['permission'],
    fingerprint: checker === undefined ? 'no checker' : `governs ${[...governed].join(' ') || 'nothing'}`,
    passThrough: (tool) => {
      if (checker === undefined) return { why: 'no checker' };
      return askedOf(tool).length === 0 ? { why: 'no governed capability' } : undefined;
    },
    // With nothing to ask, nothing is awaited: the call passes without an async frame.
    run: function capabilities(ctx, next) {
      const asked = askedOf(ctx.tool);
      if (checker === undefined || asked.length === 0) {
        ctx.note(checker === undefined ? 'no checker' : 'no governed capability');
        return next();
      }
      return ask(checker, asked, ctx, next);
    },
  };
}
