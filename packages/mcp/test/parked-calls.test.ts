// The parked calls of one server: taken once and only by who parked them on the upstream holding
// them, ended when nobody takes them within the wait, capped, all ended when the server closes.
// The relay through real servers is legacy-upstream-input.test.ts; this holds each guard alone.

import type { Identity } from '@toolgate/core';
import { canonicalChain } from '@toolgate/middleware';
import { mcpServe, McpServeConfigError } from '@toolgate/mcp';
import { parkedCalls, type ParkedCall } from '../src/parked-calls';

const alice: Identity = { tenant: 'acme', principal: 'alice' };

function call(identity: Identity | undefined = alice, upstream = 'old'): ParkedCall & { ended: number } {
  const parked = {
    upstream,
    identity,
    ended: 0,
    end() {
      parked.ended += 1;
    },
  };
  return parked;
}

describe('parked calls', () => {
  it('hold what their request held until taken, ended or closed, and release it once', () => {
    jest.useFakeTimers();
    try {
      const parking = parkedCalls({ waitMs: 1_000 });
      const released = { taken: 0, ended: 0, timedOut: 0, closed: 0 };
      const taken = parking.park(call())!;
      const ended = parking.park(call())!;
      const timedOut = parking.park(call())!;
      const hold = (id: string, key: keyof typeof released) =>
        parking.holdOpen(id, () => (released[key] += 1));
      expect(hold(taken, 'taken')).toBe(true);
      expect(hold(ended, 'ended')).toBe(true);
      expect(hold(timedOut, 'timedOut')).toBe(true);
      // One hold per call; none for a call not parked (the caller then releases it itself).
      expect(parking.holdOpen(taken, () => undefined)).toBe(false);
      expect(parking.holdOpen('never-parked', () => undefined)).toBe(false);
      expect(released).toEqual({ taken: 0, ended: 0, timedOut: 0, closed: 0 });
      parking.take(taken, alice, 'old');
      parking.end(ended);
      parking.take(taken, alice, 'old');
      expect(released).toEqual({ taken: 1, ended: 1, timedOut: 0, closed: 0 });
      jest.advanceTimersByTime(600);
      const closed = parking.park(call())!;
      expect(hold(closed, 'closed')).toBe(true);
      jest.advanceTimersByTime(400);
      expect(released).toEqual({ taken: 1, ended: 1, timedOut: 1, closed: 0 });
      parking.close();
      parking.close();
      expect(released).toEqual({ taken: 1, ended: 1, timedOut: 1, closed: 1 });
    } finally {
      jest.useRealTimers();
    }
  });

  it('are taken once, by who parked them on the upstream that holds them', () => {
    const parking = parkedCalls({ waitMs: 60_000 });
    const parked = call();
    const id = parking.park(parked)!;
    expect(id).toMatch(/^[A-Za-z0-9_-]{32}$/);
    // Another principal, the same principal of another tenant, nobody, another upstream: nothing, and
    // the call stays parked for its caller.
    expect(parking.take(id, { tenant: 'acme', principal: 'mallory' }, 'old')).toBeUndefined();
    expect(parking.take(id, { tenant: 'evil', principal: 'alice' }, 'old')).toBeUndefined();
    expect(parking.take(id, undefined, 'old')).toBeUndefined();
    expect(parking.take(id, alice, 'other')).toBeUndefined();
    expect(parking.take(id, alice, 'old')).toBe(parked);
    expect(parking.take(id, alice, 'old')).toBeUndefined();
    expect(parked.ended).toBe(0);
    parking.close();
  });

  it('are named by ids nobody can guess from another', () => {
    const parking = parkedCalls({ waitMs: 60_000 });
    const ids = new Set(Array.from({ length: 50 }, () => parking.park(call())));
    expect(ids.size).toBe(50);
    parking.close();
  });

  it('end when nobody takes them within the wait, and are gone then', async () => {
    const parking = parkedCalls({ waitMs: 50 });
    const parked = call();
    const id = parking.park(parked)!;
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(parked.ended).toBe(1);
    expect(parking.size).toBe(0);
    expect(parking.take(id, alice, 'old')).toBeUndefined();
  });

  it('taken in time, do not end at the wait', async () => {
    const parking = parkedCalls({ waitMs: 50 });
    const parked = call();
    parking.take(parking.park(parked)!, alice, 'old');
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(parked.ended).toBe(0);
  });

  it('are capped: beyond the cap, nothing is parked until one leaves', () => {
    const parking = parkedCalls({ waitMs: 60_000, max: 2 });
    const first = parking.park(call())!;
    expect(parking.park(call())).toBeDefined();
    expect(parking.park(call())).toBeUndefined();
    parking.end(first);
    expect(parking.park(call())).toBeDefined();
    parking.close();
  });

  it('all end when the server closes', () => {
    const parking = parkedCalls({ waitMs: 60_000 });
    const calls = [call(), call(undefined)];
    for (const parked of calls) parking.park(parked);
    parking.close();
    expect(calls.map((parked) => parked.ended)).toEqual([1, 1]);
    expect(parking.size).toBe(0);
  });
});

describe("mcpServe's parking options", () => {
  it.each([
    ['parkedCallMs', 0],
    ['parkedCallMs', 1.5],
    ['maxParkedCalls', -1],
    ['maxParkedCalls', Number.NaN],
  ])('refuse %s: %p, naming it', (field, value) => {
    expect(() =>
      mcpServe([], { name: 's', version: '1', chain: canonicalChain({}), [field]: value }),
    ).toThrow(new McpServeConfigError(`mcpServe 's': '${field}' must be a positive integer.`));
  });
});
