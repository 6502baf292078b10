// The parent (or link) a call's incoming W3C trace context names. Parsed here on @opentelemetry/api
// alone, so no propagator has to be registered; a caller may pass its own propagator instead.

import {
  createTraceState,
  defaultTextMapGetter,
  trace,
  ROOT_CONTEXT,
  TraceFlags,
  type SpanContext,
  type TextMapPropagator,
} from '@opentelemetry/api';
import type { TraceContext } from '@toolgate/core';

// version-traceid-parentid-flags; a future version may append fields after a dash.
const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;
const ALL_ZEROS = /^0+$/;
const MAX_HEADER = 512;

/**
 * The remote span a `traceparent` header names, per W3C Trace Context: version `ff`, all-zero ids and
 * version 00 with trailing fields are invalid. Undefined for anything that is not a valid header.
 */
export function remoteSpanContext(traceContext: TraceContext): SpanContext | undefined {
  const { traceparent, tracestate } = traceContext;
  if (typeof traceparent !== 'string' || traceparent.length > MAX_HEADER) return undefined;
  const match = TRACEPARENT.exec(traceparent.trim());
  if (match === null) return undefined;
  const [, version, traceId, spanId, flags, rest] = match as unknown as [
    string,
    string,
    string,
    string,
    string,
    string?,
  ];
  if (version === 'ff' || (version === '00' && rest !== undefined)) return undefined;
  if (ALL_ZEROS.test(traceId) || ALL_ZEROS.test(spanId)) return undefined;
  const spanContext: SpanContext = {
    traceId,
    spanId,
    traceFlags: Number.parseInt(flags, 16) & TraceFlags.SAMPLED,
    isRemote: true,
  };
  if (typeof tracestate === 'string' && tracestate.length <= MAX_HEADER && tracestate.trim() !== '') {
    try {
      spanContext.traceState = createTraceState(tracestate);
    } catch {
      // A malformed tracestate is dropped; the parent still stands.
    }
  }
  return spanContext;
}

/** The remote span in `traceContext`, read by `propagator` when one is given, else by the W3C rules above. */
export function extractRemote(
  traceContext: unknown,
  propagator: TextMapPropagator | undefined,
): SpanContext | undefined {
  if (typeof traceContext !== 'object' || traceContext === null) return undefined;
  if (propagator === undefined) return remoteSpanContext(traceContext as TraceContext);
  const { traceparent, tracestate } = traceContext as Record<string, unknown>;
  const carrier: Record<string, string> = {};
  if (typeof traceparent === 'string') carrier['traceparent'] = traceparent;
  if (typeof tracestate === 'string') carrier['tracestate'] = tracestate;
  // Extracted onto the root context, so a span found is the carrier's, never one already active.
  const remote = trace.getSpanContext(propagator.extract(ROOT_CONTEXT, carrier, defaultTextMapGetter));
  return remote !== undefined && trace.isSpanContextValid(remote) ? remote : undefined;
}
