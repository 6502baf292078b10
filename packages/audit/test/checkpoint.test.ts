// Signed checkpoints: a log cut short, wiped or rolled back together with its head row verifies on
// its own, and fails against the newest checkpoint published outside the store; a checkpoint that is
// forged, edited or another log's is refused; without an anchor the tail is reported unanchored.

import type { AuditHead, AuditRecord, AuditStore } from '@toolgate/core';
import {
  auditLog,
  inMemoryAuditStore,
  parseAuditHead,
  parseCheckpoint,
  verifyAuditLog,
  verifyAuditLogHead,
  type AuditCheckpoint,
} from '@toolgate/audit';
import {
  DIGEST_KEY,
  OTHER_PRIVATE_PEM,
  PRIVATE_PEM,
  PUBLIC_PEM,
  recordsOf,
} from '../../../test-support/audit-fixtures';

/** A store holding `records` whose head row agrees with them: what is left after cutting both. */
function storeOf(records: readonly AuditRecord[]): AuditStore {
  const last = records.at(-1);
  const head: AuditHead | undefined = last === undefined ? undefined : { seq: last.seq, hash: last.hash };
  return {
    append: () => Promise.reject(new Error('read-only')),
    head: async () => head,
    read: async (after, limit) => records.slice(after, after + limit),
  };
}

async function writtenWithCheckpoints(
  length: number,
  every: number,
  signingKey = PRIVATE_PEM,
): Promise<{ records: AuditRecord[]; published: AuditCheckpoint[] }> {
  const store = inMemoryAuditStore();
  const published: AuditCheckpoint[] = [];
  const audit = auditLog({
    store,
    signingKey,
    digestKey: DIGEST_KEY,
    checkpoints: { every, publish: async (checkpoint) => void published.push(checkpoint) },
  });
  for (let i = 0; i < length; i++) await audit.record({ kind: 'grant.used', tool: `t${i}`, args: { i } });
  await audit.close();
  return { records: await recordsOf(store), published };
}

describe('signed checkpoints', () => {
  let records: AuditRecord[];
  let published: AuditCheckpoint[];
  let newest: AuditCheckpoint;
  beforeAll(async () => {
    ({ records, published } = await writtenWithCheckpoints(7, 3));
    newest = published.at(-1)!;
  });

  it('are published every N records and once more on close, each covering the head it names', async () => {
    expect(published.map((c) => c.seq)).toEqual([3, 6, 7]);
    for (const checkpoint of published) expect(checkpoint.hash).toBe(records[checkpoint.seq - 1]!.hash);
    expect(await verifyAuditLog(records, PUBLIC_PEM, { checkpoint: newest })).toEqual({ ok: true, count: 7 });
  });

  it('are published after T without N records, and not again when nothing was added', async () => {
    const store = inMemoryAuditStore();
    const seen: number[] = [];
    const audit = auditLog({
      store,
      signingKey: PRIVATE_PEM,
      digestKey: DIGEST_KEY,
      checkpoints: { every: 1000, intervalMs: 20, publish: async (c) => void seen.push(c.seq) },
    });
    await audit.record({ kind: 'grant.used' });
    await audit.record({ kind: 'grant.used' });
    for (let i = 0; i < 100 && seen.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
    expect(seen).toEqual([2]);
    await audit.close();
    expect(seen).toEqual([2]);
  });

  it('"delete the last 3 records and the head row": detected against the checkpoint, not without it', async () => {
    const cut = storeOf(records.slice(0, 4));
    // On its own the cut log is consistent: that is why the anchor must live outside the store.
    expect(await verifyAuditLog(cut, PUBLIC_PEM)).toEqual({ ok: true, count: 4 });
    const verdict = await verifyAuditLog(cut, PUBLIC_PEM, { checkpoint: newest });
    expect(verdict).toEqual({ ok: false, seq: 5, why: expect.stringContaining('the log ends at 4') });
    // The same with the head printed by an earlier verify.
    const head = parseAuditHead(`${newest.seq}:${newest.hash}`);
    expect(await verifyAuditLog(cut, PUBLIC_PEM, { head })).toMatchObject({ ok: false, seq: 5 });
  });

  it('"delete every record": detected against the checkpoint', async () => {
    const verdict = await verifyAuditLog(storeOf([]), PUBLIC_PEM, { checkpoint: JSON.stringify(newest) });
    expect(verdict).toEqual({ ok: false, seq: 1, why: expect.stringContaining('the log ends at 0') });
  });

  it('a log rolled back and written again (same length, other records) disagrees with the checkpoint', async () => {
    const other = await writtenWithCheckpoints(7, 100);
    const verdict = await verifyAuditLog(other.records, PUBLIC_PEM, { checkpoint: newest });
    expect(verdict).toMatchObject({
      ok: false,
      seq: 7,
      why: expect.stringContaining('differs from the checkpoint'),
    });
  });

  it('a checkpoint edited to a shorter log, forged, or signed by another key is refused', async () => {
    const older = published[0]!;
    const edited = { ...older, seq: 4, hash: records[3]!.hash };
    const foreign = (await writtenWithCheckpoints(7, 3, OTHER_PRIVATE_PEM)).published.at(-1)!;
    for (const checkpoint of [edited, { ...newest, at: new Date(0).toISOString() }, foreign]) {
      expect(await verifyAuditLog(records, PUBLIC_PEM, { checkpoint })).toMatchObject({
        ok: false,
        why: expect.stringContaining('not signed by this key'),
      });
    }
    // A record's signature cannot pass for a checkpoint's: the signed bytes differ.
    const last = records.at(-1)!;
    const fromRecord = { seq: last.seq, hash: last.hash, at: newest.at, signature: last.signature };
    expect(await verifyAuditLog(records, PUBLIC_PEM, { checkpoint: fromRecord })).toMatchObject({
      ok: false,
    });
  });

  it('a file of checkpoints, one a line, anchors to the newest; malformed text is an error naming the line', async () => {
    const text = published.map((c) => JSON.stringify(c)).join('\n');
    expect(parseCheckpoint(text).seq).toBe(7);
    expect(() => parseCheckpoint(`${text}\nnot json`)).toThrow(/line 4 is not JSON/);
    expect(() => parseCheckpoint('{"seq":1}')).toThrow(/'hash'/);
    expect(() => parseAuditHead('7:abc')).toThrow(/SEQ:HASH/);
  });

  it('verify answers the head it checked and whether the tail was anchored', async () => {
    expect(await verifyAuditLogHead(records, PUBLIC_PEM)).toEqual({
      ok: true,
      count: 7,
      head: { seq: 7, hash: records[6]!.hash },
      anchoredBy: undefined,
    });
    expect(await verifyAuditLogHead(records, PUBLIC_PEM, { checkpoint: newest })).toMatchObject({
      anchoredBy: 'checkpoint',
    });
    expect(await verifyAuditLogHead([], PUBLIC_PEM)).toMatchObject({ ok: true, count: 0, head: undefined });
  });

  it('a publish that fails is retried with the next checkpoint, and says only what failed', async () => {
    const seen: number[] = [];
    const errors: unknown[] = [];
    let down = true;
    const audit = auditLog({
      store: inMemoryAuditStore(),
      signingKey: PRIVATE_PEM,
      digestKey: DIGEST_KEY,
      checkpoints: {
        every: 1,
        publish: async (c) => {
          if (down) throw new Error('webhook down');
          seen.push(c.seq);
        },
        onError: (error) => errors.push(error),
      },
    });
    await audit.record({ kind: 'grant.used' });
    await audit.checkpoint();
    down = false;
    await audit.record({ kind: 'grant.used' });
    await audit.checkpoint();
    await audit.close();
    expect(errors.length).toBeGreaterThan(0);
    expect(seen).toEqual([2]);
  });
});
