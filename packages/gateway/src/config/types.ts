// The configuration's TypeScript types, derived from its JSON Schema (`./schema`) so the two cannot
// drift. Each comes in two forms: as written in the file (`GatewayConfig`, strings interpolated except
// `${credential:…}`), and as resolved by the loader (`ResolvedConfig`: durations in milliseconds, sizes
// in bytes, store URLs as typed locations). A part's type takes the form as a parameter:
// `ListenConfig` is the written `listen`, `ListenConfig<ResolvedConfig>` the resolved one.

import type { FromSchema } from 'json-schema-to-ts';
import type { configSchema } from './schema';

/** Where `stores.state` (and `audit.store`) keep their rows; a sqlite path is absolute or `:memory:`. */
export type StateStoreLocation =
  | { readonly kind: 'memory' }
  | { readonly kind: 'sqlite'; readonly path: string }
  | { readonly kind: 'postgres'; readonly url: string };

/** Where `stores.limits` keeps rate buckets. */
export type LimitsStoreLocation =
  { readonly kind: 'memory' } | { readonly kind: 'redis'; readonly url: string };

/** What the schema's `unit` annotations resolve to. */
interface Resolving {
  readonly deserialize: [
    { readonly pattern: { readonly unit: 'milliseconds' }; readonly output: number },
    { readonly pattern: { readonly unit: 'bytes' }; readonly output: number },
    { readonly pattern: { readonly unit: 'stateStore' }; readonly output: StateStoreLocation },
    { readonly pattern: { readonly unit: 'limitsStore' }; readonly output: LimitsStoreLocation },
  ];
}

type DeepReadonly<T> = T extends readonly (infer Item)[]
  ? readonly DeepReadonly<Item>[]
  : T extends object
    ? { readonly [K in keyof T]: DeepReadonly<T[K]> }
    : T;

/** A whole configuration file, as written. */
export type GatewayConfig = DeepReadonly<FromSchema<typeof configSchema>>;
/** A whole configuration after loading: units and store locations resolved. */
export type ResolvedConfig = DeepReadonly<FromSchema<typeof configSchema, Resolving>>;
/** Either form; the parts below take one. */
export type AnyConfig = GatewayConfig | ResolvedConfig;

type Part<T> = NonNullable<T>;
type Options<T> = Exclude<NonNullable<T>, boolean>;

export type ListenConfig<C extends AnyConfig = GatewayConfig> = Part<C['listen']>;
export type AuthConfig<C extends AnyConfig = GatewayConfig> = Part<C['auth']>;
export type TokenConfig<C extends AnyConfig = GatewayConfig> = Part<AuthConfig<C>['tokens']>[number];
export type IdentityConfig<C extends AnyConfig = GatewayConfig> = TokenConfig<C>['identity'];
/** `auth.jwt`; `maxLifetime` is the longest a token may live (exp − iat, or exp − now without iat), default 24h. */
export type JwtConfig<C extends AnyConfig = GatewayConfig> = Part<AuthConfig<C>['jwt']>;
export type StoresConfig<C extends AnyConfig = GatewayConfig> = Part<C['stores']>;
/** `checkIns`; `maxPending`: pending check-ins one principal may keep waiting (over it, CHECKIN_LIMIT). */
export type CheckInsConfig<C extends AnyConfig = GatewayConfig> = Part<C['checkIns']>;
/** `audit`: the signing key (Ed25519, as `${file:…}` or `${env:…}`), the digest key, the store, checkpoints. */
export type AuditConfig<C extends AnyConfig = GatewayConfig> = Part<C['audit']>;
export type AuditCheckpointsConfig<C extends AnyConfig = GatewayConfig> = Part<AuditConfig<C>['checkpoints']>;
export type UpstreamConfig<C extends AnyConfig = GatewayConfig> = C['upstreams'][string];
export type ToolDeclaration<C extends AnyConfig = GatewayConfig> = Part<UpstreamConfig<C>['tools']>[string];
export type ResultCeilingConfig<C extends AnyConfig = GatewayConfig> = Part<
  ToolDeclaration<C>['resultCeiling']
>;
export type CredentialConfig<C extends AnyConfig = GatewayConfig> = Part<C['credentials']>[string];
export type DefaultsConfig<C extends AnyConfig = GatewayConfig> = Part<C['defaults']>;
export type AnnotationHint = keyof Part<DefaultsConfig['annotations']>;
export type HintDeclaration = Part<Part<DefaultsConfig['annotations']>[AnnotationHint]>;
/** `policy`: a list of rules, or rules from a file (or inline) with a default effect. */
export type PolicyConfig<C extends AnyConfig = GatewayConfig> = Part<C['policy']>;
export type RuleConfig<C extends AnyConfig = GatewayConfig> = Extract<
  PolicyConfig<C>,
  readonly unknown[]
>[number];
export type LimitConfig<C extends AnyConfig = GatewayConfig> = Part<C['limits']>[number];
export type LimitDimensionConfig = Extract<LimitConfig['per'], string>;
/** `guards` (global, and per tenant over it): `true` is on with defaults, `false` off. */
export type GuardsConfig<C extends AnyConfig = GatewayConfig> = Part<C['guards']>;
export type EgressGuardConfig<C extends AnyConfig = GatewayConfig> = Options<GuardsConfig<C>['egress']>;
export type PathGuardConfig<C extends AnyConfig = GatewayConfig> = Options<GuardsConfig<C>['paths']>;
export type CommandGuardConfig<C extends AnyConfig = GatewayConfig> = Options<GuardsConfig<C>['commands']>;
export type SecretGuardConfig<C extends AnyConfig = GatewayConfig> = Options<GuardsConfig<C>['secrets']>;
export type CrossServerGuardConfig<C extends AnyConfig = GatewayConfig> = Options<
  GuardsConfig<C>['crossServer']
>;
export type ResultScreenConfig<C extends AnyConfig = GatewayConfig> = Options<GuardsConfig<C>['results']>;
export type TenantConfig<C extends AnyConfig = GatewayConfig> = C['tenants'][string];
export type TelemetryConfig<C extends AnyConfig = GatewayConfig> = Part<C['telemetry']>;
export type MetricsConfig<C extends AnyConfig = GatewayConfig> = Part<C['metrics']>;
export type InboxConfig<C extends AnyConfig = GatewayConfig> = Part<C['inbox']>;
export type WebhookConfig<C extends AnyConfig = GatewayConfig> = Exclude<
  Part<InboxConfig<C>['webhook']>,
  string
>;
/** What a reload may do on its own. */
export type ReloadConfig<C extends AnyConfig = GatewayConfig> = Part<C['reload']>;
/** How upstreams' tool sets are pinned. */
export type PinsConfig<C extends AnyConfig = GatewayConfig> = Part<C['pins']>;
/** `upstreams.<name>.auth`: who the server is told the call is from (HTTP only). */
export type UpstreamAuthConfig<C extends AnyConfig = GatewayConfig> = Part<UpstreamConfig<C>['auth']>;
/** RFC 8693: the caller's verified JWT exchanged for a token the upstream accepts. */
export type TokenExchangeConfig<C extends AnyConfig = GatewayConfig> = Part<
  UpstreamAuthConfig<C>['tokenExchange']
>;
/** A token for the gateway itself, from the authorization server the upstream's RFC 9728 metadata names. */
export type ClientCredentialsConfig<C extends AnyConfig = GatewayConfig> = Part<
  UpstreamAuthConfig<C>['clientCredentials']
>;
/** The gateway as an OAuth client, with a secret or a private key (private_key_jwt). */
export type OAuthClientConfig = TokenExchangeConfig['client'];
/** One value per tenant and principal, kept encrypted in a store (set through the operator API). */
export type PerPrincipalCredentialConfig = Part<CredentialConfig['perPrincipal']>;
