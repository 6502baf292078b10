// Every export here is public API of @toolgate/providers: OpenAI and Anthropic tool formats in and out
// of a toolgate dispatcher, for programs that call the provider APIs directly.

export type { ProviderDispatchOptions } from './pause';

export type {
  OpenAICustomToolCall,
  OpenAIFunctionTool,
  OpenAIToolCall,
  OpenAIToolCallsResult,
  OpenAIToolMessage,
} from './openai';
export { dispatchOpenAIToolCall, dispatchOpenAIToolCalls, openAIToolMessage, toOpenAITools } from './openai';

export type {
  AnthropicTool,
  AnthropicToolResult,
  AnthropicToolResultMessage,
  AnthropicToolUse,
  AnthropicToolUsesResult,
} from './anthropic';
export {
  anthropicToolResult,
  dispatchAnthropicToolUse,
  dispatchAnthropicToolUses,
  toAnthropicTools,
} from './anthropic';

export { dispatchToolUse } from './dispatch-tool-use';
