import { createDispatcher } from '@toolgate/core';
import { canonicalChain } from '@toolgate/middleware';
import { mockTool, seededIds } from '@toolgate/testing';

const take = (next: () => string, n: number) => Array.from({ length: n }, () => next());

describe('seededIds', () => {
  it('gives the same sequence for the same seed', () => {
    expect(take(seededIds('flow'), 5)).toEqual(take(seededIds('flow'), 5));
  });

  it('gives different sequences for different seeds, without repeats', () => {
    const a = take(seededIds('a'), 50);
    const b = take(seededIds('b'), 50);
    expect(new Set([...a, ...b]).size).toBe(100);
  });

  it('looks like the dispatcher’s own ids: call_ and 20 base62 characters', () => {
    expect(seededIds(7)()).toMatch(/^call_[0-9A-Za-z]{20}$/);
  });

  it('takes a prefix and a length', () => {
    expect(seededIds(1, { prefix: 'chk', length: 8 })()).toMatch(/^chk_[0-9A-Za-z]{8}$/);
    expect(seededIds(1, { prefix: '' })()).toMatch(/^[0-9A-Za-z]{20}$/);
    expect(() => seededIds(1, { length: 0 })).toThrow('positive integer');
  });

  it('makes a dispatcher’s toolCallIds deterministic', async () => {
    const run = async () => {
      const dispatcher = createDispatcher({
        tools: [mockTool({ name: 'ping' })],
        chain: canonicalChain(),
        callIds: seededIds('same'),
      });
      return [
        (await dispatcher.dispatch({ toolName: 'ping' })).toolCallId,
        (await dispatcher.dispatch({ toolName: 'ping' })).toolCallId,
      ];
    };
    const first = await run();
    expect(await run()).toEqual(first);
    expect(first[0]).not.toBe(first[1]);
  });
});
