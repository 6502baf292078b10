// The result-ceiling gate: innermost, the first to see a result. An oversized result is refused,
// never truncated, so the payload never reaches an outer after-half, the ledger or an event.

import { formatCount, refusalReason, type Middleware } from '@toolgate/core';

export interface ResultCeilingGateOptions {
  /** The operator's ceiling for tools that declare none. */
  readonly defaultMaxChars?: number;
}

const NO_CEILING = Object.freeze({ why: 'no ceiling' });

function narrowing(narrowBy: readonly string[] | undefined): string {
  if (narrowBy === undefined || narrowBy.length === 0) return 'Ask for less, or do without this result';
  const names = narrowBy.map((arg) => `'${arg}'`);
  const list =
    names.length === 1 ? names[0] : `${names.slice(0, -1).join(', ')} or ${names[names.length - 1]}`;
  return `Call it again with a smaller ${list}`;
}

/**
 * Measures `ctx.resultText` (strings as they are, not JSON-quoted) against the tool's `resultCeiling.maxChars`,
 * or the operator default. The refusal names the true size, the ceiling and `narrowBy`.
 *
 * @example
 * resultCeilingGate({ defaultMaxChars: 20_000 })
 */
export function resultCeilingGate(options: ResultCeilingGateOptions = {}): Middleware {
  const fallback = options.defaultMaxChars;
  if (fallback !== undefined && (!Number.isInteger(fallback) || fallback <= 0)) {
    throw new TypeError(
      `resultCeilingGate: defaultMaxChars must be a positive integer; got ${String(fallback)}.`,
    );
  }
  return {
    name: 'result-ceiling',
    innermost: true,
    fingerprint: fallback === undefined ? 'no default' : `default ${fallback}`,
    // With no ceiling there is nothing to measure: the gate's after-half would return at once.
    passThrough: (tool) =>
      tool.resultCeiling?.maxChars === undefined && fallback === undefined ? NO_CEILING : undefined,
    run: async function resultCeiling(ctx, next) {
      const ceiling = ctx.tool.resultCeiling;
      const maxChars = ceiling?.maxChars ?? fallback;
      ctx.note(maxChars === undefined ? 'no ceiling' : `ceiling ${maxChars} characters`);
      await next();
      const text = ctx.resultText;
      if (maxChars === undefined || text === undefined || text.length <= maxChars) return;
      const chars = text.length;
      ctx.emit({ type: 'result.refused', chars, maxChars });
      ctx.deny(
        refusalReason(
          `'${ctx.toolName}' returned ${formatCount(chars)} characters; the ceiling is ${formatCount(maxChars)}`,
          narrowing(ceiling?.narrowBy),
        ),
        {
          code: 'RESULT_TOO_LARGE',
          mentionsRun: true,
        },
      );
    },
  };
}
