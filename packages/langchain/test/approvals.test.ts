// One review per model turn, in humanInTheLoopMiddleware's shape: every call of the turn that needs a
// person in one interrupt, resumed by `{ decisions }` in order (or named, or a bare decision when the
// turn asks one question). Each decision answers the request raised for exactly its call, once: thread
// state edited before the resume, a checkpoint replayed, a call id reused by a later turn, and two
// processes sharing one SQLite check-in store run nothing twice. Through createAgent with LangChain's
// fake chat model.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AIMessage, type BaseMessage } from '@langchain/core/messages';
import { Command, MemorySaver } from '@langchain/langgraph';
import { checkInApproved, createDispatcher, defineTool, type CheckInRequest } from '@toolgate/core';
import { Type } from 'typebox';
import { toolgateMiddleware, type TurnInterrupt } from '@toolgate/langchain';
import { canonicalChain } from '@toolgate/middleware';
import { sqliteCheckIns } from '@toolgate/store-sqlite';
import { fixedClock } from '@toolgate/testing';
import { createAgent } from 'langchain';
import { adapterDesk } from '../../../test-support/adapter-desk';
import { lastToolResult, say, scriptedChatModel, type ChatTurn } from './fixtures/scripted-model';

const ada = { identity: { tenant: 'acme', principal: 'ada' } };
const KEY = 'langchain-approvals-check-in-key-0123456789';

type Invoked = { messages: BaseMessage[]; __interrupt__?: { id?: string; value: unknown }[] };

/** The check-in requests an interrupted run is waiting on, in interrupt and action order. */
const waitingOn = (result: Invoked): CheckInRequest[] =>
  (result.__interrupt__ ?? []).flatMap((each) => (each.value as TurnInterrupt).checkIns);

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

describe('one review per model turn', () => {
  it("two refunds in one turn are one interrupt in humanInTheLoopMiddleware's shape; { decisions } in order approve one and reject the other", async () => {
    const { agent, desk } = deskAgent(twoRefunds);
    const config = { context: ada, configurable: { thread_id: 'two' } };
    const first = (await agent.invoke({ messages: 'refund both' }, config)) as Invoked;
    expect(first.__interrupt__).toHaveLength(1);
    const value = first.__interrupt__![0]!.value as TurnInterrupt;
    expect(value.actionRequests.map((a) => a.args)).toEqual([
      { orderId: 'A-1', amount: 20 },
      { orderId: 'A-2', amount: 30 },
    ]);
    expect(value.reviewConfigs.map((c) => c.allowedDecisions)).toEqual([
      ['approve', 'edit', 'reject'],
      ['approve', 'edit', 'reject'],
    ]);
    expect(desk.ran).toEqual([]);

    const answer = {
      decisions: [{ type: 'approve' }, { type: 'reject', message: 'A-2 was already refunded' }],
    };
    const done = (await agent.invoke(new Command({ resume: answer }), config)) as Invoked;
    expect(desk.ran).toEqual([{ tool: 'refund_order', args: { orderId: 'A-1', amount: 20 } }]);
    const read = toolResults(done);
    expect(read['call_1']).toBe('{"orderId":"A-1","refunded":20}');
    expect(read['call_2']).toMatch(/^\[check-in refused: .*A-2 was already refunded/);
    expect(done.__interrupt__ ?? []).toEqual([]);
  });

  it('an answer that does not decide every request decides none, and the same requests are asked again', async () => {
    const { agent, desk } = deskAgent(twoRefunds);
    const config = { context: ada, configurable: { thread_id: 'partial' } };
    const [r1, r2] = waitingOn((await agent.invoke({ messages: 'refund both' }, config)) as Invoked);
    for (const resume of [
      { decisions: [{ type: 'approve' }] },
      { decisions: [{ type: 'approve', checkInId: r1!.id }] },
      { decisions: [{ type: 'approve' }, { type: 'maybe' }] },
      checkInApproved({ by: 'ada' }),
      { [r1!.id]: checkInApproved({ by: 'ada' }) },
    ]) {
      const again = (await agent.invoke(new Command({ resume }), config)) as Invoked;
      expect(waitingOn(again).map((r) => r.id)).toEqual([r1!.id, r2!.id]);
    }
    expect(desk.ran).toEqual([]);
    // Named decisions may come in any order.
    const named = {
      decisions: [
        { type: 'reject', checkInId: r2!.id, message: 'not A-2' },
        { type: 'approve', checkInId: r1!.id },
      ],
    };
    const result = (await agent.invoke(new Command({ resume: named }), config)) as Invoked;
    expect(desk.ran).toEqual([{ tool: 'refund_order', args: { orderId: 'A-1', amount: 20 } }]);
    expect(toolResults(result)['call_2']).toMatch(/^\[check-in refused: .*not A-2/);
  });

  it('a bare resume value answers a turn that asks one question, as LangGraph documents for a single interrupt', async () => {
    for (const bare of [checkInApproved({ by: 'ada' }), { type: 'approve' }]) {
      const { agent, desk } = deskAgent(oneRefund);
      const config = { context: ada, configurable: { thread_id: 'bare' } };
      expect(waitingOn((await agent.invoke({ messages: 'refund' }, config)) as Invoked)).toHaveLength(1);
      const done = (await agent.invoke(new Command({ resume: bare }), config)) as Invoked;
      expect(String(done.messages.at(-1)?.content)).toBe('tool said: {"orderId":"A-17","refunded":20}');
      expect(desk.ran).toHaveLength(1);
    }
  });

  it("an edit runs the person's args through the whole chain once; an edit that names another tool decides nothing", async () => {
    const { agent, desk } = deskAgent(oneRefund);
    const config = { context: ada, configurable: { thread_id: 'edit' } };
    const [request] = waitingOn((await agent.invoke({ messages: 'refund' }, config)) as Invoked);
    const renamed = {
      decisions: [{ type: 'edit', editedAction: { name: 'lookup_order', args: { orderId: 'A-17' } } }],
    };
    expect(waitingOn((await agent.invoke(new Command({ resume: renamed }), config)) as Invoked)[0]?.id).toBe(
      request!.id,
    );
    const edit = {
      decisions: [
        { type: 'edit', editedAction: { name: 'refund_order', args: { orderId: 'A-17', amount: 5 } } },
      ],
    };
    const done = (await agent.invoke(new Command({ resume: edit }), config)) as Invoked;
    expect(String(done.messages.at(-1)?.content)).toBe('tool said: {"orderId":"A-17","refunded":5}');
    expect(desk.ran).toEqual([{ tool: 'refund_order', args: { orderId: 'A-17', amount: 5 } }]);
  });

  it('a turn mixing a governed refund and a plain lookup asks once, then runs both', async () => {
    const turns: ChatTurn[] = [
      () =>
        new AIMessage({
          content: '',
          tool_calls: [
            { name: 'lookup_order', args: { orderId: 'A-1' }, id: 'call_1', type: 'tool_call' },
            { name: 'refund_order', args: { orderId: 'A-1', amount: 20 }, id: 'call_2', type: 'tool_call' },
          ],
        }),
      (messages) => say(`tool said: ${lastToolResult(messages)}`),
    ];
    const { agent, desk } = deskAgent(turns);
    const config = { context: ada, configurable: { thread_id: 'mixed' } };
    const first = (await agent.invoke({ messages: 'look and refund' }, config)) as Invoked;
    expect(waitingOn(first).map((r) => r.toolName)).toEqual(['refund_order']);
    expect(desk.ran).toEqual([]);
    const done = (await agent.invoke(
      new Command({ resume: { decisions: [{ type: 'approve' }] } }),
      config,
    )) as Invoked;
    const read = toolResults(done);
    expect(read['call_1']).toBe('{"orderId":"A-1","total":120}');
    expect(read['call_2']).toBe('{"orderId":"A-1","refunded":20}');
    expect(desk.ran.map((r) => r.tool).sort()).toEqual(['lookup_order', 'refund_order']);
  });

  it('a check-in predicate decides in the model node: a small refund runs once without asking, a large one joins the review and runs once approved', async () => {
    const ran: unknown[] = [];
    const refund = defineTool({
      name: 'refund_order',
      description: 'Refund part of an order; large refunds need a person.',
      inputSchema: Type.Object({ orderId: Type.String(), amount: Type.Number() }),
      checkIn: (args) => args.amount >= 100,
      execute: (args) => {
        ran.push(args);
        return { orderId: args.orderId, refunded: args.amount };
      },
    });
    const dispatcher = createDispatcher({ tools: [refund], chain: canonicalChain({ checkInKey: KEY }) });
    const turns: ChatTurn[] = [
      () =>
        new AIMessage({
          content: '',
          tool_calls: [
            { name: 'refund_order', args: { orderId: 'A-1', amount: 20 }, id: 'call_1', type: 'tool_call' },
            { name: 'refund_order', args: { orderId: 'A-2', amount: 500 }, id: 'call_2', type: 'tool_call' },
          ],
        }),
      (messages) => say(`tool said: ${lastToolResult(messages)}`),
    ];
    const agent = createAgent({
      model: scriptedChatModel(turns),
      tools: [],
      middleware: [toolgateMiddleware(dispatcher)],
      checkpointer: new MemorySaver(),
    });
    const config = { context: ada, configurable: { thread_id: 'predicate' } };
    const first = (await agent.invoke({ messages: 'refund' }, config)) as Invoked;
    expect(waitingOn(first).map((r) => r.args)).toEqual([{ orderId: 'A-2', amount: 500 }]);
    expect(ran).toEqual([{ orderId: 'A-1', amount: 20 }]);
    const done = (await agent.invoke(new Command({ resume: { type: 'approve' } }), config)) as Invoked;
    const read = toolResults(done);
    expect(read['call_1']).toBe('{"orderId":"A-1","refunded":20}');
    expect(read['call_2']).toBe('{"orderId":"A-2","refunded":500}');
    expect(ran).toEqual([
      { orderId: 'A-1', amount: 20 },
      { orderId: 'A-2', amount: 500 },
    ]);
  });

  it('thread state edited before the resume: the approval runs nothing, and the model reads that the request no longer waits', async () => {
    const { agent, desk } = deskAgent(oneRefund);
    const config = { context: ada, configurable: { thread_id: 'edited' } };
    await agent.invoke({ messages: 'refund' }, config);
    const state = await agent.graph.getState(config);
    const ai = (state.values as { messages: AIMessage[] }).messages.at(-1)!;
    const edited = new AIMessage({
      id: ai.id!,
      content: '',
      tool_calls: ai.tool_calls!.map((call) => ({ ...call, args: { ...call.args, amount: 3000 } })),
      response_metadata: ai.response_metadata,
    });
    await agent.graph.updateState(config, { messages: [edited] });

    const result = (await agent.invoke(
      new Command({ resume: checkInApproved({ by: 'ada' }) }),
      config,
    )) as Invoked;
    expect(desk.ran).toEqual([]);
    expect(toolResults(result)['call_1']).toMatch(
      /^\[check-in refused: the request for 'refund_order' is no longer waiting/,
    );
    expect(JSON.stringify(result.messages)).not.toContain('"refunded":3000');
  });

  it('the interrupted checkpoint replayed with the same answer runs the refund once', async () => {
    const { agent, desk } = deskAgent([...oneRefund, ...oneRefund.slice(1)]);
    const config = { context: ada, configurable: { thread_id: 'replay' } };
    await agent.invoke({ messages: 'refund' }, config);
    const interrupted = (await agent.graph.getState(config)).config;
    const answer = new Command({ resume: { decisions: [{ type: 'approve' }] } });
    const done = (await agent.invoke(answer, config)) as Invoked;
    expect(String(done.messages.at(-1)?.content)).toBe('tool said: {"orderId":"A-17","refunded":20}');

    // Time travel: the same answer to the same interrupted checkpoint, twice, and at once.
    const replays = (await Promise.all([
      agent.invoke(answer, { context: ada, ...interrupted }),
      agent.invoke(answer, { context: ada, ...interrupted }),
    ])) as Invoked[];
    expect(desk.ran).toEqual([{ tool: 'refund_order', args: { orderId: 'A-17', amount: 20 } }]);
    for (const replay of replays) {
      expect(waitingOn(replay)).toEqual([]);
      expect(toolResults(replay)['call_1']).toMatch(/no longer waiting/);
    }
  });

  it('a later turn that reuses a call id and args is not approved by a replay of the earlier answer', async () => {
    const call = (): AIMessage =>
      new AIMessage({
        content: '',
        tool_calls: [
          { name: 'refund_order', args: { orderId: 'A-17', amount: 20 }, id: 'call_1', type: 'tool_call' },
        ],
      });
    const report: ChatTurn = (messages) => say(`tool said: ${lastToolResult(messages)}`);
    const { agent, desk } = deskAgent([call, report, call, report, report, report]);
    const config = { context: ada, configurable: { thread_id: 'reuse' } };
    await agent.invoke({ messages: 'refund' }, config);
    const firstAsk = (await agent.graph.getState(config)).config;
    const approve = new Command({ resume: { decisions: [{ type: 'approve' }] } });
    await agent.invoke(approve, config);
    const second = (await agent.invoke({ messages: 'again' }, config)) as Invoked;
    const [r2] = waitingOn(second);
    expect(r2).toBeDefined();
    const secondAsk = (await agent.graph.getState(config)).config;

    await agent.invoke(approve, { context: ada, ...firstAsk });
    expect(desk.ran).toHaveLength(1);
    // The replay forked the thread; the second question is still answered at its own checkpoint.
    const done = (await agent.invoke(approve, { context: ada, ...secondAsk })) as Invoked;
    expect(String(done.messages.at(-1)?.content)).toBe('tool said: {"orderId":"A-17","refunded":20}');
    expect(desk.ran).toHaveLength(2);
  });

  it('the answer is bound to the caller: resumed for another principal, nothing runs', async () => {
    const { agent, desk } = deskAgent(oneRefund);
    const config = { configurable: { thread_id: 'caller' } };
    await agent.invoke({ messages: 'refund' }, { context: ada, ...config });
    const mallory = { identity: { tenant: 'acme', principal: 'mallory' } };
    const result = (await agent.invoke(new Command({ resume: { decisions: [{ type: 'approve' }] } }), {
      context: mallory,
      ...config,
    })) as Invoked;
    expect(desk.ran).toEqual([]);
    expect(toolResults(result)['call_1']).toMatch(/no longer waiting/);
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
      expect(request).toBeDefined();
      const interrupted = (await a.agent.graph.getState(config)).config;
      const answer = new Command({ resume: checkInApproved({ by: 'ada' }) });

      const inB = (await b.agent.invoke(answer, config)) as Invoked;
      expect(String(inB.messages.at(-1)?.content)).toBe('tool said: {"orderId":"A-17","refunded":20}');
      expect(await storeA.list({ state: 'pending' })).toEqual([]);

      const inA = (await a.agent.invoke(answer, { context: ada, ...interrupted })) as Invoked;
      expect(waitingOn(inA)).toEqual([]);
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
