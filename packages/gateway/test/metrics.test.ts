// /metrics scraped over HTTP from a gateway serving real calls to a real stdio upstream: calls by
// tenant, tool, kind, gate and rule; refusals by code; upstream latency; pending check-ins; upstream
// state and restarts; reloads; the bearer token; label values that never carry call data.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { createGateway, type Gateway } from '../src/gateway';
import { isLoopback, metricsNeedToken } from '../src/metrics';
import { CHECKIN_KEY, connectClient, fixtureServer, tempDir, type TempDir } from './helpers';

const BOT = 'bot-token-0123456789abcdef-0123456789';
const GLOBEX = 'globex-token-0123456789abcdef-0123456789';
const METRICS_TOKEN = 'metrics-token-0123456789abcdef';
const env = { BOT, GLOBEX, METRICS_TOKEN, KEY: CHECKIN_KEY };
const quiet = () => undefined;

function config(dir: TempDir, extra = ''): string {
  return `auth:
  tokens:
    - { token: "\${env:BOT}", identity: { tenant: acme, principal: support-bot } }
    - { token: "\${env:GLOBEX}", identity: { tenant: globex, principal: gus } }
checkIns: { key: "\${env:KEY}", hold: 100ms }
upstreams:
  shop:
    command: [node, ${JSON.stringify(fixtureServer)}]
    env: { RUN_LOG: ${JSON.stringify(`${dir.path}/runs.log`)} }
    prefix: shop_
policy:
  - { name: refund-cap, tools: [shop_refund], when: "args.amount > 1000.0", effect: deny, reason: too much }
  - { name: big-refunds-ask, tools: [shop_refund], when: "args.amount > 100.0", effect: ask, reason: ask }
tenants:
  acme: { upstreams: [shop] }
  globex: { upstreams: [shop] }
${extra}`;
}

/** The sum of every sample of `name` whose labels include `labels`; undefined when none matched. */
export function sampleOf(
  text: string,
  name: string,
  labels: Record<string, string> = {},
): number | undefined {
  let sum: number | undefined;
  for (const line of text.split('\n')) {
    if (line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (match === null || match[1] !== name) continue;
    const found: Record<string, string> = {};
    for (const pair of (match[2] ?? '').matchAll(/([a-zA-Z_]\w*)="((?:[^"\\]|\\.)*)"/g))
      found[pair[1]!] = pair[2]!;
    if (Object.entries(labels).every(([key, value]) => found[key] === value))
      sum = (sum ?? 0) + Number(match[3]);
  }
  return sum;
}

async function scrape(url: string, token?: string): Promise<{ status: number; text: string; type: string }> {
  const response = await fetch(
    url,
    token === undefined ? {} : { headers: { authorization: `Bearer ${token}` } },
  );
  return {
    status: response.status,
    text: await response.text(),
    type: response.headers.get('content-type') ?? '',
  };
}

async function eventually<T>(read: () => Promise<T>, ok: (value: T) => boolean, ms = 15_000): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (ok(value) || Date.now() > until) return value;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('/metrics on the gateway listener (loopback, no token)', () => {
  let dir: TempDir;
  let gateway: Gateway;
  let acme: Client;
  let globex: Client;

  beforeAll(async () => {
    dir = tempDir();
    const file = dir.write('toolgate.yaml', config(dir));
    gateway = await createGateway(file, { port: 0, env, log: quiet, watch: false });
    acme = await connectClient(gateway.url, BOT);
    globex = await connectClient(gateway.url, GLOBEX);
  }, 30_000);

  afterAll(async () => {
    await acme?.close();
    await globex?.close();
    await gateway?.close();
    dir?.remove();
  });

  it('counts calls by tenant, tool, kind, gate and rule, and refusals by code', async () => {
    const before = (await scrape(gateway.metricsUrl!)).text;
    expect(sampleOf(before, 'toolgate_calls_total')).toBeUndefined();

    await acme.callTool({ name: 'shop_echo', arguments: { text: 'hello' } });
    await acme.callTool({ name: 'shop_echo', arguments: { text: 'again' } });
    await globex.callTool({ name: 'shop_echo', arguments: { text: 'hi' } });
    await acme.callTool({ name: 'shop_refund', arguments: { amount: 5000, order: 'A1' } });
    await acme.callTool({ name: 'shop_slow', arguments: { ms: 120 } });

    const { status, text, type } = await scrape(gateway.metricsUrl!);
    expect(status).toBe(200);
    expect(type).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(
      sampleOf(text, 'toolgate_calls_total', { tenant: 'acme', tool: 'shop_echo', kind: 'result' }),
    ).toBe(2);
    expect(
      sampleOf(text, 'toolgate_calls_total', { tenant: 'globex', tool: 'shop_echo', kind: 'result' }),
    ).toBe(1);
    expect(
      sampleOf(text, 'toolgate_calls_total', {
        tenant: 'acme',
        tool: 'shop_refund',
        kind: 'refused',
        gate: 'policy',
        rule: 'refund-cap',
      }),
    ).toBe(1);
    expect(sampleOf(text, 'toolgate_refusals_total', { tenant: 'acme', gate: 'policy' })).toBe(1);
    expect(text).toMatch(/toolgate_refusals_total\{tenant="acme",gate="policy",code="[A-Z_]+"\} 1/);
    // Four calls ran upstream; the slow one lands above 100 ms, the chain's share of it does not.
    expect(
      sampleOf(text, 'toolgate_upstream_duration_seconds_count', { upstream: 'shop', outcome: 'ok' }),
    ).toBe(4);
    expect(
      sampleOf(text, 'toolgate_upstream_duration_seconds_bucket', {
        upstream: 'shop',
        outcome: 'ok',
        le: '0.1',
      }),
    ).toBe(3);
    expect(sampleOf(text, 'toolgate_chain_duration_seconds_count', { tenant: 'acme' })).toBe(4);
    expect(
      sampleOf(text, 'toolgate_chain_duration_seconds_bucket', { tenant: 'acme', kind: 'result', le: '0.1' }),
    ).toBe(3);
    expect(sampleOf(text, 'toolgate_upstream_up', { upstream: 'shop' })).toBe(1);
    expect(sampleOf(text, 'toolgate_upstream_state', { upstream: 'shop', state: 'connected' })).toBe(1);
    expect(sampleOf(text, 'toolgate_upstream_state', { upstream: 'shop', state: 'failed' })).toBe(0);
    expect(sampleOf(text, 'toolgate_sessions_open')).toBeGreaterThanOrEqual(2);
    expect(sampleOf(text, 'toolgate_checkin_hold_seconds')).toBe(0.1);
  });

  it('keeps call data out of every label: an unknown tool is (other), arguments never appear', async () => {
    const secret = 'sk-live-ARGUMENT-VALUE-42';
    await acme.callTool({ name: `evil_${secret}`, arguments: { text: secret } });
    await acme.callTool({ name: 'shop_echo', arguments: { text: secret } });
    await acme.callTool({ name: 'shop_refund', arguments: { amount: 99999, order: secret } });
    const { text } = await scrape(gateway.metricsUrl!);
    expect(text).not.toContain(secret);
    expect(text).not.toContain('evil_');
    expect(sampleOf(text, 'toolgate_calls_total', { tenant: 'acme', tool: '(other)' })).toBe(1);
    // principals are not labels unless configured
    expect(text).not.toContain('support-bot');
  });

  it('reports a check-in waiting past its hold, by tenant, with its age', async () => {
    const result = await acme.callTool({ name: 'shop_refund', arguments: { amount: 500, order: 'B2' } });
    expect(JSON.stringify(result)).toContain('CHECKIN_PENDING');
    const { text } = await scrape(gateway.metricsUrl!);
    expect(sampleOf(text, 'toolgate_checkins_pending', { tenant: 'acme' })).toBe(1);
    expect(sampleOf(text, 'toolgate_checkins_pending', { tenant: 'globex' })).toBe(0);
    expect(
      sampleOf(text, 'toolgate_checkin_oldest_pending_age_seconds', { tenant: 'acme' }),
    ).toBeGreaterThanOrEqual(0.1);
  });

  it('counts an upstream that went down and came back', async () => {
    await acme.callTool({ name: 'shop_crash', arguments: {} }).catch(() => undefined);
    const { text } = await eventually(
      () => scrape(gateway.metricsUrl!),
      ({ text }) => sampleOf(text, 'toolgate_upstream_restarts_total', { upstream: 'shop' }) === 1,
    );
    expect(sampleOf(text, 'toolgate_upstream_restarts_total', { upstream: 'shop' })).toBe(1);
    expect(sampleOf(text, 'toolgate_upstream_down_total', { upstream: 'shop' })).toBe(1);
    expect(sampleOf(text, 'toolgate_upstream_up', { upstream: 'shop' })).toBe(1);
  }, 20_000);

  it('exports every metric the example dashboard and alert rules read', async () => {
    const { text } = await scrape(gateway.metricsUrl!);
    const exported = new Set([...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map((type) => type[1]!));
    const exists = (name: string) =>
      exported.has(name) || exported.has(name.replace(/_(bucket|count|sum)$/, ''));
    const monitoring = join(__dirname, '..', 'monitoring');
    const read = [
      readFileSync(join(monitoring, 'grafana-dashboard.json'), 'utf8'),
      readFileSync(join(monitoring, 'alerts.yaml'), 'utf8'),
    ].join('\n');
    const used = new Set([...read.matchAll(/\b(toolgate_[a-z_]+)/g)].map((name) => name[1]!));
    expect(used.size).toBeGreaterThan(15);
    expect([...used].filter((name) => !exists(name))).toEqual([]);
  });

  it('answers only GET /metrics', async () => {
    expect((await fetch(gateway.metricsUrl!, { method: 'POST', body: '' })).status).toBe(405);
    expect((await fetch(new URL('/metrics/x', gateway.metricsUrl!))).status).toBe(404);
  });
});

describe('/metrics reloads and the token', () => {
  let dir: TempDir;

  beforeEach(() => (dir = tempDir()));
  afterEach(() => dir.remove());

  it('counts reloads applied and refused', async () => {
    const file = dir.write('toolgate.yaml', config(dir));
    const gateway = await createGateway(file, { port: 0, env, log: quiet, watch: false });
    try {
      const zero = (await scrape(gateway.metricsUrl!)).text;
      expect(sampleOf(zero, 'toolgate_reloads_total', { result: 'applied' })).toBe(0);
      dir.write('toolgate.yaml', config(dir, 'telemetry: { serviceName: renamed }\n'));
      expect((await gateway.reload()).ok).toBe(true);
      dir.write('toolgate.yaml', config(dir, 'nonsense: true\n'));
      expect((await gateway.reload()).ok).toBe(false);
      const { text } = await scrape(gateway.metricsUrl!);
      expect(sampleOf(text, 'toolgate_reloads_total', { result: 'applied' })).toBe(1);
      expect(sampleOf(text, 'toolgate_reloads_total', { result: 'refused' })).toBe(1);
    } finally {
      await gateway.close();
    }
  }, 30_000);

  it('with metrics.token, refuses a missing or wrong token and never echoes one', async () => {
    const lines: string[] = [];
    const file = dir.write('toolgate.yaml', config(dir, 'metrics: { token: "${env:METRICS_TOKEN}" }\n'));
    const gateway = await createGateway(file, {
      port: 0,
      env,
      log: (line) => lines.push(line),
      watch: false,
    });
    try {
      const none = await scrape(gateway.metricsUrl!);
      expect(none.status).toBe(401);
      const wrong = await scrape(gateway.metricsUrl!, 'metrics-token-0123456789abcdeX');
      expect(wrong.status).toBe(401);
      expect(wrong.text).not.toContain('abcdeX');
      // An MCP bearer token is not a metrics token.
      expect((await scrape(gateway.metricsUrl!, BOT)).status).toBe(401);
      const good = await scrape(gateway.metricsUrl!, METRICS_TOKEN);
      expect(good.status).toBe(200);
      expect(good.text).toContain('toolgate_upstream_up{upstream="shop"} 1');
      expect(good.text).not.toContain(METRICS_TOKEN);
      expect(lines.join('\n')).not.toContain('abcdeX');
      expect(sampleOf(good.text, 'toolgate_http_refused_total', { why: 'metrics-bad-token' })).toBe(2);
      expect(sampleOf(good.text, 'toolgate_http_refused_total', { why: 'metrics-no-token' })).toBe(1);
    } finally {
      await gateway.close();
    }
  }, 30_000);

  it('serves on metrics.listen apart from MCP, and not on the gateway listener', async () => {
    const file = dir.write(
      'toolgate.yaml',
      config(dir, 'metrics: { listen: { port: 0 }, principals: true }\n'),
    );
    const gateway = await createGateway(file, { port: 0, env, log: quiet, watch: false });
    try {
      expect(new URL(gateway.metricsUrl!).port).not.toBe(new URL(gateway.url).port);
      expect((await fetch(new URL('/metrics', gateway.url))).status).toBe(404);
      const client = await connectClient(gateway.url, BOT);
      await client.callTool({ name: 'shop_echo', arguments: { text: 'x' } });
      await client.close();
      const { text } = await scrape(gateway.metricsUrl!);
      expect(sampleOf(text, 'toolgate_calls_total', { tenant: 'acme', principal: 'support-bot' })).toBe(1);
    } finally {
      await gateway.close();
    }
  }, 30_000);

  it('is off with metrics.enabled: false', async () => {
    const file = dir.write('toolgate.yaml', config(dir, 'metrics: { enabled: false }\n'));
    const gateway = await createGateway(file, { port: 0, env, log: quiet, watch: false });
    try {
      expect(gateway.metricsUrl).toBeUndefined();
      expect((await fetch(new URL('/metrics', gateway.url))).status).toBe(404);
    } finally {
      await gateway.close();
    }
  }, 30_000);
});

describe('who may scrape without a token', () => {
  it('only a loopback-bound endpoint', () => {
    for (const host of ['127.0.0.1', '127.8.0.1', 'localhost', '::1', '[::1]'])
      expect(isLoopback(host)).toBe(true);
    for (const host of ['0.0.0.0', '::', '10.0.0.1', '128.0.0.1', 'localhost.evil.com', '127.0.0.1.nip.io'])
      expect(isLoopback(host)).toBe(false);
    expect(metricsNeedToken(undefined, '0.0.0.0')).toBe(true);
    expect(metricsNeedToken(undefined, '127.0.0.1')).toBe(false);
    expect(metricsNeedToken({ listen: { port: 9464 } }, '0.0.0.0')).toBe(false);
    expect(metricsNeedToken({ listen: { host: '::', port: 9464 } }, '127.0.0.1')).toBe(true);
  });
});
