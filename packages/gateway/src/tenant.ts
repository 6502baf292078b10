// One tenant's virtual server: the tools of its upstreams, its chain (the canonical gates, its
// limits and, with @toolgate/policy, the global and its own rules) and the dispatcher over both.

import { matchesToolGlob } from '@toolgate/policy';
import {
  createDispatcher,
  type Chain,
  type Dispatcher,
  type Identity,
  type Tool,
  type ToolgateEmitter,
  listableTools,
} from '@toolgate/core';
import { lookup } from 'node:dns/promises';
import { canonicalChain, type CanonicalGuards, type LimitRule } from '@toolgate/middleware';
import type { ConfigIssue, ConfigPath } from './config/errors';
import type {
  CommandGuardConfig,
  CrossServerGuardConfig,
  EgressGuardConfig,
  GuardsConfig,
  LimitConfig,
  PathGuardConfig,
  ResolvedConfig,
  ResultScreenConfig,
  SecretGuardConfig,
} from './config/types';
import { buildTenantPolicy, type BuiltPolicy, type TenantPolicy } from './policy';
import type { LimitsStore, StateStore } from './stores';
import { listedExtrasFor, type Upstream } from './upstream';
import { ownSecretsGate, withOwnSecrets, type OwnSecrets } from './own-secrets';
import { pathBases, type PathBases } from './path-base';
import { upstreamIdentityGate } from './upstream-identity-gate';

/** A tool as tools/list shows it. */
export interface ListedTool {
  readonly name: string;
  readonly title?: string;
  readonly description: string;
  readonly inputSchema: { readonly type: 'object'; readonly [key: string]: unknown };
  readonly annotations?: Readonly<Record<string, unknown>>;
  readonly outputSchema?: Readonly<Record<string, unknown>>;
  readonly execution?: unknown;
  readonly icons?: readonly unknown[];
  readonly _meta?: Readonly<Record<string, unknown>>;
}

export interface TenantRuntime {
  readonly name: string;
  readonly tools: readonly Tool[];
  readonly chain: Chain;
  readonly dispatcher: Dispatcher;
  /** What this identity sees in tools/list. */
  listed(identity: Identity | undefined): readonly ListedTool[];
  /** The upstream each tool comes from. */
  readonly sourceOf: ReadonlyMap<string, string>;
  /** The tenant's policy gate (global rules, then its own), when it has one. */
  readonly policy?: BuiltPolicy;
}

export interface TenantContext {
  readonly config: ResolvedConfig;
  readonly upstreams: ReadonlyMap<string, Upstream>;
  readonly state: StateStore;
  readonly limits: LimitsStore;
  readonly events?: ToolgateEmitter;
  /** Wraps the tenant's dispatcher (telemetry). */
  readonly instrument?: (dispatcher: Dispatcher) => Dispatcher;
  readonly issue: (path: ConfigPath, message: string, fix?: string) => ConfigIssue;
  /** The global rules and the tenant's own, when it has any. */
  readonly policy?: TenantPolicy;
  /** Relative paths of the configuration (a stdio upstream's cwd) resolve here; default the process's. */
  readonly baseDir?: string;
  /** The gateway's own secrets (interpolated values, resolved credentials): refused in args, redacted from results. */
  readonly ownSecrets?: OwnSecrets;
}

/** The tenant could not be built; `issues` place each reason in the configuration. */
export class TenantError extends Error {
  override readonly name = 'TenantError';
  constructor(readonly issues: readonly ConfigIssue[]) {
    super(issues.map((issue) => issue.message).join('; '));
  }
}

export function buildTenant(name: string, context: TenantContext): TenantRuntime {
  const { config } = context;
  const tenant = config.tenants[name]!;
  const issues: ConfigIssue[] = [];
  const at = ['tenants', name];

  const tools: Tool[] = [];
  const sourceOf = new Map<string, string>();
  tenant.upstreams.forEach((upstreamName, index) => {
    const upstream = context.upstreams.get(upstreamName);
    if (upstream === undefined) return;
    for (const tool of upstream.tools) {
      const other = sourceOf.get(tool.schema.name);
      if (other !== undefined) {
        issues.push(
          context.issue(
            [...at, 'upstreams', index],
            `'${upstreamName}' and '${other}' both serve a tool named '${tool.schema.name}'`,
            `give one of them a 'prefix' (upstreams.${upstreamName}.prefix)`,
          ),
        );
        continue;
      }
      sourceOf.set(tool.schema.name, upstreamName);
      tools.push(tool);
    }
  });
  const names = tools.map((tool) => tool.schema.name);

  if (config.checkIns === undefined) {
    for (const tool of tools) {
      if (tool.checkIn === undefined) continue;
      const upstream = sourceOf.get(tool.schema.name)!;
      issues.push(
        context.issue(
          ['checkIns'],
          `'${tool.schema.name}' (upstream '${upstream}') asks for a person's approval, and no check-in key is configured`,
          'add checkIns: { key: "${env:TOOLGATE_CHECKIN_KEY}" } with at least 32 random bytes',
        ),
      );
    }
  }

  const limits = [
    ...limitRules(config.limits, ['limits'], names, issues, context),
    ...limitRules(tenant.limits, [...at, 'limits'], names, issues, context),
  ];
  const policy =
    context.policy === undefined
      ? undefined
      : buildTenantPolicy(context.policy, tools, {
          canPause: config.checkIns !== undefined,
          issue: context.issue,
        });
  issues.push(...(policy?.issues ?? []));
  const bases = pathBases(config, context.baseDir ?? process.cwd(), sourceOf);
  const guards = withOwnSecrets(
    tenantGuards(name, config.guards, tenant.guards, tools, issues, context, bases),
    context.ownSecrets?.values() ?? [],
  );
  // A policy problem another tenant already reported still stops this one.
  if (issues.length > 0 || policy?.failed === true) throw new TenantError(issues);

  const checkIns = config.checkIns;
  let chain: ReturnType<typeof canonicalChain>;
  try {
    chain = canonicalChain({
      ...(checkIns !== undefined
        ? {
            checkInKey: checkIns.key,
            checkIns: context.state.checkIns,
            ...(checkIns.ttl !== undefined ? { checkInTtlMs: checkIns.ttl } : {}),
          }
        : {}),
      ...(config.defaults?.resultCeiling?.maxChars !== undefined
        ? { defaultMaxChars: config.defaults.resultCeiling.maxChars }
        : {}),
      ...(config.defaults?.resultCeiling?.maxBytes !== undefined
        ? { defaultMaxBytes: config.defaults.resultCeiling.maxBytes }
        : {}),
      ...(limits.length > 0 ? { limits: { limits, store: context.limits.limits } } : {}),
      ...(policy?.built !== undefined ? { policy: policy.built.gate } : {}),
      ...(guards !== undefined ? { guards } : {}),
    });
    if (context.ownSecrets !== undefined)
      chain = chain.insertAfter('credentials', ownSecretsGate(context.ownSecrets));
    // Only a tenant with an upstream called on each caller's behalf gets the gate (and its chainId).
    if (tenant.upstreams.some((upstream) => context.upstreams.get(upstream)?.identity !== undefined))
      chain = chain.insertAfter(
        'credentials',
        upstreamIdentityGate((source) => context.upstreams.get(source)?.identity),
      );
  } catch (error) {
    // A limit out of bounds (finer than 20 units a millisecond, a window over 366 days) fails here.
    throw new TenantError([context.issue(at, `cannot be served: ${(error as Error).message}`)]);
  }

  let dispatcher: Dispatcher;
  try {
    const created = createDispatcher({
      tools,
      chain,
      ...(context.events !== undefined ? { events: context.events } : {}),
    });
    dispatcher = context.instrument === undefined ? created : context.instrument(created);
  } catch (error) {
    throw new TenantError([context.issue(at, `cannot be served: ${(error as Error).message}`)]);
  }

  const listed: ListedTool[] = tools.map((tool) => {
    // What the upstream listed beyond the schema (title, output schema, execution, icons, non-secret _meta) is kept.
    const extras = listedExtrasFor(tool);
    return {
      name: tool.schema.name,
      ...(extras?.title !== undefined ? { title: extras.title } : {}),
      description: tool.schema.description,
      inputSchema: tool.schema.inputSchema as ListedTool['inputSchema'],
      ...(tool.annotations !== undefined ? { annotations: tool.annotations } : {}),
      ...(extras?.outputSchema !== undefined ? { outputSchema: extras.outputSchema } : {}),
      ...(extras?.execution !== undefined ? { execution: extras.execution } : {}),
      ...(extras?.icons !== undefined ? { icons: extras.icons } : {}),
      ...(extras?._meta !== undefined ? { _meta: extras._meta } : {}),
    };
  });

  const hiding = chain.middleware.some((m) => m.hides !== undefined);
  return {
    name,
    tools,
    chain,
    dispatcher,
    sourceOf,
    ...(policy?.built !== undefined ? { policy: policy.built } : {}),
    // A tool some middleware (a policy deny rule) refuses this identity whatever the args is left out.
    listed: !hiding
      ? () => listed
      : (identity) => {
          const visible = new Set(listableTools(tools, chain, identity).map((tool) => tool.schema.name));
          return listed.filter((tool) => visible.has(tool.name));
        },
  };
}

/** The configuration's limits as limits-gate rules; a glob matching none of the tenant's tools is an error. */
function limitRules(
  limits: readonly LimitConfig<ResolvedConfig>[] | undefined,
  at: ConfigPath,
  names: readonly string[],
  issues: ConfigIssue[],
  context: TenantContext,
): LimitRule[] {
  const rules: LimitRule[] = [];
  limits?.forEach((limit, index) => {
    const where = [...at, index];
    const dangling = (globs: readonly string[], key: ConfigPath) =>
      globs.forEach((glob, position) => {
        if (!names.some((name) => matchesToolGlob(name, glob)))
          issues.push(
            context.issue(
              [...where, ...key, ...(key[0] === 'tools' ? [position] : [])],
              `'${glob}' matches none of this tenant's tools`,
              `tools here: ${names.join(', ') || '(none)'}`,
            ),
          );
      });
    if (limit.tools !== undefined) dangling(limit.tools, ['tools']);
    if (limit.cost !== undefined)
      for (const glob of Object.keys(limit.cost)) dangling([glob], ['cost', glob]);
    const windowMs = limit.window;
    const per = typeof limit.per === 'string' ? limit.per : [...limit.per];
    const scoped = (toolName: string) => limit.tools === undefined || matchesToolGlob(toolName, limit.tools);
    if (limit.calls !== undefined) {
      rules.push(
        limit.tools === undefined
          ? { name: limit.name, per, calls: limit.calls, windowMs }
          : // A rate over some tools is a budget in which those tools cost one call and others nothing.
            {
              name: limit.name,
              per,
              budget: limit.calls,
              windowMs,
              cost: ({ toolName }) => (scoped(toolName) ? 1 : 0),
            },
      );
    } else {
      const costs = Object.entries(limit.cost ?? {});
      rules.push({
        name: limit.name,
        per,
        budget: limit.budget!,
        windowMs,
        cost: ({ toolName }) => {
          if (!scoped(toolName)) return 0;
          const found = costs.find(([glob]) => matchesToolGlob(toolName, glob));
          return found === undefined ? 0 : found[1];
        },
      });
    }
  });
  return rules;
}

/** Each guard's options, when it is on. */
interface GuardOptionsOf {
  readonly egress: EgressGuardConfig<ResolvedConfig>;
  readonly paths: PathGuardConfig<ResolvedConfig>;
  readonly commands: CommandGuardConfig<ResolvedConfig>;
  readonly secrets: SecretGuardConfig<ResolvedConfig>;
  readonly crossServer: CrossServerGuardConfig<ResolvedConfig>;
  readonly results: ResultScreenConfig<ResolvedConfig>;
}
type GuardKey = keyof GuardOptionsOf;

/**
 * The tenant's guards: the global `guards`, its own over them key by key (`false` turns one off;
 * path roots of both apply, so the narrower wins). With none configured, a tool that declares
 * `egress` or `paths` still turns its guard on: a declaration is never left unenforced.
 */
function tenantGuards(
  name: string,
  global: GuardsConfig<ResolvedConfig> | undefined,
  own: GuardsConfig<ResolvedConfig> | undefined,
  tools: readonly Tool[],
  issues: ConfigIssue[],
  context: TenantContext,
  bases: PathBases,
): CanonicalGuards | undefined {
  // Every path the guard approves reaches the upstream absolute, read where that upstream reads it.
  const pathReading = { base: bases.base, realpath: bases.realpath };
  const declares = {
    egress: tools.filter((tool) => tool.egress !== undefined),
    paths: tools.filter((tool) => tool.paths !== undefined),
  };
  if (global === undefined && own === undefined) {
    if (declares.egress.length === 0 && declares.paths.length === 0) return undefined;
    return {
      ...(declares.egress.length === 0 ? { egress: false as const } : {}),
      ...(declares.paths.length === 0 ? { paths: false as const } : { paths: pathReading }),
      commands: false,
    };
  }
  const options = <K extends GuardKey>(key: K): GuardOptionsOf[K] | false | undefined => {
    // Each guard's options are an object, `true` (on, defaults) or `false` (off).
    type Setting = object | boolean | undefined;
    const mine = own?.[key] as Setting;
    const theirs = global?.[key] as Setting;
    const pick = (value: object | true) => (value === true ? {} : value) as GuardOptionsOf[K];
    if (mine === false || (mine === undefined && theirs === false)) return false;
    if (mine === undefined) return theirs === undefined ? undefined : pick(theirs as object | true);
    if (theirs === undefined || theirs === false || key === 'paths') return pick(mine);
    return { ...(pick(theirs) as object), ...(pick(mine) as object) } as GuardOptionsOf[K];
  };
  const offAt = (key: GuardKey): ConfigPath =>
    own?.[key] === false ? ['tenants', name, 'guards', key] : ['guards', key];

  // A guard off for this tenant while one of its tools declares what that guard enforces.
  const offWhileDeclared = (key: 'egress' | 'paths', kind: string) => {
    for (const tool of declares[key])
      issues.push(
        context.issue(
          offAt(key),
          `'${tool.schema.name}' declares ${kind} arguments, and the ${kind} guard is off for tenant '${name}'`,
          `remove '${key}: false', or the tool's '${key}' declaration`,
        ),
      );
  };

  const guards: { -readonly [K in keyof CanonicalGuards]: CanonicalGuards[K] } = {};
  const egress = options('egress');
  if (egress === false) {
    guards.egress = false;
    offWhileDeclared('egress', 'egress');
  } else if (egress !== undefined) {
    guards.egress = {
      ...(egress.allowHosts !== undefined ? { allowHosts: egress.allowHosts } : {}),
      ...(egress.schemes !== undefined ? { schemes: egress.schemes } : {}),
      ...(egress.detectFormats !== undefined ? { detectFormats: egress.detectFormats } : {}),
      ...(egress.resolve === true ? { resolve: resolveHost } : {}),
      ...(egress.deadline !== undefined ? { deadlineMs: egress.deadline } : {}),
    };
  }
  const paths = options('paths');
  if (paths === false) {
    guards.paths = false;
    offWhileDeclared('paths', 'path');
  } else {
    // The global roots and the tenant's own both apply: the call's identity is this tenant's.
    const globalTools = typeof global?.paths === 'object' ? global.paths.tools : undefined;
    const ownTools = typeof own?.paths === 'object' ? own.paths.tools : undefined;
    if (paths !== undefined || globalTools !== undefined || ownTools !== undefined)
      guards.paths = {
        ...pathReading,
        ...(globalTools !== undefined ? { tools: globalTools } : {}),
        ...(ownTools !== undefined ? { tenants: { [name]: ownTools } } : {}),
      };
  }
  const commands = options('commands');
  if (commands !== undefined) {
    const extra = [
      ...(typeof global?.commands === 'object' ? (global.commands.tools ?? []) : []),
      ...(typeof own?.commands === 'object' ? (own.commands.tools ?? []) : []),
    ];
    guards.commands =
      commands === false
        ? false
        : {
            ...(extra.length > 0 ? { tools: [...new Set(extra)] } : {}),
            ...(commands.capability !== undefined ? { capability: commands.capability } : {}),
          };
  }
  const secrets = options('secrets');
  if (secrets !== undefined && secrets !== false) guards.secrets = secrets;
  const crossServer = options('crossServer');
  if (crossServer !== undefined && crossServer !== false) guards.crossServer = crossServer;
  const results = options('results');
  if (results !== undefined && results !== false) guards.results = results;
  return guards;
}

/** Node's resolver, every address, as the egress guard's `resolve` takes it. */
async function resolveHost(hostname: string): Promise<string[]> {
  return (await lookup(hostname, { all: true, verbatim: true })).map((entry) => entry.address);
}
