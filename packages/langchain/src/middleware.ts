// A createAgent middleware that brings the dispatcher's tools and runs every call to them through the
// chain from wrapToolCall, so the chain's gates (validate-args included) decide before LangChain does.

import { AIMessage } from '@langchain/core/messages';
import { getConfig } from '@langchain/langgraph';
import { createMiddleware } from 'langchain';
import { checkInLookup, type Dispatcher, type Identity } from '@toolgate/core';
import { approverOf, contextIdentity, governor, type GovernedOptions } from './governed-call';
import { turnReview } from './turn-review';
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
  const turn = turnReview<TContext>({
    dispatcher,
    lookup: checkInLookup(options.checkIns !== undefined ? { store: options.checkIns } : {}),
    identityOf: options.identity ?? (contextIdentity as (context: TContext) => Identity | undefined),
    approver: approverOf(options),
    onPause: options.onPause,
  });
  return createMiddleware({
    name: 'toolgate',
    tools: governedTools(dispatcher, options),
    // The chain runs up to its check-in as soon as the model has called, so the turn's review holds
    // every call that needs a person.
    wrapModelCall: async (request, handler) => {
      const response = await handler(request);
      if (AIMessage.isInstance(response))
        await turn.raise(response, request.runtime.context as TContext, request.runtime.signal);
      return response;
    },
    afterModel: {
      canJumpTo: ['model'],
      // A hook's runtime carries only the context its middleware declares a schema for; the run's own
      // context (whatever shape the app's identity function reads) is on the run's config.
      hook: (state, runtime) => turn.review(state.messages, getConfig()?.context as TContext, runtime.signal),
    },
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
