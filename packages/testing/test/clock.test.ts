import { createDispatcher } from '@toolgate/core';
import { canonicalChain } from '@toolgate/middleware';
import { FIXED_CLOCK_START, fixedClock, mockTool } from '@toolgate/testing';

describe('fixedClock', () => {
  it('stands still at its start until advanced', () => {
    const clock = fixedClock('2031-05-06T07:08:09.000Z');
    expect(clock.now()).toBe(Date.parse('2031-05-06T07:08:09.000Z'));
    expect(clock.now()).toBe(clock.now());
    expect(clock.iso()).toBe('2031-05-06T07:08:09.000Z');
  });

  it('starts at a fixed instant by default', () => {
    expect(fixedClock().iso()).toBe(FIXED_CLOCK_START);
  });

  it('advance moves time forward and returns the new time', () => {
    const clock = fixedClock(0);
    expect(clock.advance(1500)).toBe(1500);
    expect(clock.now()).toBe(1500);
  });

  it('set jumps to an ISO time or epoch milliseconds', () => {
    const clock = fixedClock();
    clock.set('2040-01-01T00:00:00.000Z');
    expect(clock.iso()).toBe('2040-01-01T00:00:00.000Z');
    clock.set(42);
    expect(clock.now()).toBe(42);
  });

  it('refuses a negative advance and a start that is not a time', () => {
    const clock = fixedClock();
    expect(() => clock.advance(-1)).toThrow('zero or more');
    expect(() => fixedClock('soon')).toThrow("'soon' is not a time");
    expect(() => clock.set('later')).toThrow("'later' is not a time");
  });

  it('works detached as a dispatcher clock: check-in times come from it', async () => {
    const clock = fixedClock('2031-01-01T00:00:00.000Z');
    const dispatcher = createDispatcher({
      tools: [mockTool({ name: 'refund', checkIn: 'always' })],
      chain: canonicalChain({ checkInKey: 'k'.repeat(32), checkInTtlMs: 60_000 }),
      clock: clock.now,
    });
    const outcome = await dispatcher.dispatch({ toolName: 'refund' });
    expect(outcome.kind === 'paused' && [outcome.checkIn.createdAt, outcome.checkIn.expiresAt]).toEqual([
      '2031-01-01T00:00:00.000Z',
      '2031-01-01T00:01:00.000Z',
    ]);
  });
});
