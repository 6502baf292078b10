// An OpenAI Agents SDK agent whose tools run through a toolgate chain. The model is scripted, so it
// runs without an API key: it refunds an order, the run stops for a person's approval, the person
// approves through RunState, and the refund runs once. Run it: pnpm --filter @toolgate/example-openai-agents start
import { Type } from 'typebox';
import { Agent, run, setTracingDisabled, Usage, type AgentInputItem, type Model } from '@openai/agents';
import { createDispatcher, defineTool } from '@toolgate/core';
import { canonicalChain } from '@toolgate/middleware';
import { governedTools } from '@toolgate/openai-agents';

setTracingDisabled(true);

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
function lastResult(input: AgentInputItem[]): string | undefined {
  const item = [...input].reverse().find((each) => each.type === 'function_call_result');
  if (item?.type !== 'function_call_result') return undefined;
  return typeof item.output === 'string' ? item.output : (item.output as { text?: string }).text;
}
const model: Model = {
  async getResponse({ input }) {
    const items = typeof input === 'string' ? [] : input;
    const result = lastResult(items);
    const output: AgentInputItem[] =
      result === undefined
        ? [
            {
              type: 'function_call',
              callId: 'call_1',
              name: 'refund_order',
              arguments: '{"orderId":"A-17","amount":20}',
            },
          ]
        : [
            {
              type: 'message',
              role: 'assistant',
              status: 'completed',
              content: [{ type: 'output_text', text: `Done: ${result}` }],
            },
          ];
    return { usage: new Usage(), output: output as never };
  },
  getStreamedResponse: () => {
    throw new Error('not scripted');
  },
};

const agent = new Agent({
  name: 'desk',
  instructions: 'Refund orders.',
  model,
  tools: governedTools(dispatcher),
});
// Identity comes from the run's context object, never from the model's arguments.
const first = await run(agent, 'Refund 20 on A-17', {
  context: { identity: { tenant: 'acme', principal: 'ada' } },
});
for (const item of first.interruptions) {
  console.log(`approval needed: ${item.name} ${item.arguments}`);
  first.state.approve(item);
}
const second = await run(agent, first.state);
console.log(second.finalOutput);
