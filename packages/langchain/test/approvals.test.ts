// A LangGraph resume answer decides exactly the check-in it names, once: two refunds asked at once,
// an answer naming one or none, thread state edited before the resume, a checkpoint replayed, and two
// processes sharing one SQLite check-in store. Through createAgent with LangChain's fake chat model.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AIMessage, type BaseMessage } from '@langchain/core/messages';
import { Command, MemorySaver } from '@langchain/langgraph';
import { checkInApproved, checkInDeclined, createDispatcher, type CheckInRequest } from '@toolgate/core';
import { toolgateMiddleware, type CheckInInterrupt } from '@toolgate/langchain';
import { canonicalChain } from '@toolgate/middleware';
import { sqliteCheckIns } from '@toolgate/store-sqlite';
import { fixedClock } from '@toolgate/testing';
import { createAgent } from 'langchain';
import { adapterDesk } from '../../../test-support/adapter-desk';
import { lastToolResult, say, scriptedChatModel, type ChatTurn } from './fixtures/scripted-model';

const ada = { identity: { tenant: 'acme', principal: 'ada' } };
const KEY = 'langchain-approvals-check-in-key-0123456789';

type Invoked = { messages: BaseMessage[]; __interrupt__?: { id?: string; value: unknown }[] };

/** The check-in requests an interrupted run is waiting on, in interrupt order. */
const waitingOn = (result: Invoked): CheckInRequest[] =>
  (result.__interrupt__ ?? []).map((each) => (each.value as CheckInInterrupt).checkIn);

/** Every tool result the model was sent, by tool call id. */
function toolResults(result: Invoked): Record<string, string> {
  const read: Record<string, string> = {};
  for (const message of result.messages)
    if (message.getType() === 'tool') {
      const { tool_call_id: id, content } = message as BaseMessage & { tool_call_id: string };
      read[id] = typeof content === 'string' ? content : JSON.stringify(content);
    }
  return read;
}

/** One AI message calling refund_order twice (call_1 for A-1, call_2 for A-2), then a report. */
const twoRefunds: ChatTurn[] = [
  () =>
    new AIMessage({
      content: '',
      tool_calls: [
        { name: 'refund_order', args: { orderId: 'A-1', amount: 20 }, id: 'call_1', type: 'tool_call' },
        { name: 'refund_order', args: { orderId: 'A-2', amount: 30 }, id: 'call_2', type: 'tool_call' },
      ],
    }),
  (messages) => say(`tool said: ${lastToolResult(messages)}`),
];

const oneRefund: ChatTurn[] = [
  () =>
    new AIMessage({
      content: '',
      tool_calls: [
        { name: 'refund_order', args: { orderId: 'A-17', amount: 20 }, id: 'call_1', type: 'tool_call' },
      ],
    }),
  (messages) => say(`tool said: ${lastToolResult(messages)}`),
  (messages) => say(`tool said: ${lastToolResult(messages)}`),
];

function deskAgent(turns: ChatTurn[], desk = adapterDesk(), checkpointer = new MemorySaver()) {
  const agent = createAgent({
    model: scriptedChatModel(turns),
    tools: [],
    middleware: [toolgateMiddleware(desk.dispatcher)],
    checkpointer,
  });
  return { agent, desk, checkpointer };
}

describe('LangGraph resume answers', () => {
  it('two refunds asked at once: an answer naming neither decides nothing, one naming one decides only that one', async () => {
    const { agent, desk } = deskAgent(twoRefunds);
    const config = { context: ada, configurable: { thread_id: 'two' } };
    const first = (await agent.invoke({ messages: 'refund both' }, config)) as Invoked;
    const [r1, r2] = waitingOn(first);
    expect([r1?.args, r2?.args]).toEqual([
      { orderId: 'A-1', amount: 20 },
      { orderId: 'A-2', amount: 30 },
    ]);

    // LangChain's human-in-the-loop answer without names reaches both interrupts and decides neither.
    const unnamed = (await agent.invoke(
      new Command({ resume: { decisions: [{ type: 'approve' }, { type: 'reject', message: 'no' }] } }),
      config,
    )) as Invoked;
    expect(
      waitingOn(unnamed)
        .map((r) => r.id)
        .sort(),
    ).toEqual([r1!.id, r2!.id].sort());
    expect(desk.ran).toEqual([]);

    // A decision list naming only A-1's request approves A-1; A-2 is asked again.
    const one = (await agent.invoke(
      new Command({ resume: { decisions: [{ type: 'approve', checkInId: r1!.id }] } }),
      config,
    )) as Invoked;
    expect(desk.ran).toEqual([{ tool: 'refund_order', args: { orderId: 'A-1', amount: 20 } }]);
    expect(waitingOn(one).map((r) => r.id)).toEqual([r2!.id]);

    const other = (await agent.invoke(
      new Command({
        resume: { [r2!.id]: checkInDeclined({ by: 'ada', reason: 'A-2 was already refunded' }) },
      }),
      config,
    )) as Invoked;
    expect(desk.ran).toHaveLength(1);
    const read = toolResults(other);
    expect(read['call_1']).toBe('{"orderId":"A-1","refunded":20}');
    expect(read['call_2']).toMatch(/^\[check-in refused: .*A-2 was already refunded/);
  });

  it('a decision list naming both decides each as named: approve one, reject the other', async () => {
    const { agent, desk } = deskAgent(twoRefunds);
    const config = { context: ada, configurable: { thread_id: 'both' } };
    const [r1, r2] = waitingOn((await agent.invoke({ messages: 'refund both' }, config)) as Invoked);
    const answer = {
      decisions: [
        { type: 'reject', checkInId: r2!.id, message: 'not A-2' },
        { type: 'approve', checkInId: r1!.id },
      ],
    };
    const result = (await agent.invoke(new Command({ resume: answer }), config)) as Invoked;
    expect(desk.ran).toEqual([{ tool: 'refund_order', args: { orderId: 'A-1', amount: 20 } }]);
    expect(toolResults(result)['call_2']).toMatch(/^\[check-in refused: .*not A-2/);
    expect(result.__interrupt__ ?? []).toEqual([]);
  });

  it('a bare decision names no interrupt: it decides nothing and the same request is asked again', async () => {
    const { agent, desk } = deskAgent(oneRefund);
    const config = { context: ada, configurable: { thread_id: 'bare' } };
    const [request] = waitingOn((await agent.invoke({ messages: 'refund' }, config)) as Invoked);
    const again = (await agent.invoke(
      new Command({ resume: checkInApproved({ by: 'ada' }) }),
      config,
    )) as Invoked;
    expect(waitingOn(again).map((r) => r.id)).toEqual([request!.id]);
    expect(desk.ran).toEqual([]);
    const named = (await agent.invoke(
      new Command({ resume: { [request!.id]: checkInApproved({ by: 'ada' }) } }),
      config,
    )) as Invoked;
    expect(desk.ran).toHaveLength(1);
    expect(String(named.messages.at(-1)?.content)).toBe('tool said: {"orderId":"A-17","refunded":20}');
  });

  it('thread state edited before the resume: the approval does not run the edited args, which are asked about anew', async () => {
    const { agent, desk } = deskAgent(oneRefund);
    const config = { context: ada, configurable: { thread_id: 'edited' } };
    const [request] = waitingOn((await agent.invoke({ messages: 'refund' }, config)) as Invoked);
    const state = await agent.graph.getState(config);
    const ai = (state.values as { messages: AIMessage[] }).messages.at(-1)!;
    const edited = new AIMessage({
      id: ai.id!,
      content: '',
      tool_calls: ai.tool_calls!.map((call) => ({ ...call, args: { ...call.args, amount: 3000 } })),
    });
    await agent.graph.updateState(config, { messages: [edited] });

    const result = (await agent.invoke(
      new Command({ resume: { [request!.id]: checkInApproved({ by: 'ada' }) } }),
      config,
    )) as Invoked;
    expect(desk.ran).toEqual([]);
    const [asked] = waitingOn(result);
    expect(asked?.id).not.toBe(request!.id);
    expect(asked?.args).toEqual({ orderId: 'A-17', amount: 3000 });
  });

  it('the interrupted checkpoint replayed with the same answer runs the refund once', async () => {
    const { agent, desk } = deskAgent([...oneRefund, ...oneRefund.slice(1)]);
    const config = { context: ada, configurable: { thread_id: 'replay' } };
    const [request] = waitingOn((await agent.invoke({ messages: 'refund' }, config)) as Invoked);
    const interrupted = (await agent.graph.getState(config)).config;
    const answer = new Command({ resume: { [request!.id]: checkInApproved({ by: 'ada' }) } });
    const done = (await agent.invoke(answer, config)) as Invoked;
    expect(String(done.messages.at(-1)?.content)).toBe('tool said: {"orderId":"A-17","refunded":20}');

    // Time travel: the same answer to the same interrupted checkpoint.
    const replayed = (await agent.invoke(answer, { context: ada, ...interrupted })) as Invoked;
    expect(desk.ran).toEqual([{ tool: 'refund_order', args: { orderId: 'A-17', amount: 20 } }]);
    expect(waitingOn(replayed).map((r) => r.id)).not.toContain(request!.id);
  });

  it('across two processes sharing one SQLite check-in store: interrupted in one, resumed in the other, replayed in the first, it runs once', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'toolgate-langchain-'));
    const path = join(dir, 'check-ins.db');
    const clock = fixedClock();
    const storeA = sqliteCheckIns({ path, now: clock.now });
    const storeB = sqliteCheckIns({ path, now: clock.now });
    try {
      const checkpointer = new MemorySaver(); // stands in for a checkpoint database both share
      // Each process's model picks up the conversation where the thread is: B only ever reports.
      const process = (store: typeof storeA, turns: ChatTurn[]) => {
        const desk = adapterDesk();
        const refund = desk.dispatcher.tools.get('refund_order')!;
        const dispatcher = createDispatcher({
          tools: [refund],
          chain: canonicalChain({ checkInKey: KEY, checkIns: store }),
          clock: clock.now,
        });
        const agent = createAgent({
          model: scriptedChatModel(turns),
          tools: [],
          middleware: [toolgateMiddleware(dispatcher, { checkIns: store })],
          checkpointer,
        });
        return { agent, desk };
      };
      const a = process(storeA, oneRefund);
      const b = process(storeB, oneRefund.slice(1));
      const config = { context: ada, configurable: { thread_id: 'shared' } };
      const [request] = waitingOn((await a.agent.invoke({ messages: 'refund' }, config)) as Invoked);
      const interrupted = (await a.agent.graph.getState(config)).config;
      const answer = new Command({ resume: { [request!.id]: checkInApproved({ by: 'ada' }) } });

      const inB = (await b.agent.invoke(answer, config)) as Invoked;
      expect(String(inB.messages.at(-1)?.content)).toBe('tool said: {"orderId":"A-17","refunded":20}');
      expect(await storeA.list({ state: 'pending' })).toEqual([]);

      const inA = (await a.agent.invoke(answer, { context: ada, ...interrupted })) as Invoked;
      expect(waitingOn(inA).map((r) => r.id)).not.toContain(request!.id);
      expect([...a.desk.ran, ...b.desk.ran]).toEqual([
        { tool: 'refund_order', args: { orderId: 'A-17', amount: 20 } },
      ]);
    } finally {
      storeA.close();
      storeB.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
