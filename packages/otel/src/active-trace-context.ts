// The active span as a W3C trace context, for whoever calls onward: an MCP client sends it upstream
// in `_meta` (`mcpClient({ traceContext: activeTraceContext })`), so the server's span joins the trace.

import { context, isSpanContextValid, trace } from '@opentelemetry/api';
import type { TraceContext } from '@toolgate/core';

/** `{ traceparent, tracestate? }` of the span active now (e.g. otel()'s execute_tool span), or undefined. */
export function activeTraceContext(): TraceContext | undefined {
  const span = trace.getSpan(context.active());
  if (span === undefined) return undefined;
  const spanContext = span.spanContext();
  if (!isSpanContextValid(spanContext)) return undefined;
  const flags = (spanContext.traceFlags & 0xff).toString(16).padStart(2, '0');
  const traceparent = `00-${spanContext.traceId}-${spanContext.spanId}-${flags}`;
  const tracestate = spanContext.traceState?.serialize();
  return tracestate === undefined || tracestate === '' ? { traceparent } : { traceparent, tracestate };
}
