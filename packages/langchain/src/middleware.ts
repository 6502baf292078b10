// A createAgent middleware that brings the dispatcher's tools and runs every call to them through the
// chain from wrapToolCall, so the chain's gates (validate-args included) decide before LangChain does.

import { createMiddleware } from 'langchain';
import type { Dispatcher } from '@toolgate/core';
import { governor, type GovernedOptions } from './governed-call';
import { governedTools } from './governed-tools';
import { toolMessageOf } from './tool-message';

/**
 * Gives an agent the dispatcher's tools, each call governed by the chain. A call to a tool the
 * dispatcher does not serve goes to the agent's own tool as before; a name nobody serves is refused
 * with the list of known tools, as a tool result the model reads.
 *
 * @example
 * const agent = createAgent({ model, tools: [], middleware: [toolgateMiddleware(dispatcher)], checkpointer });
 * await agent.invoke({ messages }, { context: { identity: { tenant: 'acme' } }, configurable: { thread_id } });
 */
export function toolgateMiddleware<TContext = unknown>(
  dispatcher: Dispatcher,
  options: GovernedOptions<TContext> = {},
) {
  const governedCall = governor(dispatcher, options);
  return createMiddleware({
    name: 'toolgate',
    tools: governedTools(dispatcher, options),
    wrapToolCall: async (request, handler) => {
      const { name, args, id } = request.toolCall;
      if (!dispatcher.tools.has(name) && request.tool !== undefined) return handler(request);
      const toolCallId = id ?? '';
      const outcome = await governedCall({
        toolName: name,
        args,
        toolCallId: id,
        context: request.runtime.context as TContext,
        signal: request.runtime.signal,
      });
      return toolMessageOf(outcome, name, toolCallId);
    },
  });
}
