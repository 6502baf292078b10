// The scripted loop through a real canonical chain: a model reads refusals and corrects itself.

import { checkInApproved, checkInDeclined, createDispatcher, type CheckInRequest } from '@toolgate/core';
import { canonicalChain } from '@toolgate/middleware';
import {
  fixedClock,
  formatTranscript,
  lastToolMessage,
  mockTool,
  runAgentLoop,
  scriptedModel,
  seededIds,
  staticPermissions,
} from '@toolgate/testing';
import '@toolgate/testing/jest';
import { Type } from 'typebox';

function setup() {
  const refund = mockTool({
    name: 'refund',
    inputSchema: Type.Object({ orderId: Type.String(), amount: Type.Number() }),
    result: { refunded: true },
    capabilities: ['payments'],
    checkIn: (args) => (args['amount'] as number) > 100,
  });
  const permissions = staticPermissions([
    { capability: 'payments', tenant: 'acme', allow: true },
    { capability: 'payments', allow: false, reason: 'refunds are not enabled for this account' },
    { allow: true },
  ]);
  const clock = fixedClock();
  const dispatcher = createDispatcher({
    tools: [refund],
    chain: canonicalChain({ permissions, checkInKey: 'agent-loop-test-check-in-key-0123456789' }),
    clock: clock.now,
    callIds: seededIds('agent-loop'),
  });
  return { refund, permissions, dispatcher, clock };
}

describe('runAgentLoop', () => {
  it('feeds a refusal back, and the model corrects its call', async () => {
    const { refund, dispatcher } = setup();
    const model = scriptedModel([
      { toolName: 'refund', args: { orderId: 'o-1', amount: 'twelve' } },
      (transcript) =>
        lastToolMessage(transcript)?.includes("'amount' must be number")
          ? { toolName: 'refund', args: { orderId: 'o-1', amount: 12 } }
          : 'I could not work out the arguments.',
      { say: 'Refunded 12 on order o-1.' },
    ]);
    const run = await runAgentLoop({
      model,
      dispatcher,
      identity: { tenant: 'acme' },
      prompt: 'Refund order o-1',
    });

    expect(run.stop).toBe('final');
    expect(run.finalText).toBe('Refunded 12 on order o-1.');
    expect(run.turns).toBe(3);
    expect(run.outcomes[0]).toBeRefusedBy('validate-args', 'INVALID_ARGS');
    expect(run.outcomes[0]).not.toHaveRun();
    expect(run.outcomes[1]).toHaveRun();
    expect(run.outcomes[1]).toHaveLedgerRow({ gate: 'capabilities', outcome: 'allow' });
    expect(refund).toHaveRun(1);
    expect(refund.lastCall?.args).toEqual({ orderId: 'o-1', amount: 12 });
    expect(run.transcript.map((entry) => entry.role)).toEqual([
      'user',
      'assistant',
      'tool',
      'assistant',
      'tool',
      'assistant',
    ]);
  });

  it('puts exactly the outcome’s content in each tool message, under the call’s id', async () => {
    const { dispatcher } = setup();
    const run = await runAgentLoop({
      model: scriptedModel([
        { toolName: 'refund', args: { orderId: 'o-1' } },
        { toolName: 'refund', args: '{"orderId":"o-2","amount":3}', toolCallId: 'tc-2' },
      ]),
      dispatcher,
      identity: { tenant: 'acme' },
    });
    const calls = run.transcript.filter((entry) => entry.role === 'assistant' && 'call' in entry);
    const tools = run.transcript.filter((entry) => entry.role === 'tool');
    expect(tools.map((entry) => entry.role === 'tool' && entry.content)).toEqual(
      run.outcomes.map((outcome) => outcome.content),
    );
    expect(calls.map((entry) => 'call' in entry && entry.call.toolCallId)).toEqual(
      run.outcomes.map((outcome) => outcome.toolCallId),
    );
    expect(calls[1]).toMatchObject({
      call: { toolName: 'refund', args: '{"orderId":"o-2","amount":3}', toolCallId: 'tc-2' },
    });
    expect(run.stop).toBe('exhausted');
  });

  it('passes the identity to every dispatch', async () => {
    const { dispatcher, permissions } = setup();
    const run = await runAgentLoop({
      model: scriptedModel([
        { toolName: 'refund', args: { orderId: 'o-1', amount: 5 } },
        { toolName: 'refund', args: { orderId: 'o-1', amount: 5 } },
      ]),
      dispatcher,
      identity: { tenant: 'globex', principal: 'bob' },
    });
    expect(run.outcomes[1]).toBeRefusedBy('capabilities', 'CAPABILITY_DENIED');
    expect(run.outcomes[1]?.content).toContain('refunds are not enabled for this account');
    expect(permissions.requests.every((request) => request.identity?.tenant === 'globex')).toBe(true);
    expect(permissions.requests).toHaveLength(4);
  });

  it('asks onPause for a paused call, resumes with the decision and records the check-in', async () => {
    const { refund, dispatcher } = setup();
    const asked: CheckInRequest[] = [];
    const run = await runAgentLoop({
      model: scriptedModel([{ toolName: 'refund', args: { orderId: 'o-9', amount: 250 } }, { say: 'Done.' }]),
      dispatcher,
      identity: { tenant: 'acme' },
      onPause: (request) => {
        asked.push(request);
        return checkInApproved({ by: 'supervisor@acme.test' });
      },
    });
    expect(asked).toHaveLength(1);
    expect(asked[0]).toMatchObject({
      asker: 'check-in',
      toolName: 'refund',
      review: { orderId: 'o-9', amount: 250 },
    });
    expect(run.outcomes).toHaveLength(1);
    expect(run.outcomes[0]).toHaveRun();
    expect(run.outcomes[0]).toMatchObject({ kind: 'result', receipts: [{ by: 'supervisor@acme.test' }] });
    expect(run.transcript.map((entry) => entry.role)).toEqual(['assistant', 'check-in', 'tool', 'assistant']);
    expect(refund.lastCall?.checkIn).toMatchObject({ approved: true, by: 'supervisor@acme.test' });
  });

  it('lets the model read a human’s refusal', async () => {
    const { refund, dispatcher } = setup();
    const run = await runAgentLoop({
      model: scriptedModel([
        { toolName: 'refund', args: { orderId: 'o-9', amount: 250 } },
        (transcript) =>
          lastToolMessage(transcript)?.includes('over the limit')
            ? 'The refund was declined: over the limit.'
            : 'Refunded.',
      ]),
      dispatcher,
      identity: { tenant: 'acme' },
      onPause: () => checkInDeclined({ by: 'supervisor', reason: 'over the limit for this customer' }),
    });
    expect(run.outcomes[0]).toBeRefusedBy('check-in', 'CHECKIN_DECLINED');
    expect(run.finalText).toBe('The refund was declined: over the limit.');
    expect(refund.callCount).toBe(0);
  });

  it('stops with the call pending when nobody answers the pause', async () => {
    const { dispatcher } = setup();
    const run = await runAgentLoop({
      model: scriptedModel([
        { toolName: 'refund', args: { orderId: 'o-9', amount: 250 } },
        { say: 'never reached' },
      ]),
      dispatcher,
      identity: { tenant: 'acme' },
    });
    expect(run.stop).toBe('paused');
    expect(run.pending).toBePausedForCheckIn('check-in');
    expect(run.transcript.at(-1)).toMatchObject({ role: 'assistant', call: { toolName: 'refund' } });
  });

  it('stops after maxTurns', async () => {
    const { dispatcher } = setup();
    const forever = () => ({ toolName: 'refund', args: { orderId: 'o-1', amount: 1 } });
    const run = await runAgentLoop({
      model: { next: forever },
      dispatcher,
      identity: { tenant: 'acme' },
      maxTurns: 3,
    });
    expect(run.stop).toBe('max-turns');
    expect(run.outcomes).toHaveLength(3);
  });

  it('stops when the signal is aborted', async () => {
    const { dispatcher, refund } = setup();
    const controller = new AbortController();
    const model = scriptedModel([
      () => {
        controller.abort();
        return { toolName: 'refund', args: { orderId: 'o-1', amount: 1 } };
      },
      { say: 'never reached' },
    ]);
    const run = await runAgentLoop({
      model,
      dispatcher,
      identity: { tenant: 'acme' },
      signal: controller.signal,
    });
    expect(run.stop).toBe('aborted');
    expect(run.outcomes[0]).toMatchObject({ kind: 'refused', code: 'ABORTED', ran: false });
    expect(refund.callCount).toBe(0);
  });

  it('tells the model about an unknown tool and the tools it can call', async () => {
    const { dispatcher } = setup();
    const seen: string[][] = [];
    const run = await runAgentLoop({
      model: scriptedModel([
        (_transcript, tools) => {
          seen.push(tools.map((tool) => tool.name));
          return { toolName: 'refnud', args: {} };
        },
      ]),
      dispatcher,
    });
    expect(seen).toEqual([['refund']]);
    expect(run.outcomes[0]).toBeRefusedBy('dispatch', 'UNKNOWN_TOOL');
    expect(run.outcomes[0]?.content).toContain('Call one of: refund');
  });

  it('refuses a model move that is neither a call nor an answer', async () => {
    const { dispatcher } = setup();
    await expect(
      runAgentLoop({ model: { next: () => ({ text: 'hi' }) as never }, dispatcher }),
    ).rejects.toThrow('neither { toolName, args } nor { say }');
  });

  it('renders a transcript as a readable log', async () => {
    const { dispatcher } = setup();
    const run = await runAgentLoop({
      model: scriptedModel([{ toolName: 'refund', args: { orderId: 'o-9', amount: 250 } }, { say: 'Done.' }]),
      dispatcher,
      identity: { tenant: 'acme' },
      prompt: 'Refund o-9',
      onPause: () => checkInApproved({ by: 'sam' }),
    });
    expect(formatTranscript(run.transcript)).toBe(
      [
        'user: Refund o-9',
        `assistant → refund({"orderId":"o-9","amount":250})  [${run.outcomes[0]!.toolCallId}]`,
        'check-in: approved by sam (check-in)',
        'tool refund [result]: {"refunded":true}',
        'assistant: Done.',
      ].join('\n'),
    );
  });
});
