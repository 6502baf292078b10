// Which policy rule decided a call, read from its ledger: the row of the gate named `policy`. The
// rule's name is configuration, never a value, so only a name-shaped string is taken.

import type { LedgerRow } from '@toolgate/core';

const RULE_NAME = /^[A-Za-z0-9][A-Za-z0-9_.:/-]{0,127}$/;
// A row's `why` that starts by naming its rule: `rule 'big-refunds-ask' asks for a person` (a pass or
// an ask), `policy rule 'interns-read-only' does not allow …` (a refusal's reason).
const NAMED = /^(?:policy )?rule ['"]([^'"]{1,128})['"]/;

/**
 * The deciding rule of a call: the `policy` row's `rule` field when it has one, else the name its
 * `why` starts with (`rule 'name' …` or `policy rule 'name' …`, as `@toolgate/policy` writes them);
 * absent when no `policy` gate filed a row, or it names no rule (no rule matched: the default decided).
 * Only the start of `why` is read, so a value quoted later in a sentence is never taken for a name.
 */
export function policyRuleOf(ledger: readonly LedgerRow[]): string | undefined {
  const row = ledger.find((candidate) => candidate.gate === 'policy');
  if (row === undefined) return undefined;
  const rule = (row as LedgerRow & { readonly rule?: unknown }).rule;
  if (typeof rule === 'string') return RULE_NAME.test(rule) ? rule : undefined;
  const named = typeof row.why === 'string' ? NAMED.exec(row.why)?.[1] : undefined;
  return named !== undefined && RULE_NAME.test(named) ? named : undefined;
}
