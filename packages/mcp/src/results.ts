// How outcomes reach an MCP client: a result is text (plus structuredContent for an object), and
// everything the model or a gate caused is an isError result the model reads, never a protocol error.

import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { DispatchOutcome } from '@toolgate/core';

const isPlainObject = (value: unknown): value is Record<string, unknown> => {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
};

/** The MCP result for a settled outcome. */
export function callToolResult(outcome: DispatchOutcome): CallToolResult {
  const content = [{ type: 'text' as const, text: outcome.content }];
  if (outcome.kind !== 'result') return { content, isError: true };
  // outcome.value is already redacted by core, like the text: structuredContent needs no pass of its own.
  return isPlainObject(outcome.value) ? { content, structuredContent: outcome.value } : { content };
}

/** An isError result in the refusal form, for what the serving side decides outside the chain. */
export function refusalResult(gate: string, reason: string): CallToolResult {
  return { content: [{ type: 'text', text: `[${gate} refused: ${reason}]` }], isError: true };
}
