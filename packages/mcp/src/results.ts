// How outcomes reach an MCP client: an imported tool's result as the blocks its server sent (with its
// structuredContent), any other result as text (plus structuredContent for an object), and everything
// the model or a gate caused as an isError result the model reads, never a protocol error.

import type { CallToolResult, InputRequiredResult } from '@modelcontextprotocol/server';
import { contentSize, isContentResult, type DispatchOutcome } from '@toolgate/core';

const isPlainObject = (value: unknown): value is Record<string, unknown> => {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
};

// The same bound core puts on a tool's error message: an error is a sentence, not a payload.
const MAX_ERROR_CHARS = 1000;

/** The MCP result for a settled outcome. */
export function callToolResult(outcome: DispatchOutcome): CallToolResult {
  // outcome.value is already redacted by core, like the text: neither needs a pass of its own.
  if (outcome.kind === 'result' && outcome.toolSource !== undefined && isContentResult(outcome.value)) {
    const { content, structuredContent } = outcome.value;
    return (
      structuredContent === undefined
        ? { content: [...content] }
        : { content: [...content], structuredContent }
    ) as CallToolResult;
  }
  const content = [{ type: 'text' as const, text: outcome.content }];
  if (outcome.kind === 'refused')
    return {
      content,
      isError: true,
      _meta: {
        'io.toolgate/refusal': { gate: outcome.gate, code: outcome.code, retryable: outcome.retryable },
      },
    };
  if (outcome.kind !== 'result') return { content, isError: true };
  return isPlainObject(outcome.value) ? { content, structuredContent: outcome.value } : { content };
}

/**
 * An upstream's isError result with its own blocks, when it is the size of an error (text within
 * core's bound on error messages, no binary blocks); undefined otherwise, and the failure's text stands.
 */
export function upstreamErrorResult(result: CallToolResult): CallToolResult | undefined {
  if (!isContentResult(result)) return undefined;
  const { chars, bytes } = contentSize(result);
  return chars <= MAX_ERROR_CHARS && bytes === 0 ? { content: result.content, isError: true } : undefined;
}

/** An isError result in the refusal form, for what the serving side decides outside the chain. */
export function refusalResult(gate: string, reason: string): CallToolResult {
  return { content: [{ type: 'text', text: `[${gate} refused: ${reason}]` }], isError: true };
}

/** How a tools/call ended: an outcome of the chain, or a refusal decided outside it (a pause nobody settled). */
export type McpSettled =
  | {
      readonly kind: 'outcome';
      readonly outcome: DispatchOutcome;
      /** How a paused call was decided, when it paused. */
      readonly via?: 'grant' | 'standing-grant' | 'elicitation' | 'inbox';
      /** The standing grant that answered, when one did. */
      readonly grantId?: string;
    }
  | {
      readonly kind: 'refused';
      readonly gate: string;
      readonly code: string;
      readonly retryable: boolean;
      /** What the model reads, in the refusal form. */
      readonly text: string;
      readonly checkInId?: string;
    }
  | {
      /**
       * A 2026-07-28 answer: the person is asked at the client or the inbox (a check-in), or the
       * upstream's questions are relayed (`asker: 'upstream'`); the client retries.
       */
      readonly kind: 'input-required';
      /** The check-in asked about; absent when the upstream asked. */
      readonly checkInId?: string;
      readonly asker?: 'upstream';
      readonly result: InputRequiredResult;
    };

/** A refusal decided outside the chain, as the settled form the report and the result share. */
export function refusedBy(
  gate: string,
  code: string,
  reason: string,
  retryable = false,
): Extract<McpSettled, { kind: 'refused' }> {
  return { kind: 'refused', gate, code, retryable, text: `[${gate} refused: ${reason}]` };
}

/** The MCP result for a refusal decided outside the chain; its code rides in `_meta`. */
export function refusedResult(settled: Extract<McpSettled, { kind: 'refused' }>): CallToolResult {
  return {
    content: [{ type: 'text', text: settled.text }],
    isError: true,
    _meta: {
      'io.toolgate/refusal': {
        gate: settled.gate,
        code: settled.code,
        retryable: settled.retryable,
        ...(settled.checkInId !== undefined ? { checkInId: settled.checkInId } : {}),
      },
    },
  };
}
