// Anthropic Messages: tool definitions from a dispatcher, and `tool_use` blocks dispatched through the
// chain into `tool_result` blocks (`is_error` for refusals and failures). Shapes are declared here
// structurally so `@anthropic-ai/sdk` stays optional; the tests check them against the SDK's types.

import type { Dispatcher, DispatchOutcome, PausedOutcome } from '@toolgate/core';
import {
  assertDispatcher,
  dispatchWithPauses,
  field,
  isError,
  text,
  type ProviderDispatchOptions,
} from './pause';

/** A custom tool as `messages.create({ tools })` takes it (`Tool`). */
export interface AnthropicTool {
  readonly name: string;
  readonly description: string;
  readonly input_schema: { readonly type: 'object'; readonly [key: string]: unknown };
}

/** A `tool_use` content block of an assistant message; `input` is already parsed by the API. */
export interface AnthropicToolUse {
  readonly type: 'tool_use';
  readonly id: string;
  readonly name: string;
  readonly input: unknown;
}

/** The `tool_result` block answering one `tool_use` (`ToolResultBlockParam`). */
export interface AnthropicToolResult {
  type: 'tool_result';
  tool_use_id: string;
  content: string;
  is_error?: boolean;
}

/** The user message carrying every tool result of one assistant turn. */
export interface AnthropicToolResultMessage {
  role: 'user';
  content: AnthropicToolResult[];
}

export interface AnthropicToolUsesResult {
  /** One user message with a `tool_result` per `tool_use`, in order: append it to the conversation. */
  readonly message: AnthropicToolResultMessage;
  readonly outcomes: DispatchOutcome[];
  /** Calls left waiting for a human. */
  readonly paused: PausedOutcome[];
}

/** The dispatcher's tools as Anthropic custom tools. */
export function toAnthropicTools(dispatcher: Dispatcher): AnthropicTool[] {
  assertDispatcher('toAnthropicTools', dispatcher);
  return dispatcher.schemas().map((schema) => ({
    name: schema.name,
    description: schema.description,
    // toolgate args are always an object; Anthropic insists the schema says so.
    input_schema: {
      type: 'object',
      ...(schema.inputSchema as Record<string, unknown>),
    } as AnthropicTool['input_schema'],
  }));
}

/** The `tool_result` block for an outcome: `is_error` when the call was refused or failed. */
export function anthropicToolResult(
  outcome: DispatchOutcome,
  toolUseId = outcome.toolCallId,
): AnthropicToolResult {
  return {
    type: 'tool_result',
    tool_use_id: toolUseId,
    content: outcome.content,
    ...(isError(outcome) ? { is_error: true } : {}),
  };
}

/** Dispatches one `tool_use` block through the chain. A malformed block is a refusal, never a throw. */
export async function dispatchAnthropicToolUse(
  dispatcher: Dispatcher,
  block: AnthropicToolUse,
  options: ProviderDispatchOptions = {},
): Promise<{ result: AnthropicToolResult; outcome: DispatchOutcome }> {
  assertDispatcher('dispatchAnthropicToolUse', dispatcher);
  const id = text(field(block, 'id'));
  const outcome = await dispatchWithPauses(
    dispatcher,
    {
      toolName: text(field(block, 'name')) ?? '',
      args: field(block, 'input'),
      ...(id !== undefined && id !== '' ? { toolCallId: id } : {}),
    },
    options,
  );
  return { result: anthropicToolResult(outcome, id ?? outcome.toolCallId), outcome };
}

/** Dispatches every `tool_use` block of an assistant message's content, one after another, in order. */
export async function dispatchAnthropicToolUses(
  dispatcher: Dispatcher,
  content: readonly unknown[] | null | undefined,
  options: ProviderDispatchOptions = {},
): Promise<AnthropicToolUsesResult> {
  assertDispatcher('dispatchAnthropicToolUses', dispatcher);
  const result: AnthropicToolUsesResult = {
    message: { role: 'user', content: [] },
    outcomes: [],
    paused: [],
  };
  for (const block of Array.isArray(content) ? content : []) {
    if (field(block, 'type') !== 'tool_use') continue;
    const { result: toolResult, outcome } = await dispatchAnthropicToolUse(
      dispatcher,
      block as AnthropicToolUse,
      options,
    );
    result.message.content.push(toolResult);
    result.outcomes.push(outcome);
    if (outcome.kind === 'paused') result.paused.push(outcome);
  }
  return result;
}
