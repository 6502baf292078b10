// verifyAuditLog: whatever is done to a log (a field edited, a record removed, one inserted, two
// swapped), verification fails at the first position where the log stops being the one written, and
// names it. Cutting records off the end shows only against a head kept apart (or a store's own).

import fc from 'fast-check';
import {
  AUDIT_GENESIS,
  canonicalJson,
  digestOf,
  type AuditHead,
  type AuditRecord,
  type AuditStore,
} from '@toolgate/core';
import {
  AuditConfigError,
  auditLog,
  exportAuditLog,
  inMemoryAuditStore,
  parseAuditLog,
  RECORD_FIELDS,
  verifyAuditLog,
} from '@toolgate/audit';
import { DEEP, fcOptions, PROPERTY_TIMEOUT_MS } from '../../../test-support/hardening';
import {
  DIGEST_KEY,
  OTHER_PRIVATE_PEM,
  PRIVATE_PEM,
  PUBLIC_PEM,
  recordsOf,
} from '../../../test-support/audit-fixtures';

const KINDS = ['result', 'refused', 'paused', 'failed', 'pin.accepted', 'grant.used', 'config.reloaded'];
const LENGTH = 30;

/** A log written by the real audit log, with varied fields. */
async function writtenLog(signingKey: string, length = LENGTH): Promise<AuditRecord[]> {
  const store = inMemoryAuditStore();
  const audit = auditLog({ store, signingKey, digestKey: DIGEST_KEY });
  for (let i = 0; i < length; i++) {
    await audit.record({
      kind: KINDS[i % KINDS.length]!,
      ran: i % 3 === 0,
      ...(i % 2 === 0 ? { tenant: 'acme', principal: `user-${i}` } : {}),
      ...(i % 4 !== 3 ? { tool: `tool_${i % 5}` } : {}),
      ...(i % 5 === 1 ? { gate: 'policy', code: 'POLICY_DENIED', rule: 'no-writes' } : {}),
      args: { i },
    });
  }
  return recordsOf(store);
}

/** A record at `seq` after `prevHash` with a fresh hash: what someone without the key can make. */
async function forgedAt(model: AuditRecord, seq: number, prevHash: string): Promise<AuditRecord> {
  const { hash: _hash, signature, ...body } = { ...model, seq, prevHash, tool: 'forged_tool' };
  return { ...body, hash: await digestOf(body), signature };
}

let log: AuditRecord[];
let foreign: AuditRecord[];
beforeAll(async () => {
  [log, foreign] = await Promise.all([writtenLog(PRIVATE_PEM), writtenLog(OTHER_PRIVATE_PEM)]);
});

const same = (a: unknown, b: unknown) => canonicalJson(a) === canonicalJson(b);

type Mutation =
  | { readonly type: 'edit'; readonly at: number; readonly field: string; readonly value: unknown }
  | { readonly type: 'delete'; readonly at: number }
  | {
      readonly type: 'insert';
      readonly at: number;
      readonly what: 'duplicate' | 'forged' | 'foreign';
      readonly from: number;
    }
  | { readonly type: 'swap'; readonly at: number; readonly with: number };

const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({
    type: fc.constant('edit' as const),
    at: fc.nat(),
    field: fc.constantFrom(...RECORD_FIELDS, 'extra'),
    value: fc.oneof(
      fc.jsonValue({ maxDepth: 1 }),
      fc.constant(undefined),
      fc.string({ unit: fc.constantFrom(...'0123456789abcdef'), minLength: 64, maxLength: 64 }),
    ),
  }),
  fc.record({ type: fc.constant('delete' as const), at: fc.nat() }),
  fc.record({
    type: fc.constant('insert' as const),
    at: fc.nat(),
    what: fc.constantFrom('duplicate' as const, 'forged' as const, 'foreign' as const),
    from: fc.nat(),
  }),
  fc.record({ type: fc.constant('swap' as const), at: fc.nat(), with: fc.nat() }),
);

/** The log after `m`; undefined when `m` changes nothing (an edit to the same value, a swap with itself). */
async function mutated(original: readonly AuditRecord[], m: Mutation): Promise<AuditRecord[] | undefined> {
  const n = original.length;
  const out = original.map((r) => ({ ...r }) as Record<string, unknown>);
  switch (m.type) {
    case 'edit': {
      const record = out[m.at % n]!;
      const before = canonicalJson(record);
      if (m.value === undefined) delete record[m.field];
      else record[m.field] = m.value;
      return canonicalJson(record) === before ? undefined : (out as unknown as AuditRecord[]);
    }
    case 'delete':
      out.splice(m.at % n, 1);
      return out as unknown as AuditRecord[];
    case 'insert': {
      const at = m.at % (n + 1);
      const previous = at === 0 ? AUDIT_GENESIS : original[at - 1]!.hash;
      const inserted =
        m.what === 'duplicate'
          ? original[m.from % n]!
          : m.what === 'forged'
            ? await forgedAt(original[m.from % n]!, at + 1, previous)
            : { ...foreign[m.from % foreign.length]!, seq: at + 1, prevHash: previous };
      out.splice(at, 0, inserted as unknown as Record<string, unknown>);
      return out as unknown as AuditRecord[];
    }
    case 'swap': {
      const [i, j] = [m.at % n, m.with % n];
      if (i === j) return undefined;
      [out[i], out[j]] = [out[j]!, out[i]!];
      return out as unknown as AuditRecord[];
    }
  }
}

/** The first position where `changed` is no longer `original`, or undefined when it is a prefix of it. */
function firstDifference(
  original: readonly AuditRecord[],
  changed: readonly AuditRecord[],
): number | undefined {
  for (let i = 0; i < changed.length; i++) {
    if (i >= original.length || !same(original[i], changed[i])) return i;
  }
  return undefined;
}

describe('verifyAuditLog()', () => {
  it('verifies a log as written, of every length, and an empty one', async () => {
    for (const n of [0, 1, 2, 17, LENGTH]) {
      expect(await verifyAuditLog(log.slice(0, n), PUBLIC_PEM)).toEqual({ ok: true, count: n });
    }
  });

  it(
    'detects a random edit, deletion, insertion or swap anywhere in a log of random length, at the first changed seq',
    async () => {
      let cut = 0;
      let checked = 0;
      await fc.assert(
        fc.asyncProperty(fc.integer({ min: 1, max: LENGTH }), mutation, async (n, m) => {
          const original = log.slice(0, n);
          const changed = await mutated(original, m);
          fc.pre(changed !== undefined);
          const anchor: AuditHead = { seq: n, hash: original[n - 1]!.hash };
          const plainVerdict = await verifyAuditLog(changed!, PUBLIC_PEM);
          const anchoredVerdict = await verifyAuditLog(changed!, PUBLIC_PEM, { head: anchor });
          const at = firstDifference(original, changed!);
          if (at === undefined) {
            // Records cut from the end: the chain alone still holds; the head kept apart does not.
            cut += 1;
            expect(plainVerdict).toEqual({ ok: true, count: changed!.length });
            expect(anchoredVerdict).toMatchObject({ ok: false, seq: changed!.length + 1 });
            return;
          }
          checked += 1;
          expect(plainVerdict).toMatchObject({ ok: false, seq: at + 1 });
          expect(anchoredVerdict).toEqual(plainVerdict);
        }),
        fcOptions(25, DEEP ? { numRuns: 5_000 } : { numRuns: 300 }),
      );
      expect(checked).toBeGreaterThan(100);
      expect(cut).toBeGreaterThan(0);
    },
    PROPERTY_TIMEOUT_MS,
  );

  describe('names what happened', () => {
    const at = (
      records: AuditRecord[],
      i: number,
      change: Partial<AuditRecord> | ((r: AuditRecord) => AuditRecord),
    ) =>
      records.map((r, k) => (k !== i ? r : typeof change === 'function' ? change(r) : { ...r, ...change }));

    it.each([
      [
        'a changed field',
        () => at(log, 4, { tool: 'other' }),
        5,
        'record 5 was changed: its content does not match its hash',
      ],
      [
        'a removed record',
        () => log.filter((_, k) => k !== 4),
        5,
        'record 5 is missing: the next record in the log is 6 (removed, or moved later)',
      ],
      [
        'a repeated record',
        () => [...log.slice(0, 5), log[2]!, ...log.slice(5)],
        6,
        'record 3 appears again where record 6 belongs (a record was inserted, repeated or moved earlier)',
      ],
      [
        'a record from another log in its place',
        () => at(log, 4, (r) => ({ ...foreign[4]!, prevHash: r.prevHash })),
        5,
        // Two logs written in the same millisecond hold the same content: then only the signature differs.
        /^record 5 (was changed: its content does not match its hash|is not signed by this key: its signature does not verify)$/,
      ],
      [
        'a record whose link was rewritten',
        () => at(log, 4, { prevHash: 'a'.repeat(64) }),
        5,
        "record 5 does not follow record 4: its prevHash is not that record's hash (a record was replaced, inserted or reordered)",
      ],
      [
        'a malformed record',
        () => at(log, 4, { seq: '5' as never }),
        5,
        "record 5 is malformed: 'seq' is not a positive integer",
      ],
      [
        'something that is not a record',
        () => at(log, 0, () => 'hello' as never),
        1,
        'record 1 is malformed: it is not a JSON object',
      ],
    ])('%s', async (_title, make, seq, why) => {
      expect(await verifyAuditLog(make(), PUBLIC_PEM)).toEqual({
        ok: false,
        seq,
        why: typeof why === 'string' ? why : expect.stringMatching(why),
      });
    });

    it('a record re-hashed by someone without the key: the signature fails there', async () => {
      const records = [...log.slice(0, 4), await forgedAt(log[4]!, 5, log[3]!.hash)];
      expect(await verifyAuditLog(records, PUBLIC_PEM)).toEqual({
        ok: false,
        seq: 5,
        why: 'record 5 is not signed by this key: its signature does not verify',
      });
    });

    it('a log signed by another key fails at its first record', async () => {
      expect(await verifyAuditLog(foreign, PUBLIC_PEM)).toMatchObject({ ok: false, seq: 1 });
    });

    it('records cut from the end, against the head kept apart', async () => {
      const head = { seq: LENGTH, hash: log.at(-1)!.hash };
      expect(await verifyAuditLog(log.slice(0, 20), PUBLIC_PEM, { head })).toEqual({
        ok: false,
        seq: 21,
        why: `record 21 is missing: the log ends at 20, but the head you gave is record ${LENGTH}`,
      });
      expect(await verifyAuditLog(log, PUBLIC_PEM, { head: { ...head, hash: 'b'.repeat(64) } })).toEqual({
        ok: false,
        seq: LENGTH,
        why: `record ${LENGTH} differs from the head you gave: its hash is not the one kept there`,
      });
    });
  });

  describe('sources', () => {
    it('reads a store page by page, and checks its records against the head it keeps', async () => {
      const head = { seq: LENGTH, hash: log.at(-1)!.hash };
      const truncated: AuditStore = {
        append: () => Promise.reject(new Error('read-only')),
        head: async () => head,
        read: async (after, limit) => log.slice(0, 25).slice(after, after + limit),
      };
      expect(await verifyAuditLog(truncated, PUBLIC_PEM)).toEqual({
        ok: false,
        seq: 26,
        why: `record 26 is missing: the log ends at 25, but the store's head is record ${LENGTH}`,
      });
    });

    it('verifies an export’s text as it is, naming a line that is not JSON by its position', async () => {
      const text = await exportAuditLog(log.slice(0, 5));
      expect(await verifyAuditLog(text, PUBLIC_PEM)).toEqual({ ok: true, count: 5 });
      const lines = text.split('\n');
      lines[2] = lines[2]!.slice(0, -4);
      expect(await verifyAuditLog(lines.join('\n'), PUBLIC_PEM)).toEqual({
        ok: false,
        seq: 3,
        why: 'record 3 is malformed: it is not a JSON object',
      });
    });

    it('verifies an export read back, and an async iterable', async () => {
      let text = '';
      for await (const line of exportAuditLog(log)) text += line;
      expect(await verifyAuditLog(parseAuditLog(text), PUBLIC_PEM)).toEqual({ ok: true, count: LENGTH });
      async function* streamed() {
        yield* log;
      }
      expect(await verifyAuditLog(streamed(), PUBLIC_PEM)).toEqual({ ok: true, count: LENGTH });
    });

    it('refuses what is neither a store nor records, and a head that is not one', async () => {
      await expect(verifyAuditLog(42 as never, PUBLIC_PEM)).rejects.toThrow(AuditConfigError);
      await expect(verifyAuditLog(log, PUBLIC_PEM, { head: { seq: 0, hash: '' } })).rejects.toThrow(
        "'head' must be { seq, hash }",
      );
      await expect(verifyAuditLog(log, 'not a key')).rejects.toThrow(
        'verifyAuditLog: publicKey: expected a PEM or JWK Ed25519 key',
      );
    });
  });
});
