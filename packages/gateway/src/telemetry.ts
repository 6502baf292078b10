// OpenTelemetry when `telemetry.otlp` is set: a tracer provider exporting spans over OTLP/HTTP, and
// each tenant's dispatcher wrapped by `@toolgate/otel` (GenAI `execute_tool` spans, toolgate.* attributes).

import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { Dispatcher } from '@toolgate/core';
import { otel } from '@toolgate/otel';
import { fingerprint } from './config/fingerprint';
import type { TelemetryConfig } from './config/types';

export interface Telemetry {
  /** Equal keys mean equal configuration: a reload keeps the provider. */
  readonly key: string;
  instrument(dispatcher: Dispatcher): Dispatcher;
  close(): Promise<void>;
}

export function openTelemetry(config: TelemetryConfig | undefined): Telemetry {
  const key = fingerprint(config);
  if (config?.otlp === undefined)
    return { key, instrument: (dispatcher) => dispatcher, close: async () => {} };
  const exporter = new OTLPTraceExporter({
    url: config.otlp,
    ...(config.headers !== undefined ? { headers: { ...config.headers } } : {}),
  });
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': config.serviceName ?? 'toolgate-gateway' }),
    spanProcessors: [new BatchSpanProcessor(exporter)],
  });
  const tracer = provider.getTracer('@toolgate/gateway');
  return {
    key,
    // Tenant names go on spans hashed: the collector is often run by someone else.
    instrument: (dispatcher) => otel(dispatcher, { tracer, tenant: 'hashed' }),
    close: async () => {
      await provider.shutdown().catch(() => undefined);
    },
  };
}
