import {
  assertTool,
  createChain,
  createDispatcher,
  type Decision,
  type Identity,
  type PermissionChecker,
  type PermissionRequest,
  type Tool,
} from '@toolgate/core';
import { permissionGate } from '@toolgate/middleware';
import { eventsOf, expectRefused, expectResult, never, recordEvents, recordingTool } from './fixtures';

const LEAK = 'db-password=hunter2';

/** A checker that records what it was asked and answers with `answer`. */
function checkerAnswering(answer: (request: PermissionRequest) => unknown) {
  const requests: PermissionRequest[] = [];
  const checker = {
    check(request: PermissionRequest) {
      requests.push(request);
      return answer(request) as Decision;
    },
  };
  return { checker, requests };
}

function setup(
  checker: PermissionChecker | undefined,
  deadlineMs?: number,
  tool = recordingTool({ name: 'lookup' }),
) {
  const gate = permissionGate(checker, deadlineMs === undefined ? {} : { deadlineMs });
  const dispatcher = createDispatcher({ tools: [tool], chain: createChain([gate]) });
  const events = recordEvents(dispatcher);
  const dispatch = (identity?: Identity) =>
    dispatcher.dispatch(
      { toolName: tool.schema.name, args: { text: 'q' } },
      identity === undefined ? {} : { identity },
    );
  return { dispatch, events, tool };
}

describe('permission gate', () => {
  it('lets an allowed call run and files an allow row', async () => {
    const { checker } = checkerAnswering(() => ({ allow: true }));
    const { dispatch, events, tool } = setup(checker);

    const outcome = expectResult(await dispatch());

    expect(tool.calls).toHaveLength(1);
    expect(outcome.ledger).toEqual([{ gate: 'permission', outcome: 'allow', changed: false }]);
    expect(eventsOf(events, 'permission.checked')).toEqual([
      expect.objectContaining({
        allowed: true,
        checker: 'configured',
        gate: 'permission',
        toolName: 'lookup',
      }),
    ]);
  });

  it("refuses a denied call with the checker's reason, and the tool never runs", async () => {
    const { checker } = checkerAnswering(() => ({ allow: false, reason: 'lookups are closed on weekends' }));
    const { dispatch, events, tool } = setup(checker);

    const outcome = expectRefused(await dispatch());

    expect(tool.calls).toHaveLength(0);
    expect(outcome).toMatchObject({
      gate: 'permission',
      code: 'PERMISSION_DENIED',
      retryable: false,
      ran: false,
    });
    expect(outcome.content).toBe(
      "[permission refused: 'lookup' is not permitted: lookups are closed on weekends. " +
        'This will not change during this run; do not call it again. ' +
        'Continue without it, or tell the user what you cannot do.]',
    );
    expect(outcome.ledger).toEqual([
      { gate: 'permission', outcome: 'deny', why: outcome.reason, changed: false },
    ]);
    expect(eventsOf(events, 'permission.checked')).toEqual([
      expect.objectContaining({ allowed: false, checker: 'configured' }),
    ]);
  });

  it("bounds a very long denial reason so it cannot flood the model's page", async () => {
    const { checker } = checkerAnswering(() => ({ allow: false, reason: 'no. '.repeat(500) }));
    const { dispatch } = setup(checker);

    const outcome = expectRefused(await dispatch());

    expect(outcome.content.length).toBeLessThan(600);
    expect(outcome.content).toContain('...');
  });

  const failing: Array<[string, (request: PermissionRequest) => unknown, string]> = [
    [
      'throws',
      () => {
        throw new Error(LEAK);
      },
      'threw',
    ],
    ['rejects', () => Promise.reject(new Error(LEAK)), 'threw'],
    ['returns {}', () => ({}), 'malformed'],
    ['returns null', () => null, 'malformed'],
    ['returns { allow: false } without a reason', () => ({ allow: false }), 'malformed'],
    ['returns { allow: false } with a blank reason', () => ({ allow: false, reason: '  ' }), 'malformed'],
    ["returns 'yes'", () => 'yes', 'malformed'],
    ["returns { allow: 'true' }", () => ({ allow: 'true' }), 'malformed'],
    ['resolves to a malformed decision', () => Promise.resolve({ allowed: true }), 'malformed'],
  ];

  it.each(failing)(
    'a checker that %s denies with CHECKER_FAILED and keeps its text off the page',
    async (_, answer, failure) => {
      const { checker } = checkerAnswering(answer);
      const { dispatch, events, tool } = setup(checker);

      const outcome = expectRefused(await dispatch());

      expect(tool.calls).toHaveLength(0);
      expect(outcome).toMatchObject({
        gate: 'permission',
        code: 'CHECKER_FAILED',
        retryable: true,
        ran: false,
      });
      expect(outcome.content).toBe(
        "[permission refused: 'lookup' could not be authorized because the permission check failed. " +
          'Retrying later may help. Continue without it for now.]',
      );
      expect(JSON.stringify({ outcome, events })).not.toContain('hunter2');
      expect(eventsOf(events, 'permission.checked')).toEqual([
        expect.objectContaining({ allowed: false, failure }),
      ]);
    },
  );

  it('a checker that exceeds its deadline denies with CHECKER_FAILED and its signal is aborted', async () => {
    const { checker, requests } = checkerAnswering(() => never());
    const { dispatch, events, tool } = setup(checker, 20);

    const outcome = expectRefused(await dispatch());

    expect(tool.calls).toHaveLength(0);
    expect(outcome).toMatchObject({ gate: 'permission', code: 'CHECKER_FAILED', retryable: true });
    expect(eventsOf(events, 'permission.checked')).toEqual([
      expect.objectContaining({ allowed: false, failure: 'timeout' }),
    ]);
    expect(requests[0]?.signal.aborted).toBe(true);
  });

  it('asks the checker about tool_call with target, source, identity, args and a signal', async () => {
    const { checker, requests } = checkerAnswering(() => ({ allow: true }));
    const imported = {
      ...recordingTool({ name: 'crm_lookup' }),
      source: 'crm-server',
    } as Tool;
    assertTool(imported, { allowSource: true });
    const { dispatch } = setup(checker, undefined, imported as ReturnType<typeof recordingTool>);
    const identity = { tenant: 'acme', principal: 'ann', conversation: 'c-1' };

    expectResult(await dispatch(identity));

    expect(requests).toEqual([
      {
        capability: 'tool_call',
        target: 'crm_lookup',
        toolSource: 'crm-server',
        identity,
        args: { text: 'q' },
        signal: expect.any(AbortSignal),
      },
    ]);
  });

  it('asks about our own tool without a toolSource or identity key at all', async () => {
    const { checker, requests } = checkerAnswering(() => ({ allow: true }));
    const { dispatch } = setup(checker);

    await dispatch();

    expect(requests).toHaveLength(1);
    expect('toolSource' in requests[0]!).toBe(false);
    expect('identity' in requests[0]!).toBe(false);
  });

  it("passes every call when there is no checker, and the ledger says 'no checker'", async () => {
    const { dispatch, events, tool } = setup(undefined);

    const outcome = expectResult(await dispatch());

    expect(tool.calls).toHaveLength(1);
    expect(outcome.ledger).toEqual([
      { gate: 'permission', outcome: 'allow', why: 'no checker', changed: false },
    ]);
    expect(eventsOf(events, 'permission.checked')).toEqual([
      expect.objectContaining({ allowed: true, checker: 'none' }),
    ]);
  });

  it('files a gate.decision event for its ledger row', async () => {
    const { checker } = checkerAnswering(() => ({ allow: false, reason: 'not today' }));
    const { dispatch, events } = setup(checker);

    await dispatch();

    expect(eventsOf(events, 'gate.decision')).toEqual([
      expect.objectContaining({
        gate: 'permission',
        outcome: 'deny',
        code: 'PERMISSION_DENIED',
        changed: false,
      }),
    ]);
  });

  it('refuses a checker without a check method, a bad governs list or a bad deadline at build', () => {
    expect(() => permissionGate({} as PermissionChecker)).toThrow(/check\(request\) method/);
    expect(() => permissionGate({ check: () => ({ allow: true }), governs: 'payments' } as never)).toThrow(
      /'governs' must be an array/,
    );
    expect(() => permissionGate(undefined, { deadlineMs: 0 })).toThrow(
      /deadlineMs must be a positive integer/,
    );
    expect(() => permissionGate(undefined, { deadlineMs: 1.5 })).toThrow(/deadlineMs/);
  });
});
