// Every export here is public API of @toolgate/otel.

export type { OtelOptions, RemoteParent, TenantAttribute } from './otel';
export { otel, OtelConfigError } from './otel';
export { activeTraceContext } from './active-trace-context';
