import {
  checkInApproved,
  checkInLookup,
  checkInRaisedFor,
  createChain,
  createDispatcher,
  inMemoryCheckIns,
  type ApprovedCall,
  type CheckInRequest,
  type CheckInStore,
  type Middleware,
} from '@toolgate/core';
import { countingTool, KEY, manualClock } from './fixtures';

const asking = (name: string): Middleware => ({
  name,
  run: async (ctx, next) => {
    await ctx.ask(`${name} asks`);
    await next();
  },
});

/** A dispatcher whose chain asks `askers` in order, over `store`. */
function setup(store: CheckInStore = inMemoryCheckIns(), askers: string[] = ['check-in']) {
  const clock = manualClock();
  const tool = countingTool('send');
  const chain = createChain(askers.map(asking), { checkIns: { key: KEY, store } });
  const dispatcher = createDispatcher({ tools: [tool], chain, clock: clock.now });
  const raise = async (call: ApprovedCall): Promise<CheckInRequest> => {
    const outcome = await dispatcher.dispatch(
      { toolName: call.toolName, args: call.args, toolCallId: call.toolCallId },
      call.identity === undefined ? {} : { identity: call.identity },
    );
    if (outcome.kind !== 'paused') throw new Error(`expected a pause, got ${outcome.kind}`);
    return outcome.checkIn;
  };
  return { dispatcher, store, tool, clock, raise };
}

const ann = { tenant: 'acme', principal: 'ann', roles: ['clerk'] };
const call: ApprovedCall = { toolName: 'send', toolCallId: 'call_1', args: { text: 'hi' }, identity: ann };

describe('checkInRaisedFor', () => {
  it('matches the call a request was raised for, whatever the key order or JSON form of its args', async () => {
    const { raise } = setup();
    const request = await raise(call);
    expect(checkInRaisedFor(request, call)).toBe(true);
    expect(checkInRaisedFor(request, { ...call, args: '{"text":"hi"}' })).toBe(true);
    expect(
      checkInRaisedFor(request, {
        ...call,
        identity: { roles: ['clerk'], principal: 'ann', tenant: 'acme' },
      }),
    ).toBe(true);
  });

  it.each([
    ['another tool', { toolName: 'other' }],
    ['a source the request does not name', { toolSource: 'remote' }],
    ['another call id', { toolCallId: 'call_2' }],
    ['other args', { args: { text: 'hi!' } }],
    ['args that are not an object', { args: '[1]' }],
    ['another tenant', { identity: { ...ann, tenant: 'globex' } }],
    ['another principal', { identity: { ...ann, principal: 'mallory' } }],
    ['other roles', { identity: { ...ann, roles: ['clerk', 'admin'] } }],
    ['no identity', { identity: undefined }],
  ])('does not match a call with %s', async (_, change) => {
    const { raise } = setup();
    const request = await raise(call);
    expect(checkInRaisedFor(request, { ...call, ...change } as ApprovedCall)).toBe(false);
  });
});

describe('checkInLookup without a store', () => {
  it('finds only requests it remembered for exactly the call, by asker, oldest first; settled ones are gone', async () => {
    const { raise, clock } = setup(inMemoryCheckIns(), ['policy', 'check-in']);
    const lookup = checkInLookup();
    const first = await raise(call);
    clock.advance(1000);
    const second = await raise(call);
    const other = await raise({ ...call, toolCallId: 'call_2' });
    for (const request of [second, first, other]) lookup.remember(request);
    expect((await lookup.pendingFor(call)).map((r) => r.id)).toEqual([first.id, second.id]);
    expect((await lookup.pendingFor(call, 'check-in')).map((r) => r.id)).toEqual([]);
    expect((await lookup.pendingFor(call, 'policy')).map((r) => r.id)).toEqual([first.id, second.id]);
    expect(lookup.latest(call)?.id).toBe(first.id);
    expect((await lookup.pending(other.id, call))?.id).toBeUndefined();
    expect((await lookup.pending(second.id, call))?.id).toBe(second.id);
    lookup.settle(second.id);
    expect((await lookup.pending(second.id, call))?.id).toBeUndefined();
    expect((await lookup.pendingFor(call)).map((r) => r.id)).toEqual([first.id]);
  });

  it('keeps at most `limit` requests, forgetting the oldest', async () => {
    const { raise } = setup();
    const lookup = checkInLookup({ limit: 2 });
    const requests = [];
    for (const id of ['a', 'b', 'c']) requests.push(await raise({ ...call, toolCallId: id }));
    for (const request of requests) lookup.remember(request);
    const found = await Promise.all(
      requests.map((request) => lookup.pending(request.id, { ...call, toolCallId: request.toolCallId })),
    );
    expect(found.map((request) => request?.toolCallId)).toEqual([undefined, 'b', 'c']);
  });

  it('rejects a limit or deadline that is not a positive integer', () => {
    expect(() => checkInLookup({ limit: 0 })).toThrow(/limit must be a positive integer/);
    expect(() => checkInLookup({ deadlineMs: -1 })).toThrow(/deadlineMs must be a positive integer/);
  });
});

describe('checkInLookup with the chain store', () => {
  it('finds pending requests another process raised, never used or revoked ones', async () => {
    const store = inMemoryCheckIns({ now: manualClock().now });
    const { raise, dispatcher, tool } = setup(store);
    const lookup = checkInLookup({ store });
    const used = await raise(call);
    const waiting = await raise(call);
    const revoked = await raise(call);
    await store.revoke(revoked.id);
    expect((await dispatcher.resume(used, checkInApproved({ by: 'ann' }))).kind).toBe('result');
    expect(tool.calls).toHaveLength(1);
    expect((await lookup.pendingFor(call, 'check-in')).map((r) => r.id)).toEqual([waiting.id]);
    expect(await lookup.pending(used.id, call)).toBeUndefined();
    expect(await lookup.pending(revoked.id, call)).toBeUndefined();
    expect((await lookup.pending(waiting.id, call))?.id).toBe(waiting.id);
    expect(await lookup.pending(waiting.id, { ...call, args: { text: 'edited' } })).toBeUndefined();
    await lookup.revoke(waiting.id);
    expect((await store.get(waiting.id))?.state).toBe('revoked');
  });

  it('looks in the store, not the index: a request remembered here but used elsewhere is not offered', async () => {
    const store = inMemoryCheckIns({ now: manualClock().now });
    const { raise } = setup(store);
    const lookup = checkInLookup({ store });
    const request = await raise(call);
    lookup.remember(request);
    expect(await store.consume(request.id)).toBe(true);
    expect(await lookup.pendingFor(call)).toEqual([]);
    expect(await lookup.pending(request.id, call)).toBeUndefined();
  });

  it('rejects when the store fails, hangs past its deadline or answers nonsense; ignores garbage records', async () => {
    const broken = (overrides: Partial<CheckInStore>): CheckInStore => ({
      ...inMemoryCheckIns(),
      ...overrides,
    });
    const failing = checkInLookup({ store: broken({ list: () => Promise.reject(new Error('db down')) }) });
    await expect(failing.pendingFor(call)).rejects.toThrow('db down');
    const hung = checkInLookup({ store: broken({ get: () => new Promise(() => {}) }), deadlineMs: 20 });
    await expect(hung.pending('chk_x', call)).rejects.toThrow(/no answer within 20 ms/);
    const nonsense = checkInLookup({ store: broken({ list: async () => 'rows' as never }) });
    await expect(nonsense.pendingFor(call)).rejects.toThrow(/something else/);
    const garbage = checkInLookup({
      store: broken({
        list: async () =>
          [
            null,
            { state: 'pending', request: 'x' },
            { state: 'pending', request: null },
            { state: 'pending' },
          ] as never,
        get: async () => ({ state: 'pending', request: null }) as never,
      }),
    });
    await expect(garbage.pendingFor(call)).resolves.toEqual([]);
    await expect(garbage.pending('chk_x', call)).resolves.toBeUndefined();
    const revokeFails = checkInLookup({ store: broken({ revoke: () => Promise.reject(new Error('down')) }) });
    await expect(revokeFails.revoke('chk_x')).resolves.toBeUndefined();
  });
});
