// OpenAI Chat Completions: tool definitions from a dispatcher, and `tool_calls` dispatched through the
// chain into `tool` role messages. Shapes are declared here structurally so `openai` stays optional;
// the tests check them against the SDK's own types.

import type { Dispatcher, DispatchOutcome, PausedOutcome } from '@toolgate/core';
import { assertDispatcher, dispatchWithPauses, field, text, type ProviderDispatchOptions } from './pause';

/** A function tool as `chat.completions.create({ tools })` takes it (`ChatCompletionFunctionTool`). */
export interface OpenAIFunctionTool {
  readonly type: 'function';
  readonly function: {
    readonly name: string;
    readonly description: string;
    readonly parameters: Record<string, unknown>;
    readonly strict?: boolean;
  };
}

/** One entry of an assistant message's `tool_calls`; `arguments` is the JSON string the model wrote. */
export interface OpenAIToolCall {
  readonly id: string;
  readonly type: 'function';
  readonly function: { readonly name: string; readonly arguments: string };
}

/** A custom (free-text) tool call; toolgate reads its `input` as the JSON arguments. */
export interface OpenAICustomToolCall {
  readonly id: string;
  readonly type: 'custom';
  readonly custom: { readonly name: string; readonly input: string };
}

/** The `tool` role message answering one tool call (`ChatCompletionToolMessageParam`). */
export interface OpenAIToolMessage {
  role: 'tool';
  tool_call_id: string;
  content: string;
}

export interface OpenAIToolCallsResult {
  /** One `tool` message per call, in the order of `tool_calls`: append them all to the conversation. */
  readonly messages: OpenAIToolMessage[];
  readonly outcomes: DispatchOutcome[];
  /** Calls left waiting for a human. */
  readonly paused: PausedOutcome[];
}

/**
 * The dispatcher's tools as OpenAI function tools. `strict` is off: the chain's validate-args gate
 * judges the arguments and the model reads its refusal.
 */
export function toOpenAITools(dispatcher: Dispatcher): OpenAIFunctionTool[] {
  assertDispatcher('toOpenAITools', dispatcher);
  return dispatcher.schemas().map((schema) => ({
    type: 'function',
    function: {
      name: schema.name,
      description: schema.description,
      parameters: schema.inputSchema as Record<string, unknown>,
    },
  }));
}

/** The `tool` message for an outcome: its `content` is what the model reads (refusals included). */
export function openAIToolMessage(
  outcome: DispatchOutcome,
  toolCallId = outcome.toolCallId,
): OpenAIToolMessage {
  return { role: 'tool', tool_call_id: toolCallId, content: outcome.content };
}

/**
 * Dispatches one OpenAI tool call through the chain. Bad JSON arguments, an unknown tool or a
 * malformed call come back as a refusal message the model reads; this never throws for them.
 */
export async function dispatchOpenAIToolCall(
  dispatcher: Dispatcher,
  toolCall: OpenAIToolCall | OpenAICustomToolCall,
  options: ProviderDispatchOptions = {},
): Promise<{ message: OpenAIToolMessage; outcome: DispatchOutcome }> {
  assertDispatcher('dispatchOpenAIToolCall', dispatcher);
  const id = text(field(toolCall, 'id'));
  const custom = field(toolCall, 'type') === 'custom';
  const fn = field(toolCall, custom ? 'custom' : 'function');
  const outcome = await dispatchWithPauses(
    dispatcher,
    {
      toolName: text(field(fn, 'name')) ?? '',
      // Missing arguments are not "no arguments": hand the dispatcher bad JSON so the model reads why.
      args: text(field(fn, custom ? 'input' : 'arguments')) ?? '\u0000',
      ...(id !== undefined && id !== '' ? { toolCallId: id } : {}),
    },
    options,
  );
  return { message: openAIToolMessage(outcome, id ?? outcome.toolCallId), outcome };
}

/** Dispatches every call of an assistant message's `tool_calls`, one after another, in order. */
export async function dispatchOpenAIToolCalls(
  dispatcher: Dispatcher,
  toolCalls: readonly (OpenAIToolCall | OpenAICustomToolCall)[] | null | undefined,
  options: ProviderDispatchOptions = {},
): Promise<OpenAIToolCallsResult> {
  assertDispatcher('dispatchOpenAIToolCalls', dispatcher);
  const result: OpenAIToolCallsResult = { messages: [], outcomes: [], paused: [] };
  for (const toolCall of Array.isArray(toolCalls) ? toolCalls : []) {
    const { message, outcome } = await dispatchOpenAIToolCall(dispatcher, toolCall, options);
    result.messages.push(message);
    result.outcomes.push(outcome);
    if (outcome.kind === 'paused') result.paused.push(outcome);
  }
  return result;
}
