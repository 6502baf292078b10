// The MCP serving side with the SDK's real Client: a request's `_meta.traceparent` parents the span.

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { ElicitRequestSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { canonicalChain } from '@toolgate/middleware';
import { mcpServe, type McpServed } from '@toolgate/mcp';
import { otel } from '@toolgate/otel';
import { CHECK_IN_KEY, onlySpan, telemetry, worldTools, type Telemetry } from './fixtures';

const TRACE_ID = '0af7651916cd43dd8448eb211c80319c';
const SPAN_ID = 'b7ad6b7169203331';
const TRACEPARENT = `00-${TRACE_ID}-${SPAN_ID}-01`;

let t: Telemetry;
let served: McpServed;
let client: Client;

async function serve(options: { elicits: boolean }) {
  served = mcpServe(worldTools(), {
    name: 'orders',
    version: '1.0.0',
    chain: canonicalChain({ checkInKey: CHECK_IN_KEY }),
    instrument: (dispatcher) => otel(dispatcher, { tracer: t.tracerProvider.getTracer('mcp') }),
  });
  client = new Client(
    { name: 'test-client', version: '1.0.0' },
    { capabilities: options.elicits ? { elicitation: {} } : {} },
  );
  if (options.elicits) {
    client.setRequestHandler(ElicitRequestSchema, async () => ({
      action: 'accept' as const,
      content: { decision: 'approve' },
    }));
  }
  const [clientEnd, serverEnd] = InMemoryTransport.createLinkedPair();
  await served.connect(serverEnd);
  await client.connect(clientEnd);
}

beforeEach(() => {
  t = telemetry();
});
afterEach(async () => {
  await client.close();
  await served.close();
  await t.shutdown();
});

describe('otel behind mcpServe', () => {
  it("parents the call's span on the request's _meta.traceparent", async () => {
    await serve({ elicits: false });

    const result = (await client.callTool({
      name: 'lookup',
      arguments: { order: 'A-1' },
      _meta: { traceparent: TRACEPARENT, tracestate: 'vendor=1' },
    })) as CallToolResult;

    expect(result.isError).not.toBe(true);
    const span = onlySpan(t.spans(), 'execute_tool lookup');
    expect(span.spanContext().traceId).toBe(TRACE_ID);
    expect(span.parentSpanContext).toMatchObject({ spanId: SPAN_ID, isRemote: true });
    expect(span.spanContext().traceState?.serialize()).toBe('vendor=1');
  });

  it('starts a root span when the request carries no trace context', async () => {
    await serve({ elicits: false });

    await client.callTool({ name: 'lookup', arguments: { order: 'A-1' } });

    expect(onlySpan(t.spans(), 'execute_tool lookup').parentSpanContext).toBeUndefined();
  });

  it('parents both the pause and the resume after elicitation on the request, and links the resume to the pause', async () => {
    await serve({ elicits: true });

    const result = (await client.callTool({
      name: 'refund',
      arguments: { order: 'A-1' },
      _meta: { traceparent: TRACEPARENT },
    })) as CallToolResult;

    expect(result.isError).not.toBe(true);
    const [pause, resume] = t.spans();
    expect(pause!.attributes['toolgate.outcome']).toBe('paused');
    expect(resume!.attributes['toolgate.outcome']).toBe('result');
    expect([pause!.parentSpanContext?.spanId, resume!.parentSpanContext?.spanId]).toEqual([SPAN_ID, SPAN_ID]);
    expect(resume!.links.map((link) => link.context.spanId)).toEqual([pause!.spanContext().spanId]);
  });

  it('exposes the instrumented dispatcher as served.dispatcher', async () => {
    await serve({ elicits: false });

    await served.dispatcher.dispatch({ toolName: 'lookup', args: { order: 'A-1' } });

    expect(t.spans().map((s) => s.name)).toEqual(['execute_tool lookup']);
  });
});
