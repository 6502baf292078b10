import {
  createChain,
  createDispatcher,
  DispatcherConfigError,
  isArtifactRef,
  newArtifactRef,
  type ArtifactStore,
  type Identity,
} from '@toolgate/core';
import { canonicalChain, inMemoryArtifacts, wantsGate } from '@toolgate/middleware';
import {
  eventsOf,
  expectRefused,
  expectResult,
  manualClock,
  never,
  recordEvents,
  recordingTool,
} from './fixtures';

const ANN: Identity = { tenant: 'acme', principal: 'ann', conversation: 'conv-1' };
const BOB: Identity = { tenant: 'globex', principal: 'bob', conversation: 'conv-9' };
const DATA = { rows: ['ROW-DATA-MARKER-1', 'ROW-DATA-MARKER-2'] };

function summarizeTool() {
  return recordingTool({
    name: 'summarize',
    inputSchema: {
      type: 'object',
      properties: { report: { type: 'string' }, chart: { type: 'string' }, style: { type: 'string' } },
      required: ['report'],
    },
    wants: { report: 'report/rows', chart: 'image/png' },
  });
}

function setup(store: ArtifactStore = inMemoryArtifacts(), tool = summarizeTool()) {
  const dispatcher = createDispatcher({ tools: [tool], chain: canonicalChain({ artifacts: store }) });
  const events = recordEvents(dispatcher);
  const dispatch = (args: Record<string, unknown>, identity: Identity = ANN) =>
    dispatcher.dispatch({ toolName: tool.schema.name, args }, { identity });
  return { dispatch, events, tool, store };
}

/** Refs listed in a refusal, in order. */
function listedRefs(text: string): string[] {
  return text.match(/art_[0-9A-Za-z]{22}/g) ?? [];
}

describe('wants gate', () => {
  it('resolves a ref in the caller’s scope and swaps its data into the args', async () => {
    const { dispatch, tool, store, events } = setup();
    const ref = await store.put(ANN, { kind: 'report/rows', data: DATA });

    const outcome = expectResult(await dispatch({ report: ref, style: 'brief' }));

    expect(tool.calls).toHaveLength(1);
    expect(tool.calls[0]?.args).toEqual({ report: DATA, style: 'brief' });
    expect(tool.calls[0]?.wanted).toEqual({
      report: expect.objectContaining({ ref, kind: 'report/rows', createdAt: expect.any(String) }),
    });
    expect(outcome.ledger.find((row) => row.gate === 'wants')).toEqual({
      gate: 'wants',
      outcome: 'transform',
      why: "resolved artifact refs for 'report'",
      changed: true,
    });
    expect(eventsOf(events, 'artifacts.resolved')).toEqual([
      expect.objectContaining({ refs: [{ arg: 'report', ref, kind: 'report/rows' }] }),
    ]);
    expect(JSON.stringify(events)).not.toContain('ROW-DATA-MARKER');
  });

  it('resolves every wanted arg the model passed', async () => {
    const { dispatch, tool, store } = setup();
    const report = await store.put(ANN, { kind: 'report/rows', data: DATA });
    const chart = await store.put(ANN, { kind: 'image/png', data: 'PNG-BYTES' });

    expectResult(await dispatch({ report, chart }));

    expect(tool.calls[0]?.args).toEqual({ report: DATA, chart: 'PNG-BYTES' });
    expect(Object.keys(tool.calls[0]?.wanted ?? {})).toEqual(['report', 'chart']);
  });

  it('runs without an optional wanted arg the model left out, with no wanted entry for it', async () => {
    const { dispatch, tool, store } = setup();
    const ref = await store.put(ANN, { kind: 'report/rows', data: DATA });

    expectResult(await dispatch({ report: ref }));

    expect(tool.calls[0]?.args).toEqual({ report: DATA });
    expect(tool.calls[0]?.wanted).not.toHaveProperty('chart');
  });

  it('leaves ctx.wanted absent and notes it when no wanted arg was given', async () => {
    const tool = recordingTool({
      name: 'plot',
      inputSchema: { type: 'object', properties: { chart: { type: 'string' } } },
      wants: { chart: 'image/png' },
    });
    const { dispatch } = setup(inMemoryArtifacts(), tool);

    const outcome = expectResult(await dispatch({}));

    expect(tool.calls[0]?.wanted).toBeUndefined();
    expect(outcome.ledger.find((row) => row.gate === 'wants')).toEqual({
      gate: 'wants',
      outcome: 'allow',
      why: 'no wanted args given',
      changed: false,
    });
  });

  it('refuses a call missing a required wanted arg, naming the arg', async () => {
    const { dispatch, tool } = setup();

    const outcome = expectRefused(await dispatch({ style: 'brief' }));

    expect(tool.calls).toHaveLength(0);
    expect(outcome.content).toContain("'report'");
  });

  it('on its own, refuses a missing required wanted arg naming the arg, its kind and the live refs', async () => {
    const store = inMemoryArtifacts();
    const tool = summarizeTool();
    const live = await store.put(ANN, { kind: 'report/rows', data: DATA });
    const dispatcher = createDispatcher({ tools: [tool], chain: createChain([wantsGate({ store })]) });

    const outcome = expectRefused(
      await dispatcher.dispatch({ toolName: 'summarize', args: {} }, { identity: ANN }),
    );

    expect(tool.calls).toHaveLength(0);
    expect(outcome).toMatchObject({ gate: 'wants', code: 'ARTIFACT_MISSING' });
    expect(outcome.content).toBe(
      `[wants refused: 'summarize' needs 'report': an artifact ref of kind 'report/rows'. ` +
        `Live 'report/rows' artifacts: ${live}. Call it again with one of those refs.]`,
    );
  });

  it('refuses an unknown ref and lists at most ten live refs of the wanted kind from the caller’s own scope', async () => {
    const { dispatch, tool, store } = setup();
    const own: string[] = [];
    for (let i = 0; i < 12; i++) own.push(await store.put(ANN, { kind: 'report/rows', data: { i } }));
    const otherKind = await store.put(ANN, { kind: 'image/png', data: 'png' });
    const otherTenant = await store.put(BOB, { kind: 'report/rows', data: DATA });

    const outcome = expectRefused(await dispatch({ report: newArtifactRef() }));

    expect(tool.calls).toHaveLength(0);
    expect(outcome).toMatchObject({ gate: 'wants', code: 'ARTIFACT_NOT_FOUND', retryable: false });
    const listed = listedRefs(outcome.reason);
    expect(listed).toHaveLength(10);
    expect(listed.every((ref) => own.includes(ref))).toBe(true);
    expect(listed).not.toContain(otherKind);
    expect(listed).not.toContain(otherTenant);
    expect(outcome.reason).toMatch(
      /^'report' does not refer to a live 'report\/rows' artifact\. Live 'report\/rows' artifacts: /,
    );
  });

  it('refuses an expired ref and no longer lists it', async () => {
    const clock = manualClock();
    const { dispatch, tool, store } = setup(inMemoryArtifacts({ now: clock.now }));
    const shortLived = await store.put(ANN, { kind: 'report/rows', data: DATA, ttlMs: 60_000 });
    const lasting = await store.put(ANN, { kind: 'report/rows', data: DATA });

    expectResult(await dispatch({ report: shortLived }));
    clock.advance(60_000);
    const outcome = expectRefused(await dispatch({ report: shortLived }));

    expect(tool.calls).toHaveLength(1);
    expect(outcome.code).toBe('ARTIFACT_NOT_FOUND');
    expect(listedRefs(outcome.reason)).toEqual([lasting]);
  });

  it('refuses another tenant’s ref with exactly the text of an unknown ref', async () => {
    const { dispatch, tool, store, events } = setup();
    await store.put(ANN, { kind: 'report/rows', data: { mine: true } });
    const theirs = await store.put(BOB, { kind: 'report/rows', data: DATA });

    const otherTenant = expectRefused(await dispatch({ report: theirs }));
    const unknown = expectRefused(await dispatch({ report: newArtifactRef() }));

    expect(tool.calls).toHaveLength(0);
    expect(otherTenant.content).toBe(unknown.content);
    expect(otherTenant.code).toBe(unknown.code);
    expect(otherTenant.content).not.toContain(theirs);
    expect(JSON.stringify(events)).not.toContain('ROW-DATA-MARKER');
  });

  it('refuses another principal’s or conversation’s ref inside the same tenant', async () => {
    const { dispatch, store } = setup();
    const otherPrincipal = await store.put(
      { ...ANN, principal: 'carol' },
      { kind: 'report/rows', data: DATA },
    );
    const otherConversation = await store.put(
      { ...ANN, conversation: 'conv-2' },
      { kind: 'report/rows', data: DATA },
    );

    expect(expectRefused(await dispatch({ report: otherPrincipal })).code).toBe('ARTIFACT_NOT_FOUND');
    expect(expectRefused(await dispatch({ report: otherConversation })).code).toBe('ARTIFACT_NOT_FOUND');
  });

  it('refuses a string that is not a ref, without repeating it, and lists the live refs', async () => {
    const { dispatch, store, events } = setup();
    const live = await store.put(ANN, { kind: 'report/rows', data: DATA });

    const outcome = expectRefused(await dispatch({ report: 'quarterly-report-final.csv' }));

    expect(outcome.code).toBe('ARTIFACT_NOT_FOUND');
    expect(listedRefs(outcome.reason)).toEqual([live]);
    expect(outcome.content).not.toContain('quarterly-report-final');
    expect(eventsOf(events, 'artifacts.refused')).toEqual([
      expect.objectContaining({ arg: 'report', wantedKind: 'report/rows', failure: 'not found' }),
    ]);
    expect(eventsOf(events, 'artifacts.refused')[0]).not.toHaveProperty('ref');
  });

  it('tells the model to create an artifact first when none of the wanted kind is live', async () => {
    const { dispatch } = setup();

    const outcome = expectRefused(await dispatch({ report: newArtifactRef() }));

    expect(outcome.reason).toBe(
      "'report' does not refer to a live 'report/rows' artifact. " +
        "There is no live 'report/rows' artifact in this conversation. Create one first, then call it again.",
    );
  });

  it('refuses a ref of the wrong kind, naming both kinds', async () => {
    const { dispatch, tool, store, events } = setup();
    const image = await store.put(ANN, { kind: 'image/png', data: 'PNG' });

    const outcome = expectRefused(await dispatch({ report: image }));

    expect(tool.calls).toHaveLength(0);
    expect(outcome.code).toBe('ARTIFACT_WRONG_KIND');
    expect(outcome.reason).toContain(
      "'report' refers to an artifact of kind 'image/png', but 'summarize' needs kind 'report/rows'",
    );
    expect(eventsOf(events, 'artifacts.refused')).toEqual([
      expect.objectContaining({
        arg: 'report',
        wantedKind: 'report/rows',
        ref: image,
        failure: 'wrong kind',
      }),
    ]);
  });

  it('carries refs and kinds in its events, never data', async () => {
    const { dispatch, store, events } = setup();
    const ref = await store.put(ANN, { kind: 'report/rows', data: DATA });

    await dispatch({ report: ref });
    await dispatch({ report: newArtifactRef() });

    const resolved = eventsOf(events, 'artifacts.resolved');
    const refused = eventsOf(events, 'artifacts.refused');
    expect(resolved).toHaveLength(1);
    expect(refused).toHaveLength(1);
    expect(isArtifactRef(refused[0]?.['ref'])).toBe(true);
    expect(JSON.stringify(events)).not.toContain('ROW-DATA-MARKER');
  });

  it('asks the store in the scope made from the caller’s identity', async () => {
    const inner = inMemoryArtifacts();
    const scopes: unknown[] = [];
    const store: ArtifactStore = {
      put: (scope, artifact) => inner.put(scope, artifact),
      get: (scope, ref) => {
        scopes.push(scope);
        return inner.get(scope, ref);
      },
      list: (scope, kind, limit) => inner.list(scope, kind, limit),
    };
    const ref = await inner.put(ANN, { kind: 'report/rows', data: DATA });
    const { dispatch } = setup(store);

    expectResult(await dispatch({ report: ref }));

    expect(scopes).toEqual([{ tenant: 'acme', principal: 'ann', conversation: 'conv-1' }]);
  });

  const failingStores: Array<[string, Partial<ArtifactStore>]> = [
    ['get throws', { get: () => Promise.reject(new Error('connection refused: pg://user:pw@db')) }],
    ['get never answers', { get: () => never() }],
    [
      'list throws while listing live refs',
      { get: async () => undefined, list: () => Promise.reject(new Error('pw')) },
    ],
  ];

  it.each(failingStores)(
    'a store whose %s refuses with a retryable ARTIFACT_STORE_FAILED and the tool never runs',
    async (_, broken) => {
      const store = { ...inMemoryArtifacts(), ...broken } as ArtifactStore;
      const tool = summarizeTool();
      const dispatcher = createDispatcher({
        tools: [tool],
        chain: canonicalChain({ artifacts: store, deadlineMs: 20 }),
      });
      const events = recordEvents(dispatcher);

      const outcome = expectRefused(
        await dispatcher.dispatch(
          { toolName: 'summarize', args: { report: newArtifactRef() } },
          { identity: ANN },
        ),
      );

      expect(tool.calls).toHaveLength(0);
      expect(outcome).toMatchObject({ gate: 'wants', code: 'ARTIFACT_STORE_FAILED', retryable: true });
      expect(outcome.content).toBe(
        "[wants refused: 'summarize' could not read the artifact for 'report' because the artifact store is unavailable. " +
          'Retrying later may help.]',
      );
      expect(JSON.stringify({ outcome, events })).not.toContain('pg://');
      expect(eventsOf(events, 'artifacts.refused')).toEqual([
        expect.objectContaining({ arg: 'report', failure: 'store failed' }),
      ]);
    },
  );

  it('refuses to build a dispatcher for a wants tool when the chain has no artifact store', () => {
    expect(() => createDispatcher({ tools: [summarizeTool()], chain: canonicalChain() })).toThrow(
      DispatcherConfigError,
    );
    expect(() => createDispatcher({ tools: [summarizeTool()], chain: canonicalChain() })).toThrow(
      /tool 'summarize' cannot be served by gate 'wants': it wants artifacts \(report, chart\) but the chain has no artifact store; pass 'artifacts'/,
    );
  });

  it('refuses a store without get and list at build', () => {
    expect(() => wantsGate({ store: { put: async () => 'x' } as unknown as ArtifactStore })).toThrow(
      /get\(scope, ref\) and list\(scope, kind, limit\)/,
    );
  });
});
