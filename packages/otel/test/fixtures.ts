// A real OpenTelemetry SDK in memory (tracer provider + exporter, meter provider + a reader collected
// on demand), and a governed dispatcher whose tools reach every outcome kind.

import type { Attributes } from '@opentelemetry/api';
import {
  AggregationTemporality,
  MeterProvider,
  MetricReader,
  type DataPoint,
  type Histogram,
} from '@opentelemetry/sdk-metrics';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type ReadableSpan,
} from '@opentelemetry/sdk-trace-base';
import { createDispatcher, defineTool, type Dispatcher, type Tool } from '@toolgate/core';
import { canonicalChain } from '@toolgate/middleware';
import { fixedClock, seededIds, staticPermissions } from '@toolgate/testing';

export const CHECK_IN_KEY = 'otel-test-check-in-key-0123456789';

/** A reader the test collects when it wants to look, instead of on a timer. */
class OnDemandReader extends MetricReader {
  protected override onShutdown(): Promise<void> {
    return Promise.resolve();
  }
  protected override onForceFlush(): Promise<void> {
    return Promise.resolve();
  }
}

export interface Telemetry {
  readonly exporter: InMemorySpanExporter;
  readonly tracerProvider: BasicTracerProvider;
  readonly meterProvider: MeterProvider;
  spans(): ReadableSpan[];
  /** Data points of one metric, by name, cumulative since the start. */
  points(metric: string): Promise<DataPoint<unknown>[]>;
  shutdown(): Promise<void>;
}

export function telemetry(): Telemetry {
  const exporter = new InMemorySpanExporter();
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const reader = new OnDemandReader({
    aggregationTemporalitySelector: () => AggregationTemporality.CUMULATIVE,
  });
  const meterProvider = new MeterProvider({ readers: [reader] });
  return {
    exporter,
    tracerProvider,
    meterProvider,
    spans: () => exporter.getFinishedSpans(),
    async points(metric) {
      const { resourceMetrics } = await reader.collect();
      return resourceMetrics.scopeMetrics
        .flatMap((scope) => scope.metrics)
        .filter((m) => m.descriptor.name === metric)
        .flatMap((m) => m.dataPoints as DataPoint<unknown>[]);
    },
    async shutdown() {
      await tracerProvider.shutdown();
      await meterProvider.shutdown();
    },
  };
}

export type HistogramPoint = DataPoint<Histogram>;

/** The attributes of each point, for comparing without the values. */
export const attributesOf = (points: readonly { attributes: Attributes }[]) =>
  points.map((p) => p.attributes);

export function worldTools(): Tool[] {
  return [
    defineTool({
      name: 'lookup',
      description: 'looks an order up',
      inputSchema: { type: 'object', properties: { order: { type: 'string' } }, required: ['order'] },
      execute: async (args: { order: string }) => ({ order: args.order, status: 'shipped' }),
    }),
    defineTool({
      name: 'refund',
      description: 'refunds an order, after a person approves',
      inputSchema: { type: 'object', properties: { order: { type: 'string' } }, required: ['order'] },
      checkIn: 'always',
      execute: async (args: { order: string }) => ({ refunded: args.order }),
    }),
    defineTool({
      name: 'explode',
      description: 'always fails upstream',
      inputSchema: { type: 'object', properties: { order: { type: 'string' } } },
      execute: async (args: { order?: string }) => {
        throw new TypeError(`upstream rejected order ${args.order ?? ''}`);
      },
    }),
    defineTool({
      name: 'forbidden',
      description: 'denied by policy',
      inputSchema: { type: 'object', properties: {} },
      execute: async () => 'never',
    }),
  ];
}

/** The governed dispatcher the wrapper is tested on: fixed clock, seeded call ids, a real canonical chain. */
export function worldDispatcher(tools: Tool[] = worldTools()): Dispatcher {
  const permissions = staticPermissions([{ tool: 'forbidden', allow: false, reason: 'policy says no' }], {
    default: 'allow',
  });
  return createDispatcher({
    tools,
    chain: canonicalChain({ permissions, checkInKey: CHECK_IN_KEY }),
    clock: fixedClock().now,
    callIds: seededIds('otel'),
  });
}

/** The exported span with this name; fails the test when there is not exactly one. */
export function onlySpan(spans: readonly ReadableSpan[], name: string): ReadableSpan {
  const found = spans.filter((span) => span.name === name);
  if (found.length !== 1)
    throw new Error(
      `expected one span '${name}', found ${found.length}: ${spans.map((s) => s.name).join(', ')}`,
    );
  return found[0]!;
}

/** Everything a span exports that a backend would show: name, attributes, events, links, status. */
export function exportedParts(span: ReadableSpan): Record<string, unknown> {
  return {
    name: span.name,
    attributes: span.attributes,
    events: span.events.map((e) => ({ name: e.name, attributes: e.attributes })),
    links: span.links.map((l) => l.attributes),
    status: span.status,
  };
}
