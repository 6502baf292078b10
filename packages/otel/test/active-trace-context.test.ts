import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { context, ROOT_CONTEXT, trace, TraceFlags } from '@opentelemetry/api';
import { activeTraceContext } from '@toolgate/otel';

describe('activeTraceContext', () => {
  const manager = new AsyncLocalStorageContextManager();
  beforeAll(() => context.setGlobalContextManager(manager.enable()));
  afterAll(() => {
    manager.disable();
    context.disable();
  });

  it('is the active span as a W3C traceparent, across awaits, and undefined with no span', async () => {
    const traceId = '0af7651916cd43dd8448eb211c80319c';
    const spanId = 'b7ad6b7169203331';
    const span = trace.wrapSpanContext({ traceId, spanId, traceFlags: TraceFlags.SAMPLED });
    const seen = await context.with(trace.setSpan(ROOT_CONTEXT, span), async () => {
      await Promise.resolve();
      return activeTraceContext();
    });
    expect(seen).toEqual({ traceparent: `00-${traceId}-${spanId}-01` });
    expect(activeTraceContext()).toBeUndefined();
  });
});
