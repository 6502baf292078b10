import { inspect } from 'node:util';
import {
  checkInApproved,
  createChain,
  createDispatcher,
  DispatcherConfigError,
  type Credential,
  type CredentialNeed,
  type CredentialProvider,
  type CredentialRequestContext,
  type ResolvedCredential,
} from '@toolgate/core';
import { canonicalChain, credentialsGate } from '@toolgate/middleware';
import {
  eventsOf,
  expectPaused,
  expectRefused,
  expectResult,
  KEY,
  manualClock,
  never,
  recordEvents,
  recordingTool,
  type RecordingToolSpec,
} from './fixtures';

const SECRET = 'sk_live_CREDENTIAL_SECRET_9f3a';
const NEED: CredentialNeed = { kind: 'api_key', service: 'billing', scopes: ['invoices:write'] };

/** A provider that records each request and answers with `answer`. */
function provider(answer: () => unknown = () => ({ kind: 'api_key', value: SECRET })) {
  const requests: Array<{ need: CredentialNeed; context: CredentialRequestContext }> = [];
  const resolver: CredentialProvider = {
    resolve(need, context) {
      requests.push({ need, context });
      return answer() as ResolvedCredential;
    },
  };
  return { provider: resolver, requests };
}

function invoiceTool(spec: RecordingToolSpec = {}, respond?: Parameters<typeof recordingTool>[1]) {
  return recordingTool({ name: 'send_invoice', needs: NEED, ...spec }, respond);
}

function setup(credentials: CredentialProvider, tool = invoiceTool(), deadlineMs?: number) {
  const dispatcher = createDispatcher({
    tools: [tool],
    chain: canonicalChain({
      credentials,
      checkInKey: KEY,
      ...(deadlineMs !== undefined ? { deadlineMs } : {}),
    }),
  });
  const events = recordEvents(dispatcher);
  const dispatch = () =>
    dispatcher.dispatch(
      { toolName: tool.schema.name, args: { text: 'inv-7' } },
      { identity: { tenant: 'acme' } },
    );
  return { dispatcher, dispatch, events, tool };
}

describe('credentials gate', () => {
  it('resolves the need into ctx.credential, which the tool reads with reveal()', async () => {
    const { provider: p, requests } = provider();
    const { dispatch, tool, events } = setup(p);

    const outcome = expectResult(await dispatch());

    expect(tool.calls).toHaveLength(1);
    expect(tool.calls[0]?.secret).toBe(SECRET);
    expect(tool.calls[0]?.ctx.credential).toMatchObject({ kind: 'api_key', service: 'billing' });
    expect(requests).toEqual([
      {
        need: NEED,
        context: { identity: { tenant: 'acme' }, toolName: 'send_invoice', signal: expect.any(AbortSignal) },
      },
    ]);
    expect(outcome.ledger.find((row) => row.gate === 'credentials')).toEqual({
      gate: 'credentials',
      outcome: 'allow',
      why: "resolved 'api_key' for 'billing'",
      changed: false,
    });
    expect(eventsOf(events, 'credential.resolved')).toEqual([
      expect.objectContaining({ kind: 'api_key', service: 'billing' }),
    ]);
    expect(JSON.stringify({ outcome, events })).not.toContain(SECRET);
  });

  it('tells the provider which MCP server an imported tool came from', async () => {
    const { provider: p, requests } = provider();
    const tool = { ...invoiceTool(), source: 'billing-server' } as ReturnType<typeof invoiceTool>;
    const { dispatch } = setup(p, tool);

    expectResult(await dispatch());

    expect(requests[0]?.context.toolSource).toBe('billing-server');
  });

  it('never asks the provider for a tool without needs', async () => {
    const { provider: p, requests } = provider();
    const tool = recordingTool({ name: 'plain' });
    const { dispatch } = setup(p, tool);

    const outcome = expectResult(await dispatch());

    expect(requests).toHaveLength(0);
    expect(tool.calls[0]?.ctx.credential).toBeUndefined();
    expect(outcome.ledger.find((row) => row.gate === 'credentials')?.why).toBe('no credential needed');
  });

  it('resolves only after check-in: not on a paused call, once on the approved resume', async () => {
    const { provider: p, requests } = provider();
    const tool = invoiceTool({ checkIn: 'always' });
    const { dispatch, dispatcher } = setup(p, tool);

    const paused = expectPaused(await dispatch());
    expect(requests).toHaveLength(0);

    expectResult(await dispatcher.resume(paused.checkIn, checkInApproved({ by: 'ops' })));

    expect(requests).toHaveLength(1);
    expect(tool.calls[0]?.secret).toBe(SECRET);
  });

  const failures: Array<[string, () => unknown, string]> = [
    [
      'throws',
      () => {
        throw new Error(`vault sealed; last token ${SECRET}`);
      },
      'threw',
    ],
    ['rejects', () => Promise.reject(new Error(`vault said no to ${SECRET}`)), 'threw'],
    ['answers undefined', () => undefined, 'malformed'],
    ['answers null', () => null, 'malformed'],
    ['answers {}', () => ({}), 'malformed'],
    ['answers without a value', () => ({ kind: 'api_key' }), 'malformed'],
    ['answers an empty value', () => ({ kind: 'api_key', value: '' }), 'malformed'],
    ['answers without a kind', () => ({ value: SECRET }), 'malformed'],
    [
      'answers a record with a non-string value',
      () => ({ kind: 'basic', value: { user: 'u', password: 7 } }),
      'malformed',
    ],
    [
      'answers an expired credential',
      () => ({ kind: 'api_key', value: SECRET, expiresAt: '2001-01-01T00:00:00Z' }),
      'expired',
    ],
    [
      'answers an epoch-ms expiry in the past',
      () => ({ kind: 'api_key', value: SECRET, expiresAt: 1_000 }),
      'expired',
    ],
    [
      'answers an unreadable expiry',
      () => ({ kind: 'api_key', value: SECRET, expiresAt: 'soon' }),
      'expired',
    ],
  ];

  it.each(failures)(
    'a provider that %s refuses naming kind and service, never the secret or its text',
    async (_, answer, failure) => {
      const { provider: p } = provider(answer);
      const { dispatch, tool, events } = setup(p);

      const outcome = expectRefused(await dispatch());

      expect(tool.calls).toHaveLength(0);
      expect(outcome).toMatchObject({
        gate: 'credentials',
        code: 'CREDENTIAL_FAILED',
        retryable: true,
        ran: false,
      });
      expect(outcome.content).toBe(
        "[credentials refused: 'send_invoice' needs its 'api_key' credential for 'billing', which could not be obtained. " +
          'Retrying later may help. Continue without it for now.]',
      );
      expect(eventsOf(events, 'credential.failed')).toEqual([
        expect.objectContaining({ kind: 'api_key', service: 'billing', failure }),
      ]);
      const everything = JSON.stringify({ outcome, events });
      expect(everything).not.toContain(SECRET);
      expect(everything).not.toContain('vault');
    },
  );

  it('a provider that never answers is refused at its deadline', async () => {
    const { provider: p, requests } = provider(() => never());
    const { dispatch, tool, events } = setup(p, invoiceTool(), 20);

    const outcome = expectRefused(await dispatch());

    expect(tool.calls).toHaveLength(0);
    expect(outcome.code).toBe('CREDENTIAL_FAILED');
    expect(eventsOf(events, 'credential.failed')[0]).toMatchObject({ failure: 'timeout' });
    expect(requests[0]?.context.signal.aborted).toBe(true);
  });

  it('judges expiry by its own clock and accepts a credential that is still valid', async () => {
    const clock = manualClock(Date.parse('2031-01-01T00:00:00.000Z'));
    const expiresAt = '2031-01-01T00:01:00.000Z';
    const { provider: p } = provider(() => ({ kind: 'api_key', value: SECRET, expiresAt }));
    const tool = invoiceTool();
    const dispatcher = createDispatcher({
      tools: [tool],
      chain: createChain([credentialsGate(p, { now: clock.now })]),
    });

    expectResult(await dispatcher.dispatch({ toolName: 'send_invoice', args: {} }));
    clock.advance(60_000);
    const late = expectRefused(await dispatcher.dispatch({ toolName: 'send_invoice', args: {} }));

    expect(tool.calls).toHaveLength(1);
    expect(tool.calls[0]?.ctx.credential?.expiresAt).toBe(expiresAt);
    expect(late.code).toBe('CREDENTIAL_FAILED');
  });

  it('judges expiry by the dispatcher clock when the gate is given none', async () => {
    const clock = manualClock(Date.parse('2031-01-01T00:00:00.000Z'));
    const { provider: p } = provider(() => ({
      kind: 'api_key',
      value: SECRET,
      expiresAt: '2031-01-01T00:01:00.000Z',
    }));
    const tool = invoiceTool();
    const dispatcher = createDispatcher({
      tools: [tool],
      chain: createChain([credentialsGate(p)]),
      clock: clock.now,
    });

    expectResult(await dispatcher.dispatch({ toolName: 'send_invoice', args: {} }));
    clock.advance(60_000);
    const late = expectRefused(await dispatcher.dispatch({ toolName: 'send_invoice', args: {} }));

    expect(tool.calls).toHaveLength(1);
    expect(late.code).toBe('CREDENTIAL_FAILED');
  });

  it('keeps the secret out of JSON.stringify, util.inspect, spread, structuredClone and String()', async () => {
    const { provider: p } = provider(() => ({ kind: 'basic', value: { user: 'svc', password: SECRET } }));
    const { dispatch, tool } = setup(p);

    expectResult(await dispatch());
    const credential = tool.calls[0]!.ctx.credential as Credential;
    const ctx = tool.calls[0]!.ctx;

    expect(credential.reveal()).toEqual({ user: 'svc', password: SECRET });
    const views = [
      JSON.stringify(credential),
      inspect(credential, { depth: null, showHidden: true }),
      JSON.stringify({ ...credential }),
      inspect({ ...credential }, { depth: null }),
      inspect(structuredClone(credential), { depth: null }),
      String(credential),
      `${credential}`,
      JSON.stringify(ctx),
    ];
    for (const view of views) expect(view).not.toContain(SECRET);
  });

  it('redacts the secret from an error the tool throws', async () => {
    const { provider: p } = provider();
    const tool = invoiceTool({}, (_, ctx) => {
      throw new Error(`billing rejected key ${String(ctx.credential?.reveal())}`);
    });
    const { dispatch, events } = setup(p, tool);

    const outcome = await dispatch();

    expect(outcome.kind).toBe('failed');
    expect(outcome.content).toContain('billing rejected key [redacted]');
    expect(JSON.stringify({ outcome, events })).not.toContain(SECRET);
  });

  it('refuses to build a dispatcher for a tool with needs when the chain has no provider', () => {
    const build = () => createDispatcher({ tools: [invoiceTool()], chain: canonicalChain() });

    expect(build).toThrow(DispatcherConfigError);
    expect(build).toThrow(
      /tool 'send_invoice' cannot be served by gate 'credentials': it needs a credential of kind 'api_key' for 'billing' but the chain has no credential provider; pass 'credentials'/,
    );
  });

  it('refuses a provider without a resolve method at build', () => {
    expect(() => credentialsGate({} as CredentialProvider)).toThrow(/resolve\(need, context\) method/);
  });
});
