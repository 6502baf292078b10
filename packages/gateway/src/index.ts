// Every export here is public API of @toolgate/gateway: the gateway from code, its configuration, and the CLI entry.

// The gateway
export type { Gateway, GatewayOptions, ReloadResult } from './gateway';
export { createGateway, GATEWAY_VERSION } from './gateway';
export type { Readiness } from './http';
export type { GatewayEventFields, GatewayEventLine, GatewayEventName, GatewayEvents } from './events';

// Configuration
export type { ConfigIssue, ConfigPath } from './config/errors';
export { ConfigError, formatIssue } from './config/errors';
export type { LoadConfigOptions, LoadedConfig } from './config/load';
export { loadConfig, parseConfig } from './config/load';
export type * from './config/types';
export { parseDuration, parseSize } from './config/units';

// Factories a test or an embedding can call alone
export type { Authenticator, AuthAnswer } from './auth';
export { createAuthenticator } from './auth';
export type { LimitsStore, StateStore } from './stores';
export { openLimitsStore, openStateStore } from './stores';
export type { Upstream, UpstreamContext, UpstreamStatus } from './upstream';
export { connectUpstream, UpstreamError } from './upstream';
export type { ListedTool, TenantContext, TenantRuntime } from './tenant';
export { buildTenant, TenantError } from './tenant';

// What the commands do, as functions
export type { CheckGatewayOptions } from './check-gateway';
export { checkGateway } from './check-gateway';
export type { TestGatewayPolicyOptions } from './policy-cases';
export { testGatewayPolicy } from './policy-cases';
export type { AcceptPinnedDefinitionOptions, PinAcceptance } from './pins';
export { acceptPinnedDefinition, definitionDiff, PinError } from './pins';

// The command line
export type { CommandIo } from './commands/io';
export { runCli } from './commands/main';
