import { createChain, createDispatcher, type Decision, type PermissionRequest } from '@toolgate/core';
import { canonicalChain, capabilitiesGate } from '@toolgate/middleware';
import { eventsOf, expectRefused, expectResult, never, recordEvents, recordingTool } from './fixtures';

/** A checker governing `governs` that records each capability it is asked about. */
function checker(
  governs: readonly string[] | undefined,
  answer: (capability: string) => unknown = () => ({ allow: true }),
) {
  const asked: string[] = [];
  const requests: PermissionRequest[] = [];
  return {
    asked,
    requests,
    checker: {
      ...(governs !== undefined ? { governs } : {}),
      check(request: PermissionRequest) {
        asked.push(request.capability);
        requests.push(request);
        return answer(request.capability) as Decision;
      },
    },
  };
}

function setup(
  permissions: ReturnType<typeof checker>['checker'] | undefined,
  capabilities: readonly string[] | undefined,
  deadlineMs?: number,
) {
  const tool = recordingTool({
    name: 'pay_invoice',
    ...(capabilities !== undefined ? { capabilities } : {}),
  });
  const gate = capabilitiesGate(permissions, deadlineMs === undefined ? {} : { deadlineMs });
  const dispatcher = createDispatcher({ tools: [tool], chain: createChain([gate]) });
  const events = recordEvents(dispatcher);
  const dispatch = () => dispatcher.dispatch({ toolName: 'pay_invoice', args: { text: 'inv-1' } });
  return { tool, events, dispatch };
}

describe('capabilities gate', () => {
  it('asks once per capability the tool declares and the checker governs, in declaration order', async () => {
    const { checker: c, asked } = checker(['payments', 'user_data', 'code_exec']);
    const { dispatch, tool, events } = setup(c, ['user_data', 'filesystem', 'payments']);

    const outcome = expectResult(await dispatch());

    expect(asked).toEqual(['user_data', 'payments']);
    expect(tool.calls).toHaveLength(1);
    expect(outcome.ledger).toEqual([
      { gate: 'capabilities', outcome: 'allow', why: 'allowed: user_data, payments', changed: false },
    ]);
    expect(eventsOf(events, 'capability.checked').map((e) => [e['capability'], e['allowed']])).toEqual([
      ['user_data', true],
      ['payments', true],
    ]);
  });

  it('stops at the first denial and names the capability in the refusal', async () => {
    const { checker: c, asked } = checker(['payments', 'user_data'], (capability) =>
      capability === 'user_data'
        ? { allow: false, reason: 'this workspace keeps customer data private' }
        : { allow: true },
    );
    const { dispatch, tool, events } = setup(c, ['user_data', 'payments']);

    const outcome = expectRefused(await dispatch());

    expect(asked).toEqual(['user_data']);
    expect(tool.calls).toHaveLength(0);
    expect(outcome).toMatchObject({
      gate: 'capabilities',
      code: 'CAPABILITY_DENIED',
      retryable: false,
      ran: false,
    });
    expect(outcome.content).toBe(
      "[capabilities refused: 'pay_invoice' needs capability 'user_data', which is not allowed here: " +
        'this workspace keeps customer data private. This will not change during this run; do not call it again. ' +
        'Continue without it, or tell the user what you cannot do.]',
    );
    expect(outcome.ledger).toEqual([
      { gate: 'capabilities', outcome: 'deny', why: outcome.reason, changed: false },
    ]);
    expect(eventsOf(events, 'capability.checked')).toEqual([
      expect.objectContaining({ capability: 'user_data', allowed: false }),
    ]);
  });

  it('does not ask about a capability the tool declares but the checker does not govern', async () => {
    const { checker: c, asked } = checker(['payments']);
    const { dispatch, tool } = setup(c, ['filesystem', 'external_net']);

    const outcome = expectResult(await dispatch());

    expect(asked).toEqual([]);
    expect(tool.calls).toHaveLength(1);
    expect(outcome.ledger).toEqual([
      { gate: 'capabilities', outcome: 'allow', why: 'no governed capability', changed: false },
    ]);
  });

  it('does not ask when the tool declares no capabilities', async () => {
    const { checker: c, asked } = checker(['payments']);
    const { dispatch } = setup(c, undefined);

    expectResult(await dispatch());

    expect(asked).toEqual([]);
  });

  it('does not ask when the checker governs nothing', async () => {
    const { checker: c, asked } = checker(undefined);
    const { dispatch, tool } = setup(c, ['payments']);

    expectResult(await dispatch());

    expect(asked).toEqual([]);
    expect(tool.calls).toHaveLength(1);
  });

  it("passes with 'no checker' in the ledger when there is no checker", async () => {
    const { dispatch, tool } = setup(undefined, ['payments']);

    const outcome = expectResult(await dispatch());

    expect(tool.calls).toHaveLength(1);
    expect(outcome.ledger).toEqual([
      { gate: 'capabilities', outcome: 'allow', why: 'no checker', changed: false },
    ]);
  });

  it('asks with the capability name, the tool as target, the identity and the args', async () => {
    const { checker: c, requests } = checker(['payments']);
    const tool = recordingTool({ name: 'pay_invoice', capabilities: ['payments'] });
    const dispatcher = createDispatcher({ tools: [tool], chain: createChain([capabilitiesGate(c)]) });

    await dispatcher.dispatch(
      { toolName: 'pay_invoice', args: { text: 'inv-1' } },
      { identity: { tenant: 'acme' } },
    );

    expect(requests).toEqual([
      {
        capability: 'payments',
        target: 'pay_invoice',
        identity: { tenant: 'acme' },
        args: { text: 'inv-1' },
        signal: expect.any(AbortSignal),
      },
    ]);
  });

  it('a checker that throws on a capability refuses with CHECKER_FAILED naming it, without its text', async () => {
    const { checker: c } = checker(['payments'], () => {
      throw new Error('ldap bind failed for cn=admin,secret=s3cr3t');
    });
    const { dispatch, tool, events } = setup(c, ['payments']);

    const outcome = expectRefused(await dispatch());

    expect(tool.calls).toHaveLength(0);
    expect(outcome).toMatchObject({ gate: 'capabilities', code: 'CHECKER_FAILED', retryable: true });
    expect(outcome.content).toContain("capability 'payments'");
    expect(JSON.stringify({ outcome, events })).not.toContain('s3cr3t');
    expect(eventsOf(events, 'capability.checked')).toEqual([
      expect.objectContaining({ capability: 'payments', allowed: false, failure: 'threw' }),
    ]);
  });

  it('a checker that answers a capability malformed or past its deadline refuses with CHECKER_FAILED', async () => {
    const malformed = setup(checker(['payments'], () => ({ allow: false })).checker, ['payments']);
    const late = setup(checker(['payments'], () => never()).checker, ['payments'], 20);

    const outcomes = [expectRefused(await malformed.dispatch()), expectRefused(await late.dispatch())];

    expect(outcomes.map((o) => o.code)).toEqual(['CHECKER_FAILED', 'CHECKER_FAILED']);
    expect(eventsOf(malformed.events, 'capability.checked')[0]).toMatchObject({ failure: 'malformed' });
    expect(eventsOf(late.events, 'capability.checked')[0]).toMatchObject({ failure: 'timeout' });
    expect(malformed.tool.calls.length + late.tool.calls.length).toBe(0);
  });

  it('runs after the permission gate in the canonical chain, which asks about tool_call first', async () => {
    const { checker: c, asked } = checker(['payments']);
    const tool = recordingTool({ name: 'pay_invoice', capabilities: ['payments', 'user_data'] });
    const dispatcher = createDispatcher({ tools: [tool], chain: canonicalChain({ permissions: c }) });

    expectResult(await dispatcher.dispatch({ toolName: 'pay_invoice', args: {} }));

    expect(asked).toEqual(['tool_call', 'payments']);
  });
});
