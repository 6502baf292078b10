import { Command, MemorySaver } from '@langchain/langgraph';
import { checkInApproved, type CheckInRequest } from '@toolgate/core';
import { governedTools, type CheckInInterrupt } from '@toolgate/langchain';
import { createAgent } from 'langchain';
import { adapterDesk } from '../../../test-support/adapter-desk';
import { callTool, lastToolResult, say, scriptedChatModel, type ChatTurn } from './fixtures/scripted-model';

const ada = { identity: { tenant: 'acme', principal: 'ada' } };
const thread = (id: string) => ({ configurable: { thread_id: id } });

const callThenReport = (name: string, args: Record<string, unknown>): ChatTurn[] => [
  () => callTool(name, args, 'call_1'),
  (messages) => say(`tool said: ${lastToolResult(messages)}`),
];

type Invoked = { messages: { content: unknown }[]; __interrupt__?: { value: unknown }[] };
const finalText = (result: Invoked) => String(result.messages.at(-1)?.content);

describe('governedTools as LangChain tools', () => {
  it('offers each dispatcher tool with its JSON schema and nothing secret', () => {
    const desk = adapterDesk();
    const tools = governedTools(desk.dispatcher);
    expect(tools.map((t) => t.name)).toEqual(['lookup_order', 'refund_order', 'fetch_report', 'read_log']);
    expect(tools[2]!.schema).toEqual({
      type: 'object',
      required: ['month'],
      properties: { month: { type: 'string' } },
    });
  });

  it('runs in a createAgent tools list, identity from the context, and a check-in interrupts and resumes', async () => {
    const desk = adapterDesk();
    const model = scriptedChatModel(callThenReport('refund_order', { orderId: 'A-17', amount: 20 }));
    const agent = createAgent({
      model,
      tools: governedTools(desk.dispatcher),
      checkpointer: new MemorySaver(),
    });
    const first = (await agent.invoke({ messages: 'refund' }, { context: ada, ...thread('g1') })) as Invoked;
    const payload = first.__interrupt__?.[0]?.value as CheckInInterrupt;
    expect([payload.checkIn.toolName, payload.checkIn.identity]).toEqual(['refund_order', ada.identity]);
    expect(desk.ran).toEqual([]);
    const answer = { decisions: [{ type: 'approve', checkInId: payload.checkIn.id }] };
    const second = (await agent.invoke(new Command({ resume: answer }), {
      context: ada,
      ...thread('g1'),
    })) as Invoked;
    expect(finalText(second)).toBe('tool said: {"orderId":"A-17","refunded":20}');
    expect(desk.ran).toHaveLength(1);
    expect(desk.resolved.map((e) => e.requestId)).toEqual([payload.checkIn.id]);
  });

  it("resumes in a fresh adapter (another process) that has the chain's check-in store; without it, asks again", async () => {
    const desk = adapterDesk();
    const checkpointer = new MemorySaver();
    const turns = callThenReport('refund_order', { orderId: 'A-17', amount: 20 });
    const before = createAgent({
      model: scriptedChatModel(turns),
      tools: governedTools(desk.dispatcher),
      checkpointer,
    });
    const first = (await before.invoke({ messages: 'refund' }, { context: ada, ...thread('g2') })) as Invoked;
    const { checkIn } = first.__interrupt__?.[0]?.value as CheckInInterrupt;
    const answer = new Command({ resume: { [checkIn.id]: checkInApproved({ by: 'ada' }) } });

    // Without the store, a fresh adapter cannot find the request the person answered: it asks again.
    const blind = createAgent({
      model: scriptedChatModel(turns.slice(1)),
      tools: governedTools(desk.dispatcher),
      checkpointer,
    });
    const asked = (await blind.invoke(answer, { context: ada, ...thread('g2') })) as Invoked;
    const again = (asked.__interrupt__?.[0]?.value as CheckInInterrupt).checkIn;
    expect(again.id).not.toBe(checkIn.id);
    expect(desk.ran).toEqual([]);

    const after = createAgent({
      model: scriptedChatModel(turns.slice(1)),
      tools: governedTools(desk.dispatcher, { checkIns: desk.checkIns }),
      checkpointer,
    });
    const answerBoth = new Command({ resume: { [again.id]: checkInApproved({ by: 'ada' }) } });
    const result = (await after.invoke(answerBoth, { context: ada, ...thread('g2') })) as Invoked;
    expect(finalText(result)).toBe('tool said: {"orderId":"A-17","refunded":20}');
    expect(desk.ran).toHaveLength(1);
    // The first answer decided the call; the question asked again was withdrawn, not left to a replay.
    expect(desk.resolved.map((e) => [e.requestId, e.approved])).toEqual([[checkIn.id, true]]);
    expect((await desk.checkIns.get(again.id))?.state).toBe('revoked');
  });

  it('is read by the model when LangChain refuses args that break the schema, and the chain never runs', async () => {
    const desk = adapterDesk();
    const model = scriptedChatModel(callThenReport('lookup_order', { orderId: 17 }));
    const agent = createAgent({ model, tools: governedTools(desk.dispatcher) });
    const result = (await agent.invoke({ messages: 'x' }, { context: ada })) as Invoked;
    expect(finalText(result)).toMatch(/^tool said: .*schema/i);
    expect(desk.ran).toEqual([]);
  });

  it('hands a check-in to onPause when invoked outside a graph', async () => {
    const desk = adapterDesk();
    const paused: CheckInRequest[] = [];
    const [, refund] = governedTools(desk.dispatcher, { onPause: (request) => void paused.push(request) });
    const said = await refund!.invoke({ orderId: 'A-17', amount: 20 }, { context: ada } as never);
    expect(said).toBe("[check-in paused: waiting for a human to approve 'refund_order'.]");
    expect(paused.map((r) => [r.toolName, r.identity])).toEqual([['refund_order', ada.identity]]);
    expect(desk.ran).toEqual([]);
  });
});
