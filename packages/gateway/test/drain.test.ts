// The shutdown drain: new calls are turned away, calls and responses in flight may finish, and the
// deadline ends the wait when one does not.

import { gatewayDrain } from '../src/drain';

describe('gatewayDrain', () => {
  afterEach(() => jest.useRealTimers());

  it('turns new calls away once draining, and resolves when the calls and responses in flight finish', async () => {
    const drain = gatewayDrain();
    expect(drain.enter()).toBe(true);
    let finishResponse: (() => void) | undefined;
    drain.track((finished) => {
      finishResponse = finished;
    });
    expect(drain.inFlight).toBe(2);
    let drained = false;
    const done = drain.drain(60_000).then(() => {
      drained = true;
    });
    expect(drain.draining).toBe(true);
    expect(drain.enter()).toBe(false);
    // A call that finishes work in flight (a parked call's retry) still enters, and is waited for.
    expect(drain.enter(true)).toBe(true);
    expect(drain.inFlight).toBe(3);
    drain.leave();
    drain.leave();
    await Promise.resolve();
    expect(drained).toBe(false);
    finishResponse!();
    await done;
    expect(drained).toBe(true);
    expect(drain.inFlight).toBe(0);
  });

  it('stops waiting at the deadline when a call does not finish', async () => {
    jest.useFakeTimers();
    const drain = gatewayDrain();
    drain.enter();
    let drained = false;
    const done = drain.drain(5_000).then(() => {
      drained = true;
    });
    await jest.advanceTimersByTimeAsync(4_999);
    expect(drained).toBe(false);
    await jest.advanceTimersByTimeAsync(1);
    await done;
    expect(drained).toBe(true);
    expect(drain.inFlight).toBe(1);
  });
});
