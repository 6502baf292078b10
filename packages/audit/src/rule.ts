// Which policy rule decided a call, read from its ledger: the row of the gate named `policy`. The
// rule's name is configuration, never a value, so only a name-shaped string is taken.

import type { LedgerRow } from '@toolgate/core';

const RULE_NAME = /^[A-Za-z0-9][A-Za-z0-9_.:/-]{0,127}$/;

/**
 * The deciding rule of a call: the `rule` field the `policy` gate files on its row (`ctx.decidedBy`);
 * absent when no `policy` gate filed a row, or no rule decided (the default did). `why` is prose for
 * people and is never parsed here.
 */
export function policyRuleOf(ledger: readonly LedgerRow[]): string | undefined {
  const rule = ledger.find((candidate) => candidate.gate === 'policy')?.rule;
  return typeof rule === 'string' && RULE_NAME.test(rule) ? rule : undefined;
}
