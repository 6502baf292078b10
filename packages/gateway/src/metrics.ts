// Prometheus metrics for the gateway, through prom-client: counters and histograms fed by the facts
// the gateway already logs (call lines, reloads, upstream and pin events) and the tenants'
// dispatcher events (the upstream's own run time), plus gauges read at scrape time from the live
// generation (upstream state, pending check-ins, the audit log's head, open sessions).
// Labels are configured names only: a tool or tenant the configuration does not name is counted as
// `(other)`, codes that are not plain upper-case words as `OTHER`, principals only when configured.

import { createHash, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { EventEmitter } from 'node:events';
import type { AddressInfo } from 'node:net';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { Dispatcher } from '@toolgate/core';
import type { MetricsConfig } from './config/types';
import type { Mount } from './http';
import type { GatewayLog } from './log';
import type { Runtime } from './runtime';

export const METRICS_PATH = '/metrics';
export const OTHER = '(other)';

export interface MetricsHost {
  current(): Runtime;
  readonly log: GatewayLog;
  /** Open MCP sessions (HTTP) or connections (stdio). */
  sessions(): number;
  /** Calls of 2025-era upstreams held open for a 2026-07-28 client's retry. */
  parkedCalls(): number;
}

export interface GatewayMetrics {
  readonly registry: Registry;
  /** Starts counting a generation's dispatcher events; idempotent per dispatcher. */
  follow(runtime: Runtime): void;
  /** The exposition, as a scraper gets it. */
  scrape(): Promise<string>;
  /** /metrics on the gateway's own listener; undefined when served on `metrics.listen` or off. */
  readonly mount?: Mount;
  /** The separate listener's URL, when `metrics.listen` is set. */
  readonly url?: string;
  close(): Promise<void>;
}

// Seconds. Chain time is usually well under a millisecond; an upstream's run from ms to a minute.
const CHAIN_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5, 30];
const UPSTREAM_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
// Upstream run time per chain, kept until its call line arrives; bounded against calls that never log.
const MAX_PENDING_RUNS = 10_000;
const STATES = ['connecting', 'connected', 'retrying', 'failed', 'closed'] as const;

export function isLoopback(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '');
  return (
    bare === 'localhost' || bare === '::1' || /^127\.\d+\.\d+\.\d+$/.test(bare) || bare === '::ffff:127.0.0.1'
  );
}

/** Whether /metrics may answer without a token: only where nothing beyond this machine can reach it. */
export function metricsNeedToken(config: MetricsConfig | undefined, gatewayHost: string): boolean {
  const host = config?.listen === undefined ? gatewayHost : (config.listen.host ?? '127.0.0.1');
  return !isLoopback(host);
}

export async function createMetrics(
  config: MetricsConfig,
  host: MetricsHost,
  options: { readonly gatewayHost: string },
): Promise<GatewayMetrics> {
  const registry = new Registry();
  const startedAt = Date.now();
  collectDefaultMetrics({ register: registry, prefix: 'toolgate_process_' });
  const principals = config.principals === true;

  const callLabels = ['tenant', 'tool', 'kind', 'gate', 'rule', ...(principals ? ['principal'] : [])];
  const calls = new Counter({
    name: 'toolgate_calls_total',
    help: 'Tool calls answered, by tenant, tool, outcome kind, the deciding gate and policy rule',
    labelNames: callLabels,
    registers: [registry],
  });
  const refusals = new Counter({
    name: 'toolgate_refusals_total',
    help: 'Tool calls refused, by tenant, gate and refusal code',
    labelNames: ['tenant', 'gate', 'code'],
    registers: [registry],
  });
  const chainSeconds = new Histogram({
    name: 'toolgate_chain_duration_seconds',
    help: "Time a call spent in the gateway and its chain, the upstream's run excluded (a check-in's wait included)",
    labelNames: ['tenant', 'kind'],
    buckets: CHAIN_BUCKETS,
    registers: [registry],
  });
  const upstreamSeconds = new Histogram({
    name: 'toolgate_upstream_duration_seconds',
    help: "An upstream's run of a tool call, by upstream and whether it answered or failed",
    labelNames: ['upstream', 'outcome'],
    buckets: UPSTREAM_BUCKETS,
    registers: [registry],
  });
  const grantsUsed = new Counter({
    name: 'toolgate_grants_used_total',
    help: 'Calls that ran on an approval given after their hold ran out',
    labelNames: ['tenant'],
    registers: [registry],
  });
  const pinsChanged = new Counter({
    name: 'toolgate_pins_changed_total',
    help: 'Tool definitions an upstream served that differ from their pin (held for review)',
    labelNames: ['upstream'],
    registers: [registry],
  });
  const pinsAccepted = new Counter({
    name: 'toolgate_pins_accepted_total',
    help: 'Changed tool definitions accepted',
    labelNames: ['upstream'],
    registers: [registry],
  });
  const restarts = new Counter({
    name: 'toolgate_upstream_restarts_total',
    help: 'Times an upstream connection came back after it was lost',
    labelNames: ['upstream'],
    registers: [registry],
  });
  const downs = new Counter({
    name: 'toolgate_upstream_down_total',
    help: 'Times an upstream connection was lost',
    labelNames: ['upstream'],
    registers: [registry],
  });
  const reloads = new Counter({
    name: 'toolgate_reloads_total',
    help: 'Configuration reloads, by result (applied or refused)',
    labelNames: ['result'],
    registers: [registry],
  });
  const httpRefused = new Counter({
    name: 'toolgate_http_refused_total',
    help: 'HTTP requests refused before MCP (no token, bad token, unknown tenant, too large, draining)',
    labelNames: ['why'],
    registers: [registry],
  });
  for (const result of ['applied', 'refused']) reloads.inc({ result }, 0);

  new Gauge({
    name: 'toolgate_upstream_state',
    help: "1 for an upstream's current connection state, 0 for the others",
    labelNames: ['upstream', 'state'],
    registers: [registry],
    collect() {
      this.reset();
      for (const [name, upstream] of host.current().upstreams) {
        const now = upstream.status().state;
        for (const state of STATES) this.set({ upstream: name, state }, state === now ? 1 : 0);
      }
    },
  });
  new Gauge({
    name: 'toolgate_upstream_up',
    help: '1 when the upstream is connected',
    labelNames: ['upstream'],
    registers: [registry],
    collect() {
      this.reset();
      for (const [name, upstream] of host.current().upstreams)
        this.set({ upstream: name }, upstream.status().state === 'connected' ? 1 : 0);
    },
  });
  new Gauge({
    name: 'toolgate_upstream_tools',
    help: 'Governed tools an upstream serves now',
    labelNames: ['upstream'],
    registers: [registry],
    collect() {
      this.reset();
      for (const [name, upstream] of host.current().upstreams)
        this.set({ upstream: name }, upstream.status().tools);
    },
  });
  new Gauge({
    name: 'toolgate_sessions_open',
    help: 'Open MCP sessions',
    registers: [registry],
    collect() {
      this.set(host.sessions());
    },
  });
  new Gauge({
    name: 'toolgate_parked_calls',
    help: "Calls of 2025-era upstreams held open while their question waits for a 2026-07-28 client's retry",
    registers: [registry],
    collect() {
      this.set(host.parkedCalls());
    },
  });
  new Gauge({
    name: 'toolgate_checkin_hold_seconds',
    help: 'How long a paused call waits for an approver before it answers CHECKIN_PENDING',
    registers: [registry],
    collect() {
      this.set(host.current().holdMs / 1000);
    },
  });
  // Pending check-ins are read from the state store: with a shared store, every instance reports the same.
  const pending = new Gauge({
    name: 'toolgate_checkins_pending',
    help: 'Check-ins waiting for a decision, by tenant',
    labelNames: ['tenant'],
    registers: [registry],
  });
  const oldest = new Gauge({
    name: 'toolgate_checkin_oldest_pending_age_seconds',
    help: 'Age of the oldest check-in still waiting for a decision, by tenant',
    labelNames: ['tenant'],
    registers: [registry],
  });
  const auditHead = new Gauge({
    name: 'toolgate_audit_head_sequence',
    help: "The audit log's head: records written to it so far (all instances sharing its store)",
    registers: [registry],
  });
  const auditPending = new Gauge({
    name: 'toolgate_audit_pending_records',
    help: "Audit records accepted but not yet in the store: with the journal, up to 100 ms of calls' records (in the journal); more while the store is down",
    registers: [registry],
  });
  const checkpointLag = new Gauge({
    name: 'toolgate_audit_checkpoint_lag_records',
    help: 'Records in the audit log after the last checkpoint this process published (audit.checkpoints)',
    registers: [registry],
  });
  const checkpointAge = new Gauge({
    name: 'toolgate_audit_checkpoint_age_seconds',
    help: 'Seconds since the last checkpoint this process published; absent until one is',
    registers: [registry],
  });
  const scrapeErrors = new Counter({
    name: 'toolgate_metrics_read_errors_total',
    help: 'A store could not be read for a scrape (pending check-ins, audit head)',
    labelNames: ['store'],
    registers: [registry],
  });

  async function readStores(): Promise<void> {
    const runtime = host.current();
    pending.reset();
    oldest.reset();
    for (const tenant of runtime.tenants.keys()) {
      pending.set({ tenant }, 0);
      oldest.set({ tenant }, 0);
    }
    try {
      const now = Date.now();
      const ages = new Map<string, number>();
      for (const record of await runtime.state.checkIns.list({ state: 'pending', decided: false })) {
        const tenant = tenantLabel(runtime, record.request.identity?.tenant);
        pending.inc({ tenant });
        const age = (now - Date.parse(record.request.createdAt)) / 1000;
        if (Number.isFinite(age) && age > (ages.get(tenant) ?? 0)) ages.set(tenant, age);
      }
      for (const [tenant, age] of ages) oldest.set({ tenant }, age);
    } catch {
      scrapeErrors.inc({ store: 'state' });
    }
    auditHead.reset();
    auditPending.reset();
    checkpointLag.reset();
    checkpointAge.reset();
    if (runtime.audit !== undefined) {
      try {
        const seq = (await runtime.audit.head())?.seq ?? 0;
        auditHead.set(seq);
        if (runtime.audit.checkpoints) {
          const last = runtime.audit.lastCheckpoint();
          checkpointLag.set(Math.max(0, seq - (last?.seq ?? 0)));
          // None published yet: as old as these metrics, so a checkpoint that never comes still alerts.
          const since = last === undefined ? startedAt : Date.parse(last.at);
          checkpointAge.set(Math.max(0, (Date.now() - since) / 1000));
        }
        auditPending.set(runtime.audit.log.pending);
      } catch {
        scrapeErrors.inc({ store: 'audit' });
      }
    }
  }
  // Per chain, the upstream's run time so far (a paused call runs once, after its resume).
  const upstreamMs = new Map<string, number>();
  const followed = new WeakSet<object>();

  function onRun(
    runtime: () => Runtime,
    event: { chainId: string; tenant?: string; toolName: string; durationMs: number },
    outcome: 'ok' | 'error',
  ) {
    const live = runtime();
    const tenant = event.tenant === undefined ? undefined : live.tenants.get(event.tenant);
    const upstream = tenant?.sourceOf.get(event.toolName) ?? OTHER;
    upstreamSeconds.observe({ upstream, outcome }, event.durationMs / 1000);
    upstreamMs.set(event.chainId, (upstreamMs.get(event.chainId) ?? 0) + event.durationMs);
    if (upstreamMs.size > MAX_PENDING_RUNS) upstreamMs.delete(upstreamMs.keys().next().value!);
  }

  function follow(runtime: Runtime): void {
    for (const tenant of runtime.tenants.values()) {
      const events = (tenant.dispatcher as Dispatcher).events;
      if (followed.has(events)) continue;
      followed.add(events);
      events.on('tool.end', (event) => onRun(host.current, event, 'ok'));
      events.on('tool.error', (event) => onRun(host.current, event, 'error'));
    }
  }

  const on = (events: EventEmitter, name: string, listener: (line: Record<string, unknown>) => void) =>
    events.on(name, (line: Record<string, unknown>) => {
      try {
        listener(line);
      } catch {
        // A metric that cannot count must not reach the call that logged.
      }
    });
  const events = host.log.events;
  on(events, 'call', (line) => {
    const runtime = host.current();
    const tenant = tenantLabel(runtime, line.tenant);
    const tool = toolLabel(runtime, line.tenant, line.tool);
    const kind = typeof line.kind === 'string' ? line.kind : 'unknown';
    const gate = kind === 'refused' || kind === 'paused' ? wordLabel(line.gate) : '';
    calls.inc({
      tenant,
      tool,
      kind,
      gate,
      rule: ruleLabel(line.rule),
      ...(principals ? { principal: textLabel(line.principal) } : {}),
    });
    if (kind === 'refused') refusals.inc({ tenant, gate, code: codeLabel(line.code) });
    if (line.checkIn === 'grant') grantsUsed.inc({ tenant });
    if (typeof line.durationMs === 'number') {
      const chainId = typeof line.chainId === 'string' ? line.chainId : undefined;
      const ran = chainId === undefined ? 0 : (upstreamMs.get(chainId) ?? 0);
      if (chainId !== undefined) upstreamMs.delete(chainId);
      chainSeconds.observe({ tenant, kind }, Math.max(0, line.durationMs - ran) / 1000);
    }
  });
  on(events, 'reload', () => reloads.inc({ result: 'applied' }));
  on(events, 'reload.refused', () => reloads.inc({ result: 'refused' }));
  on(events, 'upstream.restarted', (line) =>
    restarts.inc({ upstream: upstreamLabel(host.current(), line.upstream) }),
  );
  on(events, 'upstream.down', (line) =>
    downs.inc({ upstream: upstreamLabel(host.current(), line.upstream) }),
  );
  on(events, 'pin.changed', (line) =>
    pinsChanged.inc({ upstream: upstreamLabel(host.current(), line.upstream) }),
  );
  on(events, 'pin.accepted', (line) =>
    pinsAccepted.inc({ upstream: upstreamLabel(host.current(), line.upstream) }),
  );
  on(events, 'http.refused', (line) => httpRefused.inc({ why: wordLabel(line.why) }));

  follow(host.current());

  async function scrape(): Promise<string> {
    await readStores();
    return registry.metrics();
  }

  const tokenDigest = config.token === undefined ? undefined : digest(config.token);
  const needToken = metricsNeedToken(config, options.gatewayHost);

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = pathOf(req);
    if (path !== METRICS_PATH) return answer(res, 404, 'Not found\n');
    if (req.method !== 'GET' && req.method !== 'HEAD')
      return answer(res, 405, 'Use GET\n', { allow: 'GET, HEAD' });
    const refusal = refusedBecause(req);
    if (refusal !== undefined) {
      host.log({
        msg: 'http.refused',
        level: 'warn',
        status: refusal.status,
        why: refusal.why,
        method: req.method,
        path,
      });
      return answer(
        res,
        refusal.status,
        refusal.message,
        refusal.status === 401 ? { 'www-authenticate': 'Bearer' } : {},
      );
    }
    let body: string;
    try {
      body = await scrape();
    } catch {
      return answer(res, 500, 'Metrics could not be collected\n');
    }
    res.writeHead(200, { 'content-type': registry.contentType, 'cache-control': 'no-store' });
    res.end(req.method === 'HEAD' ? undefined : body);
  }

  function refusedBecause(
    req: IncomingMessage,
  ): { status: number; why: string; message: string } | undefined {
    if (tokenDigest !== undefined) {
      const sent = /^Bearer (.+)$/i.exec(headerOf(req.headers.authorization) ?? '')?.[1];
      if (sent === undefined)
        return { status: 401, why: 'metrics-no-token', message: 'Send the metrics bearer token\n' };
      if (!timingSafeEqual(digest(sent), tokenDigest))
        return { status: 401, why: 'metrics-bad-token', message: 'Send the metrics bearer token\n' };
      return undefined;
    }
    if (needToken)
      return {
        status: 403,
        why: 'metrics-no-token-configured',
        message: 'This listener is reachable beyond loopback: set metrics.token to serve /metrics\n',
      };
    // Bound to loopback and no token: a request from elsewhere (a forwarded port) is still refused.
    if (!isLoopback(req.socket.remoteAddress ?? ''))
      return { status: 403, why: 'metrics-not-loopback', message: 'Forbidden\n' };
    return undefined;
  }

  let server: Server | undefined;
  let url: string | undefined;
  if (config.listen !== undefined) {
    const listening = createServer(
      (req, res) => void handle(req, res).catch(() => answer(res, 500, 'Error\n')),
    );
    await new Promise<void>((resolve, reject) => {
      listening.once('error', reject);
      listening.listen(config.listen!.port, config.listen!.host ?? '127.0.0.1', () => resolve());
    });
    server = listening;
    const address = listening.address() as AddressInfo;
    const hostPart = address.family === 'IPv6' ? `[${address.address}]` : address.address;
    url = `http://${hostPart}:${address.port}${METRICS_PATH}`;
  }
  if (needToken && tokenDigest === undefined)
    host.log({
      msg: 'metrics.token-missing',
      level: 'warn',
      why: '/metrics is reachable beyond loopback and answers 403 until metrics.token is set',
    });

  return {
    registry,
    follow,
    scrape,
    ...(server === undefined ? { mount: { prefix: METRICS_PATH, handle } } : {}),
    ...(url !== undefined ? { url } : {}),
    async close() {
      if (server !== undefined)
        await new Promise<void>((resolve) => {
          server!.close(() => resolve());
          server!.closeAllConnections();
        });
      registry.clear();
    },
  };
}

function answer(
  res: ServerResponse,
  status: number,
  body: string,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, {
    'content-type': 'text/plain; charset=utf-8',
    'cache-control': 'no-store',
    ...headers,
  });
  res.end(body);
}

const digest = (text: string) => createHash('sha256').update(text).digest();

function tenantLabel(runtime: Runtime, tenant: unknown): string {
  return typeof tenant === 'string' && runtime.tenants.has(tenant) ? tenant : OTHER;
}

function toolLabel(runtime: Runtime, tenant: unknown, tool: unknown): string {
  if (typeof tenant !== 'string' || typeof tool !== 'string') return OTHER;
  return runtime.tenants.get(tenant)?.sourceOf.has(tool) === true ? tool : OTHER;
}

function upstreamLabel(runtime: Runtime, upstream: unknown): string {
  return typeof upstream === 'string' && runtime.upstreams.has(upstream) ? upstream : OTHER;
}

/** A rule name is one the policy gate was configured with: a short identifier, never call data. */
function ruleLabel(rule: unknown): string {
  if (typeof rule !== 'string') return '';
  return /^[A-Za-z0-9][A-Za-z0-9 ._:-]{0,63}$/.test(rule) ? rule : OTHER;
}

/** Gate names and refusal reasons are short identifiers the gateway chose; anything else is OTHER. */
function wordLabel(value: unknown): string {
  return typeof value === 'string' && /^[a-z][a-z0-9._-]{0,39}$/i.test(value) ? value : OTHER;
}

function codeLabel(value: unknown): string {
  return typeof value === 'string' && /^[A-Z][A-Z0-9_]{0,47}$/.test(value) ? value : 'OTHER';
}

function textLabel(value: unknown): string {
  return typeof value === 'string' ? value.slice(0, 64) : OTHER;
}

function pathOf(req: IncomingMessage): string {
  try {
    return new URL(req.url ?? '/', 'http://localhost').pathname;
  } catch {
    return '/';
  }
}

function headerOf(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
