import {
  checkInApproved,
  checkInDeclined,
  createChain,
  createDispatcher,
  createSigner,
  DispatcherConfigError,
  digestOf,
  inMemoryCheckIns,
  type ArtifactStore,
  type CheckInRequest,
  type DispatchOutcome,
  type Identity,
  type Middleware,
  type PermissionChecker,
  type ToolMiddlewareContext,
} from '@toolgate/core';
import {
  canonicalChain,
  checkInGate,
  inMemoryArtifacts,
  type CanonicalChainOptions,
} from '@toolgate/middleware';
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

const ANN: Identity = { tenant: 'acme', principal: 'ann', conversation: 'c1' };

const REFUND_SCHEMA = {
  type: 'object',
  properties: {
    customer: { type: 'string' },
    amount: { type: 'number' },
    currency: { type: 'string', default: 'EUR' },
  },
  required: ['customer', 'amount'],
};

function refundTool(spec: RecordingToolSpec = {}) {
  return recordingTool(
    { name: 'refund', inputSchema: REFUND_SCHEMA, checkIn: 'always', ...spec },
    (args) => ({
      refunded: args['amount'],
    }),
  );
}

function setup(
  options: { tool?: ReturnType<typeof refundTool>; chain?: CanonicalChainOptions; use?: Middleware } = {},
) {
  const clock = manualClock();
  const checkIns = inMemoryCheckIns({ now: clock.now });
  const tool = options.tool ?? refundTool();
  let chain = canonicalChain({ checkInKey: KEY, checkIns, ...options.chain });
  if (options.use !== undefined) chain = chain.use(options.use);
  const dispatcher = createDispatcher({ tools: [tool], chain, clock: clock.now });
  const events = recordEvents(dispatcher);
  const dispatch = (
    args: Record<string, unknown> = { customer: 'cus_1', amount: 40 },
    identity: Identity = ANN,
  ) => dispatcher.dispatch({ toolName: 'refund', args }, { identity });
  return { clock, checkIns, tool, chain, dispatcher, events, dispatch };
}

/** A JSON round trip: what a request looks like after a UI, a queue or a database. */
function travelled(request: CheckInRequest): CheckInRequest {
  return JSON.parse(JSON.stringify(request)) as CheckInRequest;
}

const APPROVED = checkInApproved({ by: 'supervisor@acme', note: 'checked the order' });

describe('check-in gate', () => {
  it("pauses a tool declaring checkIn 'always' and files an ask row; the tool does not run", async () => {
    const { dispatch, tool, events } = setup();

    const outcome = expectPaused(await dispatch());

    expect(tool.calls).toHaveLength(0);
    expect(outcome.ran).toBe(false);
    expect(outcome.ledger.at(-1)).toEqual({
      gate: 'check-in',
      outcome: 'ask',
      why: "Allow 'refund' to run with the arguments shown?",
      changed: false,
    });
    expect(eventsOf(events, 'checkin.requested')).toEqual([
      expect.objectContaining({
        requestId: outcome.checkIn.id,
        asker: 'check-in',
        expiresAt: outcome.checkIn.expiresAt,
      }),
    ]);
  });

  it('pauses when the predicate returns true and runs without pausing when it returns false', async () => {
    const seen: unknown[] = [];
    const tool = refundTool({
      checkIn: (args) => {
        seen.push(args);
        return (args['amount'] as number) > 100;
      },
    });
    const { dispatch } = setup({ tool });

    const small = expectResult(await dispatch({ customer: 'cus_1', amount: 40 }));
    expectPaused(await dispatch({ customer: 'cus_1', amount: 400 }));

    expect(tool.calls).toHaveLength(1);
    expect(small.ledger.find((row) => row.gate === 'check-in')).toEqual({
      gate: 'check-in',
      outcome: 'allow',
      why: 'check-in not needed for these args',
      changed: false,
    });
    // The predicate judges the final args, defaults applied.
    expect(seen[0]).toEqual({ customer: 'cus_1', amount: 40, currency: 'EUR' });
  });

  it('pauses when the predicate throws: a rule that cannot decide asks the human', async () => {
    const tool = refundTool({
      checkIn: () => {
        throw new Error('rule engine down');
      },
    });
    const { dispatch } = setup({ tool });

    const outcome = expectPaused(await dispatch());

    expect(tool.calls).toHaveLength(0);
    expect(JSON.stringify(outcome)).not.toContain('rule engine down');
  });

  it('gives a predicate that never answers the gate deadline, then asks the person (fail closed)', async () => {
    jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask'] });
    try {
      let asked = 0;
      const tool = refundTool({
        checkIn: () => {
          asked++;
          return never<boolean>();
        },
      });
      const { dispatcher, dispatch } = setup({ tool, chain: { deadlineMs: 1_000 } });
      const failures: unknown[] = [];
      dispatcher.on('checkin.predicate-failed' as never, (event: unknown) => failures.push(event));
      let settled: DispatchOutcome | undefined;
      const pending = dispatch().then((outcome) => (settled = outcome));

      await jest.advanceTimersByTimeAsync(999);
      expect(settled).toBeUndefined();
      await jest.advanceTimersByTimeAsync(1);

      // Signing the request is Web Crypto's work, off the fake clock: wait for it, not for time.
      expect((await pending).kind).toBe('paused');
      expect(asked).toBe(1);
      expect(tool.calls).toHaveLength(0);
      expect(failures).toEqual([
        expect.objectContaining({ gate: 'check-in', toolName: 'refund', failure: 'timeout' }),
      ]);
    } finally {
      jest.useRealTimers();
    }
  });

  it("reports a predicate that throws as 'threw', without its message", async () => {
    const tool = refundTool({
      checkIn: () => {
        throw new Error('rule engine down');
      },
    });
    const { dispatcher, dispatch } = setup({ tool });
    const failures: unknown[] = [];
    dispatcher.on('checkin.predicate-failed' as never, (event: unknown) => failures.push(event));

    expectPaused(await dispatch());

    expect(failures).toEqual([expect.objectContaining({ failure: 'threw' })]);
    expect(JSON.stringify(failures)).not.toContain('rule engine down');
  });

  it.each([
    ['undefined (a forgotten return)', () => undefined],
    ["the string 'no'", () => 'no'],
    ['a truthy object', () => ({ needed: false })],
    ['a promise of undefined', async () => undefined],
  ])('pauses when the predicate answers %s: only an explicit false skips the human', async (_, answer) => {
    const tool = refundTool({ checkIn: answer as unknown as () => boolean });
    const { dispatch } = setup({ tool });

    expectPaused(await dispatch());

    expect(tool.calls).toHaveLength(0);
  });

  it('runs without pausing when an async predicate resolves to false', async () => {
    const tool = refundTool({ checkIn: async () => false });
    const { dispatch } = setup({ tool });

    expectResult(await dispatch());

    expect(tool.calls).toHaveLength(1);
  });

  it('pauses with a JSON-serializable request that still resumes after a round trip', async () => {
    const { dispatch, dispatcher, tool } = setup();
    const { checkIn } = expectPaused(await dispatch());

    const copy = travelled(checkIn);
    const outcome = expectResult(await dispatcher.resume(copy, APPROVED));

    expect(copy).toEqual(checkIn);
    expect(tool.calls).toHaveLength(1);
    expect(outcome.value).toEqual({ refunded: 40 });
  });

  it('carries question, evidence, component, identity, times and both args and review', async () => {
    const evidence = (ctx: ToolMiddlewareContext) => ({ customer: ctx.args['customer'], lastOrders: 3 });
    const tool = refundTool({ checkInComponent: { id: 'refund-approval', props: { theme: 'red' } } });
    const { dispatch, clock } = setup({ tool, chain: { evidence, checkInTtlMs: 60_000 } });

    const { checkIn } = expectPaused(await dispatch({ customer: 'cus_1', amount: 40 }));

    expect(checkIn).toMatchObject({
      asker: 'check-in',
      toolName: 'refund',
      question: "Allow 'refund' to run with the arguments shown?",
      evidence: { customer: 'cus_1', lastOrders: 3 },
      component: { id: 'refund-approval', props: { theme: 'red' } },
      identity: ANN,
      args: { customer: 'cus_1', amount: 40 },
      review: { customer: 'cus_1', amount: 40, currency: 'EUR' },
      createdAt: new Date(clock.now()).toISOString(),
      expiresAt: new Date(clock.now() + 60_000).toISOString(),
      signature: expect.stringMatching(/^[0-9a-f]{64}$/),
    });
    expect(checkIn.argsDigest).toBe(await digestOf(checkIn.review));
  });

  it('digests the final args, so key order does not matter and defaults count', async () => {
    const { dispatch } = setup();

    const a = expectPaused(await dispatch({ customer: 'cus_1', amount: 40 })).checkIn;
    const b = expectPaused(await dispatch({ amount: 40, customer: 'cus_1' })).checkIn;
    const explicit = expectPaused(await dispatch({ customer: 'cus_1', amount: 40, currency: 'EUR' })).checkIn;
    const other = expectPaused(await dispatch({ customer: 'cus_1', amount: 41 })).checkIn;

    expect(b.argsDigest).toBe(a.argsDigest);
    expect(explicit.argsDigest).toBe(a.argsDigest);
    expect(other.argsDigest).not.toBe(a.argsDigest);
    expect(a.argsDigest).toBe(await digestOf({ currency: 'EUR', amount: 40, customer: 'cus_1' }));
  });

  it('shows a resolved artifact to the human by its ref and hands its data to the tool on resume', async () => {
    const artifacts = inMemoryArtifacts();
    const ref = await artifacts.put(ANN, { kind: 'refund/batch', data: { lines: ['ARTIFACT-DATA-MARKER'] } });
    const tool = recordingTool({
      name: 'refund',
      inputSchema: { type: 'object', properties: { batch: { type: 'string' } }, required: ['batch'] },
      wants: { batch: 'refund/batch' },
      checkIn: 'always',
    });
    const { dispatch, dispatcher } = setup({ tool, chain: { artifacts } });

    const { checkIn } = expectPaused(await dispatch({ batch: ref }));
    const outcome = expectResult(await dispatcher.resume(checkIn, APPROVED));

    expect(checkIn.review).toEqual({ batch: ref });
    expect(checkIn.argsDigest).toBe(await digestOf({ batch: ref }));
    expect(JSON.stringify(checkIn)).not.toContain('ARTIFACT-DATA-MARKER');
    expect(outcome.receipts).toHaveLength(1);
    expect(tool.calls[0]?.args).toEqual({ batch: { lines: ['ARTIFACT-DATA-MARKER'] } });
  });

  describe('a component propsRef', () => {
    async function withProps(owner: Identity, store: ArtifactStore = inMemoryArtifacts()) {
      const propsRef = await store.put(owner, { kind: 'screen/props', data: { rows: 3 } });
      const tool = refundTool({ checkInComponent: { id: 'refund-approval', propsRef } });
      return setup({ tool, chain: { artifacts: store } });
    }

    it('must resolve in the call’s artifact scope for the call to pause', async () => {
      const { dispatch } = await withProps(ANN);

      const { checkIn } = expectPaused(await dispatch());

      expect(checkIn.component).toEqual({ id: 'refund-approval', propsRef: expect.stringMatching(/^art_/) });
    });

    it('refuses the call when it lives in another scope', async () => {
      const { dispatch, tool } = await withProps({ tenant: 'globex' });

      const outcome = expectRefused(await dispatch());

      expect(tool.calls).toHaveLength(0);
      expect(outcome).toMatchObject({
        gate: 'check-in',
        code: 'CHECKIN_COMPONENT_MISSING',
        retryable: false,
      });
      expect(outcome.content).toBe(
        "[check-in refused: 'refund' needs a person's approval, but the approval screen's data is missing in this scope. " +
          'Retrying will not help. Tell the user the action cannot be approved right now.]',
      );
    });

    it('refuses with a retryable refusal when the store fails', async () => {
      const store = inMemoryArtifacts();
      const propsRef = await store.put(ANN, { kind: 'screen/props', data: {} });
      const tool = refundTool({ checkInComponent: { id: 'refund-approval', propsRef } });
      const broken: ArtifactStore = { ...store, get: () => never() };
      const { dispatch } = setup({ tool, chain: { artifacts: broken, deadlineMs: 20 } });

      const outcome = expectRefused(await dispatch());

      expect(outcome).toMatchObject({ gate: 'check-in', code: 'ARTIFACT_STORE_FAILED', retryable: true });
    });

    it('cannot be served by a chain without an artifact store', () => {
      const tool = refundTool({
        checkInComponent: { id: 'refund-approval', propsRef: 'art_0000000000000000000000' },
      });

      expect(() => setup({ tool })).toThrow(/tool 'refund' cannot be served by gate 'check-in'.*propsRef/);
    });
  });

  it('runs the tool exactly once on an approved resume and returns a receipt', async () => {
    const { dispatch, dispatcher, tool, chain, events } = setup();
    const paused = expectPaused(await dispatch());

    const outcome = expectResult(await dispatcher.resume(paused.checkIn, APPROVED));

    expect(tool.calls).toHaveLength(1);
    expect(tool.calls[0]?.ctx.resumed).toBe(true);
    expect(tool.calls[0]?.ctx.checkIn).toEqual(APPROVED);
    expect(outcome.receipts).toEqual([
      {
        requestId: paused.checkIn.id,
        asker: 'check-in',
        by: 'supervisor@acme',
        note: 'checked the order',
        approvedAt: expect.any(String),
        argsDigest: paused.checkIn.argsDigest,
        chainIdRaised: chain.id,
        chainIdRun: chain.id,
        signature: expect.stringMatching(/^[0-9a-f]{64}$/),
      },
    ]);
    expect(outcome.ledger.find((row) => row.gate === 'check-in')).toEqual({
      gate: 'check-in',
      outcome: 'allow',
      why: 'approved by supervisor@acme',
      changed: false,
    });
    expect(await chain.checkInStore?.get(paused.checkIn.id)).toMatchObject({ state: 'consumed' });
    expect(eventsOf(events, 'checkin.resolved')).toEqual([
      expect.objectContaining({ requestId: paused.checkIn.id, approved: true, by: 'supervisor@acme' }),
    ]);
  });

  it('refuses a replayed approval: each request is good for one run', async () => {
    const { dispatch, dispatcher, tool, events } = setup();
    const { checkIn } = expectPaused(await dispatch());
    expectResult(await dispatcher.resume(checkIn, APPROVED));

    const replay = expectRefused(await dispatcher.resume(travelled(checkIn), APPROVED));

    expect(tool.calls).toHaveLength(1);
    expect(replay).toMatchObject({ gate: 'check-in', code: 'CHECKIN_NOT_PENDING' });
    expect(replay.content).toContain('already used, revoked or has expired');
    expect(eventsOf(events, 'checkin.resolved').at(-1)).toMatchObject({
      approved: false,
      failure: 'not pending',
    });
  });

  it('refuses a forged signature', async () => {
    const { dispatch, dispatcher, tool } = setup();
    const { checkIn } = expectPaused(await dispatch());

    const forged = { ...travelled(checkIn), signature: 'ab'.repeat(32) };
    const otherKey = await createSigner('another-deployment-key').sign(
      Object.fromEntries(Object.entries(checkIn).filter(([field]) => field !== 'signature')),
    );
    const signedElsewhere = { ...travelled(checkIn), signature: otherKey };

    const outcomes = [
      expectRefused(await dispatcher.resume(forged, APPROVED)),
      expectRefused(await dispatcher.resume(signedElsewhere, APPROVED)),
    ];

    expect(tool.calls).toHaveLength(0);
    expect(outcomes.map((o) => o.code)).toEqual(['CHECKIN_SIGNATURE', 'CHECKIN_SIGNATURE']);
    expect(outcomes[0]?.content).toContain('was not issued by this deployment or was altered');
  });

  it.each([
    ['args', (r: CheckInRequest) => ({ ...r, args: { ...r.args, amount: 4000 } })],
    ['review', (r: CheckInRequest) => ({ ...r, review: { ...r.review, amount: 4000 } })],
    ['argsDigest', (r: CheckInRequest) => ({ ...r, argsDigest: '0'.repeat(64) })],
    ['expiresAt', (r: CheckInRequest) => ({ ...r, expiresAt: '2999-01-01T00:00:00.000Z' })],
  ])('refuses a request whose %s was tampered with after signing', async (_, tamper) => {
    const { dispatch, dispatcher, tool } = setup();
    const { checkIn } = expectPaused(await dispatch());

    const outcome = expectRefused(await dispatcher.resume(tamper(travelled(checkIn)), APPROVED));

    expect(tool.calls).toHaveLength(0);
    expect(outcome.code).toBe('CHECKIN_SIGNATURE');
  });

  it('refuses a validly signed request whose args differ from the ones the human reviewed', async () => {
    const { dispatch, dispatcher, tool } = setup();
    const { checkIn } = expectPaused(await dispatch({ customer: 'cus_1', amount: 40 }));
    const { signature: _, ...unsigned } = travelled(checkIn);
    const swapped = { ...unsigned, args: { customer: 'cus_1', amount: 4000 } };
    const resigned = { ...swapped, signature: await createSigner(KEY).sign(swapped) } as CheckInRequest;

    const outcome = expectRefused(await dispatcher.resume(resigned, APPROVED));

    expect(tool.calls).toHaveLength(0);
    expect(outcome).toMatchObject({ gate: 'check-in', code: 'CHECKIN_MISMATCH' });
    expect(outcome.content).toContain('changed after a person approved them');
  });

  it('refuses when a policy changes the args that would run between pause and resume', async () => {
    let limit = 40;
    const cap: Middleware = {
      name: 'refund-cap',
      transformsArgs: true,
      async run(ctx, next) {
        ctx.setArgs(
          { ...ctx.args, amount: Math.min(ctx.args['amount'] as number, limit) },
          'capped the refund',
        );
        await next();
      },
    };
    const { dispatch, dispatcher, tool } = setup({ use: cap });
    const { checkIn } = expectPaused(await dispatch({ customer: 'cus_1', amount: 500 }));

    limit = 400;
    const outcome = expectRefused(await dispatcher.resume(checkIn, APPROVED));

    expect(checkIn.review).toMatchObject({ amount: 40 });
    expect(tool.calls).toHaveLength(0);
    expect(outcome.code).toBe('CHECKIN_MISMATCH');
  });

  it('refuses an expired request, judged by the dispatcher clock', async () => {
    const { dispatch, dispatcher, tool, clock } = setup({ chain: { checkInTtlMs: 60_000 } });
    const { checkIn } = expectPaused(await dispatch());

    clock.advance(60_000);
    const outcome = expectRefused(await dispatcher.resume(checkIn, APPROVED));

    expect(tool.calls).toHaveLength(0);
    expect(outcome).toMatchObject({ gate: 'check-in', code: 'CHECKIN_EXPIRED' });
    expect(outcome.content).toContain('has expired');
  });

  it('refuses a request revoked in the store', async () => {
    const { dispatch, dispatcher, tool, chain } = setup();
    const { checkIn } = expectPaused(await dispatch());

    expect(await chain.checkInStore?.revoke(checkIn.id)).toBe(true);
    const outcome = expectRefused(await dispatcher.resume(checkIn, APPROVED));

    expect(tool.calls).toHaveLength(0);
    expect(outcome.code).toBe('CHECKIN_NOT_PENDING');
  });

  it("refuses a declined request with the human's reason, and the approval cannot be reused", async () => {
    const { dispatch, dispatcher, tool, events } = setup();
    const { checkIn } = expectPaused(await dispatch());

    const declined = expectRefused(
      await dispatcher.resume(
        checkIn,
        checkInDeclined({ by: 'supervisor@acme', reason: 'the customer already got a voucher' }),
      ),
    );
    const later = expectRefused(await dispatcher.resume(checkIn, APPROVED));

    expect(tool.calls).toHaveLength(0);
    expect(declined).toMatchObject({ gate: 'check-in', code: 'CHECKIN_DECLINED', retryable: false });
    expect(declined.content).toBe(
      "[check-in refused: 'refund' was declined by supervisor@acme: the customer already got a voucher. " +
        'Do not call it again with the same arguments.]',
    );
    expect(later.code).toBe('CHECKIN_NOT_PENDING');
    expect(eventsOf(events, 'checkin.resolved')[0]).toMatchObject({ approved: false, by: 'supervisor@acme' });
  });

  it('honors a permission revoked while the human was deciding', async () => {
    let open = true;
    const permissions: PermissionChecker = {
      check: () => (open ? { allow: true } : { allow: false, reason: 'refunds are frozen' }),
    };
    const { dispatch, dispatcher, tool } = setup({ chain: { permissions } });
    const { checkIn } = expectPaused(await dispatch());

    open = false;
    const outcome = expectRefused(await dispatcher.resume(checkIn, APPROVED));

    expect(tool.calls).toHaveLength(0);
    expect(outcome).toMatchObject({ gate: 'permission', code: 'PERMISSION_DENIED' });
    expect(outcome.content).toContain('refunds are frozen');
  });

  it('refuses the call when the evidence builder throws, without its message', async () => {
    const { dispatch, tool } = setup({
      chain: {
        evidence: () => {
          throw new Error('crm timeout token=abc123');
        },
      },
    });

    const outcome = expectRefused(await dispatch());

    expect(tool.calls).toHaveLength(0);
    expect(outcome).toMatchObject({ gate: 'check-in', code: 'CHECKIN_EVIDENCE_FAILED' });
    expect(outcome.content).not.toContain('abc123');
  });

  it('waits for an async evidence builder and carries what it resolves to', async () => {
    const { dispatch } = setup({
      chain: { evidence: async (ctx) => ({ orders: 3, customer: ctx.args['customer'] }) },
    });

    const { checkIn } = expectPaused(await dispatch());

    expect(checkIn.evidence).toEqual({ orders: 3, customer: 'cus_1' });
  });

  it('refuses the call when the evidence builder misses its deadline or builds something that is not JSON', async () => {
    const late = setup({ chain: { evidence: () => never(), deadlineMs: 20 } });
    const bigint = setup({ chain: { evidence: () => ({ total: 10n }) } });

    const outcomes = [expectRefused(await late.dispatch()), expectRefused(await bigint.dispatch())];

    expect(outcomes.map((o) => [o.gate, o.code])).toEqual([
      ['check-in', 'CHECKIN_EVIDENCE_FAILED'],
      ['check-in', 'CHECKIN_EVIDENCE_FAILED'],
    ]);
    expect(late.tool.calls.length + bigint.tool.calls.length).toBe(0);
  });

  it('names the MCP server in the question for an imported tool', async () => {
    const tool = { ...refundTool(), source: 'billing-server' } as ReturnType<typeof refundTool>;
    const { dispatch } = setup({ tool });

    const { checkIn } = expectPaused(await dispatch());

    expect(checkIn.question).toBe(
      "Allow 'refund' (from MCP server 'billing-server') to run with the arguments shown?",
    );
    expect(checkIn.toolSource).toBe('billing-server');
  });

  it('notes a tool that declares no check-in and lets it run', async () => {
    const tool = recordingTool({ name: 'refund', inputSchema: REFUND_SCHEMA });
    const { dispatch } = setup({ tool });

    const outcome = expectResult(await dispatch());

    expect(outcome.ledger.find((row) => row.gate === 'check-in')).toEqual({
      gate: 'check-in',
      outcome: 'allow',
      why: 'no check-in declared',
      changed: false,
    });
  });

  it('refuses to build a dispatcher for a checkIn tool when the chain has no check-in key', () => {
    const build = () => createDispatcher({ tools: [refundTool()], chain: canonicalChain() });

    expect(build).toThrow(DispatcherConfigError);
    expect(build).toThrow(
      /tool 'refund' cannot be served by gate 'check-in': it declares checkIn but the chain has no check-in key; pass 'checkInKey'/,
    );
  });

  it('refuses an evidence option that is not a function at build', () => {
    expect(() => checkInGate({ evidence: 'yes' as never })).toThrow(/evidence must be a function/);
  });

  it('works in a plain chain that carries a pause service', async () => {
    const tool = refundTool();
    const chain = createChain([checkInGate()], { checkIns: { key: KEY } });
    const dispatcher = createDispatcher({ tools: [tool], chain });

    const { checkIn } = expectPaused(
      await dispatcher.dispatch({ toolName: 'refund', args: { customer: 'c', amount: 1 } }),
    );
    expectResult(await dispatcher.resume(checkIn, APPROVED));

    expect(tool.calls).toHaveLength(1);
  });
});
