// A real Prometheus (.ci/services/prometheus.sh) scrapes a gateway serving real calls, and PromQL over
// its HTTP API answers the counts the calls produced; promtool checks the example alert rules.
// Skipped, with a line saying how to run it, when no Prometheus was started.

import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { promisify } from 'node:util';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { createGateway, type Gateway } from '../src/gateway';
import { CHECKIN_KEY, connectClient, fixtureServer, repoRoot, tempDir, type TempDir } from './helpers';

const PROMETHEUS = process.env.TOOLGATE_PROMETHEUS_URL;
const TARGETS = process.env.TOOLGATE_PROMETHEUS_TARGETS;
// promtool ships with Prometheus; without the service script, one on PATH will do.
const PROMTOOL =
  process.env.TOOLGATE_PROMTOOL ||
  (process.env.PATH ?? '')
    .split(delimiter)
    .map((folder) => join(folder, 'promtool'))
    .find((file) => existsSync(file));
const BOT = 'bot-token-0123456789abcdef-0123456789';
const GLOBEX = 'globex-token-0123456789abcdef-0123456789';

const withPrometheus = PROMETHEUS !== undefined && TARGETS !== undefined ? describe : describe.skip;
const withPromtool = PROMTOOL !== undefined && PROMTOOL !== '' ? it : it.skip;

/** One number from an instant PromQL query; undefined while the query has no result yet. */
async function query(promql: string): Promise<number | undefined> {
  const url = new URL('/api/v1/query', PROMETHEUS);
  url.searchParams.set('query', promql);
  const body = (await (await fetch(url)).json()) as {
    status: string;
    data?: { result: { value: [number, string] }[] };
    error?: string;
  };
  if (body.status !== 'success') throw new Error(`PromQL ${promql}: ${body.error ?? body.status}`);
  const first = body.data?.result[0];
  return first === undefined ? undefined : Number(first.value[1]);
}

/** Polls until the query answers `expected` (Prometheus scrapes every second), or gives the last answer. */
async function settlesAt(promql: string, expected: number, ms = 30_000): Promise<number | undefined> {
  const until = Date.now() + ms;
  let last: number | undefined;
  while (Date.now() < until) {
    last = await query(promql);
    if (last === expected) return last;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  return last;
}

withPrometheus('a real Prometheus scraping the gateway', () => {
  let dir: TempDir;
  let gateway: Gateway;
  let acme: Client;
  let globex: Client;
  const run = randomUUID();
  const target = join(TARGETS ?? '', `${run}.json`);

  beforeAll(async () => {
    dir = tempDir();
    const file = dir.write(
      'toolgate.yaml',
      `auth:
  tokens:
    - { token: "\${env:BOT}", identity: { tenant: acme, principal: support-bot } }
    - { token: "\${env:GLOBEX}", identity: { tenant: globex, principal: gus } }
checkIns: { key: "\${env:KEY}", hold: 100ms }
upstreams:
  shop:
    command: [node, ${JSON.stringify(fixtureServer)}]
    prefix: shop_
policy:
  - { name: refund-cap, tools: [shop_refund], when: "args.amount > 1000.0", effect: deny, reason: too much }
tenants:
  acme: { upstreams: [shop] }
  globex: { upstreams: [shop] }
`,
    );
    gateway = await createGateway(file, {
      port: 0,
      env: { BOT, GLOBEX, KEY: CHECKIN_KEY },
      log: () => undefined,
      watch: false,
    });
    acme = await connectClient(gateway.url, BOT);
    globex = await connectClient(gateway.url, GLOBEX);
    // File-based discovery: Prometheus finds this gateway by the file, and labels its series `run`.
    writeFileSync(target, JSON.stringify([{ targets: [new URL(gateway.url).host], labels: { run } }]));
  }, 30_000);

  afterAll(async () => {
    rmSync(target, { force: true });
    await acme?.close();
    await globex?.close();
    await gateway?.close();
    dir?.remove();
  });

  it('scrapes it, and PromQL answers the calls by tenant, outcome, gate, rule and code', async () => {
    expect(await settlesAt(`up{run="${run}"}`, 1)).toBe(1);
    for (let i = 0; i < 3; i++) await acme.callTool({ name: 'shop_echo', arguments: { text: `a${i}` } });
    await globex.callTool({ name: 'shop_echo', arguments: { text: 'g' } });
    await acme.callTool({ name: 'shop_refund', arguments: { amount: 5000, order: 'A1' } });

    expect(await settlesAt(`sum(toolgate_calls_total{run="${run}",tenant="acme",kind="result"})`, 3)).toBe(3);
    expect(await settlesAt(`sum(toolgate_calls_total{run="${run}",tenant="globex"})`, 1)).toBe(1);
    expect(
      await settlesAt(
        `sum(toolgate_calls_total{run="${run}",tenant="acme",kind="refused",gate="policy",rule="refund-cap"})`,
        1,
      ),
    ).toBe(1);
    expect(await settlesAt(`sum by (gate) (toolgate_refusals_total{run="${run}",gate="policy"})`, 1)).toBe(1);
    expect(
      await settlesAt(`sum(toolgate_upstream_duration_seconds_count{run="${run}",upstream="shop"})`, 4),
    ).toBe(4);
    expect(await settlesAt(`toolgate_upstream_up{run="${run}",upstream="shop"}`, 1)).toBe(1);

    // More calls during the run: the next scrapes carry them.
    await acme.callTool({ name: 'shop_echo', arguments: { text: 'later' } });
    await acme.callTool({ name: 'shop_echo', arguments: { text: 'later' } });
    expect(await settlesAt(`sum(toolgate_calls_total{run="${run}",tenant="acme",kind="result"})`, 5)).toBe(5);
    // One series per tenant, tool, kind, gate and rule seen: three, whatever the arguments were.
    expect(await settlesAt(`count(toolgate_calls_total{run="${run}"})`, 3)).toBe(3);
  }, 90_000);
});

withPrometheus('the example dashboard', () => {
  it('asks Prometheus only queries it accepts', async () => {
    const dashboard = JSON.parse(
      readFileSync(join(repoRoot, 'packages', 'gateway', 'monitoring', 'grafana-dashboard.json'), 'utf8'),
    ) as { panels: { targets?: { expr: string }[] }[] };
    const exprs = dashboard.panels.flatMap((panel) => (panel.targets ?? []).map((target) => target.expr));
    expect(exprs.length).toBeGreaterThan(20);
    for (const expr of exprs) {
      // Grafana's variables as "All" would fill them.
      const promql = expr.replace(/\$__rate_interval/g, '1m').replace(/\$(job|instance|tenant)\b/g, '.*');
      await expect(query(promql).then(() => 'ok')).resolves.toBe('ok');
    }
  });
});

describe('the example alert rules', () => {
  withPromtool('pass promtool check rules', async () => {
    const { stdout } = await promisify(execFile)(PROMTOOL!, [
      'check',
      'rules',
      join(repoRoot, 'packages', 'gateway', 'monitoring', 'alerts.yaml'),
    ]);
    expect(stdout).toMatch(/SUCCESS: \d+ rules found/);
  });

  withPromtool('fire as intended under promtool test rules', async () => {
    const { stdout } = await promisify(execFile)(PROMTOOL!, [
      'test',
      'rules',
      join(repoRoot, 'packages', 'gateway', 'monitoring', 'alerts.test.yaml'),
    ]);
    expect(stdout).toMatch(/SUCCESS/);
  });
});
