import { Type } from 'typebox';
import { createChain, createDispatcher, defineTool, type Middleware } from '@toolgate/core';

describe('smoke', () => {
  it('runs a tool through a chain', async () => {
    const order: string[] = [];
    const mw = (name: string): Middleware => ({
      name,
      async run(ctx, next) {
        order.push(`${name}>`);
        await next();
        order.push(`<${name}`);
      },
    });
    const tool = defineTool({
      name: 'echo',
      description: 'echo',
      inputSchema: Type.Object({ text: Type.String() }),
      execute: async ({ text }) => ({ text }),
    });
    const d = createDispatcher({ tools: [tool], chain: createChain([mw('a'), mw('b')]) });
    const out = await d.dispatch({ toolName: 'echo', args: '{"text":"hi"}' });
    expect(out.kind).toBe('result');
    expect(out.content).toBe('{"text":"hi"}');
    expect(order).toEqual(['a>', 'b>', '<b', '<a']);
    expect(out.ledger).toEqual([
      { gate: 'a', outcome: 'allow', changed: false },
      { gate: 'b', outcome: 'allow', changed: false },
    ]);
  });
});
