import { tool as langchainTool } from '@langchain/core/tools';
import { Command, MemorySaver } from '@langchain/langgraph';
import { checkInApproved, createDispatcher, type CheckInRequest, type Middleware } from '@toolgate/core';
import { toolgateMiddleware, type CheckInInterrupt, type PausedCall } from '@toolgate/langchain';
import { canonicalChain } from '@toolgate/middleware';
import { fixedClock, inMemoryCheckIns } from '@toolgate/testing';
import { createAgent } from 'langchain';
import { adapterDesk, BIG_LOG_CHARS, DESK_KEY, DESK_SECRET } from '../../../test-support/adapter-desk';
import { remoteDocs, REMOTE_SOURCE } from './fixtures/remote';
import { callTool, lastToolResult, say, scriptedChatModel, type ChatTurn } from './fixtures/scripted-model';

const ada = { identity: { tenant: 'acme', principal: 'ada' } };
const guest = { identity: { tenant: 'acme', principal: 'guest' } };
const thread = (id: string) => ({ configurable: { thread_id: id } });

/** Turns that call one tool, then say what the tool answered. */
const callThenReport = (name: string, args: Record<string, unknown>): ChatTurn[] => [
  () => callTool(name, args, 'call_1'),
  (messages) => say(`tool said: ${lastToolResult(messages)}`),
];

type Invoked = { messages: { content: unknown }[]; __interrupt__?: { value: unknown }[] };
const finalText = (result: Invoked) => String(result.messages.at(-1)?.content);

describe('toolgateMiddleware with a LangChain createAgent', () => {
  it('brings the dispatcher tools to the agent and runs each call through the chain', async () => {
    const desk = adapterDesk();
    const model = scriptedChatModel(callThenReport('lookup_order', { orderId: 'A-17' }));
    const agent = createAgent({ model, tools: [], middleware: [toolgateMiddleware(desk.dispatcher)] });
    const result = (await agent.invoke({ messages: 'look up A-17' }, { context: ada })) as Invoked;
    expect(finalText(result)).toBe('tool said: {"orderId":"A-17","total":120}');
    expect(desk.ran).toEqual([{ tool: 'lookup_order', args: { orderId: 'A-17' } }]);
    expect(desk.ends.map((e) => [e.kind, e.toolCallId])).toEqual([['result', 'call_1']]);
  });

  it("hands the model the chain's validation refusal, which it reads and corrects", async () => {
    const desk = adapterDesk();
    const model = scriptedChatModel([
      () => callTool('lookup_order', { orderId: 17 }, 'call_1'),
      (messages) =>
        lastToolResult(messages).startsWith('[validate-args refused:')
          ? callTool('lookup_order', { orderId: 'A-17' }, 'call_2')
          : say('gave up'),
      (messages) => say(lastToolResult(messages)),
    ]);
    const agent = createAgent({ model, tools: [], middleware: [toolgateMiddleware(desk.dispatcher)] });
    const result = (await agent.invoke({ messages: 'look up 17' }, { context: ada })) as Invoked;
    expect(finalText(result)).toBe('{"orderId":"A-17","total":120}');
    expect(desk.ran).toEqual([{ tool: 'lookup_order', args: { orderId: 'A-17' } }]);
    expect(desk.ends.map((e) => e.kind)).toEqual(['refused', 'result']);
  });

  it("takes identity from the run's context, never from the model's args, and the model reads a permission refusal", async () => {
    const desk = adapterDesk();
    const model = scriptedChatModel(
      callThenReport('refund_order', { orderId: 'A-17', amount: 20, principal: 'ada' }),
    );
    const agent = createAgent({ model, tools: [], middleware: [toolgateMiddleware(desk.dispatcher)] });
    const result = (await agent.invoke({ messages: 'refund' }, { context: guest })) as Invoked;
    expect(finalText(result)).toMatch(/^tool said: \[permission refused: .*guests cannot refund orders/);
    expect(desk.permissions.requests[0]!.identity).toEqual(guest.identity);
    expect(desk.ran).toEqual([]);
  });

  it('turns a check-in into a LangGraph interrupt; resuming with an approval runs the call once, with a receipt', async () => {
    const desk = adapterDesk();
    const model = scriptedChatModel(callThenReport('refund_order', { orderId: 'A-17', amount: 20 }));
    const agent = createAgent({
      model,
      tools: [],
      middleware: [toolgateMiddleware(desk.dispatcher)],
      checkpointer: new MemorySaver(),
    });
    const first = (await agent.invoke(
      { messages: 'refund A-17' },
      { context: ada, ...thread('t1') },
    )) as Invoked;
    const payload = first.__interrupt__?.[0]?.value as CheckInInterrupt;
    expect(payload.actionRequests).toEqual([
      { name: 'refund_order', args: { orderId: 'A-17', amount: 20 }, description: payload.checkIn.question },
    ]);
    expect([payload.checkIn.asker, payload.checkIn.identity]).toEqual(['check-in', ada.identity]);
    expect(desk.ran).toEqual([]);

    const answer = { [payload.checkIn.id]: checkInApproved({ by: 'ada' }) };
    const second = (await agent.invoke(new Command({ resume: answer }), {
      context: ada,
      ...thread('t1'),
    })) as Invoked;
    expect(finalText(second)).toBe('tool said: {"orderId":"A-17","refunded":20}');
    expect(desk.ran).toEqual([{ tool: 'refund_order', args: { orderId: 'A-17', amount: 20 } }]);
    expect(desk.resolved.map((e) => [e.approved, e.requestId])).toEqual([[true, payload.checkIn.id]]);
  });

  it('interrupts again for a second question in the same call, and answers each request the person saw', async () => {
    const clock = fixedClock();
    const asking: Middleware = {
      name: 'ask-finance',
      run: async (ctx, next) => {
        await ctx.ask('Finance approves refunds this week.');
        await next();
      },
    };
    const desk = adapterDesk();
    const dispatcher = createDispatcher({
      tools: [desk.dispatcher.tools.get('refund_order')!],
      chain: canonicalChain({ checkInKey: DESK_KEY, checkIns: inMemoryCheckIns({ now: clock.now }) }).use(
        asking,
      ),
      clock: clock.now,
    });
    const resolved: string[] = [];
    dispatcher.on('checkin.resolved', (e) => resolved.push(`${e.asker}:${e.requestId}:${e.approved}`));
    const model = scriptedChatModel(callThenReport('refund_order', { orderId: 'A-17', amount: 20 }));
    const agent = createAgent({
      model,
      tools: [],
      middleware: [toolgateMiddleware(dispatcher)],
      checkpointer: new MemorySaver(),
    });
    const config = { context: ada, ...thread('t3') };
    const first = (await agent.invoke({ messages: 'refund' }, config)) as Invoked;
    const finance = (first.__interrupt__?.[0]?.value as CheckInInterrupt).checkIn;
    const second = (await agent.invoke(
      new Command({ resume: { [finance.id]: checkInApproved({ by: 'cfo' }) } }),
      config,
    )) as Invoked;
    const person = (second.__interrupt__?.[0]?.value as CheckInInterrupt).checkIn;
    expect([finance.asker, person.asker, person.receipts?.map((r) => r.by)]).toEqual([
      'ask-finance',
      'check-in',
      ['cfo'],
    ]);
    expect(desk.ran).toEqual([]);
    const third = (await agent.invoke(
      new Command({ resume: { [person.id]: checkInApproved({ by: 'ada' }) } }),
      config,
    )) as Invoked;
    expect(finalText(third)).toBe('tool said: {"orderId":"A-17","refunded":20}');
    expect(desk.ran).toHaveLength(1);
    expect(resolved).toEqual([`ask-finance:${finance.id}:true`, `check-in:${person.id}:true`]);
  });

  it("accepts LangChain's human-in-the-loop answer, and the model reads a person's rejection", async () => {
    const desk = adapterDesk();
    const model = scriptedChatModel(callThenReport('refund_order', { orderId: 'A-17', amount: 20 }));
    const agent = createAgent({
      model,
      tools: [],
      middleware: [toolgateMiddleware(desk.dispatcher, { approvedBy: () => 'ops-lead' })],
      checkpointer: new MemorySaver(),
    });
    const first = (await agent.invoke(
      { messages: 'refund A-17' },
      { context: ada, ...thread('t2') },
    )) as Invoked;
    const { checkIn } = first.__interrupt__?.[0]?.value as CheckInInterrupt;
    const answer = {
      decisions: [{ type: 'reject', checkInId: checkIn.id, message: 'refunds are frozen today' }],
    };
    const result = (await agent.invoke(new Command({ resume: answer }), {
      context: ada,
      ...thread('t2'),
    })) as Invoked;
    expect(finalText(result)).toMatch(/^tool said: \[check-in refused: .*refunds are frozen today/);
    expect(desk.ran).toEqual([]);
  });

  it('hands a check-in to onPause where no checkpointer lets it interrupt', async () => {
    const desk = adapterDesk();
    const paused: [CheckInRequest, PausedCall<typeof ada>][] = [];
    const model = scriptedChatModel(callThenReport('refund_order', { orderId: 'A-17', amount: 20 }));
    const middleware = toolgateMiddleware<typeof ada>(desk.dispatcher, {
      onPause: (request, call) => void paused.push([request, call]),
    });
    const agent = createAgent({ model, tools: [], middleware: [middleware] });
    const result = (await agent.invoke({ messages: 'refund' }, { context: ada })) as Invoked;
    expect(finalText(result)).toBe(
      "tool said: [check-in paused: waiting for a human to approve 'refund_order'.]",
    );
    expect(paused.map(([request, call]) => [request.toolCallId, call.context])).toEqual([['call_1', ada]]);
    const resumed = await desk.dispatcher.resume(paused[0]![0], checkInApproved({ by: 'ada' }));
    expect(resumed.kind).toBe('result');
    expect(desk.ran).toHaveLength(1);
  });

  it('resolves a credential the tool uses and the model never sees', async () => {
    const desk = adapterDesk();
    const model = scriptedChatModel(callThenReport('fetch_report', { month: '2030-01' }));
    const agent = createAgent({ model, tools: [], middleware: [toolgateMiddleware(desk.dispatcher)] });
    const result = (await agent.invoke({ messages: 'sales?' }, { context: ada })) as Invoked;
    expect(finalText(result)).toBe('tool said: {"month":"2030-01","sales":42}');
    expect(desk.sawSecret).toEqual([true]);
    expect(JSON.stringify(model.calls)).not.toContain(DESK_SECRET);
    expect(JSON.stringify(result.messages)).not.toContain(DESK_SECRET);
  });

  it('refuses an oversized result with the ceiling, and the payload never reaches the model', async () => {
    const desk = adapterDesk();
    const model = scriptedChatModel(callThenReport('read_log', {}));
    const agent = createAgent({ model, tools: [], middleware: [toolgateMiddleware(desk.dispatcher)] });
    const result = (await agent.invoke({ messages: 'log?' }, { context: ada })) as Invoked;
    expect(finalText(result)).toMatch(
      /^tool said: \[result-ceiling refused: 'read_log' returned 5,000 characters.*'lines'/,
    );
    expect(desk.ran).toHaveLength(1);
    expect(JSON.stringify(model.calls)).not.toContain('x'.repeat(BIG_LOG_CHARS));
  });

  it('keeps the source of a tool imported over MCP', async () => {
    const { client, tools } = await remoteDocs();
    const clock = fixedClock();
    const dispatcher = createDispatcher({ tools, chain: canonicalChain(), clock: clock.now });
    const ends: { toolSource?: string; kind: string }[] = [];
    dispatcher.on('dispatch.end', (e) => ends.push(e));
    const model = scriptedChatModel(callThenReport('search_docs', { query: 'refunds' }));
    const agent = createAgent({ model, tools: [], middleware: [toolgateMiddleware(dispatcher)] });
    const result = (await agent.invoke({ messages: 'docs?' }, { context: ada })) as Invoked;
    expect(finalText(result)).toBe('tool said: found: refunds');
    expect(ends.map((e) => [e.kind, e.toolSource])).toEqual([['result', REMOTE_SOURCE]]);
    await client.close();
  });

  it("leaves the agent's own tools to the agent and refuses a name nobody serves, as a result the model reads", async () => {
    const desk = adapterDesk();
    const own = langchainTool(async () => 'pong', {
      name: 'ping',
      description: 'Ping.',
      schema: { type: 'object', properties: {} },
    });
    const model = scriptedChatModel([
      () => callTool('ping', {}, 'call_1'),
      (messages) => callTool('delete_everything', { really: true }, `after:${lastToolResult(messages)}`),
      (messages) => say(lastToolResult(messages)),
    ]);
    const agent = createAgent({ model, tools: [own], middleware: [toolgateMiddleware(desk.dispatcher)] });
    const result = (await agent.invoke({ messages: 'go' }, { context: ada })) as Invoked;
    expect(finalText(result)).toMatch(
      /^\[dispatch refused: there is no tool named 'delete_everything'.*lookup_order/,
    );
    expect(desk.ends.map((e) => [e.toolName, e.toolCallId])).toEqual([['delete_everything', 'after:pong']]);
  });

  it('refuses, without crashing the run, when the identity hook throws', async () => {
    const desk = adapterDesk();
    const model = scriptedChatModel(callThenReport('lookup_order', { orderId: 'A-17' }));
    const middleware = toolgateMiddleware(desk.dispatcher, {
      identity: () => {
        throw new Error('session store down');
      },
    });
    const agent = createAgent({ model, tools: [], middleware: [middleware] });
    const result = (await agent.invoke({ messages: 'x' }, { context: ada })) as Invoked;
    expect(finalText(result)).toMatch(
      /^tool said: \[dispatch refused: 'lookup_order' did not run because the caller's identity could not be read/,
    );
    expect(finalText(result)).not.toContain('session store down');
    expect(desk.ran).toEqual([]);
  });
});
