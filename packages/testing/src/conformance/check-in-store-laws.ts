// What every CheckInStore must do, whatever keeps the data: single use under concurrency, expiry,
// revoke, list filters, and requests that come back exactly as they went in.

import { expect } from '@jest/globals';
import {
  carryOutDecision,
  checkInApproved,
  createDispatcher,
  digestOf,
  type CheckInReceipt,
  type CheckInRequest,
  type CheckInStore,
  type RecordedDecision,
} from '@toolgate/core';
import { canonicalChain } from '@toolgate/middleware';
import type { FixedClock } from '../clock';
import { seededIds } from '../ids';
import { mockTool } from '../mock-tool';

export interface CheckInStoreLawContext {
  readonly store: CheckInStore;
  readonly clock: FixedClock;
}

export interface CheckInStoreLaw {
  readonly title: string;
  readonly check: (context: CheckInStoreLawContext) => Promise<void>;
}

const MINUTE = 60_000;
const FAKE_SIGNATURE = 'ab'.repeat(32);

/** Builds requests with ids unique to one law, timed by the law's clock. */
function requests(clock: FixedClock, seed: string): (overrides?: Partial<CheckInRequest>) => CheckInRequest {
  const ids = seededIds(seed, { prefix: 'chk' });
  const callIds = seededIds(seed);
  return (overrides = {}) => ({
    id: ids(),
    asker: 'check-in',
    toolName: 'refund',
    toolCallId: callIds(),
    args: { amount: 12, currency: 'EUR' },
    review: { amount: 12, currency: 'EUR' },
    argsDigest: '0f'.repeat(32),
    chainId: 'chain_0123456789abcdef',
    question: "Allow 'refund' to run with the arguments shown?",
    identity: { tenant: 'acme', principal: 'ana' },
    createdAt: clock.iso(),
    expiresAt: new Date(clock.now() + 15 * MINUTE).toISOString(),
    signature: FAKE_SIGNATURE,
    ...overrides,
  });
}

function receiptFor(request: CheckInRequest, clock: FixedClock): CheckInReceipt {
  return {
    requestId: request.id,
    asker: request.asker,
    by: 'ana@example.com',
    note: 'checked with the customer',
    approvedAt: clock.iso(),
    argsDigest: request.argsDigest,
    chainIdRaised: request.chainId,
    chainIdRun: request.chainId,
    signature: FAKE_SIGNATURE,
  };
}

const idsOf = (records: readonly { request: CheckInRequest }[]) => records.map((r) => r.request.id).sort();

function approval(clock: FixedClock, by = 'ana@example.com', extra: object = {}): RecordedDecision {
  return { approved: true, by, note: 'checked with the customer', ...extra, decidedAt: clock.iso() };
}

export const CHECK_IN_STORE_LAWS: readonly CheckInStoreLaw[] = [
  {
    title: 'get returns a stored request as pending and unchanged',
    async check({ store, clock }) {
      const request = requests(clock, 'get')();
      await store.put(request);
      const record = await store.get(request.id);
      expect(record?.state).toBe('pending');
      expect(record?.request).toStrictEqual(request);
      expect(record?.receipt).toBeUndefined();
    },
  },
  {
    title: 'get answers undefined for an unknown id',
    async check({ store }) {
      await expect(store.get('chk_unknown000000000000')).resolves.toBeUndefined();
    },
  },
  {
    title: 'consume answers true once, then false, and marks the request consumed',
    async check({ store, clock }) {
      const request = requests(clock, 'consume')();
      await store.put(request);
      await expect(store.consume(request.id)).resolves.toBe(true);
      await expect(store.consume(request.id)).resolves.toBe(false);
      expect((await store.get(request.id))?.state).toBe('consumed');
    },
  },
  {
    title: 'consume keeps the receipt it was given',
    async check({ store, clock }) {
      const request = requests(clock, 'receipt')();
      await store.put(request);
      const receipt = receiptFor(request, clock);
      await expect(store.consume(request.id, receipt)).resolves.toBe(true);
      expect((await store.get(request.id))?.receipt).toStrictEqual(receipt);
    },
  },
  {
    title: 'exactly one of 100 parallel consumes wins',
    async check({ store, clock }) {
      const request = requests(clock, 'race')();
      await store.put(request);
      const answers = await Promise.all(Array.from({ length: 100 }, () => store.consume(request.id)));
      expect(answers.filter((won) => won === true)).toHaveLength(1);
      expect(answers.filter((won) => won === false)).toHaveLength(99);
    },
  },
  {
    title: 'consume answers false for an unknown id',
    async check({ store }) {
      await expect(store.consume('chk_unknown000000000000')).resolves.toBe(false);
    },
  },
  {
    title: 'a request can be consumed until it expires, and not from then on',
    async check({ store, clock }) {
      const make = requests(clock, 'expiry');
      const early = make({ expiresAt: new Date(clock.now() + 1000).toISOString() });
      const late = make({ expiresAt: new Date(clock.now() + 1000).toISOString() });
      await store.put(early);
      await store.put(late);
      clock.advance(999);
      await expect(store.consume(early.id)).resolves.toBe(true);
      clock.advance(1);
      await expect(store.consume(late.id)).resolves.toBe(false);
      expect((await store.get(late.id))?.state).not.toBe('consumed');
    },
  },
  {
    title: 'revoke stops a pending request from being consumed',
    async check({ store, clock }) {
      const request = requests(clock, 'revoke')();
      await store.put(request);
      await expect(store.revoke(request.id)).resolves.toBe(true);
      await expect(store.consume(request.id)).resolves.toBe(false);
      expect((await store.get(request.id))?.state).toBe('revoked');
      await expect(store.revoke(request.id)).resolves.toBe(false);
    },
  },
  {
    title: 'revoke answers false for a consumed or unknown request and changes nothing',
    async check({ store, clock }) {
      const request = requests(clock, 'revoke-consumed')();
      await store.put(request);
      await store.consume(request.id);
      await expect(store.revoke(request.id)).resolves.toBe(false);
      expect((await store.get(request.id))?.state).toBe('consumed');
      await expect(store.revoke('chk_unknown000000000000')).resolves.toBe(false);
    },
  },
  {
    title: 'a second put of the same id does not make a used request pending again',
    async check({ store, clock }) {
      const request = requests(clock, 'replay')();
      await store.put(request);
      await store.consume(request.id);
      await store.put(request).catch(() => undefined);
      await expect(store.consume(request.id)).resolves.toBe(false);
      expect((await store.get(request.id))?.state).toBe('consumed');
    },
  },
  {
    title: 'list filters by tenant, tool name and state, and honours limit',
    async check({ store, clock }) {
      const make = requests(clock, 'list');
      const acmeRefund = make();
      const acmeSearch = make({ toolName: 'search' });
      const globexRefund = make({ identity: { tenant: 'globex' } });
      const { identity: _none, ...anonymous } = make();
      for (const request of [acmeRefund, acmeSearch, globexRefund, anonymous]) await store.put(request);
      await store.consume(acmeSearch.id);
      await store.revoke(globexRefund.id);

      const all = [acmeRefund, acmeSearch, globexRefund, anonymous].map((request) => request.id);
      expect(idsOf(await store.list())).toEqual(all.sort());
      expect(idsOf(await store.list({ tenant: 'acme' }))).toEqual([acmeRefund.id, acmeSearch.id].sort());
      expect(idsOf(await store.list({ toolName: 'refund' }))).toEqual(
        [acmeRefund.id, globexRefund.id, anonymous.id].sort(),
      );
      expect(idsOf(await store.list({ state: 'pending' }))).toEqual([acmeRefund.id, anonymous.id].sort());
      expect(idsOf(await store.list({ state: 'consumed' }))).toEqual([acmeSearch.id]);
      expect(idsOf(await store.list({ tenant: 'acme', toolName: 'refund', state: 'pending' }))).toEqual([
        acmeRefund.id,
      ]);
      expect(await store.list({ limit: 2 })).toHaveLength(2);
      expect(await store.list({ tenant: 'initech' })).toEqual([]);
    },
  },
  {
    title: 'a stored request and its record survive a JSON round trip exactly',
    async check({ store, clock }) {
      const make = requests(clock, 'json');
      const earlier = receiptFor(make(), clock);
      const request = make({
        toolSource: 'crm-server',
        args: { query: 'Zoë — “quoted” \\ back\nslash', nested: { list: [1, 2.5, null, true], empty: {} } },
        review: { query: 'Zoë — “quoted” \\ back\nslash', nested: { list: [1, 2.5, null, true], empty: {} } },
        evidence: { orders: [{ id: 'o-1', total: 12.5 }], note: '日本語' },
        component: { id: 'refund-review', props: { currency: 'EUR' } },
        identity: { tenant: 'acme', principal: 'ana', conversation: 'c-42' },
        receipts: [earlier],
      });
      await store.put(request);
      const pending = await store.get(request.id);
      expect(pending?.request).toStrictEqual(request);
      expect(JSON.parse(JSON.stringify(pending))).toStrictEqual(pending);
      const receipt = receiptFor(request, clock);
      await store.consume(request.id, receipt);
      const consumed = await store.get(request.id);
      expect(JSON.parse(JSON.stringify(consumed))).toStrictEqual({ request, state: 'consumed', receipt });
    },
  },
  {
    title: 'changing a returned record does not change what the store holds',
    async check({ store, clock }) {
      const request = requests(clock, 'isolation')();
      await store.put(request);
      const record = await store.get(request.id);
      try {
        (record!.request.args as Record<string, unknown>)['amount'] = 9999;
        (record as { state: string }).state = 'consumed';
      } catch {
        // A store may hand out frozen records; that is isolation too.
      }
      const again = await store.get(request.id);
      expect(again?.request.args).toStrictEqual(request.args);
      expect(again?.state).toBe('pending');
    },
  },
  {
    title: 'decide records a decision once on a pending request, which stays pending',
    async check({ store, clock }) {
      const request = requests(clock, 'decide')();
      await store.put(request);
      expect((await store.get(request.id))?.decision).toBeUndefined();
      const decision = approval(clock);
      await expect(store.decide(request.id, decision)).resolves.toBe(true);
      const decline: RecordedDecision = {
        approved: false,
        by: 'bo@example.com',
        reason: 'too much',
        decidedAt: clock.iso(),
      };
      await expect(store.decide(request.id, decline)).resolves.toBe(false);
      const record = await store.get(request.id);
      expect(record?.state).toBe('pending');
      expect(record?.decision).toStrictEqual(decision);
    },
  },
  {
    title: 'exactly one of 50 parallel decisions is kept, and it is the one the store answered true to',
    async check({ store, clock }) {
      const request = requests(clock, 'decide-race')();
      await store.put(request);
      const decisions = Array.from({ length: 50 }, (_, i) => approval(clock, `approver-${i}@example.com`));
      const answers = await Promise.all(decisions.map((d) => store.decide(request.id, d)));
      expect(answers.filter((won) => won === true)).toHaveLength(1);
      const winner = decisions[answers.indexOf(true)];
      expect((await store.get(request.id))?.decision).toStrictEqual(winner);
    },
  },
  {
    title: 'decide answers false for an unknown, expired, consumed or revoked request and records nothing',
    async check({ store, clock }) {
      const make = requests(clock, 'decide-not-pending');
      const expiring = make({ expiresAt: new Date(clock.now() + 1000).toISOString() });
      const consumed = make();
      const revoked = make();
      for (const request of [expiring, consumed, revoked]) await store.put(request);
      await store.consume(consumed.id);
      await store.revoke(revoked.id);
      clock.advance(1000);
      await expect(store.decide('chk_unknown000000000000', approval(clock))).resolves.toBe(false);
      for (const request of [expiring, consumed, revoked]) {
        await expect(store.decide(request.id, approval(clock))).resolves.toBe(false);
        expect((await store.get(request.id))?.decision).toBeUndefined();
      }
    },
  },
  {
    title: 'a decided request can still be consumed once, and keeps its decision',
    async check({ store, clock }) {
      const request = requests(clock, 'decide-consume')();
      await store.put(request);
      const decision = approval(clock);
      await store.decide(request.id, decision);
      const receipt = receiptFor(request, clock);
      await expect(store.consume(request.id, receipt)).resolves.toBe(true);
      await expect(store.consume(request.id, receipt)).resolves.toBe(false);
      expect(await store.get(request.id)).toStrictEqual({
        request,
        state: 'consumed',
        receipt,
        decision,
      });
    },
  },
  {
    title: 'decide refuses a malformed decision and records nothing',
    async check({ store, clock }) {
      const request = requests(clock, 'decide-malformed')();
      await store.put(request);
      const bad: unknown[] = [
        null,
        { approved: true, by: '', decidedAt: clock.iso() },
        { approved: true, by: 'ana', decidedAt: 'yesterday' },
        { approved: false, by: 'ana', decidedAt: clock.iso() },
        { approved: 'yes', by: 'ana', decidedAt: clock.iso() },
        { approved: true, by: 'ana', args: [1, 2], decidedAt: clock.iso() },
      ];
      for (const decision of bad) {
        await expect(store.decide(request.id, decision as RecordedDecision)).rejects.toThrow(TypeError);
      }
      expect((await store.get(request.id))?.decision).toBeUndefined();
    },
  },
  {
    title: 'an approval with changed args and a decline survive a JSON round trip exactly',
    async check({ store, clock }) {
      const make = requests(clock, 'decide-json');
      const changed = make();
      const declined = make();
      await store.put(changed);
      await store.put(declined);
      const withArgs = approval(clock, 'ana', {
        args: {
          amount: 5,
          currency: 'EUR',
          memo: 'Zoë — “quoted” \\ back\nslash',
          nested: { list: [1, null] },
        },
      });
      const { note: _note, ...withoutNote } = withArgs as RecordedDecision & { note?: string };
      const decline: RecordedDecision = {
        approved: false,
        by: 'bo',
        reason: '日本語 <b>no</b>',
        decidedAt: clock.iso(),
      };
      await store.decide(changed.id, withoutNote);
      await store.decide(declined.id, decline);
      expect((await store.get(changed.id))?.decision).toStrictEqual(withoutNote);
      expect((await store.get(declined.id))?.decision).toStrictEqual(decline);
    },
  },
  {
    title: 'list filters by principal, decision and args digest, and lists newest first when asked',
    async check({ store, clock }) {
      const make = requests(clock, 'list-decided');
      const first = make({ identity: { tenant: 'acme', principal: 'ana' } });
      const second = make({ identity: { tenant: 'acme', principal: 'bo' }, argsDigest: 'aa'.repeat(32) });
      const third = make({ identity: { tenant: 'acme', principal: 'ana' }, argsDigest: 'aa'.repeat(32) });
      for (const request of [first, second, third]) await store.put(request);
      await store.decide(second.id, approval(clock));

      expect(idsOf(await store.list({ principal: 'ana' }))).toEqual([first.id, third.id].sort());
      expect(idsOf(await store.list({ tenant: 'acme', principal: 'bo' }))).toEqual([second.id]);
      expect(idsOf(await store.list({ decided: true }))).toEqual([second.id]);
      expect(idsOf(await store.list({ decided: false }))).toEqual([first.id, third.id].sort());
      expect(idsOf(await store.list({ argsDigest: 'aa'.repeat(32) }))).toEqual([second.id, third.id].sort());
      expect(
        idsOf(
          await store.list({
            principal: 'ana',
            argsDigest: 'aa'.repeat(32),
            decided: false,
            state: 'pending',
          }),
        ),
      ).toEqual([third.id]);
      const newest = await store.list({ order: 'newest' });
      expect(newest.map((r) => r.request.id)).toEqual([third.id, second.id, first.id]);
      const oldest = await store.list({ order: 'oldest', limit: 2 });
      expect(oldest.map((r) => r.request.id)).toEqual([first.id, second.id]);
      expect((await store.list({ order: 'newest', limit: 1 })).map((r) => r.request.id)).toEqual([third.id]);
      await expect(store.list({ decided: 'yes' as never })).rejects.toThrow(TypeError);
      await expect(store.list({ order: 'random' as never })).rejects.toThrow(TypeError);
    },
  },
  {
    title: 'a recorded decision carried out by two holders at once runs the tool once',
    async check({ store, clock }) {
      const tool = mockTool({ name: 'refund', checkIn: 'always', result: { refunded: true } });
      const dispatcher = createDispatcher({
        tools: [tool],
        chain: canonicalChain({ checkInKey: 'conformance-key-0123456789abcdef', checkIns: store }),
        clock: clock.now,
        callIds: seededIds('carry-out'),
      });
      const paused = await dispatcher.dispatch(
        { toolName: 'refund', args: { amount: 12 } },
        { identity: { tenant: 'acme', principal: 'agent-7' } },
      );
      if (paused.kind !== 'paused') throw new Error(`expected a paused outcome, got '${paused.kind}'`);
      const listed = await store.list({
        tenant: 'acme',
        principal: 'agent-7',
        decided: false,
        state: 'pending',
      });
      expect(idsOf(listed)).toEqual([paused.checkIn.id]);
      expect(await store.list({ argsDigest: await digestOf({ amount: 12 }) })).toHaveLength(1);

      await expect(store.decide(paused.checkIn.id, approval(clock))).resolves.toBe(true);
      const record = (await store.get(paused.checkIn.id))!;
      const outcomes = await Promise.all([
        carryOutDecision(dispatcher, record, { checkIns: store }),
        carryOutDecision(dispatcher, record, { checkIns: store }),
      ]);
      expect(outcomes.map((o) => o.kind).sort()).toEqual(['refused', 'result']);
      expect(outcomes.find((o) => o.kind === 'refused')).toMatchObject({ code: 'CHECKIN_NOT_PENDING' });
      expect(tool.callCount).toBe(1);
      const after = await store.get(paused.checkIn.id);
      expect(after?.state).toBe('consumed');
      expect(after?.receipt?.by).toBe('ana@example.com');
      expect(after?.decision?.by).toBe('ana@example.com');
    },
  },
  {
    title: "serves a chain's pause service: one approval runs the tool once",
    async check({ store, clock }) {
      const tool = mockTool({ name: 'refund', checkIn: 'always', result: { refunded: true } });
      const dispatcher = createDispatcher({
        tools: [tool],
        chain: canonicalChain({ checkInKey: 'conformance-check-in-key-0123456789abcdef', checkIns: store }),
        clock: clock.now,
        callIds: seededIds('pause-service'),
      });
      const paused = await dispatcher.dispatch(
        { toolName: 'refund', args: { amount: 12 } },
        { identity: { tenant: 'acme' } },
      );
      if (paused.kind !== 'paused') throw new Error(`expected a paused outcome, got '${paused.kind}'`);
      expect((await store.get(paused.checkIn.id))?.state).toBe('pending');
      expect(await store.list({ tenant: 'acme', state: 'pending' })).toHaveLength(1);

      const approval = checkInApproved({ by: 'ana@example.com' });
      const approved = await dispatcher.resume(paused.checkIn, approval);
      expect(approved.kind).toBe('result');
      const record = await store.get(paused.checkIn.id);
      expect(record?.state).toBe('consumed');
      expect(record?.receipt?.by).toBe('ana@example.com');

      const replayed = await dispatcher.resume(paused.checkIn, approval);
      expect(replayed).toMatchObject({ kind: 'refused', code: 'CHECKIN_NOT_PENDING' });
      expect(tool.callCount).toBe(1);
    },
  },
];
