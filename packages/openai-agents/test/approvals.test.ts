// An OpenAI Agents SDK approval answers the check-in request raised when the SDK asked, once: an
// approved RunState replayed, replayed at once from several runners, edited, or approved in another
// process over one SQLite check-in store. Through the SDK's own Runner with a scripted model.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, run, RunState, setTracingDisabled, type FunctionTool } from '@openai/agents';
import { createChain, createDispatcher } from '@toolgate/core';
import { canonicalChain } from '@toolgate/middleware';
import { governedTools } from '@toolgate/openai-agents';
import { sqliteCheckIns } from '@toolgate/store-sqlite';
import { fixedClock } from '@toolgate/testing';
import { adapterDesk } from '../../../test-support/adapter-desk';
import {
  callTool,
  lastToolResult,
  say,
  scriptedAgentsModel,
  type AgentTurn,
} from './fixtures/scripted-model';

setTracingDisabled(true);

const ada = { identity: { tenant: 'acme', principal: 'ada' } };
const KEY = 'openai-agents-approvals-check-in-key-0123456789';
const REFUSED = /^tool said: \[check-in refused: /;
const REFUND = { orderId: 'A-17', amount: 20 };

/** Calls refund_order once, then reports every tool result it reads, for as many runs as needed. */
const refundThenReport = (args: unknown = REFUND, callId = 'call_1'): AgentTurn[] => [
  () => [callTool('refund_order', args, callId)],
  ...Array.from({ length: 12 }, (): AgentTurn => (input) => [say(`tool said: ${lastToolResult(input)}`)]),
];

function deskAgent<TContext>(tools: FunctionTool<TContext>[], turns = refundThenReport()) {
  return new Agent<TContext>({
    name: 'desk',
    instructions: 'Help with orders.',
    model: scriptedAgentsModel(turns),
    tools,
  });
}

/** Runs until the refund is interrupted, approves it, and returns the approved state serialized. */
async function approvedState(agent: Agent<typeof ada>) {
  const first = await run(agent, 'refund A-17', { context: ada });
  expect(first.interruptions.map((i) => i.name)).toEqual(['refund_order']);
  first.state.approve(first.interruptions[0]!);
  return first.state.toString();
}

describe('OpenAI Agents approvals', () => {
  it('an approved RunState replayed runs the refund once; the replay reads a refusal', async () => {
    const desk = adapterDesk();
    const agent = deskAgent(governedTools<typeof ada>(desk.dispatcher));
    const approved = await approvedState(agent);
    const once = await run(agent, await RunState.fromString(agent, approved));
    expect(once.finalOutput).toBe('tool said: {"orderId":"A-17","refunded":20}');
    const again = await run(agent, await RunState.fromString(agent, approved));
    expect(again.finalOutput).toMatch(REFUSED);
    expect(desk.ran).toEqual([{ tool: 'refund_order', args: REFUND }]);
  });

  it('the same approved RunState resumed by several runners at once runs the refund once', async () => {
    const desk = adapterDesk();
    const tools = governedTools<typeof ada>(desk.dispatcher);
    const approved = await approvedState(deskAgent(tools));
    const results = await Promise.all(
      Array.from({ length: 5 }, async () => {
        const agent = deskAgent(tools, refundThenReport().slice(1));
        return run(agent, await RunState.fromString(agent, approved));
      }),
    );
    const read = results.map((r) => String(r.finalOutput));
    expect(read.filter((text) => text === 'tool said: {"orderId":"A-17","refunded":20}')).toHaveLength(1);
    expect(read.filter((text) => REFUSED.test(text))).toHaveLength(4);
    expect(desk.ran).toHaveLength(1);
  });

  it("an approved RunState with the arguments edited (and the SDK's fingerprint of them) does not run the edited arguments", async () => {
    const desk = adapterDesk();
    const agent = deskAgent(governedTools<typeof ada>(desk.dispatcher));
    const approved = await approvedState(agent);
    // RunState is plain JSON: whoever can write it can change the call and the SDK's own record of it.
    const edited = approved
      .split(JSON.stringify(JSON.stringify(REFUND)).slice(1, -1))
      .join(JSON.stringify(JSON.stringify({ orderId: 'A-17', amount: 3000 })).slice(1, -1))
      .split('number:2e1')
      .join('number:3e3');
    expect(edited).not.toBe(approved);
    const tampered = await run(agent, await RunState.fromString(agent, edited));
    expect(tampered.finalOutput).toMatch(REFUSED);
    expect(desk.ran).toEqual([]);
    // The untouched approval still runs, once.
    const honest = await run(agent, await RunState.fromString(agent, approved));
    expect(honest.finalOutput).toBe('tool said: {"orderId":"A-17","refunded":20}');
    expect(desk.ran).toEqual([{ tool: 'refund_order', args: REFUND }]);
  });

  it('an approved RunState replayed after a later call reused its call id does not run that call', async () => {
    const desk = adapterDesk();
    const tools = governedTools<typeof ada>(desk.dispatcher);
    const agent = deskAgent(tools);
    const approved = await approvedState(agent);
    await run(agent, await RunState.fromString(agent, approved));
    // A later run: the provider numbers calls per turn, so this refund is 'call_1' again, for 3000.
    const later = deskAgent(tools, refundThenReport({ orderId: 'A-17', amount: 3000 }));
    const waiting = await run(later, 'refund 3000 more', { context: ada });
    expect(waiting.interruptions).toHaveLength(1);
    const replay = await run(agent, await RunState.fromString(agent, approved));
    expect(replay.finalOutput).toMatch(REFUSED);
    expect(desk.ran).toEqual([{ tool: 'refund_order', args: REFUND }]);
  });

  it('across two processes sharing one SQLite check-in store: asked in one, approved in the other, replayed in the first, it runs once', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'toolgate-openai-agents-'));
    const path = join(dir, 'check-ins.db');
    const clock = fixedClock();
    const storeA = sqliteCheckIns({ path, now: clock.now });
    const storeB = sqliteCheckIns({ path, now: clock.now });
    try {
      const process = (store: typeof storeA) => {
        const desk = adapterDesk();
        const dispatcher = createDispatcher({
          tools: [desk.dispatcher.tools.get('refund_order')!],
          chain: canonicalChain({ checkInKey: KEY, checkIns: store }),
          clock: clock.now,
        });
        return { desk, agent: deskAgent(governedTools<typeof ada>(dispatcher, { checkIns: store })) };
      };
      const a = process(storeA);
      const b = process(storeB);
      const approved = await approvedState(a.agent);
      expect((await storeB.list({ state: 'pending' })).map((r) => r.request.args)).toEqual([REFUND]);

      const inB = await run(b.agent, await RunState.fromString(b.agent, approved));
      expect(inB.finalOutput).toBe('tool said: {"orderId":"A-17","refunded":20}');
      const inA = await run(a.agent, await RunState.fromString(a.agent, approved));
      expect(inA.finalOutput).toMatch(REFUSED);
      expect([...a.desk.ran, ...b.desk.ran]).toEqual([{ tool: 'refund_order', args: REFUND }]);
    } finally {
      storeA.close();
      storeB.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('OpenAI Agents pauses the SDK does not ask about', () => {
  it('a predicate check-in is decided by the chain: a small refund runs, a large one goes to onPause, and the SDK never interrupts', async () => {
    const desk = adapterDesk();
    const refund = desk.dispatcher.tools.get('refund_order')!;
    const clock = fixedClock();
    const dispatcher = createDispatcher({
      tools: [{ ...refund, checkIn: (args: { amount: number }) => args.amount > 100 }],
      chain: canonicalChain({ checkInKey: KEY }),
      clock: clock.now,
    });
    const paused: string[] = [];
    const tools = governedTools<typeof ada>(dispatcher, {
      onPause: (request) => void paused.push(request.id),
    });
    const small = await run(deskAgent(tools, refundThenReport({ orderId: 'A-1', amount: 20 })), 'x', {
      context: ada,
    });
    expect(small.finalOutput).toBe('tool said: {"orderId":"A-1","refunded":20}');
    const large = await run(deskAgent(tools, refundThenReport({ orderId: 'A-2', amount: 500 })), 'x', {
      context: ada,
    });
    expect(large.interruptions).toEqual([]);
    expect(large.finalOutput).toBe(
      "tool said: [check-in paused: waiting for a human to approve 'refund_order'.]",
    );
    expect(paused).toHaveLength(1);
    expect(desk.ran).toEqual([{ tool: 'refund_order', args: { orderId: 'A-1', amount: 20 } }]);
  });
});

describe('OpenAI Agents calls the chain decides when the SDK asks', () => {
  it('a chain that runs an always-check-in tool without asking (no check-in gate) runs it once, not again in execute', async () => {
    const desk = adapterDesk();
    const dispatcher = createDispatcher({
      tools: [desk.dispatcher.tools.get('refund_order')!],
      chain: createChain([], { checkIns: { key: KEY } }),
    });
    const result = await run(deskAgent(governedTools<typeof ada>(dispatcher)), 'x', { context: ada });
    expect(result.interruptions).toEqual([]);
    expect(result.finalOutput).toBe('tool said: {"orderId":"A-17","refunded":20}');
    expect(desk.ran).toEqual([{ tool: 'refund_order', args: REFUND }]);
  });
});
