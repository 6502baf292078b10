// createGateway: a configuration in, a governing MCP gateway out. Streamable HTTP at /mcp (or one
// stdio connection), /healthz, /readyz, the protected-resource metadata, reload on demand or when
// the file changes, and a close that lets in-flight calls finish before the upstreams stop.

import { serveHttp, serveStdio, type HttpServing, type Serving } from '@toolgate/mcp';
import { identityOf } from './auth';
import { ConfigError } from './config/errors';
import { loadConfig, parseConfig, scrubbable, type LoadedConfig } from './config/load';
import { OwnSecrets, resolvedCredentials } from './own-secrets';
import type { GatewayConfig } from './config/types';
import { fingerprint } from './config/fingerprint';
import { recordConfig } from './audit';
import { watchConfigFile, type ConfigWatcher } from './config-watcher';
import { gatewayDrain } from './drain';
import { followUpstreams } from './follow';
import { httpRoutes, MCP_PATH, type Readiness } from './http';
import { createLog, type GatewayLog } from './log';
import { gatewayInbox, INBOX_PATH } from './inbox';
import { operatorStatus, reloadHistory } from './status';
import { createMetrics, METRICS_PATH, type GatewayMetrics } from './metrics';
import { gatewayGenerations } from './generations';
import { buildRuntime, closeRuntime, type Runtime } from './runtime';
import { gatewayServed, identityFromAuthInfo, type ServingHost } from './served';
import { weakenings } from './weakening';
import { syncPinReviews } from './pin-review';
import { closeHeld, heldReloadEnd, holdReload, type HeldReload, type HeldReloadEnd } from './held-reload';
import { version as packageVersion } from '../package.json';

/** How often pins held for review are matched with the inbox's operator check-ins. */
const PIN_REVIEW_EVERY_MS = 1000;

/** The version the gateway announces to clients: the package's own. */
export const GATEWAY_VERSION: string = packageVersion;

export interface GatewayOptions {
  /** Overrides `listen.port` (0: a free port). */
  readonly port?: number;
  /** Overrides `listen.host`. */
  readonly host?: string;
  /** Serve one MCP connection on this process's stdin/stdout instead of HTTP, as `stdio.identity`. */
  readonly stdio?: boolean;
  /** Where JSON log lines go; default stderr. */
  readonly log?: (line: string) => void;
  /** Reload when the configuration file changes; default true for a configuration read from a file. */
  readonly watch?: boolean;
  /** Environment for `${env:…}` and credentials; default `process.env`. */
  readonly env?: Readonly<Record<string, string | undefined>>;
}

export type ReloadResult =
  | { readonly ok: true }
  | {
      readonly ok: false;
      readonly error: Error;
      /** The operator check-in a weakening reload waits on (`reload.requireApproval: weakening`). */
      readonly heldAs?: string;
    };

export interface Gateway {
  /** Where MCP clients connect, e.g. `http://127.0.0.1:8787/mcp`; `stdio:` in stdio mode. */
  readonly url: string;
  /** Where Prometheus scrapes: `metrics.listen`'s URL, or /metrics on the gateway's listener; undefined when off. */
  readonly metricsUrl?: string;
  /** The facts the log lines carry, as events (`call`, `http.refused`, `reload`, `reload.refused`, …). */
  readonly events: GatewayLog['events'];
  /** Loads the configuration file again; a valid one serves new calls, an invalid one changes nothing. */
  reload(): Promise<ReloadResult>;
  /** What /readyz answers. */
  readiness(): Promise<Readiness>;
  /** Stops taking calls, lets in-flight calls finish (up to `listen.drain`), then stops the upstreams. */
  close(): Promise<void>;
}

const DEFAULT_PORT = 8787;
// Per authenticated principal: several agents may share one token.
const DEFAULT_MAX_SESSIONS_PER_CLIENT = 100;
const DEFAULT_MAX_BODY = 1024 * 1024;
const DEFAULT_DRAIN_MS = 30_000;
const WATCH_DEBOUNCE_MS = 150;

/**
 * Starts a gateway from a configuration file path, a loaded configuration, or a configuration object.
 * Rejects with `ConfigError` (file, line, column and fix for each problem) before serving anything.
 *
 * @example
 * const gateway = await createGateway('toolgate.yaml', { port: 0 });
 * console.log(gateway.url); // http://127.0.0.1:41234/mcp
 * await gateway.close();
 */
export async function createGateway(
  config: string | LoadedConfig | GatewayConfig,
  options: GatewayOptions = {},
): Promise<Gateway> {
  const env = options.env ?? process.env;
  const loaded =
    typeof config === 'string'
      ? loadConfig(config, { env })
      : isLoaded(config)
        ? config
        : parseConfig(JSON.stringify(config), { env });
  // Every value any loaded configuration interpolated or resolved: no log line carries one.
  // Kept across reloads (and fed each credential a connection resolves): a value once secret stays so.
  const ownSecrets = new OwnSecrets([
    ...loaded.secrets,
    ...resolvedCredentials(loaded.config, loaded.baseDir, env),
  ]);
  // One scrub list until a secret is added, so the log's redactor is found by the list, not rebuilt.
  let scrub: { readonly from: readonly string[]; readonly list: readonly string[] } | undefined;
  const log = createLog(options.log ?? ((line) => process.stderr.write(`${line}\n`)), () => {
    const all = ownSecrets.all();
    if (scrub?.from !== all) scrub = { from: all, list: Object.freeze(scrubbable(all)) };
    return scrub.list;
  });
  const stdio = options.stdio === true;

  const stdioIdentity = stdio ? stdioIdentityOf(loaded) : undefined;
  const startIssues = [];
  if (!stdio && loaded.config.auth?.tokens === undefined && loaded.config.auth?.jwt === undefined)
    startIssues.push(
      loaded.issue(
        ['auth'],
        'HTTP serving needs a way to authenticate callers',
        'add auth.tokens (or auth.jwt); every request without one would be refused',
      ),
    );
  if (startIssues.length > 0) throw new ConfigError(startIssues);

  const first = await buildRuntime(loaded, { log, env, ownSecrets });
  try {
    await recordConfig(first, 'config.loaded');
  } catch (error) {
    await closeRuntime(first);
    throw error;
  }
  const generations = gatewayGenerations(first);
  const live = () => generations.current();
  // Calls in the MCP handlers, and POST responses not yet sent: shutdown waits for both.
  const drain = gatewayDrain();
  const host: ServingHost = {
    current: live,
    begin: (continues) => drain.enter(continues),
    end: () => drain.leave(),
    log,
    version: GATEWAY_VERSION,
    inboxUrl: () =>
      stdio || live().config.checkIns === undefined || live().config.inbox?.enabled === false
        ? undefined
        : `${(live().config.listen?.publicUrl ?? serving?.url.origin ?? '').replace(/\/+$/, '')}${INBOX_PATH}`,
  };
  const served = gatewayServed(host, stdio ? () => stdioIdentity : identityFromAuthInfo);

  let serving: HttpServing | undefined;
  let stdioServing: Serving | undefined;
  const maxBody = () => live().config.listen?.maxBody ?? DEFAULT_MAX_BODY;
  const reloads = reloadHistory(log.events);
  const inbox = stdio
    ? undefined
    : gatewayInbox({ current: live, maxBody, log, status: () => operatorStatus(live(), reloads) });
  inbox?.refresh();
  const bindHost = options.host ?? loaded.config.listen?.host ?? '127.0.0.1';
  const metricsConfig = loaded.config.metrics ?? {};
  let metrics: GatewayMetrics | undefined;
  // Over stdio there is no listener of the gateway's own: metrics need metrics.listen.
  if (metricsConfig.enabled !== false && (!stdio || metricsConfig.listen !== undefined)) {
    try {
      metrics = await createMetrics(
        metricsConfig,
        {
          current: live,
          log,
          sessions: () => serving?.sessionCount ?? (stdioServing === undefined ? 0 : 1),
          parkedCalls: () => served.parkedCalls,
        },
        { gatewayHost: bindHost },
      );
    } catch (error) {
      inbox?.close();
      await closeRuntime(live());
      const code = (error as NodeJS.ErrnoException).code;
      throw new ConfigError([
        loaded.issue(
          ['metrics', 'listen'],
          code === 'EADDRINUSE'
            ? 'the port is already in use'
            : `cannot listen (${code ?? (error as Error).name})`,
          'choose another metrics.listen.port, or 0 for a free one',
        ),
      ]);
    }
  }
  let url: string;
  if (stdio) {
    stdioServing = await serveStdio(served);
    url = 'stdio:';
  } else {
    const listen = loaded.resolved.listen ?? {};
    const routes = httpRoutes({
      current: live,
      log,
      baseUrl: () => (live().config.listen?.publicUrl ?? serving?.url.origin ?? '').replace(/\/+$/, ''),
      maxBody,
      draining: () => drain.draining,
      track: (watch) => drain.track(watch),
      readiness: () => readiness(live(), drain.draining),
      mounts: [
        ...(inbox === undefined ? [] : [inbox.mount]),
        ...(metrics?.mount === undefined ? [] : [metrics.mount]),
      ],
    });
    try {
      serving = await serveHttp(served, {
        host: bindHost,
        port: options.port ?? listen.port ?? DEFAULT_PORT,
        path: MCP_PATH,
        intercept: routes.intercept,
        authenticate: routes.authenticate,
        // The issuer follows a reload; the resource is the public URL when one is configured.
        oauth: () => {
          const { jwt } = live().config.auth ?? {};
          const publicUrl = live().config.listen?.publicUrl;
          return {
            authorizationServers: jwt === undefined ? [] : [jwt.issuer],
            resourceName: 'toolgate gateway',
            ...(publicUrl !== undefined ? { publicUrl: `${publicUrl.replace(/\/+$/, '')}${MCP_PATH}` } : {}),
          };
        },
        ...(listen.allowedOrigins !== undefined ? { allowedOrigins: [...listen.allowedOrigins] } : {}),
        ...(listen.maxSessions !== undefined ? { maxSessions: listen.maxSessions } : {}),
        maxSessionsPerClient: listen.maxSessionsPerClient ?? DEFAULT_MAX_SESSIONS_PER_CLIENT,
        onWarning: ({ code, message }) => log({ msg: 'listen.warning', level: 'warn', code, message }),
        ...(listen.sessionIdle !== undefined ? { sessionIdleMs: listen.sessionIdle } : {}),
      });
    } catch (error) {
      inbox?.close();
      await metrics?.close();
      await closeRuntime(live());
      const code = (error as NodeJS.ErrnoException).code;
      throw new ConfigError([
        loaded.issue(
          ['listen'],
          code === 'EADDRINUSE'
            ? 'the port is already in use'
            : `cannot listen (${code ?? (error as Error).name})`,
          code === 'EADDRINUSE'
            ? 'choose another listen.port, or 0 for a free one'
            : 'check listen.host and listen.port',
        ),
      ]);
    }
    url = serving.url.href;
  }

  // Upstream changes: a new tool list rebuilds the tenants (debounced), other lists reach every client.
  let refreshTimer: NodeJS.Timeout | undefined;
  const following = {
    tools: () => {
      clearTimeout(refreshTimer);
      refreshTimer = setTimeout(() => {
        reloading = reloading.then(refreshOnce, refreshOnce);
      }, WATCH_DEBOUNCE_MS);
      refreshTimer.unref();
    },
    list: (list: 'resources' | 'prompts') => served.listChanged(list),
  };
  let unfollow = followUpstreams(live(), following);

  // Pins held for review become operator check-ins in the inbox, and decisions there are carried out.
  let pinSyncing = false;
  const pinReviews =
    inbox === undefined
      ? undefined
      : setInterval(
          () => {
            if (pinSyncing || drain.draining) return;
            pinSyncing = true;
            void syncPinReviews(live(), log, (upstream) => void live().upstreams.get(upstream)?.refresh())
              .catch(() => undefined)
              .finally(() => (pinSyncing = false));
          },
          Math.max(live().pollMs, PIN_REVIEW_EVERY_MS),
        );
  pinReviews?.unref();

  /** Serves `next` for new calls; the old generation closes what `next` does not reuse once idle. */
  function swap(next: Runtime): void {
    generations.replace(next);
    inbox?.refresh();
    metrics?.follow(next);
    unfollow();
    unfollow = followUpstreams(next, following);
    served.listChanged('tools');
  }

  async function refreshOnce(): Promise<ReloadResult> {
    if (drain.draining) return { ok: true };
    let next: Runtime;
    try {
      next = await buildRuntime(live().loaded, { previous: live(), log, env, ownSecrets });
    } catch (error) {
      log({ msg: 'tools.refresh-refused', level: 'warn', error: (error as Error).message });
      return { ok: false, error: error as Error };
    }
    swap(next);
    log({ msg: 'tools.refreshed' });
    return { ok: true };
  }

  let reloading: Promise<ReloadResult> = Promise.resolve({ ok: true });
  async function reloadOnce(): Promise<ReloadResult> {
    if (loaded.file === undefined)
      return {
        ok: false,
        error: new Error('this gateway was not started from a file; there is nothing to reload'),
      };
    let next: Runtime;
    let weakens: string[] = [];
    try {
      const nextLoaded = loadConfig(loaded.file, { env });
      for (const secret of [
        ...nextLoaded.secrets,
        ...resolvedCredentials(nextLoaded.config, nextLoaded.baseDir, env),
      ])
        ownSecrets.add(secret);
      if (!stdio && nextLoaded.config.auth?.tokens === undefined && nextLoaded.config.auth?.jwt === undefined)
        throw new ConfigError([
          nextLoaded.issue(
            ['auth'],
            'HTTP serving needs a way to authenticate callers',
            'add auth.tokens (or auth.jwt)',
          ),
        ]);
      weakens = weakenings(live().loaded.config, nextLoaded.config);
      // Any newer reload replaces one still waiting for an operator.
      await dropHeld();
      // The serving configuration's rule counts too: an edit cannot switch the approval off and weaken at once.
      const mustWait =
        live().config.reload?.requireApproval === 'weakening' ||
        nextLoaded.config.reload?.requireApproval === 'weakening';
      if (weakens.length > 0 && mustWait) {
        if (live().config.checkIns?.key === undefined || live().config.inbox?.enabled === false)
          throw new ConfigError([
            nextLoaded.issue(
              ['reload', 'requireApproval'],
              `this reload weakens security (${weakens.join('; ')}) and must wait for an operator, but the serving configuration has no inbox (checkIns.key, inbox not disabled)`,
              'configure checkIns and the inbox first, or restart the gateway to apply the change',
            ),
          ]);
        return await hold(nextLoaded, weakens);
      }
      next = await buildRuntime(nextLoaded, { previous: live(), log, env, ownSecrets });
      try {
        await recordConfig(next, 'config.reloaded', weakens);
      } catch (error) {
        await closeRuntime(next, live());
        throw error;
      }
    } catch (error) {
      const issues = error instanceof ConfigError ? error.issues.length : 1;
      log({ msg: 'reload.refused', level: 'error', issues, error: (error as Error).message });
      return { ok: false, error: error as Error };
    }
    const old = live();
    swap(next);
    if (fingerprint(old.config.listen) !== fingerprint(next.config.listen))
      log({
        msg: 'reload.listen-unchanged',
        level: 'warn',
        why: 'listen settings take effect when the gateway restarts',
      });
    log({
      msg: 'reload',
      tenants: [...next.tenants.keys()],
      upstreams: [...next.upstreams.keys()],
      // A reload that weakens security says so, in the event and in the audit log.
      ...(weakens.length > 0 ? { level: 'warn', weakens } : {}),
    });
    return { ok: true };
  }

  // A weakening reload waiting for an operator, and the poll that notices the decision.
  let held: HeldReload | undefined;
  let heldStore: Runtime['state']['checkIns'] | undefined;
  let heldPoll: NodeJS.Timeout | undefined;

  async function hold(nextLoaded: LoadedConfig, weakens: string[]): Promise<ReloadResult> {
    const waiting = await holdReload(live(), nextLoaded, weakens);
    held = waiting;
    heldStore = live().state.checkIns;
    const checkInId = waiting.request.id;
    log({ msg: 'reload.held', level: 'warn', checkInId, weakens });
    await live()
      .audit?.record({ kind: 'config.reload-held', code: 'CONFIG_WEAKENED', checkInId, args: weakens })
      .catch(() => undefined);
    clearInterval(heldPoll);
    heldPoll = setInterval(() => void checkHeld(), live().pollMs);
    heldPoll.unref();
    return {
      ok: false,
      heldAs: checkInId,
      error: new Error(
        `this reload weakens security (${weakens.join('; ')}); it waits for an operator's approval in the inbox (check-in ${checkInId}), and the current configuration keeps serving`,
      ),
    };
  }

  async function dropHeld(): Promise<void> {
    const dropped = held;
    if (dropped === undefined) return;
    held = undefined;
    clearInterval(heldPoll);
    if (heldStore !== undefined) await closeHeld(heldStore, dropped, 'revoke');
  }

  let checking = false;
  async function checkHeld(): Promise<void> {
    const waiting = held;
    if (waiting === undefined || heldStore === undefined || checking || drain.draining) return;
    checking = true;
    try {
      const end = heldReloadEnd(await heldStore.get(waiting.request.id).catch(() => undefined));
      if (end === undefined || held !== waiting) return;
      held = undefined;
      clearInterval(heldPoll);
      if (end.kind === 'approved') {
        reloading = reloading.then(
          () => applyHeld(waiting, end),
          () => applyHeld(waiting, end),
        );
        await reloading;
      } else await refuseHeld(waiting, end);
    } finally {
      checking = false;
    }
  }

  async function refuseHeld(waiting: HeldReload, end: Exclude<HeldReloadEnd, { kind: 'approved' }>) {
    const checkInId = waiting.request.id;
    if (heldStore !== undefined) await closeHeld(heldStore, waiting, 'revoke');
    if (end.kind === 'declined')
      log({ msg: 'reload.declined', level: 'warn', checkInId, by: end.by, weakens: waiting.weakens });
    else log({ msg: 'reload.expired', level: 'warn', checkInId, weakens: waiting.weakens });
    await live()
      .audit?.record({
        kind: end.kind === 'declined' ? 'config.reload-declined' : 'config.reload-expired',
        code: 'CONFIG_WEAKENED',
        checkInId,
        ...(end.kind === 'declined' ? { approver: end.by } : {}),
        args: waiting.weakens,
      })
      .catch(() => undefined);
  }

  async function applyHeld(
    waiting: HeldReload,
    end: Extract<HeldReloadEnd, { kind: 'approved' }>,
  ): Promise<ReloadResult> {
    const checkInId = waiting.request.id;
    if (heldStore !== undefined) await closeHeld(heldStore, waiting, 'consume');
    let next: Runtime;
    try {
      next = await buildRuntime(waiting.loaded, { previous: live(), log, env, ownSecrets });
      try {
        await live().audit?.record({
          kind: 'config.reload-approved',
          code: 'CONFIG_WEAKENED',
          checkInId,
          approver: end.by,
          args: waiting.weakens,
        });
        await recordConfig(next, 'config.reloaded', waiting.weakens);
      } catch (error) {
        await closeRuntime(next, live());
        throw error;
      }
    } catch (error) {
      log({ msg: 'reload.refused', level: 'error', issues: 1, error: (error as Error).message });
      return { ok: false, error: error as Error };
    }
    swap(next);
    log({
      msg: 'reload',
      level: 'warn',
      tenants: [...next.tenants.keys()],
      upstreams: [...next.upstreams.keys()],
      weakens: waiting.weakens,
      approvedBy: end.by,
      checkInId,
    });
    return { ok: true };
  }

  let watcher: ConfigWatcher | undefined;
  if ((options.watch ?? typeof config === 'string') && loaded.file !== undefined) {
    watcher = watchConfigFile(loaded.file, () => void gateway.reload(), WATCH_DEBOUNCE_MS);
    if (watcher === undefined) log({ msg: 'reload.watch-unavailable', level: 'warn' });
  }

  const metricsUrl =
    metrics === undefined
      ? undefined
      : (metrics.url ?? (serving === undefined ? undefined : new URL(METRICS_PATH, serving.url).href));
  const gateway: Gateway = {
    url,
    ...(metricsUrl !== undefined ? { metricsUrl } : {}),
    events: log.events,
    reload() {
      reloading = reloading.then(reloadOnce, reloadOnce);
      return reloading;
    },
    readiness: () => readiness(live(), drain.draining),
    async close() {
      if (drain.draining) return;
      const draining = drain.drain(live().config.listen?.drain ?? DEFAULT_DRAIN_MS);
      watcher?.close();
      clearInterval(heldPoll);
      clearInterval(pinReviews);
      clearTimeout(refreshTimer);
      unfollow();
      if (drain.inFlight > 0) log({ msg: 'shutdown.draining', inFlight: drain.inFlight });
      await draining;
      await serving?.close();
      inbox?.close();
      await metrics?.close();
      await stdioServing?.close().catch(() => undefined);
      await served.close();
      await generations.close();
      log({ msg: 'shutdown.done' });
    },
  };
  return gateway;
}

function isLoaded(config: LoadedConfig | GatewayConfig): config is LoadedConfig {
  return typeof (config as LoadedConfig).issue === 'function' && 'config' in config;
}

function stdioIdentityOf(loaded: LoadedConfig) {
  const configured = loaded.config.stdio?.identity;
  if (configured !== undefined) return identityOf(configured);
  const tenants = Object.keys(loaded.config.tenants);
  if (tenants.length === 1) return identityOf({ tenant: tenants[0]!, principal: 'stdio' });
  throw new ConfigError([
    loaded.issue(
      ['stdio'],
      'stdio mode serves one identity, and several tenants are configured',
      'add stdio: { identity: { tenant: NAME, principal: NAME } }',
    ),
  ]);
}

/** What /readyz answers: every upstream connected and every store answering, and not shutting down. */
async function readiness(runtime: Runtime, draining: boolean): Promise<Readiness> {
  const upstreams: Record<
    string,
    {
      state: string;
      tools: number;
      error?: string;
      stderr?: readonly string[];
      skipped?: readonly { tool: string; reason: string }[];
    }
  > = {};
  for (const [name, upstream] of runtime.upstreams) {
    const status = upstream.status();
    upstreams[name] = {
      state: status.state,
      tools: status.tools,
      ...(status.error !== undefined ? { error: status.error } : {}),
      ...(status.stderr !== undefined ? { stderr: status.stderr } : {}),
      ...(status.skipped !== undefined ? { skipped: status.skipped } : {}),
    };
  }
  const probe = async (store: { kind: string; ping(): Promise<void> }) => {
    try {
      await withTimeout(store.ping(), 2000);
      return { kind: store.kind, ok: true };
    } catch {
      return { kind: store.kind, ok: false, error: 'not reachable' };
    }
  };
  const audit = runtime.audit;
  const [state, limits, auditStore] = await Promise.all([
    probe(runtime.state),
    probe(runtime.limits),
    audit === undefined ? undefined : probe({ kind: audit.kind, ping: () => audit.ping() }),
  ]);
  const stores = { state, limits, ...(auditStore !== undefined ? { audit: auditStore } : {}) };
  const ready =
    !draining &&
    Object.values(upstreams).every((u) => u.state === 'connected') &&
    Object.values(stores).every((store) => store.ok);
  return { ready, ...(draining ? { draining: true as const } : {}), upstreams, stores };
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('timeout')), ms);
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error instanceof Error ? error : new Error('failed'));
      },
    );
  });
}
