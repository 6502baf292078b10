// When the store cannot take a record. Under 'refuse' (the default) no tool runs unrecorded: the store
// is asked before the call runs, and a record it fails to take after the call ran is kept in memory,
// reported, and written before any other call may run. Under 'allow' the call runs and its record
// waits. Every time, an event says which.

import { createDispatcher, type Dispatcher } from '@toolgate/core';
import { canonicalChain } from '@toolgate/middleware';
import { mockTool } from '@toolgate/testing';
import { AuditUnavailableError, auditLog, verifyAuditLog, type AuditLogOptions } from '@toolgate/audit';
import {
  controlledStore,
  DIGEST_KEY,
  PRIVATE_PEM,
  PUBLIC_PEM,
  recordsOf,
} from '../../../test-support/audit-fixtures';

const DEADLINE_MS = 60;

function setup(overrides: Partial<AuditLogOptions> = {}) {
  const store = controlledStore();
  const audit = auditLog({
    store,
    signingKey: PRIVATE_PEM,
    digestKey: DIGEST_KEY,
    deadlineMs: DEADLINE_MS,
    ...overrides,
  });
  const refund = mockTool({ name: 'refund', result: { refunded: true } });
  const inner = createDispatcher({ tools: [refund], chain: canonicalChain() });
  const dispatcher = audit.attach(inner);
  const events: { type: string; [fact: string]: unknown }[] = [];
  for (const type of ['audit.failed', 'audit.failed-open', 'audit.recovered'] as const) {
    dispatcher.events.on(type, (event) => events.push(event as never));
  }
  return { store, audit, dispatcher, refund, events };
}

const call = (dispatcher: Dispatcher, n = 1) =>
  dispatcher.dispatch({ toolName: 'refund', args: { amount: n }, toolCallId: `call_${n}` });

const REFUSAL =
  "[audit refused: 'refund' did not run because its audit record cannot be written right now. Retrying in a moment may help. If it keeps failing, tell the user the action is on hold until the audit log is back.]";

describe("onAuditFailure: 'refuse' (the default)", () => {
  it('refuses a call when the store is down before it runs: the tool does not run and an event says why', async () => {
    const { store, dispatcher, refund, events } = setup();
    store.mode = 'down';
    const outcome = await call(dispatcher);
    expect(outcome).toEqual({
      kind: 'refused',
      toolName: 'refund',
      toolCallId: 'call_1',
      chainId: '',
      ran: false,
      gate: 'audit',
      code: 'AUDIT_UNAVAILABLE',
      reason: REFUSAL.slice('[audit refused: '.length, -1),
      retryable: true,
      content: REFUSAL,
      ledger: [
        { gate: 'audit', outcome: 'deny', why: REFUSAL.slice('[audit refused: '.length, -1), changed: false },
      ],
    });
    expect(refund.callCount).toBe(0);
    expect(events).toEqual([
      expect.objectContaining({
        type: 'audit.failed',
        toolName: 'refund',
        toolCallId: 'call_1',
        operation: 'admit',
        refused: true,
        failure: 'StoreDown ECONNREFUSED',
        pending: 0,
      }),
    ]);
    // The store's error text (an address, a password) goes nowhere.
    expect(JSON.stringify([outcome, events])).not.toMatch(/hunter2|10\.0\.0\.7/);
  });

  it('refuses a call when the store hangs, once the deadline passes', async () => {
    const { store, dispatcher, refund, events } = setup();
    store.mode = 'hang';
    const outcome = await call(dispatcher);
    expect(outcome).toMatchObject({ kind: 'refused', code: 'AUDIT_UNAVAILABLE', ran: false });
    expect(refund.callCount).toBe(0);
    expect(events).toEqual([expect.objectContaining({ type: 'audit.failed', failure: 'DeadlineError' })]);
  });

  it('does not count the time spent signing against the store’s deadline', async () => {
    const { store, dispatcher, events } = setup();
    const subtle = globalThis.crypto.subtle;
    const sign = subtle.sign.bind(subtle);
    const slowSign: typeof subtle.sign = async (algorithm, key, data) => {
      if (algorithm === 'Ed25519') await new Promise((resolve) => setTimeout(resolve, DEADLINE_MS * 2));
      return sign(algorithm, key, data);
    };
    Object.defineProperty(subtle, 'sign', { value: slowSign, configurable: true, writable: true });
    try {
      expect(await call(dispatcher)).toMatchObject({ kind: 'result' });
    } finally {
      delete (subtle as { sign?: unknown }).sign;
    }
    expect(events).toEqual([]);
    expect(await verifyAuditLog(store, PUBLIC_PEM)).toEqual({ ok: true, count: 1 });
  });

  it('runs calls again, recorded, once the store is back', async () => {
    const { store, dispatcher, refund } = setup();
    store.mode = 'down';
    await call(dispatcher, 1);
    store.mode = 'up';
    expect((await call(dispatcher, 2)).kind).toBe('result');
    expect(refund.callCount).toBe(1);
    expect(await recordsOf(store)).toEqual([expect.objectContaining({ seq: 1, kind: 'result' })]);
  });

  describe('when the store dies after the tool ran', () => {
    it('returns the real outcome, keeps the record, reports it, and refuses every call until the record is written', async () => {
      const { store, audit, dispatcher, refund, events } = setup();
      // Admitted while the store answers; the append after the run is what fails.
      const original = store.append.bind(store);
      store.append = async (seal) => {
        store.mode = 'down';
        return original(seal);
      };
      const ran = await call(dispatcher, 1);
      expect(ran).toMatchObject({ kind: 'result', ran: true });
      expect(refund.callCount).toBe(1);
      expect(audit.pending).toBe(1);
      expect(events).toEqual([
        expect.objectContaining({
          type: 'audit.failed',
          operation: 'append',
          refused: false,
          pending: 1,
          toolCallId: 'call_1',
        }),
      ]);

      store.append = original;
      const refused = await call(dispatcher, 2);
      expect(refused).toMatchObject({ kind: 'refused', code: 'AUDIT_UNAVAILABLE' });
      expect(refund.callCount).toBe(1);

      store.mode = 'up';
      expect((await call(dispatcher, 3)).kind).toBe('result');
      expect(events.at(-1)).toMatchObject({ type: 'audit.recovered', written: 1, toolCallId: 'call_3' });
      expect(audit.pending).toBe(0);
      const records = await recordsOf(store);
      expect(records.map((r) => [r.seq, r.kind])).toEqual([
        [1, 'result'],
        [2, 'result'],
      ]);
      expect(records[0]!.argsDigest).toBe(await audit.digest({ amount: 1 }));
      expect(records[1]!.argsDigest).toBe(await audit.digest({ amount: 3 }));
      expect(await verifyAuditLog(store, PUBLIC_PEM)).toEqual({ ok: true, count: 2 });
    });

    it('admits every call of a busy moment once the kept record is written, though records keep arriving', async () => {
      const { store, dispatcher, refund } = setup();
      const original = store.append.bind(store);
      store.append = async () => {
        store.append = original;
        throw new Error('the store fell over');
      };
      await call(dispatcher, 1);
      const outcomes = await Promise.all(Array.from({ length: 60 }, (_, n) => call(dispatcher, n + 2)));
      expect(outcomes.filter((o) => o.kind !== 'result')).toEqual([]);
      expect(refund.callCount).toBe(61);
      expect(await verifyAuditLog(store, PUBLIC_PEM)).toEqual({ ok: true, count: 61 });
    });

    it('writes a record once when the store stored it but answered after the deadline', async () => {
      const { store, audit, dispatcher, events } = setup();
      store.answerLateMs = DEADLINE_MS * 3;
      await call(dispatcher, 1);
      expect(events).toEqual([expect.objectContaining({ type: 'audit.failed', operation: 'append' })]);
      expect(audit.pending).toBe(1);
      store.answerLateMs = 0;
      await new Promise((resolve) => setTimeout(resolve, DEADLINE_MS * 4));

      await call(dispatcher, 2);
      expect(audit.pending).toBe(0);
      const records = await recordsOf(store);
      expect(records.map((r) => r.argsDigest)).toEqual([
        await audit.digest({ amount: 1 }),
        await audit.digest({ amount: 2 }),
      ]);
      expect(await verifyAuditLog(store, PUBLIC_PEM)).toEqual({ ok: true, count: 2 });
    });

    it('never stores a record from an append it gave up on before the store sealed it', async () => {
      const { store, audit, dispatcher } = setup();
      store.startLateMs = DEADLINE_MS * 3;
      await call(dispatcher, 1);
      expect(audit.pending).toBe(1);
      store.startLateMs = 0;
      // The abandoned append now reaches the store, whose seal refuses it.
      await new Promise((resolve) => setTimeout(resolve, DEADLINE_MS * 4));
      expect(await recordsOf(store)).toEqual([]);

      await audit.flush();
      expect((await recordsOf(store)).map((r) => r.argsDigest)).toEqual([await audit.digest({ amount: 1 })]);
    });
  });

  it('rejects record() when the store is down, and keeps nothing of it', async () => {
    const { store, audit } = setup();
    store.mode = 'down';
    const attempt = audit.record({ kind: 'pin.accepted', tool: 'refund', approver: 'ops' });
    await expect(attempt).rejects.toBeInstanceOf(AuditUnavailableError);
    await expect(attempt).rejects.toThrow("auditLog: the store did not take the 'pin.accepted' record.");
    expect(audit.pending).toBe(0);
    store.mode = 'up';
    await audit.flush();
    expect(await recordsOf(store)).toEqual([]);
  });

  it('close() writes what waits, rejects while the store cannot take it, and refuses calls after', async () => {
    const { store, audit, dispatcher, refund } = setup({ onAuditFailure: 'allow' });
    store.mode = 'down';
    await call(dispatcher, 1);
    await expect(audit.close()).rejects.toMatchObject({ name: 'AuditUnavailableError', pending: 1 });
    store.mode = 'up';
    await expect(audit.close()).resolves.toBeUndefined();
    expect(await recordsOf(store)).toHaveLength(1);
    expect(await call(dispatcher, 2)).toMatchObject({ kind: 'refused', code: 'AUDIT_UNAVAILABLE' });
    await expect(audit.record({ kind: 'config.reloaded' })).rejects.toThrow('the log is closed');
    expect(refund.callCount).toBe(1);
  });
});

describe("onAuditFailure: 'allow'", () => {
  it('runs the call while the store is down, says so in an event, and writes its record when the store is back', async () => {
    const { store, audit, dispatcher, refund, events } = setup({ onAuditFailure: 'allow' });
    store.mode = 'down';
    const outcome = await call(dispatcher, 1);
    expect(outcome).toMatchObject({ kind: 'result', ran: true });
    expect(refund.callCount).toBe(1);
    expect(events).toEqual([
      expect.objectContaining({
        type: 'audit.failed-open',
        toolCallId: 'call_1',
        failure: 'StoreDown ECONNREFUSED',
        pending: 0,
      }),
    ]);
    // Its record's own append attempt fails too, in the background.
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(audit.pending).toBe(1);

    store.mode = 'up';
    await call(dispatcher, 2);
    expect(events.at(-1)).toMatchObject({ type: 'audit.recovered', written: 1 });
    const records = await recordsOf(store);
    expect(records.map((r) => r.argsDigest)).toEqual([
      await audit.digest({ amount: 1 }),
      await audit.digest({ amount: 2 }),
    ]);
    expect(await verifyAuditLog(store, PUBLIC_PEM)).toEqual({ ok: true, count: 2 });
  });

  it('does not wait on a hung store once it has failed: the record waits and the call answers', async () => {
    const { store, audit, dispatcher } = setup({ onAuditFailure: 'allow', deadlineMs: 200 });
    store.mode = 'hang';
    const started = Date.now();
    const outcome = await call(dispatcher, 1);
    expect(outcome.kind).toBe('result');
    // One deadline for the admission check, not a second one for the append.
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(audit.pending).toBe(1);
  });

  it('refuses once maxPending records wait, so a long outage cannot lose records', async () => {
    const { store, audit, dispatcher, refund, events } = setup({ onAuditFailure: 'allow', maxPending: 2 });
    store.mode = 'down';
    await call(dispatcher, 1);
    await call(dispatcher, 2);
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(audit.pending).toBe(2);
    expect(await call(dispatcher, 3)).toMatchObject({ kind: 'refused', code: 'AUDIT_UNAVAILABLE' });
    expect(refund.callCount).toBe(2);
    expect(events.at(-1)).toMatchObject({
      type: 'audit.failed',
      operation: 'admit',
      refused: true,
      pending: 2,
    });
    store.mode = 'up';
    await audit.flush();
    expect(await recordsOf(store)).toHaveLength(2);
  });
});
