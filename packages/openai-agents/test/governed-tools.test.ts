import {
  Agent,
  defineToolInputGuardrail,
  defineToolOutputGuardrail,
  run,
  RunContext,
  RunState,
  setTracingDisabled,
  ToolGuardrailFunctionOutputFactory,
  type FunctionTool,
} from '@openai/agents';
import { checkInApproved, createDispatcher, type CheckInRequest, type Middleware } from '@toolgate/core';
import { canonicalChain } from '@toolgate/middleware';
import { governedTools, type PausedCall } from '@toolgate/openai-agents';
import { fixedClock, inMemoryCheckIns } from '@toolgate/testing';
import { adapterDesk, BIG_LOG_CHARS, DESK_KEY, DESK_SECRET } from '../../../test-support/adapter-desk';
import { remoteDocs, REMOTE_SOURCE } from './fixtures/remote';
import {
  callTool,
  lastToolResult,
  say,
  scriptedAgentsModel,
  type AgentTurn,
} from './fixtures/scripted-model';

setTracingDisabled(true);

const ada = { identity: { tenant: 'acme', principal: 'ada' } };
const guest = { identity: { tenant: 'acme', principal: 'guest' } };

/** Turns that call one tool, then say what the tool answered. */
const callThenReport = (name: string, args: unknown): AgentTurn[] => [
  () => [callTool(name, args, 'call_1')],
  (input) => [say(`tool said: ${lastToolResult(input)}`)],
];

function agentWith<TContext>(turns: readonly AgentTurn[], tools: FunctionTool<TContext>[]) {
  const model = scriptedAgentsModel(turns);
  return {
    model,
    agent: new Agent<TContext>({ name: 'desk', instructions: 'Help with orders.', model, tools }),
  };
}

describe('governedTools with the OpenAI Agents SDK', () => {
  it('offers each dispatcher tool with its JSON schema and nothing secret', async () => {
    const desk = adapterDesk();
    const { model, agent } = agentWith([() => [say('hello')]], governedTools(desk.dispatcher));
    await run(agent, 'hi');
    const offered = model.requests[0]!.tools.map((t) => (t.type === 'function' ? [t.name, t.strict] : []));
    expect(offered).toEqual([
      ['lookup_order', false],
      ['refund_order', false],
      ['fetch_report', false],
      ['read_log', false],
    ]);
    const report = model.requests[0]!.tools.find((t) => t.type === 'function' && t.name === 'fetch_report');
    expect(report?.type === 'function' && report.parameters).toEqual({
      type: 'object',
      required: ['month'],
      properties: { month: { type: 'string' } },
    });
    expect(JSON.stringify(report)).not.toMatch(/api_key|needs|credential/);
  });

  it('runs a call through the chain and the model reads the result', async () => {
    const desk = adapterDesk();
    const { agent } = agentWith(
      callThenReport('lookup_order', { orderId: 'A-17' }),
      governedTools(desk.dispatcher),
    );
    const result = await run(agent, 'look up A-17', { context: ada });
    expect(result.finalOutput).toBe('tool said: {"orderId":"A-17","total":120}');
    expect(desk.ran).toEqual([{ tool: 'lookup_order', args: { orderId: 'A-17' } }]);
    expect(desk.ends.map((e) => [e.kind, e.toolCallId])).toEqual([['result', 'call_1']]);
  });

  it('hands the model a validation refusal it reads and corrects', async () => {
    const desk = adapterDesk();
    const { model, agent } = agentWith(
      [
        () => [callTool('lookup_order', { orderId: 17 }, 'call_1')],
        (input) =>
          lastToolResult(input).startsWith('[validate-args refused:')
            ? [callTool('lookup_order', { orderId: 'A-17' }, 'call_2')]
            : [say('gave up')],
        (input) => [say(lastToolResult(input))],
      ],
      governedTools(desk.dispatcher),
    );
    const result = await run(agent, 'look up 17', { context: ada });
    expect(lastToolResult(model.requests[1]!.input as never)).toMatch(/^\[validate-args refused: .*orderId/);
    expect(result.finalOutput).toBe('{"orderId":"A-17","total":120}');
    expect(desk.ran).toEqual([{ tool: 'lookup_order', args: { orderId: 'A-17' } }]);
  });

  it("takes identity from the run's context, never from the model's args, and the model reads a permission refusal", async () => {
    const desk = adapterDesk();
    const { agent } = agentWith(
      callThenReport('refund_order', { orderId: 'A-17', amount: 20, principal: 'ada' }),
      governedTools(desk.dispatcher),
    );
    // The chain runs when the SDK asks: a call the gates refuse is never put to a person.
    const result = await run(agent, 'refund', { context: guest });
    expect(result.interruptions).toEqual([]);
    expect(result.finalOutput).toMatch(/^tool said: \[permission refused: .*guests cannot refund orders/);
    expect(desk.permissions.requests[0]!.identity).toEqual(guest.identity);
    expect(desk.ran).toEqual([]);
  });

  it('maps a check-in to an SDK interruption; approving it through a serialized RunState runs the call once, with a receipt', async () => {
    const desk = adapterDesk();
    const tools = governedTools(desk.dispatcher, {
      approvedBy: (context: typeof ada) => context.identity.principal,
    });
    const { agent } = agentWith(callThenReport('refund_order', { orderId: 'A-17', amount: 20 }), tools);
    const first = await run(agent, 'refund A-17', { context: ada });
    expect(first.interruptions.map((i) => [i.name, i.arguments])).toEqual([
      ['refund_order', '{"orderId":"A-17","amount":20}'],
    ]);
    expect(desk.ran).toEqual([]);

    const state = await RunState.fromString(agent, first.state.toString());
    state.approve(state.getInterruptions()[0]!);
    const second = await run(agent, state);
    expect(second.finalOutput).toBe('tool said: {"orderId":"A-17","refunded":20}');
    expect(desk.ran).toEqual([{ tool: 'refund_order', args: { orderId: 'A-17', amount: 20 } }]);
    expect(desk.resolved.map((e) => [e.approved, e.asker])).toEqual([[true, 'check-in']]);
  });

  it('a rejected interruption never reaches the tool, and the model reads the reason', async () => {
    const desk = adapterDesk();
    const { agent } = agentWith(
      callThenReport('refund_order', { orderId: 'A-17', amount: 20 }),
      governedTools(desk.dispatcher),
    );
    const first = await run(agent, 'refund A-17', { context: ada });
    first.state.reject(first.interruptions[0]!, { message: 'refunds are frozen today' });
    const second = await run(agent, first.state);
    expect(second.finalOutput).toBe('tool said: refunds are frozen today');
    expect(desk.ran).toEqual([]);
    // The chain ran once, when the SDK asked, and paused there; the rejection never reached it.
    expect(desk.ends.map((e) => e.kind)).toEqual(['paused']);
  });

  it('hands a pause the SDK did not approve to onPause with the signed request, and the host resumes it', async () => {
    const clock = fixedClock();
    const asking: Middleware = {
      name: 'ask-finance',
      run: async (ctx, next) => {
        await ctx.ask('Finance must approve lookups today.');
        await next();
      },
    };
    const desk = adapterDesk();
    const dispatcher = createDispatcher({
      tools: [desk.dispatcher.tools.get('lookup_order')!],
      chain: canonicalChain({ checkInKey: DESK_KEY, checkIns: inMemoryCheckIns({ now: clock.now }) }).use(
        asking,
      ),
      clock: clock.now,
    });
    const paused: [CheckInRequest, PausedCall<typeof ada>][] = [];
    const tools = governedTools<typeof ada>(dispatcher, {
      onPause: (request, call) => void paused.push([request, call]),
    });
    const { agent } = agentWith(callThenReport('lookup_order', { orderId: 'A-17' }), tools);
    const result = await run(agent, 'look up', { context: ada });
    expect(result.finalOutput).toMatch(/^tool said: .*approv/i);
    expect(paused).toHaveLength(1);
    const [request, call] = paused[0]!;
    expect([request.asker, request.toolCallId, request.identity, call.context]).toEqual([
      'ask-finance',
      'call_1',
      ada.identity,
      ada,
    ]);
    expect(desk.ran).toEqual([]);
    const resumed = await dispatcher.resume(request, checkInApproved({ by: 'finance' }));
    expect(resumed.kind).toBe('result');
    expect(desk.ran).toEqual([{ tool: 'lookup_order', args: { orderId: 'A-17' } }]);
  });

  it('keeps the run going when the onPause hook throws, and the model reads that the call waits', async () => {
    const desk = adapterDesk();
    const tools = governedTools(desk.dispatcher, {
      onPause: () => {
        throw new Error('queue down');
      },
    });
    // Invoked without an SDK approval, the chain's check-in is a pause the host must route.
    const direct = await tools[1]!.invoke(new RunContext(ada), '{"orderId":"A-17","amount":20}');
    expect(direct).toBe("[check-in paused: waiting for a human to approve 'refund_order'.]");
    expect(desk.ran).toEqual([]);
  });

  it('approves a tool whose name the SDK rewrites, and refuses names that would collide in the SDK', async () => {
    const clock = fixedClock();
    const refund = adapterDesk().dispatcher.tools.get('refund_order')!;
    const hyphenated = { ...refund, schema: { ...refund.schema, name: 'refund-order' } };
    const dispatcher = createDispatcher({
      tools: [hyphenated],
      chain: canonicalChain({ checkInKey: DESK_KEY, checkIns: inMemoryCheckIns({ now: clock.now }) }),
      clock: clock.now,
    });
    const { agent } = agentWith(
      callThenReport('refund_order', { orderId: 'A-17', amount: 20 }),
      governedTools(dispatcher),
    );
    const first = await run(agent, 'refund', { context: ada });
    first.state.approve(first.interruptions[0]!);
    const second = await run(agent, first.state);
    expect(second.finalOutput).toBe('tool said: {"orderId":"A-17","refunded":20}');

    const both = createDispatcher({
      tools: [refund, hyphenated],
      chain: canonicalChain({ checkInKey: DESK_KEY }),
    });
    expect(() => governedTools(both)).toThrow(
      "tools 'refund_order' and 'refund-order' both become 'refund_order'",
    );
  });

  it('resolves a credential the tool uses and the model never sees', async () => {
    const desk = adapterDesk();
    const { model, agent } = agentWith(
      callThenReport('fetch_report', { month: '2030-01' }),
      governedTools(desk.dispatcher),
    );
    const result = await run(agent, 'sales?', { context: ada });
    expect(result.finalOutput).toBe('tool said: {"month":"2030-01","sales":42}');
    expect(desk.sawSecret).toEqual([true]);
    expect(JSON.stringify(model.requests)).not.toContain(DESK_SECRET);
    expect(JSON.stringify(result.history)).not.toContain(DESK_SECRET);
  });

  it('refuses an oversized result with the ceiling, and the payload never reaches the model', async () => {
    const desk = adapterDesk();
    const { model, agent } = agentWith(callThenReport('read_log', {}), governedTools(desk.dispatcher));
    const result = await run(agent, 'log?', { context: ada });
    expect(result.finalOutput).toMatch(
      /^tool said: \[result-ceiling refused: 'read_log' returned 5,000 characters.*'lines'/,
    );
    expect(desk.ran).toHaveLength(1);
    expect(JSON.stringify(model.requests)).not.toContain('x'.repeat(BIG_LOG_CHARS));
  });

  it('keeps the source of a tool imported over MCP', async () => {
    const { client, tools } = await remoteDocs();
    const clock = fixedClock();
    const dispatcher = createDispatcher({ tools, chain: canonicalChain(), clock: clock.now });
    const ends: { toolSource?: string; kind: string }[] = [];
    dispatcher.on('dispatch.end', (e) => ends.push(e));
    const { agent } = agentWith(
      callThenReport('search_docs', { query: 'refunds' }),
      governedTools(dispatcher),
    );
    const result = await run(agent, 'docs?', { context: ada });
    expect(result.finalOutput).toBe('tool said: found: refunds');
    expect(ends.map((e) => [e.kind, e.toolSource])).toEqual([['result', REMOTE_SOURCE]]);
    await client.close();
  });

  it('never crashes the run on arguments that are not a JSON object, an unknown tool name, or an identity hook that throws', async () => {
    const desk = adapterDesk();
    const notObject = agentWith(callThenReport('lookup_order', '[1,2]'), governedTools(desk.dispatcher));
    const a = await run(notObject.agent, 'x', { context: ada });
    expect(a.finalOutput).toMatch(
      /^tool said: \[dispatch refused: the arguments for 'lookup_order' must be a JSON object/,
    );

    const malformed = agentWith(
      callThenReport('lookup_order', '{"orderId":'),
      governedTools(desk.dispatcher),
    );
    const b = await run(malformed.agent, 'x', { context: ada });
    expect(b.finalOutput).toMatch(/^tool said: ./);

    // A name no tool has never reaches the adapter; the SDK's own option makes it a result the model reads.
    const unknown = agentWith(callThenReport('delete_everything', {}), governedTools(desk.dispatcher));
    const u = await run(unknown.agent, 'x', { context: ada, toolNotFoundBehavior: 'return_error_to_model' });
    expect(u.finalOutput).toMatch(/^tool said: .*delete_everything.*not found/);

    const throwing = governedTools(desk.dispatcher, {
      identity: () => {
        throw new Error('session store down');
      },
    });
    const c = await run(agentWith(callThenReport('lookup_order', { orderId: 'A-17' }), throwing).agent, 'x');
    expect(c.finalOutput).toMatch(
      /^tool said: \[dispatch refused: 'lookup_order' did not run because the caller's identity could not be read/,
    );
    expect(c.finalOutput).not.toContain('session store down');
    expect(desk.ran).toEqual([]);
  });
  it("runs the SDK's tool guardrails around every governed call: an input guardrail's rejection never reaches the chain, an output guardrail sees what the model reads, and an approved check-in still runs once", async () => {
    const desk = adapterDesk();
    const seenOutputs: unknown[] = [];
    const noFrozenOrders = defineToolInputGuardrail({
      name: 'no-frozen-orders',
      run: async ({ toolCall }) =>
        toolCall.arguments.includes('A-666')
          ? ToolGuardrailFunctionOutputFactory.rejectContent('order A-666 is frozen')
          : ToolGuardrailFunctionOutputFactory.allow(),
    });
    const watch = defineToolOutputGuardrail({
      name: 'watch',
      run: async ({ output }) => {
        seenOutputs.push(output);
        return ToolGuardrailFunctionOutputFactory.allow();
      },
    });
    const tools = governedTools(desk.dispatcher, {
      inputGuardrails: [noFrozenOrders],
      outputGuardrails: [watch],
    });

    const frozen = await run(
      agentWith(callThenReport('lookup_order', { orderId: 'A-666' }), tools).agent,
      'look',
      {
        context: ada,
      },
    );
    expect(frozen.finalOutput).toBe('tool said: order A-666 is frozen');
    expect(desk.ends).toEqual([]);

    const fine = await run(
      agentWith(callThenReport('lookup_order', { orderId: 'A-17' }), tools).agent,
      'look',
      {
        context: ada,
      },
    );
    expect(fine.finalOutput).toBe('tool said: {"orderId":"A-17","total":120}');
    expect(seenOutputs).toEqual(['{"orderId":"A-17","total":120}']);

    const { agent } = agentWith(callThenReport('refund_order', { orderId: 'A-17', amount: 20 }), tools);
    const asked = await run(agent, 'refund', { context: ada });
    asked.state.approve(asked.interruptions[0]!);
    const approved = await run(agent, asked.state);
    expect(approved.finalOutput).toBe('tool said: {"orderId":"A-17","refunded":20}');
    expect(desk.ran).toEqual([
      { tool: 'lookup_order', args: { orderId: 'A-17' } },
      { tool: 'refund_order', args: { orderId: 'A-17', amount: 20 } },
    ]);
    expect(() => governedTools(desk.dispatcher, { inputGuardrails: [{} as never] })).toThrow(
      /inputGuardrails/,
    );
  });
});
