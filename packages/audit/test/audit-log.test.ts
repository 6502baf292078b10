// auditLog(): one record per outcome of an attached dispatcher, whatever the kind, with the facts of
// the call and keyed digests of its args and result; records of actions that are not calls; a log
// that stays one valid chain under concurrent calls.

import {
  checkInApproved,
  checkInDeclined,
  createDispatcher,
  type DispatchOutcome,
  type LedgerRow,
  type Middleware,
} from '@toolgate/core';
import { canonicalChain } from '@toolgate/middleware';
import { fixedClock, mockTool, staticPermissions } from '@toolgate/testing';
import {
  AuditConfigError,
  auditLog,
  inMemoryAuditStore,
  policyRuleOf,
  verifyAuditLog,
  type AuditLogOptions,
} from '@toolgate/audit';
import {
  controlledStore,
  DIGEST_KEY,
  PRIVATE_PEM,
  PUBLIC_PEM,
  recordsOf,
} from '../../../test-support/audit-fixtures';

const CHECK_IN_KEY = 'check-in-key-for-the-audit-tests-0123456789';
const ACME = { tenant: 'acme', principal: 'ana' };

function setup(overrides: Partial<AuditLogOptions> = {}, middleware: Middleware[] = []) {
  const store = controlledStore();
  const clock = fixedClock();
  const audit = auditLog({
    store,
    signingKey: PRIVATE_PEM,
    digestKey: DIGEST_KEY,
    clock: clock.now,
    ...overrides,
  });
  const refund = mockTool({
    name: 'refund',
    inputSchema: { type: 'object', properties: { amount: { type: 'number' } } },
    execute: (args) => ({ refunded: args['amount'] }),
  });
  const erase = mockTool({ name: 'erase', checkIn: 'always', result: 'erased' });
  const broken = mockTool({
    name: 'broken',
    execute: () => {
      throw new Error('upstream said no');
    },
  });
  const chatty = mockTool({ name: 'chatty', result: 'x'.repeat(500), resultCeiling: { maxChars: 100 } });
  const secret = mockTool({ name: 'secret', source: 'vault' });
  let chain = canonicalChain({
    permissions: staticPermissions([{ tool: 'secret', allow: false, reason: 'not for you' }], {
      default: 'allow',
    }),
    checkInKey: CHECK_IN_KEY,
  });
  for (const mw of middleware) chain = chain.use(mw);
  const inner = createDispatcher({ tools: [refund, erase, broken, chatty, secret], chain, clock: clock.now });
  const dispatcher = audit.attach(inner);
  return { store, audit, dispatcher, inner, clock, tools: { refund, erase, broken, chatty, secret } };
}

describe('auditLog().attach(dispatcher)', () => {
  describe('one record per outcome', () => {
    it('records a result with who, what, which chain, and keyed digests of the args and the result', async () => {
      const { store, audit, dispatcher, clock } = setup();
      const outcome = await dispatcher.dispatch(
        { toolName: 'refund', args: { amount: 500 } },
        { identity: ACME },
      );
      expect(outcome.kind).toBe('result');
      const records = await recordsOf(store);
      expect(records).toHaveLength(1);
      expect(records[0]).toEqual({
        seq: 1,
        at: clock.iso(),
        tenant: 'acme',
        principal: 'ana',
        tool: 'refund',
        chainId: outcome.chainId,
        kind: 'result',
        ran: true,
        argsDigest: await audit.digest({ amount: 500 }),
        resultDigest: await audit.digest({ refunded: 500 }),
        prevHash: '0'.repeat(64),
        hash: expect.stringMatching(/^[0-9a-f]{64}$/),
        signature: expect.stringMatching(/^[0-9a-f]{128}$/),
      });
      expect(Object.keys(records[0]!)).toEqual([
        'seq',
        'at',
        'tenant',
        'principal',
        'tool',
        'chainId',
        'kind',
        'ran',
        'argsDigest',
        'resultDigest',
        'prevHash',
        'hash',
        'signature',
      ]);
    });

    it('records a refusal by a gate with the gate, the code and the tool source, and no result digest', async () => {
      const { store, dispatcher, tools } = setup();
      const outcome = await dispatcher.dispatch({ toolName: 'secret', args: {} }, { identity: ACME });
      expect(outcome).toMatchObject({ kind: 'refused', gate: 'permission' });
      const [record] = await recordsOf(store);
      expect(record).toMatchObject({
        kind: 'refused',
        gate: 'permission',
        code: 'PERMISSION_DENIED',
        ran: false,
        tool: 'secret',
        source: 'vault',
      });
      expect(record!.resultDigest).toBeUndefined();
      expect(tools.secret.callCount).toBe(0);
    });

    it('records a call refused before any chain ran (an unknown tool)', async () => {
      const { store, dispatcher } = setup();
      await dispatcher.dispatch({ toolName: 'no_such_tool', args: {} });
      expect(await recordsOf(store)).toEqual([
        expect.objectContaining({
          kind: 'refused',
          gate: 'dispatch',
          code: 'UNKNOWN_TOOL',
          ran: false,
          tool: 'no_such_tool',
        }),
      ]);
    });

    it('records a refusal after the tool ran (the result was withheld) with ran: true', async () => {
      const { store, dispatcher } = setup();
      const outcome = await dispatcher.dispatch({ toolName: 'chatty', args: {} });
      expect(outcome).toMatchObject({ kind: 'refused', ran: true, gate: 'result-ceiling' });
      expect(await recordsOf(store)).toEqual([
        expect.objectContaining({ kind: 'refused', gate: 'result-ceiling', ran: true }),
      ]);
    });

    it('records a failure with ran: true and none of the error text', async () => {
      const { store, dispatcher } = setup();
      const outcome = await dispatcher.dispatch({ toolName: 'broken', args: {} });
      expect(outcome.kind).toBe('failed');
      const records = await recordsOf(store);
      expect(records).toEqual([expect.objectContaining({ kind: 'failed', ran: true, tool: 'broken' })]);
      expect(JSON.stringify(records)).not.toContain('upstream said no');
    });

    it('records a pause with the asker as gate and the check-in id, then its approved resume with the approver', async () => {
      const { store, dispatcher, tools } = setup();
      const paused = await dispatcher.dispatch({ toolName: 'erase', args: { id: 7 } }, { identity: ACME });
      if (paused.kind !== 'paused') throw new Error('expected a pause');
      const resumed = await dispatcher.resume(paused.checkIn, checkInApproved({ by: 'lead@example.com' }));
      expect(resumed.kind).toBe('result');
      expect(tools.erase.callCount).toBe(1);
      const records = await recordsOf(store);
      expect(records).toHaveLength(2);
      expect(records[0]).toMatchObject({
        kind: 'paused',
        gate: 'check-in',
        checkInId: paused.checkIn.id,
        ran: false,
        tenant: 'acme',
      });
      expect(records[0]!.approver).toBeUndefined();
      expect(records[1]).toMatchObject({
        kind: 'result',
        ran: true,
        tenant: 'acme',
        principal: 'ana',
        checkInId: paused.checkIn.id,
        approver: 'lead@example.com',
        argsDigest: records[0]!.argsDigest,
      });
    });

    it('records a declined resume as a refusal by check-in, naming who declined', async () => {
      const { store, dispatcher, tools } = setup();
      const paused = await dispatcher.dispatch({ toolName: 'erase', args: {} }, { identity: ACME });
      if (paused.kind !== 'paused') throw new Error('expected a pause');
      await dispatcher.resume(
        paused.checkIn,
        checkInDeclined({ by: 'lead@example.com', reason: 'not today' }),
      );
      expect(tools.erase.callCount).toBe(0);
      const records = await recordsOf(store);
      expect(records[1]).toMatchObject({
        kind: 'refused',
        gate: 'check-in',
        ran: false,
        checkInId: paused.checkIn.id,
        approver: 'lead@example.com',
      });
      expect(JSON.stringify(records)).not.toContain('not today');
    });

    it('records a forged resume without the identity or check-in id it claims', async () => {
      const { store, dispatcher } = setup();
      const paused = await dispatcher.dispatch({ toolName: 'erase', args: {} }, { identity: ACME });
      if (paused.kind !== 'paused') throw new Error('expected a pause');
      const forged = {
        ...paused.checkIn,
        identity: { tenant: 'globex', principal: 'mallory' },
        id: 'chk_forged',
      };
      const outcome = await dispatcher.resume(forged, checkInApproved({ by: 'mallory' }));
      expect(outcome).toMatchObject({ kind: 'refused', code: 'CHECKIN_SIGNATURE' });
      const [, record] = await recordsOf(store);
      expect(record).toMatchObject({ kind: 'refused', code: 'CHECKIN_SIGNATURE', approver: 'mallory' });
      expect(record).not.toHaveProperty('tenant');
      expect(record).not.toHaveProperty('principal');
      expect(record).not.toHaveProperty('checkInId');
    });

    it('writes exactly one record per dispatch and resume, and the log verifies', async () => {
      const { store, dispatcher } = setup();
      const calls = ['refund', 'secret', 'broken', 'chatty', 'nope', 'erase', 'refund'];
      const outcomes: DispatchOutcome[] = [];
      for (const toolName of calls)
        outcomes.push(await dispatcher.dispatch({ toolName, args: {} }, { identity: ACME }));
      const paused = outcomes.find((o) => o.kind === 'paused');
      if (paused?.kind !== 'paused') throw new Error('expected a pause');
      outcomes.push(await dispatcher.resume(paused.checkIn, checkInApproved({ by: 'lead' })));
      const records = await recordsOf(store);
      expect(records.map((r) => r.kind)).toEqual(outcomes.map((o) => o.kind));
      expect(await verifyAuditLog(store, PUBLIC_PEM)).toEqual({ ok: true, count: outcomes.length });
    });
  });

  describe('digests', () => {
    it('digests args sent as JSON text exactly as the same args sent as an object, whatever their key order', async () => {
      const { store, dispatcher } = setup();
      await dispatcher.dispatch({ toolName: 'refund', args: { amount: 500, note: 'a' } });
      await dispatcher.dispatch({ toolName: 'refund', args: '{"note":"a","amount":500}' });
      const [a, b] = await recordsOf(store);
      expect(a!.argsDigest).toBe(b!.argsDigest);
    });

    it('keys the digest: another digest key gives another digest, and none is the plain SHA-256 of the args', async () => {
      const one = setup();
      const two = setup({ digestKey: 'another-digest-key-for-tests-abcdefghijklmnop' });
      await one.dispatcher.dispatch({ toolName: 'refund', args: { amount: 500 } });
      await two.dispatcher.dispatch({ toolName: 'refund', args: { amount: 500 } });
      const [a] = await recordsOf(one.store);
      const [b] = await recordsOf(two.store);
      expect(a!.argsDigest).not.toBe(b!.argsDigest);
      const plain = Buffer.from(
        await crypto.subtle.digest('SHA-256', new TextEncoder().encode('{"amount":500}')),
      ).toString('hex');
      expect([a!.argsDigest, b!.argsDigest]).not.toContain(plain);
    });
  });

  describe('the deciding rule', () => {
    // A stand-in for @toolgate/policy: names the deciding rule as a field (ctx.decidedBy) and in prose.
    const policy = (why: string, deny = false, rule?: string): Middleware => ({
      name: 'policy',
      async run(ctx, next) {
        if (rule !== undefined) ctx.decidedBy(rule);
        if (deny) ctx.deny(why, { code: 'POLICY_DENIED' });
        ctx.note(why);
        await next();
      },
    });

    it('takes the rule a policy gate names on its ledger row', async () => {
      const { store, dispatcher } = setup({}, [
        policy("rule 'small-refunds' allowed it", false, 'small-refunds'),
      ]);
      await dispatcher.dispatch({ toolName: 'refund', args: { amount: 5 } });
      expect((await recordsOf(store))[0]).toMatchObject({ rule: 'small-refunds', kind: 'result' });
    });

    it('takes the rule of a policy refusal', async () => {
      const { store, dispatcher } = setup({}, [
        policy("rule 'no-refunds': refunds need a person", true, 'no-refunds'),
      ]);
      await dispatcher.dispatch({ toolName: 'refund', args: { amount: 5 } });
      expect((await recordsOf(store))[0]).toMatchObject({
        rule: 'no-refunds',
        kind: 'refused',
        gate: 'policy',
      });
    });

    it('takes no rule from a sentence that only quotes one later, nor from a gate not named policy', async () => {
      const { store, dispatcher } = setup({}, [policy("the args say rule 'injected' here")]);
      await dispatcher.dispatch({ toolName: 'refund', args: { amount: 5 } });
      const other = setup({}, [
        { ...policy("rule 'elsewhere' allowed", false, 'elsewhere'), name: 'house-rules' },
      ]);
      await other.dispatcher.dispatch({ toolName: 'refund', args: { amount: 5 } });
      expect((await recordsOf(store))[0]).not.toHaveProperty('rule');
      expect((await recordsOf(other.store))[0]).not.toHaveProperty('rule');
    });

    it('never reads a rule out of the prose of a row: a why that names one, with no rule field, names none', () => {
      const row = (outcome: LedgerRow['outcome'], why: string): LedgerRow => ({
        gate: 'policy',
        outcome,
        why,
        changed: false,
      });
      expect(policyRuleOf([row('allow', "rule 'small-refunds' allows")])).toBeUndefined();
      expect(
        policyRuleOf([
          row('deny', "policy rule 'interns-read-only' does not allow 'fs_write' for this caller."),
        ]),
      ).toBeUndefined();
    });

    it('reads a structured rule field on the policy row, when the row has one', () => {
      const row = (rule: string) => ({ gate: 'policy', outcome: 'allow', changed: false, rule }) as LedgerRow;
      expect(policyRuleOf([row('typed-rule')])).toBe('typed-rule');
      expect(policyRuleOf([row('has spaces in it')])).toBeUndefined();
      expect(policyRuleOf([])).toBeUndefined();
    });

    it('uses a ruleOf option, and a ruleOf that throws names no rule without losing the record', async () => {
      const named = setup({ ruleOf: (ledger) => `rows-${ledger.length}` });
      await named.dispatcher.dispatch({ toolName: 'refund', args: {} });
      expect((await recordsOf(named.store))[0]!.rule).toMatch(/^rows-\d+$/);
      const throwing = setup({
        ruleOf: () => {
          throw new Error('boom');
        },
      });
      await throwing.dispatcher.dispatch({ toolName: 'refund', args: {} });
      expect(await recordsOf(throwing.store)).toEqual([
        expect.not.objectContaining({ rule: expect.anything() }),
      ]);
    });
  });

  describe('under load', () => {
    it('keeps 200 concurrent calls in one valid chain, sharing appends between them', async () => {
      const { store, dispatcher } = setup();
      const outcomes = await Promise.all(
        Array.from({ length: 200 }, (_, i) =>
          dispatcher.dispatch(
            { toolName: i % 5 === 0 ? 'secret' : 'refund', args: { amount: i } },
            { identity: ACME },
          ),
        ),
      );
      const records = await recordsOf(store);
      expect(records).toHaveLength(200);
      expect(records.filter((r) => r.kind === 'refused')).toHaveLength(
        outcomes.filter((o) => o.kind === 'refused').length,
      );
      expect(store.appends).toBeLessThan(200);
      expect(await verifyAuditLog(store, PUBLIC_PEM)).toEqual({ ok: true, count: 200 });
    });
  });

  describe('the attached dispatcher', () => {
    it('is a dispatcher like the one it wraps: schemas, tools, events', async () => {
      const { dispatcher, inner } = setup();
      expect(dispatcher.schemas()).toEqual(inner.schemas());
      expect(dispatcher.tools).toBe(inner.tools);
      const seen: string[] = [];
      const listener = (event: { kind: string }) => seen.push(event.kind);
      dispatcher.on('dispatch.end', listener);
      await dispatcher.dispatch({ toolName: 'refund', args: {} });
      dispatcher.off('dispatch.end', listener);
      await dispatcher.dispatch({ toolName: 'refund', args: {} });
      expect(seen).toEqual(['result']);
    });

    it('refuses to attach twice to the same log, or to something that is not a dispatcher', () => {
      const { audit, dispatcher } = setup();
      expect(() => audit.attach(dispatcher)).toThrow(AuditConfigError);
      expect(() => audit.attach({} as never)).toThrow('auditLog.attach: expected a Dispatcher');
    });
  });
});

describe('auditLog().record(entry)', () => {
  it('appends an action that is not a call, in the same chain as the calls', async () => {
    const { store, audit, dispatcher, clock } = setup();
    await dispatcher.dispatch({ toolName: 'refund', args: { amount: 1 } });
    const definition = { name: 'fs_write', description: 'writes a file', inputSchema: { type: 'object' } };
    const record = await audit.record({
      kind: 'pin.accepted',
      tenant: 'acme',
      tool: 'fs_write',
      source: 'fs',
      approver: 'ops@example.com',
      args: definition,
    });
    expect(record).toEqual({
      seq: 2,
      at: clock.iso(),
      tenant: 'acme',
      tool: 'fs_write',
      source: 'fs',
      kind: 'pin.accepted',
      ran: false,
      approver: 'ops@example.com',
      argsDigest: await audit.digest(definition),
      prevHash: (await recordsOf(store))[0]!.hash,
      hash: expect.any(String),
      signature: expect.any(String),
    });
    await audit.record({ kind: 'config.reloaded', approver: 'SIGHUP', args: { version: 2 } });
    await audit.record({
      kind: 'grant.used',
      tenant: 'acme',
      principal: 'bot',
      tool: 'refund',
      checkInId: 'chk_1',
      ran: true,
    });
    expect((await recordsOf(store)).map((r) => r.kind)).toEqual([
      'result',
      'pin.accepted',
      'config.reloaded',
      'grant.used',
    ]);
    expect(await audit.verify()).toEqual({ ok: true, count: 4 });
  });

  it('refuses an entry it cannot write as given, naming the field and never its value', async () => {
    const { audit, store } = setup();
    await expect(audit.record({ kind: 'Pin Accepted' })).rejects.toThrow("'kind' must be dot.case words");
    await expect(audit.record({ kind: 'pin.accepted', tenant: 42 as never })).rejects.toThrow(
      "'tenant' must be a non-empty string",
    );
    await expect(audit.record({ kind: 'pin.accepted', ran: 'yes' as never })).rejects.toThrow(
      "'ran' must be a boolean",
    );
    await expect(audit.record({ kind: 'x', approver: 'y'.repeat(2000) })).rejects.toThrow(
      /at most 1024 characters\.$/,
    );
    await expect(audit.record(null as never)).rejects.toThrow('expected an entry');
    expect(await recordsOf(store)).toEqual([]);
  });
});

describe('auditLog(options)', () => {
  const store = inMemoryAuditStore();
  const base = { store, signingKey: PRIVATE_PEM, digestKey: DIGEST_KEY };

  it.each([
    [{ ...base, store: {} }, "'store' must be an AuditStore"],
    [{ ...base, onAuditFailure: 'maybe' }, "'onAuditFailure' must be 'refuse' or 'allow'"],
    [{ ...base, deadlineMs: 0 }, "'deadlineMs' must be a positive integer"],
    [{ ...base, maxPending: -1 }, "'maxPending' must be a non-negative integer"],
    [{ ...base, clock: 5 }, "'clock' must be a function"],
    [{ ...base, digestKey: 'short' }, 'the key has 5 bytes; use at least 32 random bytes'],
    [{ ...base, digestKey: PRIVATE_PEM }, "'digestKey' must not be the signing key"],
    [{ ...base, signingKey: 'not a key' }, 'expected a PEM or JWK Ed25519 key'],
  ])('refuses options it cannot honor, where the log is built (%#)', (options, message) => {
    expect(() => auditLog(options as never)).toThrow(AuditConfigError);
    expect(() => auditLog(options as never)).toThrow(message);
  });

  it('never prints a key in a configuration error', () => {
    const attempts = [
      () => auditLog({ ...base, digestKey: PRIVATE_PEM }),
      () => auditLog({ ...base, signingKey: PRIVATE_PEM.replace('PRIVATE', 'PUBLIC') }),
      () => auditLog({ ...base, signingKey: 'MC4CAQAwBQYDK2VwBCIEII' }),
    ];
    for (const attempt of attempts) {
      expect(attempt).toThrow(AuditConfigError);
      try {
        attempt();
      } catch (error) {
        expect((error as Error).message).not.toContain('MC4CAQAwBQYDK2VwBCIEII');
      }
    }
  });

  it('ready() resolves with good keys and a store that answers, and names a key that does not import', async () => {
    await expect(auditLog(base).ready()).resolves.toBeUndefined();
    const corrupt = PRIVATE_PEM.replace('MC4CAQAwBQYDK2VwBCIEII', 'MC4CAQAwBQYDK2VwBCIEIA');
    const broken = auditLog({ ...base, signingKey: corrupt.replace(/\n[A-Za-z0-9+/=]+\n/, '\nAAAA\n') });
    await expect(broken.ready()).rejects.toThrow(
      "auditLog: 'signingKey': the key is not a valid Ed25519 key",
    );
  });

  it('publicKey() gives the SPKI PEM an auditor verifies with', async () => {
    expect(await auditLog(base).publicKey()).toBe(PUBLIC_PEM);
  });
});
