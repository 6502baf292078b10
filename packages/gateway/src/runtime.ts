// One generation of the gateway: everything a loaded configuration builds (stores, upstream
// connections, tenants, the authenticator). A reload builds the next generation beside the live
// one, reusing the upstreams and stores whose configuration did not change, and swaps only when
// every part built; the old generation is closed once its last call has finished.

import { AuditConfigError, AuditUnavailableError } from '@toolgate/audit';
import { DEFAULT_MAX_PENDING, type ToolgateEmitter } from '@toolgate/core';
import { auditKeyOf, openAudit, type GatewayAudit } from './audit';
import { authenticatorOf, JwksError, type Authenticator } from './auth';
import { ConfigError, type ConfigIssue } from './config/errors';
import type { LoadedConfig } from './config/load';
import type { ResolvedConfig } from './config/types';
import { fingerprint } from './config/fingerprint';
import { inFlightCounter } from './in-flight';
import type { GatewayLog } from './log';
import { inboxIssues } from './inbox';
import { resolvePolicies } from './policy';
import { openLimitsStore, openStateStore, type LimitsStore, type StateStore } from './stores';
import { openTelemetry, type Telemetry } from './telemetry';
import { OwnSecrets, resolvedCredentials } from './own-secrets';
import { buildTenant, TenantError, type TenantRuntime } from './tenant';
import { connectUpstream, upstreamFingerprint, UpstreamError, type Upstream } from './upstream';
import { openPrincipalCredentials, type PrincipalCredentialVault } from './principal-credentials';

export interface Runtime {
  readonly loaded: LoadedConfig;
  readonly config: ResolvedConfig;
  readonly auth: Authenticator;
  readonly state: StateStore;
  readonly limits: LimitsStore;
  readonly telemetry: Telemetry;
  readonly upstreams: ReadonlyMap<string, Upstream>;
  readonly tenants: ReadonlyMap<string, TenantRuntime>;
  /** The audit log, when `audit` is configured; every tenant's dispatcher records into it. */
  readonly audit?: GatewayAudit;
  /** Per-principal credentials (`credentials.<name>.perPrincipal`), when any are configured. */
  readonly principalCredentials?: PrincipalCredentialVault;
  /** How long a paused call waits for an approver, and how often it looks. */
  readonly holdMs: number;
  /** `checkIns.maxPending`. */
  readonly maxPending: number;
  readonly pollMs: number;
  /** Calls in flight under this generation. */
  hold(): void;
  release(): void;
  /** Resolves when no call is in flight under this generation. */
  idle(): Promise<void>;
}

export interface BuildOptions {
  readonly previous?: Runtime;
  readonly log?: GatewayLog;
  readonly events?: ToolgateEmitter;
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** The gateway's own secrets, kept across reloads; a new set when not given. */
  readonly ownSecrets?: OwnSecrets;
}

const DEFAULT_HOLD_MS = 30_000;
const POLL_MS = 250;

/** Builds a generation, or throws `ConfigError` placing every problem in the file; nothing is left open. */
export async function buildRuntime(loaded: LoadedConfig, options: BuildOptions = {}): Promise<Runtime> {
  const { resolved: config, baseDir } = loaded;
  const previous = options.previous;
  const opened: { close(): Promise<void> }[] = [];
  const issues: ConfigIssue[] = [];
  const ownSecrets = options.ownSecrets ?? new OwnSecrets();
  for (const value of [...loaded.secrets, ...resolvedCredentials(config, baseDir, options.env)])
    ownSecrets.add(value);
  try {
    issues.push(...inboxIssues(loaded));
    if (issues.length > 0) throw new ConfigError(issues);
    const auth = (() => {
      try {
        return authenticatorOf(config.auth, { tenants: Object.keys(config.tenants), baseDir });
      } catch (error) {
        issues.push(
          loaded.issue(
            ['auth', 'jwt', 'jwks'],
            error instanceof JwksError ? error.problem : (error as Error).message,
            'point it at a JWKS file or an https:// JWKS URL',
          ),
        );
        return undefined;
      }
    })();

    const same = (part: (config: ResolvedConfig) => unknown) =>
      previous !== undefined && fingerprint(part(previous.config)) === fingerprint(part(config));
    const state = same((c) => c.stores?.state)
      ? previous!.state
      : track(opened, openStateStore(config.stores?.state));
    const limits = same((c) => c.stores?.limits)
      ? previous!.limits
      : track(opened, openLimitsStore(config.stores?.limits));

    const telemetry =
      previous !== undefined && previous.telemetry.key === fingerprint(config.telemetry)
        ? previous.telemetry
        : track(opened, openTelemetry(config.telemetry));

    const audit = await openedAudit(loaded, previous, opened, issues, options.log);
    const principalCredentials = openedPrincipalCredentials(loaded, previous, opened);

    const upstreams = new Map<string, Upstream>();
    await Promise.all(
      Object.entries(config.upstreams).map(async ([name, upstreamConfig]) => {
        const context = {
          baseDir,
          ...(config.credentials !== undefined ? { credentials: config.credentials } : {}),
          ...(config.defaults !== undefined ? { defaults: config.defaults } : {}),
          issue: loaded.issue,
          ...(options.log !== undefined ? { log: options.log } : {}),
          ...(options.env !== undefined ? { env: options.env } : {}),
          pins: state.pins,
          checkIns: state.checkIns,
          ...(config.pins?.newTools !== undefined ? { newTools: config.pins.newTools } : {}),
          ...(audit !== undefined
            ? {
                audit: (entry: {
                  kind: string;
                  source: string;
                  tool?: string;
                  code: string;
                  tenant?: string;
                  principal?: string;
                  args?: { reason: string };
                }) =>
                  // A record that cannot be written leaves the tool unlisted all the same.
                  void audit.record(entry).catch(() => undefined),
              }
            : {}),
          onCredential: (value: string) => ownSecrets.add(value),
          ...(principalCredentials !== undefined ? { principalCredentials } : {}),
        };
        const reused = previous?.upstreams.get(name);
        if (
          reused !== undefined &&
          reused.fingerprint === upstreamFingerprint(upstreamConfig, context) &&
          previous?.state === state &&
          previous?.principalCredentials === principalCredentials &&
          reused.status().state !== 'closed'
        ) {
          upstreams.set(name, reused);
          return;
        }
        try {
          const upstream = await connectUpstream(name, upstreamConfig, context);
          opened.push(upstream);
          upstreams.set(name, upstream);
        } catch (error) {
          if (error instanceof UpstreamError && error.issues.length > 0) issues.push(...error.issues);
          else
            issues.push(
              loaded.issue(
                ['upstreams', name],
                error instanceof UpstreamError ? error.problem : (error as Error).message,
                'check that the server starts and speaks MCP (`toolgate check` connects to each)',
              ),
            );
        }
      }),
    );
    if (issues.length > 0) throw new ConfigError(issues);
    // Connected in parallel; kept in the order the file lists them.
    const ordered = new Map(Object.keys(config.upstreams).map((name) => [name, upstreams.get(name)!]));

    const policies = resolvePolicies(loaded, (tenant) =>
      config.tenants[tenant]!.upstreams.flatMap(
        (upstream) => ordered.get(upstream)?.tools.map((tool) => tool.schema.name) ?? [],
      ),
    );
    issues.push(...policies.issues);
    const tenants = new Map<string, TenantRuntime>();
    for (const name of Object.keys(config.tenants)) {
      const policy = policies.tenants.get(name);
      try {
        tenants.set(
          name,
          buildTenant(name, {
            config,
            upstreams: ordered,
            state,
            limits,
            // The log sees the dispatcher's own outcomes; telemetry wraps both.
            instrument:
              audit === undefined
                ? telemetry.instrument
                : (dispatcher) => telemetry.instrument(audit.attach(dispatcher)),
            issue: loaded.issue,
            baseDir,
            ownSecrets,
            ...(policy !== undefined ? { policy } : {}),
            ...(options.events !== undefined ? { events: options.events } : {}),
          }),
        );
      } catch (error) {
        if (error instanceof TenantError) issues.push(...error.issues);
        else throw error;
      }
    }
    if (issues.length > 0) throw new ConfigError(issues);

    const calls = inFlightCounter();
    return {
      loaded,
      config,
      auth: auth!,
      state,
      limits,
      telemetry,
      upstreams: ordered,
      tenants,
      ...(audit !== undefined ? { audit } : {}),
      ...(principalCredentials !== undefined ? { principalCredentials } : {}),
      holdMs: config.checkIns?.hold ?? DEFAULT_HOLD_MS,
      maxPending: config.checkIns?.maxPending ?? DEFAULT_MAX_PENDING,
      pollMs: POLL_MS,
      hold: () => calls.begin(),
      release: () => calls.end(),
      idle: () => calls.idle(),
    };
  } catch (error) {
    await Promise.all(opened.map((part) => part.close().catch(() => undefined)));
    throw error;
  }
}

/** Closes what `runtime` opened and `next` does not reuse (everything, without `next`). */
export async function closeRuntime(runtime: Runtime, next?: Runtime): Promise<void> {
  const parts: { close(): Promise<void> }[] = [];
  for (const [name, upstream] of runtime.upstreams)
    if (next?.upstreams.get(name) !== upstream) parts.push(upstream);
  if (next?.state !== runtime.state) parts.push(runtime.state);
  if (next?.limits !== runtime.limits) parts.push(runtime.limits);
  if (next?.telemetry !== runtime.telemetry) parts.push(runtime.telemetry);
  if (runtime.audit !== undefined && next?.audit !== runtime.audit) parts.push(runtime.audit);
  if (
    runtime.principalCredentials !== undefined &&
    next?.principalCredentials !== runtime.principalCredentials
  )
    parts.push(runtime.principalCredentials);
  await Promise.all(parts.map((part) => part.close().catch(() => undefined)));
}

/** The per-principal credentials' vault: the previous generation's when its stores and keys are unchanged. */
function openedPrincipalCredentials(
  loaded: LoadedConfig,
  previous: Runtime | undefined,
  opened: { close(): Promise<void> }[],
): PrincipalCredentialVault | undefined {
  const vault = openPrincipalCredentials(loaded.resolved);
  if (vault === undefined) return undefined;
  if (previous?.principalCredentials?.fingerprint === vault.fingerprint) {
    void vault.close();
    return previous.principalCredentials;
  }
  return track(opened, vault);
}

/** The configured audit log, ready (keys imported, store answering), or an issue placed at `audit`. */
async function openedAudit(
  loaded: LoadedConfig,
  previous: Runtime | undefined,
  opened: { close(): Promise<void> }[],
  issues: ConfigIssue[],
  log: GatewayLog | undefined,
): Promise<GatewayAudit | undefined> {
  const { resolved: config, baseDir } = loaded;
  if (config.audit === undefined) return undefined;
  if (previous?.audit !== undefined && previous.audit.key === auditKeyOf(config)) return previous.audit;
  let audit: GatewayAudit;
  try {
    audit = openAudit(
      loaded.config,
      baseDir,
      (error) =>
        log?.({
          msg: 'audit.checkpoint.failed',
          level: 'warn',
          // The class only: a webhook's error text could carry its URL's credentials.
          error: (error as Error | undefined)?.name ?? 'Error',
        }),
      (error) =>
        log?.({
          msg: 'audit.journal.failed',
          level: 'warn',
          // The store's own message: the journal's file and what failed, never a record.
          error: (error as Error | undefined)?.message ?? String(error),
        }),
    );
  } catch (error) {
    // The library names the key that is wrong, never its value.
    const problem = error instanceof AuditConfigError ? error.problem : (error as Error).message;
    const option = error instanceof AuditConfigError ? error.option : undefined;
    issues.push(
      loaded.issue(
        option === 'signingKey' || option === 'digestKey' ? ['audit', option] : ['audit'],
        `the audit log cannot start: ${problem}`,
      ),
    );
    return undefined;
  }
  opened.push(audit);
  try {
    await audit.log.ready();
  } catch (error) {
    // The library's messages name the key or the store that is wrong, never a key's value.
    issues.push(
      loaded.issue(
        ['audit'],
        `the audit log cannot start: ${auditFailure(error)}`,
        'check audit.signingKey (an Ed25519 private key, e.g. ${file:./audit-key.pem}), audit.digestKey and the store',
      ),
    );
    return undefined;
  }
  return audit;
}

function track<T extends { close(): Promise<void> }>(opened: { close(): Promise<void> }[], part: T): T {
  opened.push(part);
  return part;
}

/** `auditLog: <problem>` from the audit package's typed fields; any other error by its text. */
function auditFailure(error: unknown): string {
  if (error instanceof AuditConfigError || error instanceof AuditUnavailableError)
    return `${error.subject}: ${error.problem}`;
  return (error as Error).message;
}
