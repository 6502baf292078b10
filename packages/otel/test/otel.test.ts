import { context, SpanKind, SpanStatusCode, trace, type Tracer } from '@opentelemetry/api';
import { AsyncHooksContextManager } from '@opentelemetry/context-async-hooks';
import { checkInApproved, checkInDeclined, defineTool, shortHash, type Dispatcher } from '@toolgate/core';
import { otel, OtelConfigError } from '@toolgate/otel';
import { exportedParts, onlySpan, telemetry, worldDispatcher, worldTools, type Telemetry } from './fixtures';

let t: Telemetry;
let inner: Dispatcher;
let dispatcher: Dispatcher;

beforeEach(() => {
  t = telemetry();
  inner = worldDispatcher();
  dispatcher = otel(inner, {
    tracer: t.tracerProvider.getTracer('test'),
    meter: t.meterProvider.getMeter('test'),
  });
});
afterEach(() => t.shutdown());

describe('otel: one span per dispatch', () => {
  it('names a span per the GenAI conventions and gives it the tool, call id and outcome', async () => {
    const outcome = await dispatcher.dispatch({
      toolName: 'lookup',
      args: { order: 'A-1' },
      toolCallId: 'call_1',
    });

    expect(outcome.kind).toBe('result');
    const span = onlySpan(t.spans(), 'execute_tool lookup');
    expect(span.kind).toBe(SpanKind.INTERNAL);
    expect(span.attributes).toEqual({
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'lookup',
      'gen_ai.tool.call.id': 'call_1',
      'gen_ai.tool.type': 'function',
      'toolgate.resumed': false,
      'toolgate.outcome': 'result',
      'toolgate.ran': true,
      'toolgate.chain.id': outcome.chainId,
    });
    expect(span.status.code).toBe(SpanStatusCode.UNSET);
  });

  it('adds one event per ledger row, in order, with the gate, its decision and whether it changed anything', async () => {
    const outcome = await dispatcher.dispatch({ toolName: 'lookup', args: { order: 'A-1' } });

    const span = onlySpan(t.spans(), 'execute_tool lookup');
    expect(span.events.map((e) => e.name)).toEqual(outcome.ledger.map(() => 'toolgate.gate.decision'));
    expect(span.events.map((e) => e.attributes)).toEqual(
      outcome.ledger.map((row) => ({
        'toolgate.gate.name': row.gate,
        'toolgate.gate.decision': row.outcome,
        'toolgate.gate.changed': row.changed,
      })),
    );
    expect(outcome.ledger.length).toBeGreaterThan(3);
  });

  it('takes the generated call id from the outcome when the model gave none', async () => {
    const outcome = await dispatcher.dispatch({ toolName: 'lookup', args: { order: 'A-1' } });

    expect(onlySpan(t.spans(), 'execute_tool lookup').attributes['gen_ai.tool.call.id']).toBe(
      outcome.toolCallId,
    );
  });

  it('marks a refusal as an error naming the refusing gate and code, and the refusing ledger row carries the code', async () => {
    const outcome = await dispatcher.dispatch({ toolName: 'forbidden', args: {} });

    expect(outcome).toMatchObject({ kind: 'refused', gate: 'permission', code: 'PERMISSION_DENIED' });
    const span = onlySpan(t.spans(), 'execute_tool forbidden');
    expect(span.attributes).toMatchObject({
      'toolgate.outcome': 'refused',
      'toolgate.ran': false,
      'toolgate.refusal.gate': 'permission',
      'toolgate.refusal.code': 'PERMISSION_DENIED',
      'toolgate.refusal.retryable': false,
      'error.type': 'PERMISSION_DENIED',
    });
    expect(span.status).toEqual({ code: SpanStatusCode.ERROR, message: 'refused' });
    const denied = span.events.filter((e) => e.attributes?.['toolgate.gate.decision'] === 'deny');
    expect(denied.map((e) => e.attributes)).toEqual([
      {
        'toolgate.gate.name': 'permission',
        'toolgate.gate.decision': 'deny',
        'toolgate.gate.changed': false,
        'toolgate.refusal.code': 'PERMISSION_DENIED',
      },
    ]);
  });

  it("marks a tool failure as an error typed by the error's class, never its message", async () => {
    const outcome = await dispatcher.dispatch({ toolName: 'explode', args: { order: 'A-1' } });

    expect(outcome.kind).toBe('failed');
    const span = onlySpan(t.spans(), 'execute_tool explode');
    expect(span.attributes).toMatchObject({
      'toolgate.outcome': 'failed',
      'toolgate.ran': true,
      'error.type': 'TypeError',
    });
    expect(span.status).toEqual({ code: SpanStatusCode.ERROR, message: 'tool failed' });
    expect(JSON.stringify(span.attributes)).not.toContain('upstream rejected');
  });

  it("types a failure '_OTHER' when the error's name is not a class name", async () => {
    const weird = defineTool({
      name: 'weird',
      description: 'throws with a sentence for a name',
      inputSchema: { type: 'object', properties: {} },
      execute: async () => {
        throw Object.assign(new Error('no'), { name: 'the order A-1 was bad' });
      },
    });
    const wrapped = otel(worldDispatcher([weird]), { tracer: t.tracerProvider.getTracer('test') });

    await wrapped.dispatch({ toolName: 'weird', args: {} });

    expect(onlySpan(t.spans(), 'execute_tool weird').attributes['error.type']).toBe('_OTHER');
  });

  it('names the span for the operation alone when the model asked for a tool that does not exist', async () => {
    const outcome = await dispatcher.dispatch({ toolName: 'made-up tool name', args: {} });

    expect(outcome).toMatchObject({ kind: 'refused', code: 'UNKNOWN_TOOL' });
    const span = onlySpan(t.spans(), 'execute_tool');
    expect(span.attributes['gen_ai.tool.name']).toBeUndefined();
    expect(span.attributes['toolgate.refusal.code']).toBe('UNKNOWN_TOOL');
  });

  it("carries an MCP tool's source", async () => {
    const imported = { ...worldTools()[0]!, source: 'billing-server' };
    const wrapped = otel(worldDispatcher([imported]), { tracer: t.tracerProvider.getTracer('test') });

    await wrapped.dispatch({ toolName: 'lookup', args: { order: 'A-1' } });

    expect(onlySpan(t.spans(), 'execute_tool lookup').attributes['toolgate.tool.source']).toBe(
      'billing-server',
    );
  });

  it('returns exactly the outcome the wrapped dispatcher returns', async () => {
    const plain = worldDispatcher();

    const [wrapped, bare] = await Promise.all([
      dispatcher.dispatch({ toolName: 'refund', args: { order: 'A-1' }, toolCallId: 'c' }),
      plain.dispatch({ toolName: 'refund', args: { order: 'A-1' }, toolCallId: 'c' }),
    ]);

    const { checkIn: a, ...restA } = wrapped as Extract<typeof wrapped, { kind: 'paused' }>;
    const { checkIn: b, ...restB } = bare as Extract<typeof bare, { kind: 'paused' }>;
    expect(restA).toEqual(restB);
    expect({ ...a, id: '', signature: '' }).toEqual({ ...b, id: '', signature: '' });
  });
});

describe('otel: pause and resume', () => {
  it('ends a paused call with its check-in id, and the resume starts a span linked to it', async () => {
    const paused = await dispatcher.dispatch({ toolName: 'refund', args: { order: 'A-1' } });
    if (paused.kind !== 'paused') throw new Error(`expected a pause, got ${paused.kind}`);

    const resumed = await dispatcher.resume(paused.checkIn, checkInApproved({ by: 'alice' }));

    expect(resumed.kind).toBe('result');
    const [first, second] = t.spans();
    expect(first!.name).toBe('execute_tool refund');
    expect(first!.attributes).toMatchObject({
      'toolgate.outcome': 'paused',
      'toolgate.checkin.id': paused.checkIn.id,
      'toolgate.checkin.asker': 'check-in',
    });
    expect(first!.status.code).toBe(SpanStatusCode.UNSET);
    expect(second!.name).toBe('execute_tool refund');
    expect(second!.attributes).toMatchObject({
      'toolgate.resumed': true,
      'toolgate.resume.checkin.id': paused.checkIn.id,
      'toolgate.resume.approved': true,
      'toolgate.outcome': 'result',
      'toolgate.checkin.receipts': 1,
      'gen_ai.tool.call.id': paused.toolCallId,
    });
    expect(second!.links).toEqual([
      { context: first!.spanContext(), attributes: { 'toolgate.link': 'paused-call' } },
    ]);
    // The resume is its own trace unless the caller's context says otherwise; the link joins them.
    expect(second!.spanContext().traceId).not.toBe(first!.spanContext().traceId);
  });

  it('records a declined resume as a refusal by the check-in gate', async () => {
    const paused = await dispatcher.dispatch({ toolName: 'refund', args: { order: 'A-1' } });
    if (paused.kind !== 'paused') throw new Error('expected a pause');

    await dispatcher.resume(paused.checkIn, checkInDeclined({ by: 'alice', reason: 'not this one' }));

    const resume = t.spans()[1]!;
    expect(resume.attributes).toMatchObject({
      'toolgate.resume.approved': false,
      'toolgate.outcome': 'refused',
      'toolgate.refusal.gate': 'check-in',
    });
    expect(JSON.stringify(resume.attributes)).not.toContain('not this one');
  });

  it('starts a resume span without a link when the pause happened elsewhere (another process)', async () => {
    const paused = await dispatcher.dispatch({ toolName: 'refund', args: { order: 'A-1' } });
    if (paused.kind !== 'paused') throw new Error('expected a pause');
    const elsewhere = otel(inner, { tracer: t.tracerProvider.getTracer('test') });

    const resumed = await elsewhere.resume(paused.checkIn, checkInApproved({ by: 'alice' }));

    expect(resumed.kind).toBe('result');
    const resume = t.spans()[1]!;
    expect(resume.links).toEqual([]);
    expect(resume.attributes['toolgate.resume.checkin.id']).toBe(paused.checkIn.id);
  });

  it('forgets the oldest paused span beyond pausedSpans', async () => {
    const small = otel(inner, { tracer: t.tracerProvider.getTracer('test'), pausedSpans: 1 });
    const first = await small.dispatch({ toolName: 'refund', args: { order: 'A-1' } });
    const second = await small.dispatch({ toolName: 'refund', args: { order: 'A-2' } });
    if (first.kind !== 'paused' || second.kind !== 'paused') throw new Error('expected pauses');

    await small.resume(first.checkIn, checkInApproved({ by: 'alice' }));
    await small.resume(second.checkIn, checkInApproved({ by: 'alice' }));

    const [, pausedSecond, resumedFirst, resumedSecond] = t.spans();
    expect(resumedFirst!.links).toEqual([]);
    expect(resumedSecond!.links.map((l) => l.context)).toEqual([pausedSecond!.spanContext()]);
  });

  it('spans a forged request too, refused, without copying its fields', async () => {
    const paused = await dispatcher.dispatch({ toolName: 'refund', args: { order: 'A-1' } });
    if (paused.kind !== 'paused') throw new Error('expected a pause');
    const forged = { ...paused.checkIn, id: 'not an id: order A-1', toolCallId: 'x'.repeat(500) };

    const outcome = await dispatcher.resume(forged, checkInApproved({ by: 'mallory' }));

    expect(outcome).toMatchObject({ kind: 'refused', code: 'CHECKIN_SIGNATURE' });
    const resume = t.spans()[1]!;
    expect(resume.attributes['toolgate.resume.checkin.id']).toBeUndefined();
    expect(JSON.stringify(exportedParts(resume))).not.toContain('order A-1');
  });
});

describe('otel: parents', () => {
  let manager: AsyncHooksContextManager;
  beforeEach(() => {
    manager = new AsyncHooksContextManager().enable();
    context.setGlobalContextManager(manager);
  });
  afterEach(() => {
    context.disable();
  });

  it("makes the caller's active span the parent", async () => {
    const tracer = t.tracerProvider.getTracer('agent');

    await tracer.startActiveSpan('agent turn', async (turn) => {
      await dispatcher.dispatch({ toolName: 'lookup', args: { order: 'A-1' } });
      turn.end();
    });

    const turn = onlySpan(t.spans(), 'agent turn');
    const tool = onlySpan(t.spans(), 'execute_tool lookup');
    expect(tool.parentSpanContext?.spanId).toBe(turn.spanContext().spanId);
    expect(tool.spanContext().traceId).toBe(turn.spanContext().traceId);
  });

  it("is the active span while the tool runs, so the tool's own spans nest under it", async () => {
    const tracer: Tracer = t.tracerProvider.getTracer('tool');
    const traced = defineTool({
      name: 'traced',
      description: 'makes its own span',
      inputSchema: { type: 'object', properties: {} },
      execute: async () => {
        tracer.startSpan('upstream request').end();
        return 'ok';
      },
    });
    const wrapped = otel(worldDispatcher([traced]), { tracer });

    await wrapped.dispatch({ toolName: 'traced', args: {} });

    const tool = onlySpan(t.spans(), 'execute_tool traced');
    expect(onlySpan(t.spans(), 'upstream request').parentSpanContext?.spanId).toBe(tool.spanContext().spanId);
    expect(trace.getActiveSpan()).toBeUndefined();
  });
});

describe('otel: without an SDK', () => {
  beforeEach(() => {
    context.setGlobalContextManager(new AsyncHooksContextManager().enable());
  });
  afterEach(() => {
    context.disable();
  });

  it("keeps the caller's trace active while the tool runs", async () => {
    const seen: (string | undefined)[] = [];
    const probe = defineTool({
      name: 'probe',
      description: 'reads the active trace',
      inputSchema: { type: 'object', properties: {} },
      execute: async () => {
        seen.push(trace.getActiveSpan()?.spanContext().traceId);
        return 'ok';
      },
    });
    const wrapped = otel(worldDispatcher([probe]));
    const caller = t.tracerProvider.getTracer('caller');

    await caller.startActiveSpan('agent turn', async (turn) => {
      await wrapped.dispatch({ toolName: 'probe', args: {} });
      turn.end();
    });
    await wrapped.dispatch({ toolName: 'probe', args: {} });

    expect(seen).toEqual([onlySpan(t.spans(), 'agent turn').spanContext().traceId, undefined]);
  });
});

describe('otel: tenant', () => {
  const identity = { tenant: 'acme-corp', principal: 'alice' };
  const tenantAttribute = async (
    tenant?: Parameters<typeof otel>[1] extends infer O
      ? O extends { tenant?: infer T }
        ? T
        : never
      : never,
  ) => {
    const wrapped = otel(inner, {
      tracer: t.tracerProvider.getTracer('test'),
      ...(tenant !== undefined ? { tenant } : {}),
    });
    t.exporter.reset();
    await wrapped.dispatch({ toolName: 'lookup', args: { order: 'A-1' } }, { identity });
    return onlySpan(t.spans(), 'execute_tool lookup').attributes['toolgate.tenant'];
  };

  it('leaves the tenant out by default', async () => {
    expect(await tenantAttribute()).toBeUndefined();
  });

  it("writes it as is with 'raw', as a stable pseudonym with 'hashed', or as a function maps it", async () => {
    expect(await tenantAttribute('raw')).toBe('acme-corp');
    expect(await tenantAttribute('hashed')).toBe(shortHash('acme-corp'));
    expect(await tenantAttribute((tenant) => `t-${tenant.length}`)).toBe('t-9');
    expect(await tenantAttribute(() => undefined)).toBeUndefined();
    expect(
      await tenantAttribute(() => {
        throw new Error('lookup failed');
      }),
    ).toBeUndefined();
  });

  it("takes a resume's tenant from the signed request", async () => {
    const wrapped = otel(inner, { tracer: t.tracerProvider.getTracer('test'), tenant: 'raw' });
    const paused = await wrapped.dispatch({ toolName: 'refund', args: { order: 'A-1' } }, { identity });
    if (paused.kind !== 'paused') throw new Error('expected a pause');

    await wrapped.resume(paused.checkIn, checkInApproved({ by: 'alice' }));

    expect(t.spans().map((s) => s.attributes['toolgate.tenant'])).toEqual(['acme-corp', 'acme-corp']);
  });
});

describe('otel: the wrapper', () => {
  it('keeps the Dispatcher interface: schemas, tools, events, on and off reach the wrapped dispatcher', async () => {
    const seen: string[] = [];
    const listener = (event: { toolName: string }) => seen.push(event.toolName);

    expect(dispatcher.on('dispatch.end', listener)).toBe(dispatcher);
    await dispatcher.dispatch({ toolName: 'lookup', args: { order: 'A-1' } });
    expect(dispatcher.off('dispatch.end', listener)).toBe(dispatcher);
    await dispatcher.dispatch({ toolName: 'lookup', args: { order: 'A-1' } });

    expect(seen).toEqual(['lookup']);
    expect(dispatcher.schemas()).toEqual(inner.schemas());
    expect(dispatcher.tools).toBe(inner.tools);
    expect(dispatcher.events).toBe(inner.events);
  });

  it('uses the globally registered tracer when none is given (a no-op until an SDK registers one)', async () => {
    const wrapped = otel(inner);

    const outcome = await wrapped.dispatch({ toolName: 'lookup', args: { order: 'A-1' } });

    expect(outcome.kind).toBe('result');
    expect(t.spans()).toEqual([]);
  });

  it('starts tracing through the global tracer once an SDK registers, after the wrapper was built', async () => {
    const wrapped = otel(inner);
    await wrapped.dispatch({ toolName: 'lookup', args: { order: 'A-1' } });

    trace.setGlobalTracerProvider(t.tracerProvider);
    try {
      await wrapped.dispatch({ toolName: 'lookup', args: { order: 'A-2' } });
    } finally {
      trace.disable();
    }

    expect(t.spans().map((s) => s.name)).toEqual(['execute_tool lookup']);
  });

  it('ends the span as an error and rethrows when a wrapped dispatcher throws, without the error text', async () => {
    const throwing: Dispatcher = {
      ...inner,
      dispatch: () => Promise.reject(new Error('broken wrapper: order A-1')),
    };
    const wrapped = otel(throwing, { tracer: t.tracerProvider.getTracer('test') });

    await expect(wrapped.dispatch({ toolName: 'lookup', args: { order: 'A-1' } })).rejects.toThrow(
      'broken wrapper',
    );

    const span = onlySpan(t.spans(), 'execute_tool lookup');
    expect(span.status).toEqual({ code: SpanStatusCode.ERROR, message: 'dispatcher threw' });
    expect(JSON.stringify(exportedParts(span))).not.toContain('A-1');
  });

  it('still answers the call when the tracer or the meter throws', async () => {
    const broken = {
      startSpan: () => {
        throw new Error('tracer down');
      },
      startActiveSpan: () => {
        throw new Error('tracer down');
      },
    } as unknown as Tracer;
    const brokenMeter = t.meterProvider.getMeter('broken');
    const histogram = brokenMeter.createHistogram('x');
    jest.spyOn(brokenMeter, 'createHistogram').mockReturnValue({
      ...histogram,
      record: () => {
        throw new Error('meter down');
      },
    });

    const noSpan = await otel(inner, { tracer: broken }).dispatch({
      toolName: 'lookup',
      args: { order: 'A-1' },
    });
    const noMetric = await otel(inner, {
      tracer: t.tracerProvider.getTracer('test'),
      meter: brokenMeter,
    }).dispatch({
      toolName: 'lookup',
      args: { order: 'A-1' },
    });

    expect(noSpan.kind).toBe('result');
    expect(noMetric.kind).toBe('result');
    expect(t.spans()).toHaveLength(1);
  });

  it.each([
    ['no dispatcher', undefined, {}],
    ['an object without dispatch', { resume() {} }, {}],
    ['an unknown tenant mode', 'dispatcher', { tenant: 'plain' }],
    ['an unknown remoteParent mode', 'dispatcher', { remoteParent: 'adopt' }],
    ['a negative pausedSpans', 'dispatcher', { pausedSpans: -1 }],
    ['a propagator without extract', 'dispatcher', { propagator: {} }],
  ])('refuses %s at build with an OtelConfigError', (_, given, options) => {
    const target = given === 'dispatcher' ? inner : given;
    expect(() => otel(target as Dispatcher, options as never)).toThrow(OtelConfigError);
  });
});
