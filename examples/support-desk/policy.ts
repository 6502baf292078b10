// The support desk's policy: who may call what, per tenant, plus the refund cap, written twice: as
// one CEL rule for the policy gate (what the demo runs) and as a custom middleware in TypeScript.

import type { LimitRule } from '@toolgate/middleware';
import type { PolicyRule } from '@toolgate/policy';
import {
  formatCount,
  refusalReason,
  type Decision,
  type Middleware,
  type PermissionChecker,
} from '@toolgate/core';

const allow: Decision = { allow: true };

export interface TenantRules {
  /** Tenants whose data must not leave their network. */
  readonly blocksExternalNet: boolean;
  /** The largest refund (EUR) an agent of this tenant may issue, whoever approves. */
  readonly refundCap: number;
  /** Knowledge-base searches a tenant may run a minute; absent, unlimited. */
  readonly searchesPerMinute?: number;
}

export const TENANTS: Record<string, TenantRules> = {
  acme: { blocksExternalNet: true, refundCap: 1000 },
  globex: { blocksExternalNet: false, refundCap: 200, searchesPerMinute: 1 },
};

/** An unknown tenant gets the strictest rules: no outside network, no refunds. */
export function rulesFor(tenant: string): TenantRules {
  return TENANTS[tenant] ?? { blocksExternalNet: true, refundCap: 0 };
}

/** A tenant's rules in words, for the demo's banner. */
export function describeRules(tenant: string): string {
  const rules = rulesFor(tenant);
  const searches =
    rules.searchesPerMinute === undefined
      ? ''
      : `; ${formatCount(rules.searchesPerMinute)} knowledge-base search a minute`;
  return `refunds up to ${formatCount(rules.refundCap)} EUR; ${rules.blocksExternalNet ? 'no outside network (MCP search refused)' : 'outside network allowed'}${searches}`;
}

/** The tenant's limits for the limits gate: a budget of searches, where only a search costs anything. */
export function limitsFor(tenant: string): LimitRule[] {
  const perMinute = rulesFor(tenant).searchesPerMinute;
  if (perMinute === undefined) return [];
  return [
    {
      name: 'kb-searches',
      per: 'tenant',
      calls: perMinute,
      windowMs: 60_000,
      tools: ['search_kb'],
    },
  ];
}

/** The permission checker: MCP tools are read-only, and some tenants keep data inside their network. */
export function supportDeskPermissions(tenant: string): PermissionChecker {
  const rules = rulesFor(tenant);
  return {
    governs: ['external_net', 'payments', 'user_data'],
    check({ capability, target, toolSource }) {
      if (capability === 'tool_call' && toolSource === 'kb-server' && target.startsWith('delete_')) {
        return { allow: false, reason: `tools from 'kb-server' are read-only for support agents` };
      }
      if (capability === 'external_net' && rules.blocksExternalNet) {
        return { allow: false, reason: `tenant '${tenant}' keeps its data inside its own network` };
      }
      return allow;
    },
  };
}

/**
 * The refund cap as one CEL rule: no agent refunds more than the tenant's cap, whoever approves.
 * `args.amount` is checked against issue_refund's schema (a number) when the dispatcher is built.
 */
export function refundCapRule(cap: number): PolicyRule {
  return {
    name: 'refund-cap',
    tools: ['issue_refund'],
    when: `args.amount > ${cap.toFixed(1)}`,
    effect: 'deny',
    reason: `Refunds above ${formatCount(cap)} EUR cannot be issued by an agent; offer the customer a refund up to the cap, or hand the case to a supervisor`,
  };
}

/**
 * The same cap as a custom middleware in TypeScript: no agent refunds more than the tenant's cap. The cap
 * is in its fingerprint, so tenants with different caps run under different chain ids.
 */
export function refundCap(cap: number): Middleware {
  return {
    name: 'refund-cap',
    fingerprint: `cap ${cap}`,
    async run(ctx, next) {
      const amount = ctx.args['amount'];
      if (ctx.toolName === 'issue_refund' && typeof amount === 'number' && amount > cap) {
        return ctx.deny(
          refusalReason(
            `refunds above ${formatCount(cap)} EUR cannot be issued by an agent`,
            'Retrying will not help',
            'Offer the customer a refund up to the cap, or hand the case to a supervisor',
          ),
          { code: 'REFUND_CAP' },
        );
      }
      ctx.note(ctx.toolName === 'issue_refund' ? `within the ${cap} EUR cap` : 'not a refund');
      return next();
    },
  };
}
