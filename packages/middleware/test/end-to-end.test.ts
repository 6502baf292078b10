// Calls through the whole canonical chain and a real dispatcher: every gate configured at once.

import { inspect } from 'node:util';
import {
  assertTool,
  checkInApproved,
  checkInDeclined,
  createDispatcher,
  createSigner,
  inMemoryCheckIns,
  type CheckInDecision,
  type CheckInRequest,
  type CredentialProvider,
  type DispatchOutcome,
  type Identity,
  type Middleware,
  type PermissionChecker,
  type Tool,
} from '@toolgate/core';
import { canonicalChain, inMemoryArtifacts } from '@toolgate/middleware';
import {
  EVENT_TYPES,
  eventsOf,
  expectPaused,
  expectRefused,
  expectResult,
  KEY,
  manualClock,
  recordEvents,
  recordingTool,
} from './fixtures';

const SECRET = 'sk_live_E2E_SECRET_5d1c77';
const ANN: Identity = { tenant: 'acme', principal: 'ann', conversation: 'conv-1' };
const DRAFT = { lines: [{ sku: 'A-1', qty: 2 }], total: 240 };

const INVOICE_SCHEMA = {
  type: 'object',
  properties: {
    draft: { type: 'string' },
    customer: { type: 'string' },
    amount: { type: 'number' },
    memo: { type: 'string', default: '' },
  },
  required: ['draft', 'customer', 'amount'],
  additionalProperties: false,
};

/** Every gate configured, with knobs a test can turn: permissions, capability policy, provider health. */
function world() {
  const clock = manualClock();
  const artifacts = inMemoryArtifacts({ now: clock.now });
  const checkIns = inMemoryCheckIns({ now: clock.now });
  const policy = { tools: true, payments: true, provider: 'ok' as 'ok' | 'down' };
  const permissions: PermissionChecker = {
    governs: ['payments'],
    check: ({ capability }) => {
      if (capability === 'tool_call')
        return policy.tools
          ? { allow: true }
          : { allow: false, reason: 'invoicing is suspended for this account' };
      return policy.payments ? { allow: true } : { allow: false, reason: 'payments need a finance role' };
    },
  };
  let providerCalls = 0;
  const credentials: CredentialProvider = {
    resolve: async (need) => {
      providerCalls++;
      if (policy.provider === 'down') throw new Error(`vault unreachable while fetching ${SECRET}`);
      return { kind: need.kind, value: SECRET };
    },
  };
  const invoice = recordingTool(
    {
      name: 'send_invoice',
      inputSchema: INVOICE_SCHEMA,
      capabilities: ['payments', 'external_net'],
      wants: { draft: 'invoice/draft' },
      needs: { kind: 'api_key', service: 'billing' },
      checkIn: (args) => (args['amount'] as number) > 1_000,
      checkInComponent: { id: 'invoice-approval' },
      resultCeiling: { maxChars: 200, narrowBy: ['memo'] },
    },
    (args, ctx) => {
      if (args['memo'] === 'explode')
        throw new Error(`billing API rejected key ${String(ctx.credential?.reveal())}`);
      if (args['memo'] === 'huge') return { echo: 'x'.repeat(1_000) };
      return { sent: true, customer: args['customer'] };
    },
  );
  const chain = canonicalChain({
    permissions,
    artifacts,
    checkIns,
    checkInKey: KEY,
    credentials,
    evidence: (ctx) => ({ customer: ctx.args['customer'], amount: ctx.args['amount'] }),
    defaultMaxChars: 10_000,
  });
  const dispatcher = createDispatcher({ tools: [invoice], chain, clock: clock.now });
  const events = recordEvents(dispatcher, ['policy.checked']);
  const outcomes: DispatchOutcome[] = [];
  const record = (outcome: DispatchOutcome) => {
    outcomes.push(outcome);
    return outcome;
  };
  const draft = () => artifacts.put(ANN, { kind: 'invoice/draft', data: DRAFT });
  const send = async (args: Record<string, unknown>) =>
    record(await dispatcher.dispatch({ toolName: 'send_invoice', args }, { identity: ANN }));
  const resume = async (
    request: CheckInRequest,
    decision: CheckInDecision = checkInApproved({ by: 'finance@acme' }),
  ) => record(await dispatcher.resume(request, decision));
  return {
    clock,
    artifacts,
    chain,
    dispatcher,
    events,
    invoice,
    outcomes,
    policy,
    draft,
    send,
    resume,
    providerCalls: () => providerCalls,
  };
}

describe('end to end through canonicalChain', () => {
  it('runs a call that passes every gate once, with the credential and the resolved data in ctx', async () => {
    const w = world();
    const ref = await w.draft();

    const outcome = expectResult(await w.send({ draft: ref, customer: 'cus_9', amount: 240 }));

    expect(outcome.value).toEqual({ sent: true, customer: 'cus_9' });
    expect(w.invoice.calls).toHaveLength(1);
    expect(w.providerCalls()).toBe(1);
    const [call] = w.invoice.calls;
    expect(call?.args).toEqual({ draft: DRAFT, customer: 'cus_9', amount: 240, memo: '' });
    expect(call?.secret).toBe(SECRET);
    expect(call?.wanted).toEqual({ draft: expect.objectContaining({ ref, kind: 'invoice/draft' }) });
    expect(outcome.ledger.map((row) => [row.gate, row.outcome])).toEqual([
      ['permission', 'allow'],
      ['capabilities', 'allow'],
      ['validate-args', 'transform'],
      ['wants', 'transform'],
      ['check-in', 'allow'],
      ['credentials', 'allow'],
      ['result-ceiling', 'allow'],
    ]);
    expect(eventsOf(w.events, 'gate.decision')).toHaveLength(outcome.ledger.length);
  });

  const denials: Array<[string, string, (w: ReturnType<typeof world>) => Promise<Record<string, unknown>>]> =
    [
      [
        'permission',
        'PERMISSION_DENIED',
        async (w) => {
          w.policy.tools = false;
          return { draft: await w.draft(), customer: 'cus_9', amount: 240 };
        },
      ],
      [
        'capabilities',
        'CAPABILITY_DENIED',
        async (w) => {
          w.policy.payments = false;
          return { draft: await w.draft(), customer: 'cus_9', amount: 240 };
        },
      ],
      [
        'validate-args',
        'INVALID_ARGS',
        async (w) => ({ draft: await w.draft(), customer: 'cus_9', amount: 'lots' }),
      ],
      [
        'wants',
        'ARTIFACT_NOT_FOUND',
        async () => ({ draft: 'art_0000000000000000000000', customer: 'cus_9', amount: 1 }),
      ],
      [
        'credentials',
        'CREDENTIAL_FAILED',
        async (w) => {
          w.policy.provider = 'down';
          return { draft: await w.draft(), customer: 'cus_9', amount: 240 };
        },
      ],
    ];

  it.each(denials)('a call denied at %s never runs the tool', async (gate, code, arrange) => {
    const w = world();
    const args = await arrange(w);

    const outcome = expectRefused(await w.send(args));

    expect(outcome).toMatchObject({ gate, code, ran: false });
    expect(w.invoice.calls).toHaveLength(0);
    expect(w.providerCalls()).toBe(gate === 'credentials' ? 1 : 0);
  });

  it('a call paused or declined at check-in never runs the tool and never resolves a credential', async () => {
    const w = world();
    const paused = expectPaused(await w.send({ draft: await w.draft(), customer: 'cus_9', amount: 5_000 }));

    const declined = expectRefused(
      await w.resume(
        paused.checkIn,
        checkInDeclined({ by: 'finance@acme', reason: 'over the monthly limit' }),
      ),
    );

    expect(declined).toMatchObject({ gate: 'check-in', code: 'CHECKIN_DECLINED' });
    expect(declined.content).toContain('over the monthly limit');
    expect(w.invoice.calls).toHaveLength(0);
    expect(w.providerCalls()).toBe(0);
  });

  it('a result over the ceiling ran, but the model reads only the refusal', async () => {
    const w = world();

    const outcome = expectRefused(
      await w.send({ draft: await w.draft(), customer: 'cus_9', amount: 1, memo: 'huge' }),
    );

    expect(outcome).toMatchObject({ gate: 'result-ceiling', ran: true });
    expect(outcome.content).toContain("Call it again with a smaller 'memo'");
    expect(w.invoice.calls).toHaveLength(1);
  });

  it('runs an approved check-in exactly once on resume, with receipts, and refuses its replay', async () => {
    const w = world();
    const ref = await w.draft();
    const paused = expectPaused(await w.send({ draft: ref, customer: 'cus_9', amount: 5_000 }));

    expect(paused.checkIn.review).toEqual({ draft: ref, customer: 'cus_9', amount: 5_000, memo: '' });
    expect(paused.checkIn.evidence).toEqual({ customer: 'cus_9', amount: 5_000 });
    expect(paused.checkIn.component).toEqual({ id: 'invoice-approval' });
    const approved = expectResult(
      await w.resume(JSON.parse(JSON.stringify(paused.checkIn)) as CheckInRequest),
    );
    const replay = expectRefused(await w.resume(paused.checkIn));

    expect(w.invoice.calls).toHaveLength(1);
    expect(w.invoice.calls[0]?.args['draft']).toEqual(DRAFT);
    expect(w.providerCalls()).toBe(1);
    expect(approved.receipts).toEqual([
      expect.objectContaining({ by: 'finance@acme', argsDigest: paused.checkIn.argsDigest }),
    ]);
    expect(replay.code).toBe('CHECKIN_NOT_PENDING');
  });

  it('refuses a forged, swapped, expired or permission-revoked resume, and the tool never runs', async () => {
    const w = world();
    const pause = async () =>
      expectPaused(await w.send({ draft: await w.draft(), customer: 'cus_9', amount: 5_000 })).checkIn;

    const forged = { ...(await pause()), signature: 'f'.repeat(64) };
    const forgedOutcome = expectRefused(await w.resume(forged));

    const original = await pause();
    const swappedArgs = { ...original, args: { ...original.args, customer: 'cus_attacker' } };
    const swappedOutcome = expectRefused(await w.resume(swappedArgs));

    const { signature: _, ...unsigned } = await pause();
    const resignedBody = { ...unsigned, args: { ...unsigned.args, amount: 50_000 } };
    const resigned = {
      ...resignedBody,
      signature: await createSigner(KEY).sign(resignedBody),
    } as CheckInRequest;
    const resignedOutcome = expectRefused(await w.resume(resigned));

    const stale = await pause();
    w.clock.advance(15 * 60 * 1000);
    const expiredOutcome = expectRefused(await w.resume(stale));

    const revoked = await pause();
    w.policy.tools = false;
    const revokedOutcome = expectRefused(await w.resume(revoked));

    expect(
      [forgedOutcome, swappedOutcome, resignedOutcome, expiredOutcome, revokedOutcome].map((o) => [
        o.gate,
        o.code,
      ]),
    ).toEqual([
      ['check-in', 'CHECKIN_SIGNATURE'],
      ['check-in', 'CHECKIN_SIGNATURE'],
      ['check-in', 'CHECKIN_MISMATCH'],
      ['check-in', 'CHECKIN_EXPIRED'],
      ['permission', 'PERMISSION_DENIED'],
    ]);
    expect(w.invoice.calls).toHaveLength(0);
    expect(w.providerCalls()).toBe(0);
  });

  it('never lets the secret reach an outcome, ledger row, event or error', async () => {
    const w = world();
    const errors: unknown[] = [];
    const ref = await w.draft();

    await w.send({ draft: ref, customer: 'cus_9', amount: 240 });
    await w.send({ draft: ref, customer: 'cus_9', amount: 240, memo: 'explode' });
    await w.send({ draft: ref, customer: 'cus_9', amount: 240, memo: 'huge' });
    const paused = expectPaused(await w.send({ draft: ref, customer: 'cus_9', amount: 5_000 }));
    await w.resume(paused.checkIn);
    await w.send({ draft: 'art_0000000000000000000000', customer: 'cus_9', amount: 240 });
    w.policy.provider = 'down';
    await w.send({ draft: ref, customer: 'cus_9', amount: 240 });
    // A per-tenant chain that cannot serve the tool: its calls are refused and an operator event says why.
    const warnings: string[] = [];
    const misconfigured = createDispatcher({
      tools: [w.invoice],
      chain: () => canonicalChain(),
      events: w.dispatcher.events,
      warn: (message) => warnings.push(message),
    });
    w.outcomes.push(await misconfigured.dispatch({ toolName: 'send_invoice', args: {} }, { identity: ANN }));
    expect(warnings).toEqual([
      expect.stringContaining("tool 'send_invoice' cannot be served by gate 'wants'"),
    ]);
    try {
      createDispatcher({ tools: [w.invoice], chain: canonicalChain() });
    } catch (error) {
      errors.push(error);
    }

    const failed = w.outcomes.find((o) => o.kind === 'failed');
    expect(failed?.content).toContain('billing API rejected key [redacted]');
    expect(w.providerCalls()).toBe(5);
    expect(new Set(w.outcomes.map((o) => o.kind))).toEqual(
      new Set(['result', 'failed', 'refused', 'paused']),
    );
    expect(new Set(w.events.map((e) => e.type))).toEqual(new Set(EVENT_TYPES));
    const everything = [
      ...w.outcomes.map((o) => JSON.stringify(o)),
      ...w.outcomes.map((o) => inspect(o, { depth: null })),
      ...w.outcomes.flatMap((o) => o.ledger.map((row) => JSON.stringify(row))),
      ...w.events.map((e) => JSON.stringify(e)),
      ...errors.map((e) => `${String(e)} ${(e as Error).stack ?? ''}`),
    ];
    expect(errors).toHaveLength(1);
    for (const text of everything) expect(text).not.toContain(SECRET);
  });

  it('lets a use()d policy see toolSource and deny an MCP-sourced tool while our own tool passes', async () => {
    const seen: Array<string | undefined> = [];
    const ownedOnly: Middleware = {
      name: 'owned-only',
      async run(ctx, next) {
        seen.push(ctx.toolSource);
        ctx.emit({ type: 'policy.checked', source: ctx.toolSource ?? 'ours' });
        if (ctx.toolSource === 'crm-server') {
          return ctx.deny(
            `'${ctx.toolName}' comes from the MCP server 'crm-server', which this workspace does not trust`,
            {
              code: 'UNTRUSTED_SOURCE',
            },
          );
        }
        await next();
      },
    };
    const ours = recordingTool({ name: 'lookup_order' });
    const crmBase = recordingTool({ name: 'crm_delete_contact' });
    const crm: Tool = { schema: crmBase.schema, execute: crmBase.execute, source: 'crm-server' };
    assertTool(crm, { allowSource: true });
    const dispatcher = createDispatcher({ tools: [ours, crm], chain: canonicalChain().use(ownedOnly) });
    const events = recordEvents(dispatcher, ['policy.checked']);

    const fromCrm = expectRefused(
      await dispatcher.dispatch({ toolName: 'crm_delete_contact', args: { text: 'c-1' } }),
    );
    const fromUs = expectResult(
      await dispatcher.dispatch({ toolName: 'lookup_order', args: { text: 'o-1' } }),
    );

    expect(seen).toEqual(['crm-server', undefined]);
    expect(fromCrm).toMatchObject({
      gate: 'owned-only',
      code: 'UNTRUSTED_SOURCE',
      toolSource: 'crm-server',
      ran: false,
    });
    expect(fromCrm.content).toContain('which this workspace does not trust');
    expect(crmBase.calls).toHaveLength(0);
    expect(ours.calls).toHaveLength(1);
    expect(fromUs).not.toHaveProperty('toolSource');
    expect(eventsOf(events, 'policy.checked').map((e) => e['source'])).toEqual(['crm-server', 'ours']);
    expect(fromCrm.ledger.map((row) => row.gate)).toEqual(['permission', 'capabilities', 'owned-only']);
  });
});
