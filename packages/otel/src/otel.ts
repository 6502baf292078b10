// otel(dispatcher): the same Dispatcher, with one GenAI `execute_tool` span per dispatch and resume and
// two metrics. Wrapping instead of listening keeps core free of OpenTelemetry and gives exact timing and
// the whole outcome (ledger included) in one place. Telemetry never decides or breaks a call.

import {
  context,
  createNoopMeter,
  INVALID_TRACEID,
  metrics,
  ProxyTracerProvider,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Counter,
  type Histogram,
  type Link,
  type Meter,
  type Span,
  type TextMapPropagator,
  type Tracer,
} from '@opentelemetry/api';
import {
  shortHash,
  type CheckInDecision,
  type CheckInRequest,
  type DispatchOptions,
  type DispatchOutcome,
  type Dispatcher,
  type ResumeOptions,
  type ToolCall,
} from '@toolgate/core';
import {
  ATTR,
  errorTypeOf,
  GATE_EVENT,
  gateEventAttributes,
  isId,
  OPERATION,
  outcomeAttributes,
} from './attributes';
import { DEFAULT_PAUSED_SPANS, pausedSpans } from './paused-spans';
import { extractRemote } from './trace-context';

const SCOPE = '@toolgate/otel';

/**
 * How the call's tenant appears on spans: left out (the default: a tenant names a customer), as is, as a
 * stable pseudonym (`shortHash`, groups calls without printing the name; not a secret, a known name can be
 * hashed and compared), or as whatever a function returns (e.g. a keyed hash; `undefined` leaves it out).
 */
export type TenantAttribute = 'omit' | 'raw' | 'hashed' | ((tenant: string) => string | undefined);

/**
 * What an incoming trace context (an MCP request's `_meta.traceparent`) becomes: the span's parent (the
 * default, as MCP tracing expects), only a link (for callers whose trace ids you do not want to adopt), or
 * nothing.
 */
export type RemoteParent = 'parent' | 'link' | 'ignore';

export interface OtelOptions {
  /** Default: `trace.getTracer('@toolgate/otel')` from the globally registered provider. */
  readonly tracer?: Tracer;
  /** Default: `metrics.getMeter('@toolgate/otel')` from the globally registered provider. */
  readonly meter?: Meter;
  /** Default `'omit'`. */
  readonly tenant?: TenantAttribute;
  /** Default `'parent'`. */
  readonly remoteParent?: RemoteParent;
  /** Reads the incoming trace context; default: the W3C `traceparent`/`tracestate` rules, no registration needed. */
  readonly propagator?: TextMapPropagator;
  /** How many paused calls' spans are remembered so their resumes can link to them; default 10,000. */
  readonly pausedSpans?: number;
}

/** Options `otel` cannot honor. */
export class OtelConfigError extends Error {
  override readonly name = 'OtelConfigError';
  readonly code = 'ERR_OTEL_CONFIG';
}

// What the global tracer provider delegates to until an SDK registers (the API's shared no-op provider).
const NO_SDK = new ProxyTracerProvider().getDelegate();

const TENANT_MODES = ['omit', 'raw', 'hashed'];
const REMOTE_MODES = ['parent', 'link', 'ignore'];

/** Seconds: from a fast in-process gate to a person-free slow upstream tool. */
const DURATION_BUCKETS = [
  0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60,
];

interface Instruments {
  readonly outcomes: Counter;
  readonly duration: Histogram;
}

/**
 * Wraps `dispatcher` so each dispatch and resume is one `execute_tool {tool}` span (kind INTERNAL), child of
 * the active span or of the call's incoming trace context, active while the chain and the tool run. The
 * span ends with the outcome, one event per ledger row, and for a pause the check-in id; the resume's
 * span links to it. Never an argument value, a result or a secret.
 *
 * @example
 * const dispatcher = otel(createDispatcher({ tools, chain }), { tracer: provider.getTracer('agent') });
 */
export function otel(dispatcher: Dispatcher, options: OtelOptions = {}): Dispatcher {
  if (
    typeof dispatcher !== 'object' ||
    dispatcher === null ||
    typeof dispatcher.dispatch !== 'function' ||
    typeof dispatcher.resume !== 'function'
  )
    throw new OtelConfigError('otel: expected a Dispatcher (from createDispatcher) as the first argument.');
  if (typeof options !== 'object' || options === null)
    throw new OtelConfigError('otel: options must be an object { tracer?, meter?, tenant?, ... }.');
  const tenantMode = options.tenant ?? 'omit';
  if (typeof tenantMode !== 'function' && !TENANT_MODES.includes(tenantMode))
    throw new OtelConfigError(
      `otel: 'tenant' must be 'omit', 'raw', 'hashed' or a function (tenant) => string.`,
    );
  const remoteMode = options.remoteParent ?? 'parent';
  if (!REMOTE_MODES.includes(remoteMode))
    throw new OtelConfigError(`otel: 'remoteParent' must be 'parent', 'link' or 'ignore'.`);
  const limit = options.pausedSpans ?? DEFAULT_PAUSED_SPANS;
  if (!Number.isInteger(limit) || limit < 0)
    throw new OtelConfigError(`otel: 'pausedSpans' must be a non-negative integer.`);
  const { propagator } = options;
  if (propagator !== undefined && typeof propagator.extract !== 'function')
    throw new OtelConfigError(`otel: 'propagator' must be a TextMapPropagator (with extract).`);

  const tracer = options.tracer ?? trace.getTracer(SCOPE);
  const globalTracer = options.tracer === undefined;
  const meter = options.meter ?? metrics.getMeter(SCOPE);
  const instruments: Instruments = {
    outcomes: meter.createCounter('toolgate.dispatch.outcomes', {
      description: 'Tool calls by outcome kind, and for refusals the refusing gate and code.',
      unit: '{call}',
    }),
    duration: meter.createHistogram('gen_ai.execute_tool.duration', {
      description: 'Duration of a governed tool call, gates and tool together, until its outcome.',
      unit: 's',
      advice: { explicitBucketBoundaries: DURATION_BUCKETS },
    }),
  };
  // A meter from no SDK hands out shared no-op instruments and never changes (metrics have no proxy), so
  // building their attributes per call would be work for nothing.
  const metered = instruments.outcomes !== createNoopMeter().createCounter('probe');
  const paused = pausedSpans(limit);
  const inner = dispatcher;

  function tenantOf(identity: unknown): string | undefined {
    if (tenantMode === 'omit' || typeof identity !== 'object' || identity === null) return undefined;
    const tenant = (identity as { tenant?: unknown }).tenant;
    if (typeof tenant !== 'string' || tenant === '') return undefined;
    if (tenantMode === 'raw') return tenant;
    if (tenantMode === 'hashed') return shortHash(tenant);
    try {
      const mapped = tenantMode(tenant);
      return typeof mapped === 'string' ? mapped : undefined;
    } catch {
      return undefined;
    }
  }

  /** The registered tool's name; a name the model made up is left out of names and attributes. */
  function knownName(name: unknown): string | undefined {
    return typeof name === 'string' && inner.tools.has(name) ? name : undefined;
  }

  // Span names per registered tool, built once: the no-op path then allocates no string per call.
  const spanNames = new Map([...inner.tools.keys()].map((name) => [name, `${OPERATION} ${name}`]));

  /** The attributes every span starts with; the tool's name only when it is a registered tool's. */
  function startAttributes(toolName: string | undefined, resumed: boolean): Attributes {
    const attributes: Attributes = {
      'gen_ai.operation.name': OPERATION,
      'gen_ai.tool.type': 'function',
      'toolgate.resumed': resumed,
    };
    if (toolName !== undefined) attributes[ATTR.toolName] = toolName;
    return attributes;
  }

  function start(
    toolName: string | undefined,
    traceContext: unknown,
    attributes: Attributes,
    links: Link[],
  ): { span: Span; parent: Context } {
    let parent = context.active();
    if (traceContext !== undefined && remoteMode !== 'ignore') {
      const remote = extractRemote(traceContext, propagator);
      if (remote !== undefined && remoteMode === 'parent') parent = trace.setSpanContext(parent, remote);
      else if (remote !== undefined)
        links.push({ context: remote, attributes: { [ATTR.link]: 'remote-caller' } });
    }
    const span = tracer.startSpan(
      (toolName !== undefined ? spanNames.get(toolName) : undefined) ?? OPERATION,
      { kind: SpanKind.INTERNAL, attributes, links },
      parent,
    );
    return { span, parent };
  }

  function finish(
    span: Span,
    toolName: string | undefined,
    outcome: DispatchOutcome,
    startedMs: number,
  ): void {
    const seconds = metered ? (performance.now() - startedMs) / 1000 : 0;
    const errorType = errorTypeOf(outcome);
    const kind = outcome.kind;
    const refusal = kind === 'refused' ? { gate: outcome.gate, code: outcome.code } : undefined;
    if (span.isRecording()) {
      span.setAttributes(outcomeAttributes(outcome));
      for (const row of outcome.ledger) span.addEvent(GATE_EVENT, gateEventAttributes(row, refusal));
      if (errorType !== undefined)
        span.setStatus({
          code: SpanStatusCode.ERROR,
          message: kind === 'refused' ? 'refused' : 'tool failed',
        });
    }
    if (kind === 'paused' && isId(outcome.checkIn.id))
      paused.remember(outcome.checkIn.id, span.spanContext());
    span.end();
    if (!metered) return;
    const common: Attributes = { [ATTR.operation]: OPERATION, [ATTR.outcome]: kind };
    if (toolName !== undefined) common[ATTR.toolName] = toolName;
    if (errorType !== undefined) common[ATTR.errorType] = errorType;
    instruments.duration.record(seconds, common);
    const counted: Attributes = { ...common };
    if (refusal !== undefined && isId(refusal.gate)) counted[ATTR.refusalGate] = refusal.gate;
    instruments.outcomes.add(1, counted);
  }

  /** Runs `call` inside a span; a tracer or meter that throws costs the telemetry, never the call. */
  function traced(
    toolName: string | undefined,
    traceContext: unknown,
    attributes: Attributes,
    links: Link[],
    call: () => Promise<DispatchOutcome>,
  ): Promise<DispatchOutcome> {
    const startedMs = metered ? performance.now() : 0;
    let started: { span: Span; parent: Context };
    try {
      started = start(toolName, traceContext, attributes, links);
      // A no-op tracer's span records nothing and carries no trace: nothing waits for the outcome, and the
      // caller's context stays as it was.
      if (!metered && !started.span.isRecording() && started.span.spanContext().traceId === INVALID_TRACEID) {
        started.span.end();
        return call();
      }
    } catch {
      return call();
    }
    return observed(started.span, started.parent, toolName, startedMs, call);
  }

  async function observed(
    span: Span,
    parent: Context,
    toolName: string | undefined,
    startedMs: number,
    call: () => Promise<DispatchOutcome>,
  ): Promise<DispatchOutcome> {
    let outcome: DispatchOutcome;
    try {
      outcome = await context.with(trace.setSpan(parent, span), call);
    } catch (error) {
      // dispatch never throws for a call; if it does, the span says so without the error's text.
      try {
        span.setStatus({ code: SpanStatusCode.ERROR, message: 'dispatcher threw' });
        span.end();
      } catch {
        // Nothing more to record.
      }
      throw error;
    }
    try {
      finish(span, toolName, outcome, startedMs);
    } catch {
      // The outcome stands whatever the telemetry did.
    }
    return outcome;
  }

  /**
   * Nothing to do at all: no meter, and the global tracer has no SDK behind it yet. Asked per call, since
   * an SDK may register later; a tracer passed in is always used.
   */
  function idle(): boolean {
    if (metered || !globalTracer) return false;
    const provider = trace.getTracerProvider();
    return provider instanceof ProxyTracerProvider && provider.getDelegate() === NO_SDK;
  }

  function dispatch(call: ToolCall, opts: DispatchOptions = {}): Promise<DispatchOutcome> {
    if (idle()) return inner.dispatch(call, opts);
    const safeCall = (typeof call === 'object' && call !== null ? call : {}) as Partial<ToolCall>;
    const toolName = knownName(safeCall.toolName);
    const attributes = startAttributes(toolName, false);
    if (isId(safeCall.toolCallId)) attributes[ATTR.toolCallId] = safeCall.toolCallId;
    const tenant = tenantOf(opts?.identity);
    if (tenant !== undefined) attributes[ATTR.tenant] = tenant;
    return traced(toolName, opts?.traceContext, attributes, [], () => inner.dispatch(call, opts));
  }

  function resume(
    request: CheckInRequest,
    decision: CheckInDecision,
    opts: ResumeOptions = {},
  ): Promise<DispatchOutcome> {
    if (idle()) return inner.resume(request, decision, opts);
    const shape = (typeof request === 'object' && request !== null ? request : {}) as Partial<CheckInRequest>;
    const toolName = knownName(shape.toolName);
    const attributes = startAttributes(toolName, true);
    if (isId(shape.toolCallId)) attributes[ATTR.toolCallId] = shape.toolCallId;
    if (isId(shape.id)) attributes[ATTR.resumedCheckInId] = shape.id;
    const approved = (decision as { approved?: unknown } | null)?.approved;
    if (typeof approved === 'boolean') attributes[ATTR.resumeApproved] = approved;
    const tenant = tenantOf(shape.identity);
    if (tenant !== undefined) attributes[ATTR.tenant] = tenant;
    const links: Link[] = [];
    const pausedBy = isId(shape.id) ? paused.recall(shape.id) : undefined;
    if (pausedBy !== undefined) links.push({ context: pausedBy, attributes: { [ATTR.link]: 'paused-call' } });
    return traced(toolName, opts?.traceContext, attributes, links, () =>
      inner.resume(request, decision, opts),
    );
  }

  const wrapped: Dispatcher = {
    dispatch,
    resume,
    schemas: () => inner.schemas(),
    on(type, listener) {
      inner.on(type, listener);
      return wrapped;
    },
    off(type, listener) {
      inner.off(type, listener);
      return wrapped;
    },
    get events() {
      return inner.events;
    },
    get tools() {
      return inner.tools;
    },
  };
  return wrapped;
}
