// A LangChain createAgent whose tool calls run through a toolgate chain, with LangChain's own fake
// chat model, so it runs without an API key: the refund stops on a LangGraph interrupt, a person
// approves it with LangChain's `{ decisions }`, and the refund runs once. Run it: pnpm --filter @toolgate/example-langchain start
import { Type } from 'typebox';
import { AIMessage } from '@langchain/core/messages';
import { fakeModel } from '@langchain/core/testing';
import { Command, MemorySaver } from '@langchain/langgraph';
import { createAgent } from 'langchain';
import { createDispatcher, defineTool } from '@toolgate/core';
import { toolgateMiddleware, type TurnInterrupt } from '@toolgate/langchain';
import { canonicalChain } from '@toolgate/middleware';

const refund = defineTool({
  name: 'refund_order',
  description: 'Refund part of an order. A person approves every refund.',
  inputSchema: Type.Object({ orderId: Type.String(), amount: Type.Number() }),
  checkIn: 'always',
  execute: ({ orderId, amount }) => ({ orderId, refunded: amount }),
});

const dispatcher = createDispatcher({
  tools: [refund],
  chain: canonicalChain({ checkInKey: process.env.CHECKIN_KEY ?? 'dev-only-check-in-key-0123456789abcdef' }),
});

// A stand-in for a provider model: first it calls the tool, then it reports what the tool said.
const model = fakeModel()
  .respondWithTools([{ name: 'refund_order', args: { orderId: 'A-17', amount: 20 }, id: 'call_1' }])
  .respond((messages) => new AIMessage(`Done: ${String(messages.at(-1)?.content)}`));

const agent = createAgent({
  model,
  tools: [],
  middleware: [toolgateMiddleware(dispatcher)],
  checkpointer: new MemorySaver(), // interrupts need a checkpointer
});
// Identity comes from the run's context, never from the model's arguments.
const config = {
  context: { identity: { tenant: 'acme', principal: 'ada' } },
  configurable: { thread_id: 'demo' },
};

const first = await agent.invoke({ messages: 'Refund 20 on A-17' }, config);
// One interrupt per model turn, shaped like humanInTheLoopMiddleware's: every call that needs a person.
for (const { value } of first.__interrupt__ ?? []) {
  for (const action of (value as TurnInterrupt).actionRequests)
    console.log(`approval needed: ${action.name} ${JSON.stringify(action.args)}`);
}
// Resumed the way LangChain documents: one decision per action, in order. Each answers the request
// raised for exactly that call, once.
const second = await agent.invoke(new Command({ resume: { decisions: [{ type: 'approve' }] } }), config);
console.log(second.messages.at(-1)?.content);
