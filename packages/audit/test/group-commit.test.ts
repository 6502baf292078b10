// Group commit: with durability 'batch' a call answers once its record is queued, and the records of
// one commit window go to the store in one append under one signature. With 'record' (the default) a
// call answers once its own record is stored. Either way the log verifies, a failed commit is reported
// and its records kept, and signatures made in this thread (node:crypto) are Web Crypto's.

import {
  createDispatcher,
  defineTool,
  digestOf,
  type AuditRecord,
  type Dispatcher,
  type Tool,
} from '@toolgate/core';
import { canonicalChain } from '@toolgate/middleware';
import { mockTool } from '@toolgate/testing';
import {
  AuditConfigError,
  auditLog,
  inMemoryAuditStore,
  verifyAuditLog,
  type AuditCheckpoint,
  type AuditLogOptions,
} from '@toolgate/audit';
import {
  controlledStore,
  DIGEST_KEY,
  PRIVATE_PEM,
  PUBLIC_PEM,
  recordsOf,
} from '../../../test-support/audit-fixtures';
import { exposeGc } from '../../../test-support/gc';

// Long enough that no window closes on its own while a test looks (a flush or close closes it).
const LONG_WINDOW_MS = 60_000;

function setup(overrides: Partial<AuditLogOptions> = {}, tools: readonly Tool[] = []) {
  const store = controlledStore();
  const audit = auditLog({ store, signingKey: PRIVATE_PEM, digestKey: DIGEST_KEY, ...overrides });
  const refund = mockTool({ name: 'refund', result: { refunded: true } });
  const dispatcher = audit.attach(createDispatcher({ tools: [refund, ...tools], chain: canonicalChain() }));
  const events: { type: string; [fact: string]: unknown }[] = [];
  for (const type of ['audit.failed', 'audit.failed-open', 'audit.recovered'] as const) {
    dispatcher.events.on(type, (event) => events.push(event as never));
  }
  return { store, audit, dispatcher, refund, events };
}

const call = (dispatcher: Dispatcher, n: number) =>
  dispatcher.dispatch({ toolName: 'refund', args: { amount: n }, toolCallId: `call_${n}` });

const signedPattern = (records: readonly AuditRecord[]) =>
  records.map((r) => (r.signature === '' ? '-' : 'S')).join('');

describe("durability: 'batch'", () => {
  it('calls one after another answer before their records are stored, and share one append and one signature', async () => {
    const { store, audit, dispatcher, refund } = setup({
      durability: 'batch',
      commitWindowMs: LONG_WINDOW_MS,
    });
    await audit.ready();
    for (let n = 1; n <= 6; n++) expect((await call(dispatcher, n)).kind).toBe('result');
    expect(refund.calls).toHaveLength(6);
    // Answered, not yet committed: this is what a crash now would lose.
    expect(await recordsOf(store.inner)).toHaveLength(0);
    expect(audit.pending).toBe(6);

    await audit.flush();
    const records = await recordsOf(store.inner);
    expect(store.appends).toBe(1);
    expect(records.map((r) => r.seq)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(signedPattern(records)).toBe('-----S');
    expect(await verifyAuditLog(records, PUBLIC_PEM)).toEqual({ ok: true, count: 6 });
  });

  it("keeps nothing of a call's result while its record waits for the store, but the result's digest text", async () => {
    const gc = exposeGc()!;
    const results: WeakRef<object>[] = [];
    const report = defineTool({
      name: 'report',
      description: 'Answers a large result.',
      inputSchema: { type: 'object' },
      execute: async () => {
        const result = { rows: Array.from({ length: 1000 }, (_, i) => ({ i })) };
        results.push(new WeakRef(result));
        return result;
      },
    });
    const { store, audit, dispatcher } = setup({ durability: 'batch', commitWindowMs: LONG_WINDOW_MS }, [
      report,
    ]);
    await audit.ready();
    for (let n = 0; n < 3; n++)
      expect((await dispatcher.dispatch({ toolName: 'report', args: {} })).kind).toBe('result');
    expect(audit.pending).toBe(3);
    // A WeakRef's target lives to the end of the turn that made it.
    await new Promise((resolve) => setImmediate(resolve));
    gc();
    expect(results.map((ref) => ref.deref() === undefined)).toEqual([true, true, true]);
    await audit.flush();
    const records = await recordsOf(store.inner);
    expect(records[0]!.resultDigest).toBe(
      await audit.digest({ rows: Array.from({ length: 1000 }, (_, i) => ({ i })) }),
    );
  });

  it('digests the args and result as they were at the call, though the batch is written after the caller changed them', async () => {
    const { store, audit, dispatcher } = setup({ durability: 'batch', commitWindowMs: LONG_WINDOW_MS });
    await audit.ready();
    const args = { amount: 5, note: 'first' };
    const outcome = await dispatcher.dispatch({ toolName: 'refund', args });
    if (outcome.kind !== 'result') throw new Error('the call did not run');
    // Queued, not yet digested into a record: the caller now edits both values in place.
    args.amount = 5_000;
    args.note = 'edited';
    (outcome.value as { refunded: unknown }).refunded = 'to-the-attacker';
    await audit.flush();
    const [record] = await recordsOf(store.inner);
    expect(record!.argsDigest).toBe(await audit.digest({ amount: 5, note: 'first' }));
    expect(record!.resultDigest).toBe(await audit.digest({ refunded: true }));
    expect(record!.argsDigest).not.toBe(await audit.digest(args));
  });

  it('commits when the window closes, without a flush', async () => {
    const { store, audit, dispatcher } = setup({ durability: 'batch', commitWindowMs: 20 });
    await audit.ready();
    await call(dispatcher, 1);
    await call(dispatcher, 2);
    expect(await recordsOf(store.inner)).toHaveLength(0);
    const deadline = Date.now() + 5_000;
    while ((await recordsOf(store.inner)).length < 2 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(signedPattern(await recordsOf(store.inner))).toBe('-S');
    expect(store.appends).toBe(1);
  });

  it('calls that keep answering while an append runs wait for a window of their own, not an append each', async () => {
    const { store, audit, dispatcher } = setup({ durability: 'batch', commitWindowMs: 40 });
    await audit.ready();
    // In-process calls answer in microtasks: some always finish while an append is under way.
    let n = 0;
    const until = Date.now() + 150;
    while (Date.now() < until) await call(dispatcher, ++n);
    await audit.flush();
    const records = await recordsOf(store.inner);
    expect(records).toHaveLength(n);
    expect(n).toBeGreaterThan(20);
    // One append per 40 ms window or per 256 records (a full batch goes at once), and the flush:
    // never one per handful of calls.
    expect(store.appends).toBeLessThanOrEqual(Math.ceil(n / 256) + 6);
    expect(await verifyAuditLog(records, PUBLIC_PEM)).toEqual({ ok: true, count: n });
  });

  it('record() (an action the caller waits on) closes the window: it resolves once stored, with the calls before it', async () => {
    const { store, audit, dispatcher } = setup({ durability: 'batch', commitWindowMs: LONG_WINDOW_MS });
    await audit.ready();
    await call(dispatcher, 1);
    const stored = await audit.record({ kind: 'pin.accepted', tool: 'refund' });
    expect(stored.seq).toBe(2);
    expect((await recordsOf(store.inner)).map((r) => r.kind)).toEqual(['result', 'pin.accepted']);
    expect(store.appends).toBe(1);
  });

  it('a commit that fails after the calls answered is reported, its records kept, the next call refused until they are written', async () => {
    const { store, audit, dispatcher, refund, events } = setup({
      durability: 'batch',
      commitWindowMs: LONG_WINDOW_MS,
      deadlineMs: 100,
    });
    await audit.ready();
    await call(dispatcher, 1);
    await audit.flush();
    await call(dispatcher, 2);
    await call(dispatcher, 3);
    store.mode = 'down';
    await expect(audit.flush()).rejects.toThrow(/did not take the waiting records/);
    expect(events.filter((e) => e.type === 'audit.failed').map((e) => e['toolCallId'])).toEqual([
      'call_2',
      'call_3',
    ]);
    expect(events[0]).toMatchObject({ operation: 'append', refused: false });
    expect(JSON.stringify(events)).not.toContain('hunter2');

    // The kept records must go first: with the store down, the next call does not run.
    expect(await call(dispatcher, 4)).toMatchObject({ kind: 'refused', code: 'AUDIT_UNAVAILABLE' });
    expect(refund.calls).toHaveLength(3);

    store.mode = 'up';
    expect((await call(dispatcher, 5)).kind).toBe('result');
    await audit.close();
    const records = await recordsOf(store.inner);
    expect(records.map((r) => r.argsDigest)).toEqual([
      await audit.digest({ amount: 1 }),
      await audit.digest({ amount: 2 }),
      await audit.digest({ amount: 3 }),
      await audit.digest({ amount: 5 }),
    ]);
    expect(await verifyAuditLog(records, PUBLIC_PEM)).toEqual({ ok: true, count: 4 });
  });

  it('admits without asking the store only after an append succeeded: a store down from the start refuses the first call', async () => {
    const { store, audit, dispatcher, refund } = setup({ durability: 'batch', deadlineMs: 100 });
    await audit.ready();
    store.mode = 'down';
    expect(await call(dispatcher, 1)).toMatchObject({ kind: 'refused', code: 'AUDIT_UNAVAILABLE' });
    expect(refund.calls).toHaveLength(0);
    store.mode = 'up';
    await call(dispatcher, 2);
    await audit.close();
    expect((await recordsOf(store.inner)).map((r) => r.argsDigest)).toEqual([
      await audit.digest({ amount: 2 }),
    ]);
  });

  it('a crash between commits loses only the records of the open window; a log reopened on the store continues the chain', async () => {
    const store = inMemoryAuditStore();
    const first = auditLog({
      store,
      signingKey: PRIVATE_PEM,
      digestKey: DIGEST_KEY,
      durability: 'batch',
      commitWindowMs: LONG_WINDOW_MS,
    });
    const tools = [mockTool({ name: 'refund', result: { refunded: true } })];
    const before = first.attach(createDispatcher({ tools, chain: canonicalChain() }));
    for (let n = 1; n <= 4; n++) await call(before, n);
    await first.flush();
    for (let n = 5; n <= 7; n++) await call(before, n);
    // The process dies here: its writer and queue are gone; nothing it did not commit reaches the store.
    expect(first.pending).toBe(3);
    expect((await recordsOf(store)).map((r) => r.seq)).toEqual([1, 2, 3, 4]);

    const second = auditLog({ store, signingKey: PRIVATE_PEM, digestKey: DIGEST_KEY, durability: 'batch' });
    const after = second.attach(createDispatcher({ tools, chain: canonicalChain() }));
    await call(after, 8);
    await call(after, 9);
    await second.close();
    const records = await recordsOf(store);
    expect(records.map((r) => r.seq)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(records[4]!.argsDigest).toBe(await second.digest({ amount: 8 }));
    expect(await verifyAuditLog(records, PUBLIC_PEM)).toEqual({ ok: true, count: 6 });
    // (The dead process's timer, which this test process still holds, is let go.)
    await first.close();
  });

  it('two logs writing one store at once, each batching, keep one chain', async () => {
    const store = inMemoryAuditStore();
    const tools = [mockTool({ name: 'refund', result: { refunded: true } })];
    const logs = [0, 1].map(() =>
      auditLog({
        store,
        signingKey: PRIVATE_PEM,
        digestKey: DIGEST_KEY,
        durability: 'batch',
        commitWindowMs: 2,
      }),
    );
    const dispatchers = logs.map((log) => log.attach(createDispatcher({ tools, chain: canonicalChain() })));
    await Promise.all(
      dispatchers.map(async (dispatcher, i) => {
        for (let n = 0; n < 25; n++) await call(dispatcher, i * 100 + n);
      }),
    );
    await Promise.all(logs.map((log) => log.close()));
    const records = await recordsOf(store);
    expect(records).toHaveLength(50);
    expect(await verifyAuditLog(records, PUBLIC_PEM)).toEqual({ ok: true, count: 50 });
    // Fewer signatures than records: windows were shared.
    expect(records.filter((r) => r.signature !== '').length).toBeLessThan(50);
  });

  it('checks its options', () => {
    const base = { store: inMemoryAuditStore(), signingKey: PRIVATE_PEM, digestKey: DIGEST_KEY };
    expect(() => auditLog({ ...base, durability: 'eventually' as never })).toThrow(AuditConfigError);
    expect(() => auditLog({ ...base, durability: 'batch', commitWindowMs: -1 })).toThrow(
      /'commitWindowMs' must be an integer/,
    );
    expect(() => auditLog({ ...base, commitWindowMs: 1.5 })).toThrow(AuditConfigError);
  });
});

describe("durability: 'record' (the default)", () => {
  it('each call one after another answers once its own record is stored and signed', async () => {
    const { store, audit, dispatcher } = setup();
    await audit.ready();
    for (let n = 1; n <= 3; n++) {
      await call(dispatcher, n);
      expect(await recordsOf(store.inner)).toHaveLength(n);
    }
    expect(store.appends).toBe(3);
    expect(signedPattern(await recordsOf(store.inner))).toBe('SSS');
  });
});

describe('signatures made in this thread', () => {
  it('are the ones Web Crypto makes: a log signed from the PEM equals one signed with the imported CryptoKey', async () => {
    const { subtle } = globalThis.crypto;
    const der = Buffer.from(PRIVATE_PEM.replace(/-----[A-Z ]+-----/g, '').replace(/\s+/g, ''), 'base64');
    const cryptoKey = await subtle.importKey('pkcs8', der, { name: 'Ed25519' }, false, ['sign']);
    const written = async (signingKey: string | CryptoKey) => {
      const store = inMemoryAuditStore();
      const audit = auditLog({ store, signingKey, digestKey: DIGEST_KEY, clock: () => 1_000 });
      for (let i = 0; i < 3; i++) await audit.record({ kind: 'grant.used', tool: `t${i}`, args: { i } });
      return recordsOf(store);
    };
    const fromPem = await written(PRIVATE_PEM);
    expect(fromPem.every((r) => /^[0-9a-f]{128}$/.test(r.signature))).toBe(true);
    expect(fromPem).toEqual(await written(cryptoKey));
  });

  it('checkpoints signed in this thread verify, and one edited after signing is refused', async () => {
    const store = inMemoryAuditStore();
    const published: AuditCheckpoint[] = [];
    const audit = auditLog({
      store,
      signingKey: PRIVATE_PEM,
      digestKey: DIGEST_KEY,
      durability: 'batch',
      commitWindowMs: LONG_WINDOW_MS,
      checkpoints: { every: 1_000, publish: async (checkpoint) => void published.push(checkpoint) },
    });
    for (let i = 0; i < 5; i++) await audit.record({ kind: 'grant.used', tool: `t${i}` });
    await audit.close();
    const records = await recordsOf(store);
    const checkpoint = published.at(-1)!;
    expect(checkpoint.seq).toBe(5);
    expect(await verifyAuditLog(records, PUBLIC_PEM, { checkpoint })).toEqual({ ok: true, count: 5 });

    // Moved back to hide the last records: the signature no longer holds.
    const edited = { ...checkpoint, seq: 3, hash: records[2]!.hash };
    expect(await verifyAuditLog(records.slice(0, 3), PUBLIC_PEM, { checkpoint: edited })).toMatchObject({
      ok: false,
      why: expect.stringMatching(/not signed by this key/),
    });
  });

  it('a batch of a window carries one signature: a record inside it changed and re-hashed is named', async () => {
    const { store, audit, dispatcher } = setup({ durability: 'batch', commitWindowMs: LONG_WINDOW_MS });
    await audit.ready();
    for (let n = 1; n <= 5; n++) await call(dispatcher, n);
    await audit.close();
    const log = await recordsOf(store.inner);
    // Without the key: change record 2, re-hash it and every record after it, keep the signature.
    const forged: AuditRecord[] = [];
    for (const [i, original] of log.entries()) {
      const {
        hash: _hash,
        signature,
        ...body
      } = {
        ...original,
        prevHash: forged[i - 1]?.hash ?? original.prevHash,
        ...(i === 1 ? { argsDigest: 'f'.repeat(64) } : {}),
      };
      forged.push({ ...body, hash: await digestOf(body), signature } as AuditRecord);
    }
    expect(await verifyAuditLog(forged, PUBLIC_PEM)).toEqual({
      ok: false,
      seq: 1,
      why: expect.stringMatching(
        /^record 1 is not proven: the signature of record 5, which covers records 1–5/,
      ),
    });
  });
});
