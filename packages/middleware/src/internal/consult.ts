// Asking a PermissionChecker, shared by the permission and capabilities gates. A checker that
// throws, rejects, times out or answers anything but a well-formed Decision counts as a failure.

import {
  DeadlineError,
  DEFAULT_DEADLINE_MS,
  withDeadline,
  type Decision,
  type PermissionChecker,
  type PermissionRequest,
  type ToolMiddlewareContext,
} from '@toolgate/core';
import { PortSignal } from './port-signal';

export type Consulted =
  { readonly decision: Decision } | { readonly failure: 'threw' | 'timeout' | 'malformed' | 'aborted' };

export function isDecision(value: unknown): value is Decision {
  if (typeof value !== 'object' || value === null) return false;
  const decision = value as { allow?: unknown; reason?: unknown };
  if (decision.allow === true) return true;
  return decision.allow === false && typeof decision.reason === 'string' && decision.reason.trim() !== '';
}

/** Asks `checker` about `capability` (`'tool_call'` for the permission gate) for the call in `ctx`. */
export async function consult(
  checker: PermissionChecker,
  capability: string,
  ctx: ToolMiddlewareContext,
  deadlineMs: number,
): Promise<Consulted> {
  const parent = ctx.signal;
  const port = new PortSignal();
  const asked: PermissionRequest = {
    capability,
    target: ctx.toolName,
    ...(ctx.toolSource !== undefined ? { toolSource: ctx.toolSource } : {}),
    ...(ctx.identity !== undefined ? { identity: ctx.identity } : {}),
    args: ctx.args,
    get signal() {
      return port.signal;
    },
  };
  try {
    const answer: unknown = await withDeadline(() => checker.check(asked), deadlineMs, parent);
    return isDecision(answer) ? { decision: answer } : { failure: 'malformed' };
  } catch (error) {
    port.stopped(error);
    if (error instanceof DeadlineError) return { failure: 'timeout' };
    return { failure: parent.aborted ? 'aborted' : 'threw' };
  }
}

/** Checks a checker handed to a gate factory, so a bad one fails at build. */
export function assertChecker(
  fn: string,
  checker: unknown,
): asserts checker is PermissionChecker | undefined {
  if (checker === undefined) return;
  const candidate = checker as Partial<PermissionChecker> | null;
  if (typeof candidate !== 'object' || candidate === null || typeof candidate.check !== 'function') {
    throw new TypeError(`${fn}: the permission checker must be an object with a check(request) method.`);
  }
  const governs = candidate.governs;
  if (
    governs !== undefined &&
    (!Array.isArray(governs) || governs.some((name) => typeof name !== 'string'))
  ) {
    throw new TypeError(`${fn}: the checker's 'governs' must be an array of capability names.`);
  }
}

export function assertDeadline(fn: string, deadlineMs: unknown): number {
  if (deadlineMs === undefined) return DEFAULT_DEADLINE_MS;
  if (typeof deadlineMs !== 'number' || !Number.isInteger(deadlineMs) || deadlineMs <= 0) {
    throw new TypeError(
      `${fn}: deadlineMs must be a positive integer of milliseconds; got ${String(deadlineMs)}.`,
    );
  }
  return deadlineMs;
}

/** A checker's reason, bounded so a verbose checker cannot flood the model's page. */
export function boundedReason(reason: string): string {
  const trimmed = reason.trim();
  return trimmed.length > 300 ? `${trimmed.slice(0, 297)}...` : trimmed;
}
