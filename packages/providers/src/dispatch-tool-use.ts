// One entry point for either provider's tool call: the block's own shape says which format answers it.

import type { Dispatcher, DispatchOutcome } from '@toolgate/core';
import {
  anthropicToolResult,
  dispatchAnthropicToolUse,
  type AnthropicToolResult,
  type AnthropicToolUse,
} from './anthropic';
import { dispatchOpenAIToolCall, type OpenAIToolCall, type OpenAIToolMessage } from './openai';
import { field, type ProviderDispatchOptions } from './pause';

/**
 * Dispatches an OpenAI tool call (answered by a `tool` message) or an Anthropic `tool_use` block
 * (answered by a `tool_result` block). Anything else is refused by the dispatcher and answered as an
 * Anthropic `tool_result` with `is_error`.
 */
export async function dispatchToolUse(
  dispatcher: Dispatcher,
  call: OpenAIToolCall,
  options?: ProviderDispatchOptions,
): Promise<{ message: OpenAIToolMessage; outcome: DispatchOutcome }>;
export async function dispatchToolUse(
  dispatcher: Dispatcher,
  call: AnthropicToolUse,
  options?: ProviderDispatchOptions,
): Promise<{ result: AnthropicToolResult; outcome: DispatchOutcome }>;
export async function dispatchToolUse(
  dispatcher: Dispatcher,
  call: OpenAIToolCall | AnthropicToolUse,
  options: ProviderDispatchOptions = {},
): Promise<
  | { message: OpenAIToolMessage; outcome: DispatchOutcome }
  | { result: AnthropicToolResult; outcome: DispatchOutcome }
> {
  if (field(call, 'type') === 'function' || typeof field(call, 'function') === 'object')
    return dispatchOpenAIToolCall(dispatcher, call as OpenAIToolCall, options);
  if (field(call, 'type') === 'tool_use')
    return dispatchAnthropicToolUse(dispatcher, call as AnthropicToolUse, options);
  const { outcome } = await dispatchAnthropicToolUse(dispatcher, call as AnthropicToolUse, options);
  return { result: anthropicToolResult(outcome), outcome };
}
