// A count of work in flight that wakes its waiters at zero.

import { inFlightCounter } from '../src/in-flight';

describe('inFlightCounter', () => {
  it('is idle at once with nothing in flight', async () => {
    await expect(inFlightCounter().idle()).resolves.toBeUndefined();
  });

  it('wakes every waiter when the last piece of work ends, and not before', async () => {
    const work = inFlightCounter();
    work.begin();
    work.begin();
    const woken: string[] = [];
    void work.idle().then(() => woken.push('a'));
    void work.idle().then(() => woken.push('b'));
    work.end();
    await Promise.resolve();
    expect(woken).toEqual([]);
    expect(work.count).toBe(1);
    work.end();
    await Promise.resolve();
    await Promise.resolve();
    expect(woken).toEqual(['a', 'b']);
  });

  it('never counts below zero, so an extra end cannot make later work look idle', () => {
    const work = inFlightCounter();
    work.end();
    work.begin();
    expect(work.count).toBe(1);
  });
});
