// The result-ceiling gate: innermost, the first to see a result. An oversized result is refused,
// never truncated, so the payload never reaches an outer after-half, the ledger or an event.

import { contentSize, formatCount, isContentResult, refusalReason, type Middleware } from '@toolgate/core';

export interface ResultCeilingGateOptions {
  /** The operator's ceiling for tools that declare none. */
  readonly defaultMaxChars?: number;
  /** The operator's ceiling on decoded bytes of binary blocks (MCP images, audio, blobs) for tools that declare none. */
  readonly defaultMaxBytes?: number;
}

const NO_CEILING = Object.freeze({ why: 'no ceiling' });

function narrowing(narrowBy: readonly string[] | undefined): string {
  if (narrowBy === undefined || narrowBy.length === 0) return 'Ask for less, or do without this result';
  const names = narrowBy.map((arg) => `'${arg}'`);
  const list =
    names.length === 1 ? names[0] : `${names.slice(0, -1).join(', ')} or ${names[names.length - 1]}`;
  return `Call it again with a smaller ${list}`;
}

function assertPositive(field: string, value: number | undefined): void {
  if (value !== undefined && (!Number.isInteger(value) || value <= 0))
    throw new TypeError(`resultCeilingGate: ${field} must be a positive integer; got ${String(value)}.`);
}

/**
 * Measures what the model reads against the tool's `resultCeiling` (or the operator defaults): the
 * characters of `ctx.resultText` (strings as they are, not JSON-quoted), or for an MCP tool's content
 * blocks the characters of their text and, against `maxBytes`, the decoded bytes of binary blocks.
 * The refusal names the true size, the ceiling and `narrowBy`.
 *
 * @example
 * resultCeilingGate({ defaultMaxChars: 20_000, defaultMaxBytes: 5_000_000 })
 */
export function resultCeilingGate(options: ResultCeilingGateOptions = {}): Middleware {
  const fallback = options.defaultMaxChars;
  const fallbackBytes = options.defaultMaxBytes;
  assertPositive('defaultMaxChars', fallback);
  assertPositive('defaultMaxBytes', fallbackBytes);
  return {
    name: 'result-ceiling',
    innermost: true,
    fingerprint: [
      fallback === undefined ? 'no default' : `default ${fallback}`,
      ...(fallbackBytes === undefined ? [] : [`${fallbackBytes} bytes`]),
    ].join(', '),
    // With no ceiling there is nothing to measure: the gate's after-half would return at once.
    passThrough: (tool) =>
      tool.resultCeiling === undefined && fallback === undefined && fallbackBytes === undefined
        ? NO_CEILING
        : undefined,
    run: async function resultCeiling(ctx, next) {
      const ceiling = ctx.tool.resultCeiling;
      const maxChars = ceiling?.maxChars ?? fallback;
      const maxBytes = ceiling?.maxBytes ?? fallbackBytes;
      ctx.note(
        maxChars === undefined && maxBytes === undefined
          ? 'no ceiling'
          : [
              ...(maxChars === undefined ? [] : [`ceiling ${maxChars} characters`]),
              ...(maxBytes === undefined ? [] : [`${maxBytes} bytes`]),
            ].join(', '),
      );
      await next();
      const text = ctx.resultText;
      if (text === undefined) return;
      const result = ctx.result;
      const size =
        ctx.toolSource !== undefined && isContentResult(result)
          ? contentSize(result)
          : { chars: text.length, bytes: 0 };
      if (maxChars !== undefined && size.chars > maxChars) {
        ctx.emit({ type: 'result.refused', chars: size.chars, maxChars });
        ctx.deny(
          refusalReason(
            `'${ctx.toolName}' returned ${formatCount(size.chars)} characters; the ceiling is ${formatCount(maxChars)}`,
            narrowing(ceiling?.narrowBy),
          ),
          { code: 'RESULT_TOO_LARGE', mentionsRun: true },
        );
      }
      if (maxBytes !== undefined && size.bytes > maxBytes) {
        ctx.emit({ type: 'result.refused', chars: size.chars, bytes: size.bytes, maxBytes });
        ctx.deny(
          refusalReason(
            `'${ctx.toolName}' returned ${formatCount(size.bytes)} bytes of images, audio or files; the ceiling is ${formatCount(maxBytes)} bytes`,
            narrowing(ceiling?.narrowBy),
          ),
          { code: 'RESULT_TOO_LARGE', mentionsRun: true },
        );
      }
    },
  };
}
