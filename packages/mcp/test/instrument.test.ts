import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { DispatchOptions, Dispatcher } from '@toolgate/core';
import { mcpServe, McpServeConfigError } from '@toolgate/mcp';
import { call, plainClient } from './fixtures/conformance';
import { governedChain, governedTools } from './fixtures/governed';

const base = { name: 'instrumented', version: '1.0.0' };

describe('mcpServe instrument', () => {
  it('runs tools/call through the instrumented dispatcher, handing it the request trace context', async () => {
    const seen: (DispatchOptions['traceContext'] | null)[] = [];
    const served = mcpServe(governedTools(), {
      ...base,
      chain: governedChain(),
      instrument: (dispatcher): Dispatcher => ({
        ...dispatcher,
        dispatch(callIn, options) {
          seen.push(options?.traceContext ?? null);
          return dispatcher.dispatch(callIn, options);
        },
      }),
    });
    const client = plainClient();
    const [clientEnd, serverEnd] = InMemoryTransport.createLinkedPair();
    await served.connect(serverEnd);
    await client.connect(clientEnd);
    const traceparent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';

    await call(client, 'echo', { text: 'one' }, { traceparent, tracestate: 'v=1' });
    await call(client, 'echo', { text: 'two' });
    await call(client, 'echo', { text: 'three' }, { traceparent: 42 });

    expect(seen).toEqual([{ traceparent, tracestate: 'v=1' }, null, null]);
    await client.close();
    await served.close();
  });

  it('is served.dispatcher', () => {
    const marker = Symbol('instrumented');
    const served = mcpServe(governedTools(), {
      ...base,
      chain: governedChain(),
      instrument: (dispatcher) => Object.assign(Object.create(dispatcher) as Dispatcher, { [marker]: true }),
    });

    expect((served.dispatcher as unknown as Record<symbol, unknown>)[marker]).toBe(true);
  });

  it.each([
    ['is not a function', 'otel'],
    ['returns something other than a Dispatcher', () => ({})],
  ])('refuses an instrument that %s at build', (_, instrument) => {
    expect(() =>
      mcpServe(governedTools(), { ...base, chain: governedChain(), instrument: instrument as never }),
    ).toThrow(McpServeConfigError);
  });
});
