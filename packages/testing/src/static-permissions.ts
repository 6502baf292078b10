// A PermissionChecker from a list of rules, for testing policies without a real authorization service.

import type { Decision, PermissionChecker, PermissionRequest } from '@toolgate/core';

/** One rule; every field given must match. The first matching rule decides. */
export interface PermissionRule {
  /** Tool name, or several. */
  readonly tool?: string | readonly string[];
  /** MCP server the tool came from; `null` matches only our own tools (no source). */
  readonly source?: string | null;
  /** `'tool_call'` (the permission gate) or a capability name (the capabilities gate). */
  readonly capability?: string;
  readonly tenant?: string;
  readonly principal?: string;
  readonly allow: boolean;
  /** What the model reads when this rule denies. */
  readonly reason?: string;
}

export interface StaticPermissionsOptions {
  /** When no rule matches. Default `'deny'`: a test must allow what it expects to run. */
  readonly default?: 'allow' | 'deny';
  /** Capabilities the checker decides. Default: every capability named in a rule (besides `'tool_call'`). */
  readonly governs?: readonly string[];
}

/** A request as the checker saw it, without its signal. */
export type SeenPermissionRequest = Omit<PermissionRequest, 'signal'>;

export interface StaticPermissions extends PermissionChecker {
  /** Answers synchronously. */
  check(request: PermissionRequest): Decision;
  readonly governs: readonly string[];
  /** Every request, in order. */
  readonly requests: readonly SeenPermissionRequest[];
  /** Forgets recorded requests. */
  reset(): void;
}

const RULE_KEYS = new Set(['tool', 'source', 'capability', 'tenant', 'principal', 'allow', 'reason']);

function assertRules(rules: unknown): asserts rules is readonly PermissionRule[] {
  if (!Array.isArray(rules))
    throw new TypeError('staticPermissions: rules must be an array of { …match, allow }.');
  rules.forEach((rule: unknown, i) => {
    if (typeof rule !== 'object' || rule === null)
      throw new TypeError(`staticPermissions: rule #${i + 1} must be an object.`);
    const unknown = Object.keys(rule).filter((key) => !RULE_KEYS.has(key));
    if (unknown.length > 0) {
      throw new TypeError(
        `staticPermissions: rule #${i + 1} has unknown field(s) ${unknown.map((k) => `'${k}'`).join(', ')}; use ${[...RULE_KEYS].join(', ')}.`,
      );
    }
    if (typeof (rule as { allow?: unknown }).allow !== 'boolean') {
      throw new TypeError(`staticPermissions: rule #${i + 1} needs 'allow: true' or 'allow: false'.`);
    }
  });
}

function matches(rule: PermissionRule, request: PermissionRequest): boolean {
  if (rule.tool !== undefined) {
    const tools: readonly string[] = typeof rule.tool === 'string' ? [rule.tool] : rule.tool;
    if (!tools.includes(request.target)) return false;
  }
  if (rule.source !== undefined && (request.toolSource ?? null) !== rule.source) return false;
  if (rule.capability !== undefined && request.capability !== rule.capability) return false;
  if (rule.tenant !== undefined && request.identity?.tenant !== rule.tenant) return false;
  if (rule.principal !== undefined && request.identity?.principal !== rule.principal) return false;
  return true;
}

/**
 * A checker that decides by ordered rules: the first match wins, and no match denies unless
 * `default: 'allow'`. It governs every capability its rules name, and records what it was asked.
 *
 * @example
 * const permissions = staticPermissions([
 *   { tool: 'delete_account', allow: false, reason: 'accounts are closed by staff only' },
 *   { capability: 'payments', tenant: 'acme', allow: true },
 *   { capability: 'payments', allow: false, reason: 'payments are off for this tenant' },
 *   { allow: true },
 * ]);
 */
export function staticPermissions(
  rules: readonly PermissionRule[],
  options: StaticPermissionsOptions = {},
): StaticPermissions {
  assertRules(rules);
  const fallback = options.default ?? 'deny';
  if (fallback !== 'allow' && fallback !== 'deny') {
    throw new TypeError(`staticPermissions: default must be 'allow' or 'deny'; got ${String(fallback)}.`);
  }
  const ordered = rules.map((rule) => ({ ...rule }));
  const governs = Object.freeze(
    options.governs !== undefined
      ? [...options.governs]
      : [
          ...new Set(
            ordered.flatMap((rule) =>
              rule.capability === undefined || rule.capability === 'tool_call' ? [] : [rule.capability],
            ),
          ),
        ],
  );
  const requests: SeenPermissionRequest[] = [];
  return {
    governs,
    get requests(): readonly SeenPermissionRequest[] {
      return requests;
    },
    reset() {
      requests.length = 0;
    },
    check(request): Decision {
      const { signal: _signal, ...seen } = request;
      requests.push(seen);
      const index = ordered.findIndex((rule) => matches(rule, request));
      const rule = ordered[index];
      if (rule === undefined)
        return fallback === 'allow' ? { allow: true } : { allow: false, reason: 'no rule allows it' };
      return rule.allow
        ? { allow: true }
        : { allow: false, reason: rule.reason ?? `rule #${index + 1} denies it` };
    },
  };
}
