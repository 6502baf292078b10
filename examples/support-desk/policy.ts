// The support desk's policy: who may call what, per tenant, plus one custom middleware.

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
}

export const TENANTS: Record<string, TenantRules> = {
  acme: { blocksExternalNet: true },
  globex: { blocksExternalNet: false },
};

/** The permission checker: MCP tools are read-only, and some tenants keep data inside their network. */
export function supportDeskPermissions(tenant: string): PermissionChecker {
  const rules = TENANTS[tenant] ?? { blocksExternalNet: true };
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

const REFUND_CAP = 1000;

/** A custom policy middleware: no agent refunds more than the cap, whoever approves. */
export const refundCap: Middleware = {
  name: 'refund-cap',
  fingerprint: `cap ${REFUND_CAP}`,
  async run(ctx, next) {
    const amount = ctx.args['amount'];
    if (ctx.toolName === 'issue_refund' && typeof amount === 'number' && amount > REFUND_CAP) {
      return ctx.deny(
        refusalReason(
          `refunds above ${formatCount(REFUND_CAP)} EUR cannot be issued by an agent`,
          'Retrying will not help',
          'Offer the customer a refund up to the cap, or hand the case to a supervisor',
        ),
        { code: 'REFUND_CAP' },
      );
    }
    ctx.note(ctx.toolName === 'issue_refund' ? `within the ${REFUND_CAP} EUR cap` : 'not a refund');
    return next();
  },
};
