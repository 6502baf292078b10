// What every AuditStore must do, whatever keeps the log: seal against the true head, store all of an
// append or none of it, keep one chain under many concurrent appends, hand records back exactly as
// written, and never store what does not continue the log. Records are sealed here with real SHA-256
// hashes and a stand-in signature: a store never checks signatures.

import { expect } from '@jest/globals';
import { AUDIT_GENESIS, digestOf, type AuditHead, type AuditRecord, type AuditStore } from '@toolgate/core';

export interface AuditStoreLawContext {
  readonly store: AuditStore;
}

export interface AuditStoreLaw {
  readonly title: string;
  readonly check: (context: AuditStoreLawContext) => Promise<void>;
}

const STAND_IN_SIGNATURE = 'ab'.repeat(64);

type Fields = Omit<AuditRecord, 'seq' | 'prevHash' | 'hash' | 'signature'>;

const plain = (n: number, extra: Partial<Fields> = {}): Fields => ({
  at: new Date(Date.UTC(2030, 0, 1, 0, 0, n)).toISOString(),
  kind: 'result',
  ran: true,
  tool: 'refund',
  ...extra,
});

/** The records that continue `head`, as `@toolgate/audit` seals them (with a stand-in signature). */
async function sealed(head: AuditHead | undefined, batch: readonly Fields[]): Promise<AuditRecord[]> {
  let seq = head?.seq ?? 0;
  let prevHash = head?.hash ?? AUDIT_GENESIS;
  const out: AuditRecord[] = [];
  for (const fields of batch) {
    seq += 1;
    const body = { seq, ...fields, prevHash };
    const hash = await digestOf(body);
    out.push({ ...body, hash, signature: STAND_IN_SIGNATURE });
    prevHash = hash;
  }
  return out;
}

/** Appends `batch`; answers the head the seal was given and what the store answered. */
async function append(store: AuditStore, batch: readonly Fields[]) {
  let given: AuditHead | undefined | 'not called' = 'not called';
  const stored = await store.append(async (head) => {
    given = head;
    return sealed(head, batch);
  });
  return { given, stored };
}

async function everything(store: AuditStore): Promise<AuditRecord[]> {
  const all: AuditRecord[] = [];
  for (;;) {
    const page = await store.read(all.at(-1)?.seq ?? 0, 7);
    if (page.length === 0) return all;
    all.push(...page);
  }
}

function expectOneChain(records: readonly AuditRecord[]): void {
  records.forEach((record, i) => {
    expect(record.seq).toBe(i + 1);
    expect(record.prevHash).toBe(i === 0 ? AUDIT_GENESIS : records[i - 1]!.hash);
  });
}

export const AUDIT_STORE_LAWS: readonly AuditStoreLaw[] = [
  {
    title: 'an empty log has no head and reads nothing',
    async check({ store }) {
      expect(await store.head()).toBeUndefined();
      expect(await store.read(0, 10)).toEqual([]);
      await store.ready?.();
    },
  },
  {
    title: 'hands the seal the head, stores what it sealed, and moves the head to its last record',
    async check({ store }) {
      const first = await append(store, [plain(1), plain(2)]);
      expect(first.given).toBeUndefined();
      expect(first.stored.map((r) => r.seq)).toEqual([1, 2]);
      expect(await store.head()).toEqual({ seq: 2, hash: first.stored[1]!.hash });

      const second = await append(store, [plain(3)]);
      expect(second.given).toEqual({ seq: 2, hash: first.stored[1]!.hash });
      expect(second.stored[0]).toMatchObject({ seq: 3, prevHash: first.stored[1]!.hash });
      expect(await store.head()).toEqual({ seq: 3, hash: second.stored[0]!.hash });
      expect(await everything(store)).toEqual([...first.stored, ...second.stored]);
    },
  },
  {
    title: 'gives every record back exactly as written: all fields, absent ones absent, any characters',
    async check({ store }) {
      const full: Fields = {
        at: '2030-01-01T00:00:00.000Z',
        tenant: 'acmé "quoted" \\ tenant',
        principal: 'ana@example.com',
        tool: 'billing_refund',
        source: 'billing',
        chainId: 'chain_0123456789abcdef',
        rule: 'big-refunds-ask',
        kind: 'refused',
        gate: 'policy',
        code: 'POLICY_DENIED',
        ran: false,
        checkInId: 'chk_0123456789abcdefghij',
        approver: 'lead@example.com',
        argsDigest: '1f'.repeat(32),
        resultDigest: '2e'.repeat(32),
      };
      const sparse: Fields = { at: '2030-01-01T00:00:01.000Z', kind: 'config.reloaded', ran: false };
      const odd: Fields = plain(3, { tenant: 'line\nbreak\u2028 ✓ \u{1f511}', principal: '' });
      const { stored } = await append(store, [full, sparse, odd]);
      const read = await everything(store);
      expect(read).toEqual(stored);
      expect(Object.keys(read[1]!).sort()).toEqual([
        'at',
        'hash',
        'kind',
        'prevHash',
        'ran',
        'seq',
        'signature',
      ]);
      // Canonical JSON of what comes back hashes to what was stored: nothing changed on the way.
      for (const record of read) {
        const { hash, signature: _signature, ...body } = record;
        expect(await digestOf(body)).toBe(hash);
      }
    },
  },
  {
    title: 'reads a page at a time: records after a seq, in order, at most the limit',
    async check({ store }) {
      await append(
        store,
        Array.from({ length: 12 }, (_, i) => plain(i)),
      );
      expect((await store.read(0, 5)).map((r) => r.seq)).toEqual([1, 2, 3, 4, 5]);
      expect((await store.read(5, 5)).map((r) => r.seq)).toEqual([6, 7, 8, 9, 10]);
      expect((await store.read(10, 5)).map((r) => r.seq)).toEqual([11, 12]);
      expect(await store.read(12, 5)).toEqual([]);
      expect(await store.read(3, 0)).toEqual([]);
    },
  },
  {
    title: 'a seal that throws stores nothing, and its error reaches the caller as it is',
    async check({ store }) {
      await append(store, [plain(1)]);
      const head = await store.head();
      const failure = new Error('the signer is gone');
      await expect(store.append(async () => Promise.reject(failure))).rejects.toBe(failure);
      expect(await store.head()).toEqual(head);
      expect((await everything(store)).length).toBe(1);
      // The store still takes the next append.
      expect((await append(store, [plain(2)])).stored[0]!.seq).toBe(2);
    },
  },
  {
    title: 'refuses records that do not continue the log, storing none of them',
    async check({ store }) {
      await append(store, [plain(1)]);
      const head = await store.head();
      const cases: ((h: AuditHead | undefined) => Promise<AuditRecord[]>)[] = [
        async (h) => (await sealed(h, [plain(2)])).map((r) => ({ ...r, seq: r.seq + 1 })),
        async (h) => (await sealed(h, [plain(2)])).map((r) => ({ ...r, prevHash: 'f'.repeat(64) })),
        async (h) => (await sealed(h, [plain(2)])).map((r) => ({ ...r, hash: 'not-a-hash' })),
        async (h) => {
          const [a, b] = await sealed(h, [plain(2), plain(3)]);
          return [a!, { ...b!, prevHash: h!.hash }];
        },
        async () => sealed(undefined, [plain(2)]),
      ];
      for (const seal of cases) {
        await expect(store.append(seal)).rejects.toThrow();
        expect(await store.head()).toEqual(head);
        expect((await everything(store)).length).toBe(1);
      }
    },
  },
  {
    title: 'a seal that answers no records changes nothing',
    async check({ store }) {
      await append(store, [plain(1)]);
      const head = await store.head();
      expect(await store.append(async () => [])).toEqual([]);
      expect(await store.head()).toEqual(head);
    },
  },
  {
    title: 'keeps one chain under 60 concurrent appends, each append’s records side by side',
    async check({ store }) {
      const appends = Array.from({ length: 60 }, (_, i) =>
        append(
          store,
          Array.from({ length: (i % 3) + 1 }, (_, j) => plain(j, { principal: `writer-${i}` })),
        ),
      );
      const answers = await Promise.all(appends);
      const records = await everything(store);
      expect(records.length).toBe(answers.reduce((sum, a) => sum + a.stored.length, 0));
      expectOneChain(records);
      for (const { stored } of answers) {
        const at = records.findIndex((r) => r.hash === stored[0]!.hash);
        expect(records.slice(at, at + stored.length)).toEqual(stored);
      }
      expect(await store.head()).toEqual({ seq: records.length, hash: records.at(-1)!.hash });
    },
  },
  {
    title: 'hands out copies: changing a record read back does not change the log',
    async check({ store }) {
      const { stored } = await append(store, [plain(1)]);
      const [read] = await store.read(0, 1);
      (read as { tool?: string }).tool = 'changed';
      (stored[0] as { tool?: string }).tool = 'changed too';
      expect((await store.read(0, 1))[0]!.tool).toBe('refund');
    },
  },
];
