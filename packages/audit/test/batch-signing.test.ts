// One signature per batch: records appended together carry one Ed25519 signature, on the last one,
// which covers the others through the hash chain. Verify still names the first record it cannot
// prove; a log cut inside a batch, or extended without the key, fails. Digests and hashes computed in
// this thread agree with Web Crypto's.

import { canonicalJson, digestOf, type AuditRecord } from '@toolgate/core';
import { auditLog, inMemoryAuditStore, verifyAuditLog } from '@toolgate/audit';
import { DIGEST_KEY, PRIVATE_PEM, PUBLIC_PEM, recordsOf } from '../../../test-support/audit-fixtures';

/** A log of 3 batches, written concurrently: 4 records, then 1, then 3. */
async function batchedLog(): Promise<AuditRecord[]> {
  const store = inMemoryAuditStore();
  const audit = auditLog({ store, signingKey: PRIVATE_PEM, digestKey: DIGEST_KEY });
  const together = (n: number, from: number) =>
    Promise.all(
      Array.from({ length: n }, (_, i) =>
        audit.record({ kind: 'grant.used', tool: `t${from + i}`, args: { i } }),
      ),
    );
  await together(4, 0);
  await together(1, 4);
  await together(3, 5);
  return recordsOf(store);
}

/** Record `at` (0-based) changed and the chain re-hashed from there on, signatures kept: what someone without the key can do. */
async function rehashedFrom(log: readonly AuditRecord[], at: number): Promise<AuditRecord[]> {
  const out = log.slice(0, at).map((r) => ({ ...r }));
  for (let i = at; i < log.length; i++) {
    const original = log[i]!;
    const {
      hash: _hash,
      signature,
      ...body
    } = {
      ...original,
      prevHash: out[i - 1]?.hash ?? original.prevHash,
      ...(i === at ? { tool: 'forged_tool' } : {}),
    };
    out.push({ ...body, hash: await digestOf(body), signature } as AuditRecord);
  }
  return out;
}

describe('one signature per batch', () => {
  let log: AuditRecord[];
  beforeAll(async () => {
    log = await batchedLog();
  });

  it('signs the last record of each batch only, and the log verifies', async () => {
    expect(log.map((r) => (r.signature === '' ? '-' : 'S')).join('')).toBe('---SS--S');
    expect(await verifyAuditLog(log, PUBLIC_PEM)).toEqual({ ok: true, count: 8 });
  });

  it('a record changed and re-hashed inside a batch: verify names the first record that signature covers', async () => {
    expect(await verifyAuditLog(await rehashedFrom(log, 1), PUBLIC_PEM)).toEqual({
      ok: false,
      seq: 1,
      why: expect.stringMatching(
        /^record 1 is not proven: the signature of record 4, which covers records 1–4/,
      ),
    });
    // A change without re-hashing shows at the record, and the unsigned record before it, which no
    // signature now covers, is named first: it may have been changed as well.
    const edited = log.map((r) => (r.seq === 7 ? { ...r, tool: 'forged_tool' } : r));
    expect(await verifyAuditLog(edited, PUBLIC_PEM)).toEqual({
      ok: false,
      seq: 6,
      why: 'record 6 is not proven: the chain breaks at record 7 before a signature covers record 6 (record 7 was changed: its content does not match its hash)',
    });
    // At a batch's first record, nothing before it is in doubt.
    const first = log.map((r) => (r.seq === 5 ? { ...r, tool: 'forged_tool' } : r));
    expect(await verifyAuditLog(first, PUBLIC_PEM)).toMatchObject({ ok: false, seq: 5 });
  });

  it('a log cut inside a batch fails: its tail has no signature', async () => {
    expect(await verifyAuditLog(log.slice(0, 7), PUBLIC_PEM)).toEqual({
      ok: false,
      seq: 6,
      why: expect.stringContaining('records 6–7 end the log with no signature after them'),
    });
    expect(await verifyAuditLog(log.slice(0, 5), PUBLIC_PEM)).toEqual({ ok: true, count: 5 });
  });

  it('records added without the key, unsigned, after the last signed one: refused', async () => {
    const [extra] = await rehashedFrom([...log, { ...log[7]!, seq: 9, signature: '' }], 8).then((all) =>
      all.slice(8),
    );
    expect(await verifyAuditLog([...log, extra!], PUBLIC_PEM)).toMatchObject({ ok: false, seq: 9 });
  });

  it('a signature moved onto an unsigned record, or removed from a signed one: refused', async () => {
    const moved = log.map((r) => (r.seq === 2 ? { ...r, signature: log[3]!.signature } : r));
    expect(await verifyAuditLog(moved, PUBLIC_PEM)).toMatchObject({ ok: false, seq: 1 });
    const stripped = log.map((r) => (r.seq === 8 ? { ...r, signature: '' } : r));
    expect(await verifyAuditLog(stripped, PUBLIC_PEM)).toMatchObject({ ok: false, seq: 6 });
  });
});

describe('digests computed in this thread', () => {
  it('equal the Web Crypto HMAC of the canonical JSON, for every kind of value', async () => {
    const audit = auditLog({ store: inMemoryAuditStore(), signingKey: PRIVATE_PEM, digestKey: DIGEST_KEY });
    const key = await crypto.subtle.importKey(
      'raw',
      new TextEncoder().encode(DIGEST_KEY),
      { name: 'HMAC', hash: 'SHA-256' },
      false,
      ['sign'],
    );
    for (const value of [{ amount: 500 }, 'text', [1, 2, { ü: 'ß' }], null, { nested: { a: [true] } }]) {
      const expected = Buffer.from(
        await crypto.subtle.sign('HMAC', key, new TextEncoder().encode(canonicalJson(value))),
      ).toString('hex');
      expect(await audit.digest(value)).toBe(expected);
    }
  });
});

describe("the runtime's crypto, or none", () => {
  /** The records of one log written with `process.getBuiltinModule` answering `crypto` for node:crypto. */
  async function logWith(crypto: unknown): Promise<AuditRecord[]> {
    const host = process as { getBuiltinModule?: ((id: string) => unknown) | undefined };
    const original = host.getBuiltinModule;
    host.getBuiltinModule = (id) => (id === 'node:crypto' ? crypto : original?.call(process, id));
    try {
      let records: AuditRecord[] = [];
      await jest.isolateModulesAsync(async () => {
        const fresh = (await import('@toolgate/audit')) as typeof import('@toolgate/audit');
        const store = fresh.inMemoryAuditStore();
        const audit = fresh.auditLog({
          store,
          signingKey: PRIVATE_PEM,
          digestKey: DIGEST_KEY,
          clock: () => 0,
        });
        await Promise.all(
          [1, 2, 3].map((i) => audit.record({ kind: 'grant.used', tool: `t${i}`, args: { i } })),
        );
        await audit.record({ kind: 'grant.used', tool: 't4', args: { ü: 'ß' } });
        records = await recordsOf(store);
      });
      return records;
    } finally {
      host.getBuiltinModule = original;
    }
  }

  it('hashes, digests and signs alike with node:crypto, without its one-shot hash, and with Web Crypto alone', async () => {
    const native = await import('node:crypto');
    const { hash: _oneShot, ...withoutOneShot } = native;
    const full = await logWith(native);
    expect(full).toHaveLength(4);
    expect(await verifyAuditLog(full, PUBLIC_PEM)).toEqual({ ok: true, count: 4 });
    expect(await logWith(withoutOneShot)).toEqual(full);
    // Web Crypto's digests settle in their own order, so records may be batched and ordered otherwise.
    const portable = await logWith(undefined);
    expect(await verifyAuditLog(portable, PUBLIC_PEM)).toEqual({ ok: true, count: 4 });
    const digests = (log: readonly AuditRecord[]) =>
      Object.fromEntries(log.map((record) => [record.tool, record.argsDigest]));
    expect(digests(portable)).toEqual(digests(full));
  });
});
