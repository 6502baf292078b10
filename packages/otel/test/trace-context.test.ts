import { context, ROOT_CONTEXT, trace, TraceFlags, type SpanContext } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { checkInApproved, type Dispatcher } from '@toolgate/core';
import { otel } from '@toolgate/otel';
import { onlySpan, telemetry, worldDispatcher, type Telemetry } from './fixtures';
import { remoteSpanContext } from '../src/trace-context';

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const SPAN_ID = '00f067aa0ba902b7';
const TRACEPARENT = `00-${TRACE_ID}-${SPAN_ID}-01`;

/** The traceparent and tracestate the real W3C propagator writes for `spanContext`. */
function injected(spanContext: SpanContext): Record<string, string> {
  const carrier: Record<string, string> = {};
  new W3CTraceContextPropagator().inject(trace.setSpanContext(ROOT_CONTEXT, spanContext), carrier, {
    set: (c, k, v) => {
      c[k] = v;
    },
  });
  return carrier;
}

describe('remoteSpanContext', () => {
  it('reads what the OpenTelemetry W3C propagator writes, trace state included', () => {
    const propagator = new W3CTraceContextPropagator();
    const original = propagator.extract(
      ROOT_CONTEXT,
      { traceparent: TRACEPARENT, tracestate: 'vendor=abc,other=1' },
      { get: (c, k) => c[k], keys: (c) => Object.keys(c) },
    );
    const carrier = injected(trace.getSpanContext(original)!);

    const read = remoteSpanContext({
      traceparent: carrier['traceparent']!,
      tracestate: carrier['tracestate']!,
    });

    expect(read).toMatchObject({
      traceId: TRACE_ID,
      spanId: SPAN_ID,
      traceFlags: TraceFlags.SAMPLED,
      isRemote: true,
    });
    expect(read?.traceState?.serialize()).toBe('vendor=abc,other=1');
  });

  it('reads an unsampled parent as unsampled', () => {
    expect(remoteSpanContext({ traceparent: `00-${TRACE_ID}-${SPAN_ID}-00` })?.traceFlags).toBe(
      TraceFlags.NONE,
    );
  });

  it('accepts a future version with more fields, as W3C asks', () => {
    expect(remoteSpanContext({ traceparent: `01-${TRACE_ID}-${SPAN_ID}-01-extra` })?.traceId).toBe(TRACE_ID);
  });

  it.each([
    ['garbage', 'not a traceparent'],
    ['version ff', `ff-${TRACE_ID}-${SPAN_ID}-01`],
    ['an all-zero trace id', `00-${'0'.repeat(32)}-${SPAN_ID}-01`],
    ['an all-zero span id', `00-${TRACE_ID}-${'0'.repeat(16)}-01`],
    ['upper-case hex', `00-${TRACE_ID.toUpperCase()}-${SPAN_ID}-01`],
    ['version 00 with trailing fields', `00-${TRACE_ID}-${SPAN_ID}-01-extra`],
    ['a short trace id', `00-${TRACE_ID.slice(1)}-${SPAN_ID}-01`],
    ['an overlong header', `00-${TRACE_ID}-${SPAN_ID}-01`.padEnd(600, ' ')],
  ])('rejects %s', (_, traceparent) => {
    expect(remoteSpanContext({ traceparent })).toBeUndefined();
  });

  it('drops a malformed tracestate and keeps the parent', () => {
    const read = remoteSpanContext({ traceparent: TRACEPARENT, tracestate: '=,,=bad' });
    expect(read?.spanId).toBe(SPAN_ID);
  });
});

describe('otel: an incoming trace context', () => {
  let t: Telemetry;
  let inner: Dispatcher;
  beforeEach(() => {
    t = telemetry();
    inner = worldDispatcher();
  });
  afterEach(() => t.shutdown());

  const wrap = (options: Parameters<typeof otel>[1] = {}) =>
    otel(inner, { tracer: t.tracerProvider.getTracer('test'), ...options });

  it('becomes the parent by default', async () => {
    await wrap().dispatch(
      { toolName: 'lookup', args: { order: 'A-1' } },
      { traceContext: { traceparent: TRACEPARENT } },
    );

    const span = onlySpan(t.spans(), 'execute_tool lookup');
    expect(span.spanContext().traceId).toBe(TRACE_ID);
    expect(span.parentSpanContext).toMatchObject({ spanId: SPAN_ID, isRemote: true });
  });

  it('wins over the active span, as the request it came with is the nearer parent', async () => {
    const local = trace.setSpanContext(ROOT_CONTEXT, {
      traceId: 'a'.repeat(32),
      spanId: 'b'.repeat(16),
      traceFlags: TraceFlags.SAMPLED,
    });

    await context.with(local, () =>
      wrap().dispatch(
        { toolName: 'lookup', args: { order: 'A-1' } },
        { traceContext: { traceparent: TRACEPARENT } },
      ),
    );

    expect(onlySpan(t.spans(), 'execute_tool lookup').parentSpanContext?.spanId).toBe(SPAN_ID);
  });

  it("is only a link with remoteParent 'link', and nothing with 'ignore'", async () => {
    const traceContext = { traceparent: TRACEPARENT };
    await wrap({ remoteParent: 'link' }).dispatch(
      { toolName: 'lookup', args: { order: 'A-1' } },
      { traceContext },
    );
    await wrap({ remoteParent: 'ignore' }).dispatch(
      { toolName: 'lookup', args: { order: 'A-2' } },
      { traceContext },
    );

    const [linked, ignored] = t.spans();
    expect(linked!.parentSpanContext).toBeUndefined();
    expect(linked!.spanContext().traceId).not.toBe(TRACE_ID);
    expect(linked!.links).toEqual([
      {
        context: expect.objectContaining({ traceId: TRACE_ID, spanId: SPAN_ID }),
        attributes: { 'toolgate.link': 'remote-caller' },
      },
    ]);
    expect(ignored!.parentSpanContext).toBeUndefined();
    expect(ignored!.links).toEqual([]);
  });

  it('is read by a given propagator instead of the built-in rules', async () => {
    await wrap({ propagator: new W3CTraceContextPropagator() }).dispatch(
      { toolName: 'lookup', args: { order: 'A-1' } },
      { traceContext: { traceparent: TRACEPARENT } },
    );

    expect(onlySpan(t.spans(), 'execute_tool lookup').parentSpanContext?.spanId).toBe(SPAN_ID);
  });

  it('parents a resume as well', async () => {
    const wrapped = wrap();
    const paused = await wrapped.dispatch({ toolName: 'refund', args: { order: 'A-1' } });
    if (paused.kind !== 'paused') throw new Error('expected a pause');

    await wrapped.resume(paused.checkIn, checkInApproved({ by: 'alice' }), {
      traceContext: { traceparent: TRACEPARENT },
    });

    const resume = t.spans()[1]!;
    expect(resume.parentSpanContext?.spanId).toBe(SPAN_ID);
    expect(resume.links).toHaveLength(1);
  });

  it('is ignored when malformed: the span is a root, and the call runs', async () => {
    const outcome = await wrap().dispatch(
      { toolName: 'lookup', args: { order: 'A-1' } },
      { traceContext: { traceparent: 'junk' } },
    );

    expect(outcome.kind).toBe('result');
    expect(onlySpan(t.spans(), 'execute_tool lookup').parentSpanContext).toBeUndefined();
  });
});
