import { checkInApproved, type Dispatcher } from '@toolgate/core';
import { otel } from '@toolgate/otel';
import { attributesOf, telemetry, worldDispatcher, type HistogramPoint, type Telemetry } from './fixtures';

let t: Telemetry;
let dispatcher: Dispatcher;

beforeEach(() => {
  t = telemetry();
  dispatcher = otel(worldDispatcher(), {
    tracer: t.tracerProvider.getTracer('test'),
    meter: t.meterProvider.getMeter('test'),
  });
});
afterEach(() => t.shutdown());

describe('otel metrics', () => {
  it('counts outcomes by kind, tool, and for refusals the gate and code', async () => {
    await dispatcher.dispatch({ toolName: 'lookup', args: { order: 'A-1' } });
    await dispatcher.dispatch({ toolName: 'lookup', args: { order: 'A-2' } });
    await dispatcher.dispatch({ toolName: 'forbidden', args: {} });
    await dispatcher.dispatch({ toolName: 'explode', args: {} });
    const paused = await dispatcher.dispatch({ toolName: 'refund', args: { order: 'A-1' } });
    if (paused.kind !== 'paused') throw new Error('expected a pause');
    await dispatcher.resume(paused.checkIn, checkInApproved({ by: 'alice' }));

    const points = await t.points('toolgate.dispatch.outcomes');
    const counts = points.map((p) => ({ ...p.attributes, count: p.value }));
    const common = { 'gen_ai.operation.name': 'execute_tool' };
    expect(counts).toEqual(
      expect.arrayContaining([
        { ...common, 'gen_ai.tool.name': 'lookup', 'toolgate.outcome': 'result', count: 2 },
        {
          ...common,
          'gen_ai.tool.name': 'forbidden',
          'toolgate.outcome': 'refused',
          'toolgate.refusal.gate': 'permission',
          'error.type': 'PERMISSION_DENIED',
          count: 1,
        },
        {
          ...common,
          'gen_ai.tool.name': 'explode',
          'toolgate.outcome': 'failed',
          'error.type': 'TypeError',
          count: 1,
        },
        { ...common, 'gen_ai.tool.name': 'refund', 'toolgate.outcome': 'paused', count: 1 },
        { ...common, 'gen_ai.tool.name': 'refund', 'toolgate.outcome': 'result', count: 1 },
      ]),
    );
    expect(counts).toHaveLength(5);
  });

  it('records each call once in the gen_ai.execute_tool.duration histogram, in seconds', async () => {
    await dispatcher.dispatch({ toolName: 'lookup', args: { order: 'A-1' } });
    await dispatcher.dispatch({ toolName: 'forbidden', args: {} });

    const points = (await t.points('gen_ai.execute_tool.duration')) as HistogramPoint[];
    expect(attributesOf(points)).toEqual(
      expect.arrayContaining([
        {
          'gen_ai.operation.name': 'execute_tool',
          'gen_ai.tool.name': 'lookup',
          'toolgate.outcome': 'result',
        },
        {
          'gen_ai.operation.name': 'execute_tool',
          'gen_ai.tool.name': 'forbidden',
          'toolgate.outcome': 'refused',
          'error.type': 'PERMISSION_DENIED',
        },
      ]),
    );
    expect(points.map((p) => p.value.count)).toEqual([1, 1]);
    // Seconds, not milliseconds: the buckets start below a millisecond.
    expect(points[0]!.value.buckets.boundaries[0]).toBe(0.0005);
  });

  it("keeps a model's made-up tool names out of metric attributes", async () => {
    for (const name of ['a', 'b', 'c']) await dispatcher.dispatch({ toolName: `made_up_${name}`, args: {} });

    const points = await t.points('toolgate.dispatch.outcomes');
    expect(points.map((p) => [p.attributes, p.value])).toEqual([
      [
        {
          'gen_ai.operation.name': 'execute_tool',
          'toolgate.outcome': 'refused',
          'toolgate.refusal.gate': 'dispatch',
          'error.type': 'UNKNOWN_TOOL',
        },
        3,
      ],
    ]);
  });

  it('counts with no tracer at all (the no-op one)', async () => {
    const untraced = otel(worldDispatcher(), { meter: t.meterProvider.getMeter('metrics-only') });

    await untraced.dispatch({ toolName: 'lookup', args: { order: 'A-1' } });

    expect((await t.points('toolgate.dispatch.outcomes')).map((p) => p.value)).toEqual([1]);
    expect(t.spans()).toEqual([]);
  });
});
