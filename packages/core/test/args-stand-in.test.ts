import { argsStandIn, frozenCopy } from '../src/context';
import { createChain, createDispatcher, defineTool } from '@toolgate/core';

describe('argsStandIn', () => {
  it('names the schema properties in schema order, each holding an inert value of its type', () => {
    const standIn = argsStandIn({
      type: 'object',
      properties: {
        customer: { type: 'string', minLength: 1 },
        amount: { type: 'number' },
        count: { type: 'integer' },
        urgent: { type: 'boolean' },
        tags: { type: 'array', items: { type: 'string' } },
        meta: { type: ['object', 'null'] },
        anything: {},
      },
    });
    expect(standIn).toEqual({
      customer: '',
      amount: 0.5,
      count: 0,
      urgent: false,
      tags: null,
      meta: null,
      anything: null,
    });
    expect(Object.keys(standIn!)).toEqual([
      'customer',
      'amount',
      'count',
      'urgent',
      'tags',
      'meta',
      'anything',
    ]);
    expect(Object.isFrozen(standIn)).toBe(true);
    expect(Object.getPrototypeOf(standIn)).toBe(Object.prototype);
  });

  it('is copied as a call’s args are: a frozen plain object like frozenCopy’s', () => {
    const standIn = argsStandIn({ type: 'object', properties: { q: { type: 'string' } } })!;
    const copy = frozenCopy({ q: 'refunds' });
    expect(Object.getOwnPropertyDescriptors(standIn)).toEqual({
      q: { value: '', writable: false, enumerable: true, configurable: false },
    });
    expect(Object.keys(copy)).toEqual(Object.keys(standIn));
  });

  it('makes none for a schema without properties, with none, or naming __proto__', () => {
    expect(argsStandIn({ type: 'object' })).toBeUndefined();
    expect(argsStandIn({ type: 'object', properties: {} })).toBeUndefined();
    expect(argsStandIn({ type: 'object', properties: [] as never })).toBeUndefined();
    const polluting = JSON.parse(
      '{"type":"object","properties":{"a":{"type":"string"},"__proto__":{"type":"object"}}}',
    );
    expect(argsStandIn(polluting)).toBeUndefined();
  });

  it('never fails a dispatcher build: a schema whose properties throw when read still registers', async () => {
    const inputSchema = { type: 'object' } as Record<string, unknown>;
    const tool = defineTool({
      name: 'odd',
      description: 'Odd schema.',
      inputSchema,
      execute: async () => 'ok',
    });
    Object.defineProperty(inputSchema, 'properties', {
      enumerable: false,
      get() {
        throw new Error('unreadable');
      },
    });
    const dispatcher = createDispatcher({ tools: [tool], chain: createChain([]) });
    const outcome = await dispatcher.dispatch({ toolName: 'odd', args: {} });
    expect(outcome.kind).toBe('result');
  });
});
