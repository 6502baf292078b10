// The configuration file's shape, as `schema/toolgate.schema.json` defines it. Strings are already
// interpolated (except `${credential:…}`, resolved when an upstream connects); durations and sizes
// stay as written and are read with `durationMs`/`sizeBytes`.

export interface IdentityConfig {
  readonly tenant: string;
  readonly principal: string;
  readonly roles?: readonly string[];
}

export interface ListenConfig {
  readonly host?: string;
  readonly port?: number;
  readonly publicUrl?: string;
  readonly maxBody?: string | number;
  readonly maxSessions?: number;
  readonly maxSessionsPerClient?: number;
  readonly sessionIdle?: string;
  readonly allowedOrigins?: readonly string[];
  readonly drain?: string;
}

export interface TokenConfig {
  readonly token: string;
  readonly identity: IdentityConfig;
}

export interface JwtConfig {
  readonly issuer: string;
  readonly audience: string | readonly string[];
  readonly jwks: string;
  readonly algorithms?: readonly string[];
  readonly clockTolerance?: string;
  /** The longest a token may live (exp − iat, or exp − now without iat); default 24h. */
  readonly maxLifetime?: string;
  readonly claims?: { readonly tenant?: string; readonly principal?: string; readonly roles?: string };
}

export interface AuthConfig {
  readonly tokens?: readonly TokenConfig[];
  readonly jwt?: JwtConfig;
}

export interface StoresConfig {
  readonly state?: string;
  readonly limits?: string;
}

export interface CheckInsConfig {
  readonly key: string;
  readonly ttl?: string;
  readonly hold?: string;
  /** Pending check-ins one principal may keep waiting; over it, CHECKIN_LIMIT. */
  readonly maxPending?: number;
}

export interface AuditConfig {
  /** Ed25519 private key (PKCS#8 PEM, JWK or raw), as `${file:…}` or `${env:…}`. */
  readonly signingKey: string;
  /** HMAC key of the argument and result digests; default derived from `signingKey`. */
  readonly digestKey?: string;
  readonly onAuditFailure?: 'refuse' | 'allow';
  /**
   * `batch` (the default): a call answers once its record is queued; the records of a commit window
   * are written in one transaction under one signature, and a crash loses at most that window's; on
   * SQLite, commits reach the disk within a second (a power cut may lose that second too).
   * `record`: a call answers once its record is committed and synced.
   */
  readonly durability?: 'record' | 'batch';
  /** How long a batch stays open for more records, a duration; default `5ms` (`batch` only). */
  readonly commitWindow?: string;
  /** `memory:`, `sqlite:PATH` or `postgres://…`; default `stores.state`. */
  readonly store?: string;
  /** Signed checkpoints published outside the store. */
  readonly checkpoints?: AuditCheckpointsConfig;
}

export interface AuditCheckpointsConfig {
  /** A file outside the store, rewritten with the newest checkpoint. */
  readonly file?: string;
  /** A URL each checkpoint is POSTed to (https, or http on loopback). */
  readonly webhook?: string;
  /** Records between checkpoints; default 100. */
  readonly every?: number;
  /** How long a stored record may wait for a checkpoint, a duration; default `10s`. */
  readonly interval?: string;
}

export interface ResultCeilingConfig {
  readonly maxChars: number;
  readonly maxBytes?: string | number;
  readonly narrowBy?: readonly string[];
}

export interface ToolDeclaration {
  readonly checkIn?: 'always' | 'never';
  readonly capabilities?: readonly string[];
  readonly resultCeiling?: ResultCeilingConfig;
  /** Arguments that carry a URL or host the tool will reach: the egress guard judges them. */
  readonly egress?: readonly string[];
  /** Arguments that are file paths, and the absolute roots they must stay under: the path guard judges them. */
  readonly paths?: Readonly<Record<string, readonly string[]>>;
}

export interface HintDeclaration {
  readonly checkIn?: 'always';
  readonly capabilities?: readonly string[];
}

export type AnnotationHint = 'readOnlyHint' | 'destructiveHint' | 'idempotentHint' | 'openWorldHint';

export interface UpstreamConfig {
  readonly command?: readonly string[];
  readonly env?: Readonly<Record<string, string>>;
  readonly cwd?: string;
  readonly url?: string;
  readonly headers?: Readonly<Record<string, string>>;
  readonly prefix?: string;
  readonly include?: readonly string[];
  readonly exclude?: readonly string[];
  readonly tools?: Readonly<Record<string, ToolDeclaration>>;
  readonly timeout?: string;
  /** How the server reads path arguments: `base` is the absolute directory it resolves relative paths from. */
  readonly paths?: { readonly base?: string };
  /** Whether the server's sampling requests reach the calling client; default `allow`. */
  readonly sampling?: 'allow' | 'deny';
  /** Whether the server may ask the calling client for its roots; default `refuse`. */
  readonly roots?: 'relay' | 'refuse';
  /** Who the server is told the call is from (HTTP only): a token obtained per caller, or for the gateway. */
  readonly auth?: UpstreamAuthConfig;
}

/** The gateway as an OAuth client, with a secret or a private key (private_key_jwt). */
export interface OAuthClientConfig {
  readonly id: string;
  readonly secret?: string;
  /** A PKCS#8 PEM or a private JWK, as `${file:…}` or `${env:…}`. */
  readonly privateKeyJwt?: string;
}

/** RFC 8693: the caller's verified JWT exchanged for a token the upstream accepts. */
export interface TokenExchangeConfig {
  readonly tokenUrl: string;
  readonly audience?: string;
  readonly resource?: string;
  readonly scope?: string;
  readonly client: OAuthClientConfig;
  /** How long the authorization server may take; default 5s. */
  readonly timeout?: string;
}

/** A token for the gateway itself, from the authorization server the upstream's RFC 9728 metadata names. */
export interface ClientCredentialsConfig {
  readonly client: OAuthClientConfig;
  readonly scope?: string;
  /** The token endpoint; default discovered from the upstream's protected-resource metadata. */
  readonly tokenUrl?: string;
  readonly timeout?: string;
}

export interface UpstreamAuthConfig {
  readonly tokenExchange?: TokenExchangeConfig;
  readonly clientCredentials?: ClientCredentialsConfig;
}

export interface CredentialConfig {
  readonly env?: string;
  readonly file?: string;
  /** One value per tenant and principal, kept encrypted in a store (set through the operator API). */
  readonly perPrincipal?: PerPrincipalCredentialConfig;
}

export interface PerPrincipalCredentialConfig {
  /** `memory:`, `sqlite:PATH` or `postgres://…`; default `stores.state`. */
  readonly store?: string;
  /** The AES-256-GCM key (32 bytes, base64 or hex), as `${env:…}` or `${file:…}`. */
  readonly key: string;
}

export interface DefaultsConfig {
  readonly resultCeiling?: { readonly maxChars?: number; readonly maxBytes?: string | number };
  readonly annotations?: Readonly<Partial<Record<AnnotationHint, HintDeclaration>>>;
}

export interface RuleConfig {
  readonly name: string;
  readonly tools?: readonly string[];
  readonly when?: string;
  readonly effect: 'allow' | 'deny' | 'ask';
  readonly reason?: string;
  readonly mode?: 'enforce' | 'shadow';
}

/** `policy`: a list of rules, or rules from a file (or inline) with a default effect. */
export type PolicyConfig =
  | readonly RuleConfig[]
  | {
      readonly file?: string;
      readonly rules?: readonly RuleConfig[];
      readonly default?: 'allow' | 'deny' | 'ask';
    };

export type LimitDimensionConfig = 'tenant' | 'principal' | 'tool';

export interface LimitConfig {
  readonly name: string;
  readonly per: LimitDimensionConfig | readonly LimitDimensionConfig[];
  readonly calls?: number;
  readonly budget?: number;
  readonly cost?: Readonly<Record<string, number>>;
  readonly window: string;
  readonly tools?: readonly string[];
}

export interface EgressGuardConfig {
  readonly allowHosts?: readonly string[];
  readonly schemes?: readonly string[];
  /** Resolve names (Node's resolver) and refuse one that resolves to a private address. */
  readonly resolve?: boolean;
  /** The resolver's deadline, a duration. */
  readonly deadline?: string;
  readonly detectFormats?: boolean;
}

export interface PathGuardConfig {
  /** `{ tool: { argPath: [root, …] } }`, local tool names, on top of the tools' own declarations. */
  readonly tools?: Readonly<Record<string, Readonly<Record<string, readonly string[]>>>>;
}

export interface CommandGuardConfig {
  readonly tools?: readonly string[];
  readonly capability?: string;
}

export interface SecretGuardConfig {
  readonly args?: boolean;
  readonly results?: boolean;
  readonly decode?: boolean;
  readonly values?: readonly string[];
  readonly except?: readonly string[];
  readonly exceptFor?: Readonly<Record<string, readonly string[]>>;
}

export interface CrossServerGuardConfig {
  readonly action?: 'refuse' | 'ask';
  readonly allowFlows?: readonly { readonly from: string; readonly to: string }[];
  readonly ownTools?: boolean;
  readonly minLength?: number;
  readonly perConversation?: number;
  readonly conversations?: number;
}

export interface ResultScreenConfig {
  readonly mode?: 'flag' | 'withhold' | 'strip';
  readonly instructions?: 'flag' | 'withhold';
  readonly tools?: 'all' | 'mcp';
  readonly except?: readonly string[];
}

/** `guards` (global, and per tenant over it): canonicalChain's guard options as a file writes them; `true` is on
 * with defaults, `false` off.  */
export interface GuardsConfig {
  readonly egress?: EgressGuardConfig | boolean;
  readonly paths?: PathGuardConfig | boolean;
  readonly commands?: CommandGuardConfig | boolean;
  readonly secrets?: SecretGuardConfig | boolean;
  readonly crossServer?: CrossServerGuardConfig | boolean;
  readonly results?: ResultScreenConfig | boolean;
}

export interface TenantConfig {
  readonly upstreams: readonly string[];
  readonly policy?: PolicyConfig;
  readonly limits?: readonly LimitConfig[];
  readonly guards?: GuardsConfig;
}

export interface TelemetryConfig {
  readonly otlp?: string;
  readonly serviceName?: string;
  readonly headers?: Readonly<Record<string, string>>;
}

export interface WebhookConfig {
  readonly url: string;
  readonly publicUrl?: string;
  readonly tenants?: readonly string[];
  readonly by?: string;
  readonly linkTtl?: string;
  readonly headers?: Readonly<Record<string, string>>;
}

export interface InboxConfig {
  readonly enabled?: boolean;
  readonly webhook?: string | WebhookConfig;
}

/** A whole configuration file. */
export interface GatewayConfig {
  readonly listen?: ListenConfig;
  readonly auth?: AuthConfig;
  readonly stores?: StoresConfig;
  readonly checkIns?: CheckInsConfig;
  readonly audit?: AuditConfig;
  readonly upstreams: Readonly<Record<string, UpstreamConfig>>;
  readonly credentials?: Readonly<Record<string, CredentialConfig>>;
  readonly defaults?: DefaultsConfig;
  readonly policy?: PolicyConfig;
  readonly limits?: readonly LimitConfig[];
  readonly guards?: GuardsConfig;
  readonly tenants: Readonly<Record<string, TenantConfig>>;
  readonly telemetry?: TelemetryConfig;
  readonly metrics?: MetricsConfig;
  readonly inbox?: InboxConfig;
  readonly stdio?: { readonly identity: IdentityConfig };
  readonly pins?: PinsConfig;
  readonly reload?: ReloadConfig;
}

/** What a reload may do on its own. */
export interface ReloadConfig {
  /**
   * `weakening`: a reload that weakens security waits in the inbox as an operator check-in (decided by
   * identities with the `operator` role); approved, it is applied; declined or expired, the serving
   * configuration stays. Needs `checkIns` and the inbox.
   */
  readonly requireApproval?: 'weakening' | 'never';
}

/** How upstreams' tool sets are pinned. */
export interface PinsConfig {
  /** A tool an upstream adds or renames while serving: held for review (`toolgate pins accept tools:UPSTREAM`) or listed at once. Default review. */
  readonly newTools?: 'review' | 'allow';
}

export interface MetricsConfig {
  /** Default true. */
  readonly enabled?: boolean;
  /** A listener of its own; default /metrics on the gateway's listener. */
  readonly listen?: { readonly host?: string; readonly port: number };
  /** Bearer token a scraper sends; required when /metrics is reachable beyond loopback. */
  readonly token?: string;
  /** Label calls by principal too (unbounded when principals come from JWTs); default false. */
  readonly principals?: boolean;
}
