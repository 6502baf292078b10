// Matchers for outcomes, framework-neutral: pass them to `expect.extend` (jest, vitest), or import
// `@toolgate/testing/jest`, which installs them. A failure prints the outcome readably.

import type { DispatchOutcome, LedgerOutcome, LedgerRow } from '@toolgate/core';
import { formatOutcome, isDispatchOutcome } from './format';
import type { MockTool } from './mock-tool';

/** The part of a matcher's `this` these matchers read. */
export interface MatcherThis {
  readonly isNot?: boolean;
}

export interface MatcherResult {
  readonly pass: boolean;
  readonly message: () => string;
}

/** A ledger row to look for; every field given must match (`why` as exact text or a pattern). */
export interface LedgerRowExpectation {
  readonly gate?: string;
  readonly outcome?: LedgerOutcome;
  readonly why?: string | RegExp;
  readonly changed?: boolean;
}

/** The matchers' signatures on `expect(…)`. */
export interface ToolgateMatchers<R> {
  /** The outcome is `refused` by `gate` (and with `code`, when given). */
  toBeRefusedBy(gate: string, code?: string): R;
  /** An outcome: the tool's execute ran. A mock tool: it was called (exactly `times`, when given). */
  toHaveRun(times?: number): R;
  /** The outcome is `paused` for a human (asked by `asker`, when given). */
  toBePausedForCheckIn(asker?: string): R;
  /** The outcome's ledger has a row matching every field given. */
  toHaveLedgerRow(row: LedgerRowExpectation): R;
}

function hint(self: MatcherThis, matcher: string, args: readonly unknown[]): string {
  const shown = args
    .filter((arg) => arg !== undefined)
    .map((arg) => (arg instanceof RegExp ? String(arg) : JSON.stringify(arg)));
  return `expect(received)${self.isNot ? '.not' : ''}.${matcher}(${shown.join(', ')})`;
}

function requireOutcome(matcher: string, received: unknown): DispatchOutcome {
  if (isDispatchOutcome(received)) return received;
  throw new TypeError(
    `${matcher}: expected a DispatchOutcome (what dispatcher.dispatch resolves to); got ${formatOutcome(received as DispatchOutcome)}`,
  );
}

function report(
  self: MatcherThis,
  matcher: string,
  args: readonly unknown[],
  pass: boolean,
  expected: string,
  received: string,
): MatcherResult {
  return {
    pass,
    message: () =>
      `${hint(self, matcher, args)}\n\nExpected: ${self.isNot ? 'not ' : ''}${expected}\nReceived: ${received}`,
  };
}

function isMockTool(value: unknown): value is MockTool {
  return (
    typeof value === 'object' &&
    value !== null &&
    'callCount' in value &&
    'calls' in value &&
    'schema' in value
  );
}

function rowMatches(row: LedgerRow, expected: LedgerRowExpectation): boolean {
  if (expected.gate !== undefined && row.gate !== expected.gate) return false;
  if (expected.outcome !== undefined && row.outcome !== expected.outcome) return false;
  if (expected.changed !== undefined && row.changed !== expected.changed) return false;
  if (expected.why !== undefined) {
    if (row.why === undefined) return false;
    if (typeof expected.why === 'string' ? row.why !== expected.why : !expected.why.test(row.why))
      return false;
  }
  return true;
}

function describeRow(expected: LedgerRowExpectation): string {
  const parts = [
    expected.gate !== undefined ? `gate '${expected.gate}'` : undefined,
    expected.outcome !== undefined ? `outcome '${expected.outcome}'` : undefined,
    expected.why !== undefined
      ? `why ${expected.why instanceof RegExp ? String(expected.why) : JSON.stringify(expected.why)}`
      : undefined,
    expected.changed !== undefined ? `changed ${String(expected.changed)}` : undefined,
  ].filter((part) => part !== undefined);
  return `a ledger row with ${parts.join(', ')}`;
}

/**
 * @example
 * expect.extend(toolgateMatchers); // or: import '@toolgate/testing/jest'
 * expect(outcome).toBeRefusedBy('validate-args', 'INVALID_ARGS');
 */
export const toolgateMatchers = {
  toBeRefusedBy(this: MatcherThis, received: unknown, gate: string, code?: string): MatcherResult {
    const outcome = requireOutcome('toBeRefusedBy', received);
    const pass =
      outcome.kind === 'refused' && outcome.gate === gate && (code === undefined || outcome.code === code);
    const expected = `refused by '${gate}'${code === undefined ? '' : ` with code ${code}`}`;
    return report(this, 'toBeRefusedBy', [gate, code], pass, expected, formatOutcome(outcome));
  },

  toHaveRun(this: MatcherThis, received: unknown, times?: number): MatcherResult {
    if (isMockTool(received)) {
      const count = received.callCount;
      const pass = times === undefined ? count > 0 : count === times;
      const expected =
        times === undefined
          ? `'${received.schema.name}' to have run`
          : `'${received.schema.name}' to have run ${times} time(s)`;
      const calls = received.calls
        .map((call, i) => `\n  ${i + 1}. ${call.toolCallId} ${JSON.stringify(call.args)}`)
        .join('');
      return report(this, 'toHaveRun', [times], pass, expected, `${count} call(s)${calls}`);
    }
    const outcome = requireOutcome('toHaveRun', received);
    if (times !== undefined)
      throw new TypeError(`toHaveRun(times): a count applies to a mock tool; an outcome ran at most once.`);
    return report(this, 'toHaveRun', [], outcome.ran, 'the tool to have run', formatOutcome(outcome));
  },

  toBePausedForCheckIn(this: MatcherThis, received: unknown, asker?: string): MatcherResult {
    const outcome = requireOutcome('toBePausedForCheckIn', received);
    const pass = outcome.kind === 'paused' && (asker === undefined || outcome.checkIn.asker === asker);
    const expected = `paused for a check-in${asker === undefined ? '' : ` asked by '${asker}'`}`;
    return report(this, 'toBePausedForCheckIn', [asker], pass, expected, formatOutcome(outcome));
  },

  toHaveLedgerRow(this: MatcherThis, received: unknown, row: LedgerRowExpectation): MatcherResult {
    const outcome = requireOutcome('toHaveLedgerRow', received);
    if (typeof row !== 'object' || row === null || Object.keys(row).length === 0) {
      throw new TypeError(`toHaveLedgerRow: describe the row, e.g. { gate: 'permission', outcome: 'deny' }.`);
    }
    const pass = outcome.ledger.some((candidate) => rowMatches(candidate, row));
    return report(
      this,
      'toHaveLedgerRow',
      [row.why instanceof RegExp ? { ...row, why: String(row.why) } : row],
      pass,
      describeRow(row),
      formatOutcome(outcome),
    );
  },
};
