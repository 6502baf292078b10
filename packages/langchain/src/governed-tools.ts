// The dispatcher's tools as LangChain tools: the agent's loop stays LangChain's, and each call runs
// through the toolgate chain. LangChain checks args against the schema before a tool runs; use
// toolgateMiddleware so that the chain's validate-args judges them instead.

import { tool, type DynamicStructuredTool, type ToolRuntime } from '@langchain/core/tools';
import type { Dispatcher, Tool } from '@toolgate/core';
import { governor, type GovernedOptions } from './governed-call';
import { toolMessageOf } from './tool-message';

/** A JSON copy of the schema: LangChain hands it to the model, and symbol keys mean nothing there. */
export function jsonSchemaOf(schema: Tool['schema']): Record<string, unknown> {
  const copy = JSON.parse(JSON.stringify(schema.inputSchema ?? {})) as Record<string, unknown>;
  return { ...copy, type: 'object', properties: copy.properties ?? {} };
}

/**
 * One LangChain tool per dispatcher tool. Identity comes from the run's context; a check-in becomes a
 * LangGraph `interrupt` (resume with `new Command({ resume: checkInApproved({ by }) })`).
 *
 * @example
 * const agent = createAgent({ model, tools: governedTools(dispatcher), checkpointer: new MemorySaver() });
 */
export function governedTools<TContext = unknown>(
  dispatcher: Dispatcher,
  options: GovernedOptions<TContext> = {},
): DynamicStructuredTool[] {
  const governedCall = governor(dispatcher, options);
  return dispatcher.schemas().map(
    (schema) =>
      tool(
        async (input: unknown, runtime: ToolRuntime<unknown, TContext>) => {
          const toolCallId = runtime?.toolCallId ?? runtime?.toolCall?.id;
          const outcome = await governedCall({
            toolName: schema.name,
            args: input,
            toolCallId,
            context: runtime?.context as TContext,
            signal: runtime?.signal,
          });
          // A result is plain text, which LangChain wraps as it does for any tool; a refusal, failure or
          // pause is an error ToolMessage, so the model sees its status.
          if (typeof outcome !== 'string' && outcome.kind === 'result') return outcome.content;
          if (toolCallId === undefined) return typeof outcome === 'string' ? outcome : outcome.content;
          return toolMessageOf(outcome, schema.name, toolCallId);
        },
        { name: schema.name, description: schema.description, schema: jsonSchemaOf(schema) },
      ) as DynamicStructuredTool,
  );
}
