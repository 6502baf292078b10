// pnpm bench:gateway — the gateway as users run it (a bearer token, five policy rules that apply to
// the tool, the audit log on, a SQLite state store) against the same stdio upstream as: a direct
// SDK client (the floor), a plain pass-through proxy on the SDK, the same gateway with the audit log
// off, and the non-governing proxies users run from npm (mcp-proxy, supergateway). Per target: at
// concurrency 1 on one session, and at concurrency 32 spread over several sessions (8 × 4 by
// default): added p50/p99 per tools/call over the floor, calls per second, and the proxy process's
// own CPU per call (user+system from /proc; the upstream processes are not counted for anyone).
// Then memory per open session for the gateway and the SDK pass-through (mcp-proxy and
// supergateway start one upstream process per session, so theirs is that process). The governing
// gateway is measured twice over: with 2025-11-25 clients (sessions) and with 2026-07-28 clients
// (the SDK v2 client pinned to it: stateless, no session). The governing gateway and its audit-off
// twin run as three processes each (BENCH_AUDIT_TWINS), their figures taken together, and each round
// visits the targets from a different first one. Ratios in one run; nothing asserted.

import { spawn, type ChildProcess } from 'node:child_process';
import { setMaxListeners } from 'node:events';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { connect, createServer as createNetServer, type AddressInfo } from 'node:net';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  Client as ModernClient,
  StreamableHTTPClientTransport as ModernTransport,
} from '@modelcontextprotocol/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { cpuMsOf, gatewayCliArgs, writeGoverningConfig } from './gateway/processes';

// The SDK client's transport adds an abort listener per request to one signal; 32 in flight for
// thousands of calls trips Node's leak warning without being one.
setMaxListeners(100_000);

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '..');
const require = createRequire(join(here, 'package.json'));
const upstream = join(here, 'gateway', 'upstream.mjs');
const TOKEN = 'bench-token-0123456789abcdef0123';
const CALLS_C1 = Number(process.env['BENCH_CALLS'] ?? 1500);
const CALLS_C32 = CALLS_C1 * 2;
// The calls of each target go in ROUNDS slices, interleaved with every other target's: more, shorter
// slices spread a change in the machine's speed (a shared host's) over every target more evenly.
const ROUNDS = Number(process.env['BENCH_ROUNDS'] ?? 10);
// Calls each target takes before anything is timed, half one at a time and half at concurrency 32:
// a Node process is still compiling its hot code (V8's helper threads, counted in CPU per call) for
// thousands of calls, and a gateway has more code to warm than a bare proxy. The governing gateway
// optimizes ~1,600 functions over its first 12,000 calls and a few dozen per 4,000 after 16,000
// (bench/gateway/jit-phases.ts): the figures are a long-running process's.
const WARMUP = Number(process.env['BENCH_WARMUP'] ?? 16_000);
/** How long a proxy may idle after a slice of calls before its CPU time is read. */
const SETTLE_MS = Number(process.env['BENCH_SETTLE_MS'] ?? 100);
const SESSIONS = Number(process.env['BENCH_SESSIONS'] ?? 1000);
// Concurrency 32 as many agents make it: LOAD_SESSIONS sessions with PER_SESSION calls in flight each.
const LOAD_SESSIONS = Number(process.env['BENCH_LOAD_SESSIONS'] ?? 8);
const PER_SESSION = 32 / LOAD_SESSIONS;
const GATEWAY = 'toolgate gateway (governing: policy, audit, SQLite)';
const GATEWAY_NO_AUDIT = 'the same gateway, audit off';
const GATEWAY_MEMORY = 'the same gateway, audit on, in-memory store';
// BENCH_AUDIT_MEMORY=1 adds the governing gateway on an in-memory store: what the audit costs without
// SQLite's commits (each one a synchronous fsync on the event loop, `synchronous=FULL`).
const WITH_MEMORY_STORE = process.env['BENCH_AUDIT_MEMORY'] === '1';
const GATEWAY_RECORD = 'the same gateway, audit on, durability: record';
// BENCH_AUDIT_RECORD=1 adds the governing gateway with per-record durability (every call waits for its
// own commit and fsync) beside the default, a commit window shared by the calls in it.
const WITH_RECORD_DURABILITY = process.env['BENCH_AUDIT_RECORD'] === '1';
// BENCH_AUDIT_WINDOW=20ms adds the governing gateway with that commit window beside the default (5 ms):
// one call at a time, a longer window puts more calls in one batch (one transaction, one signature).
const AUDIT_WINDOW = process.env['BENCH_AUDIT_WINDOW'];
// BENCH_GATEWAY_BEFORE=DIR (a checkout of another commit whose node_modules link to this one's) adds
// the governing gateway run from DIR's sources: a before/after of the gateway's own code in one run.
const BEFORE_TREE = process.env['BENCH_GATEWAY_BEFORE'];
// BENCH_GATEWAY_BEFORE_AUDIT=off runs that gateway with the audit off, beside the audit-off twin.
const BEFORE_AUDIT = process.env['BENCH_GATEWAY_BEFORE_AUDIT'] !== 'off';
// BENCH_MODERN=0 leaves out the 2026-07-28 clients (a governing gateway process of their own).
const WITH_MODERN = process.env['BENCH_MODERN'] !== '0';
const GATEWAY_BEFORE = `the governing gateway from ${BEFORE_TREE ?? ''} (before)`;
const GATEWAY_WINDOW = `the same gateway, audit on, commitWindow: ${AUDIT_WINDOW ?? ''}`;
// BENCH_SESSIONS=0 skips the memory-per-session part.
// BENCH_AUDIT_TWINS=N starts the governing gateway N times with the audit on and N times with it off
// (default 3), each in a folder of its own, and takes the audit's ratio (and the governing gateway's
// figures against the other proxies) over all of them: two processes of the same code differ by as
// much as 8% in CPU per call on a shared machine (how V8 compiled and sized each), which one pair
// cannot tell from a 1.1× goal.
const TWINS = Math.max(1, Number(process.env['BENCH_AUDIT_TWINS'] ?? 3));
const twinName = (name: string, twin: number) => (twin === 1 ? name : `${name} #${twin}`);

function bin(pkg: string, path: string): string {
  return join(dirname(require.resolve(`${pkg}/package.json`)), path);
}

/** What the bench asks of a client, whichever SDK and revision it speaks. */
interface BenchClient {
  callTool(params: { name: string; arguments: Record<string, unknown> }): Promise<unknown>;
  close(): Promise<void>;
}

interface Target {
  readonly name: string;
  readonly pid?: number;
  connect(): Promise<BenchClient>;
  stop(): Promise<void>;
}

const GATEWAY_MODERN = 'toolgate gateway (governing), 2026-07-28 clients';

/**
 * A governing gateway of its own (`target`, started for it), called by SDK v2 clients in revision
 * 2026-07-28. Not the 2025-11-25 target's process: a process serving both read the 2025-11-25 slices
 * 17–30% low at c=32 against an identical process serving only them (an A/A run), so each has its own.
 */
function modernTwin(target: Target & { readonly url: string }): Target {
  return {
    name: GATEWAY_MODERN,
    ...(target.pid !== undefined ? { pid: target.pid } : {}),
    connect: async () => {
      const client = new ModernClient(
        { name: 'bench', version: '1.0.0' },
        { versionNegotiation: { mode: { pin: '2026-07-28' } } },
      );
      await client.connect(
        new ModernTransport(new URL(target.url), {
          requestInit: { headers: { authorization: `Bearer ${TOKEN}` } },
        }),
      );
      return client as unknown as BenchClient;
    },
    stop: () => target.stop(),
  };
}

/** Starts a child and resolves with the first http URL it prints (stdout or stderr). */
function startChild(
  command: string,
  args: string[],
  env: Record<string, string> = {},
  cwd = root,
): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(command, args, {
    cwd,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return new Promise((done, fail) => {
    let seen = '';
    const timer = setTimeout(
      () => fail(new Error(`${command} ${args.join(' ')} did not start:\n${seen}`)),
      30_000,
    );
    const look = (chunk: Buffer) => {
      seen += chunk.toString();
      const match = /(http:\/\/(?:127\.0\.0\.1|localhost|\[::1\]):\d+)(\/mcp)?/.exec(seen);
      if (match !== null) {
        clearTimeout(timer);
        child.stdout!.off('data', look);
        child.stderr!.off('data', look);
        child.stdout!.resume();
        child.stderr!.resume();
        done({ child, url: `${match[1]}/mcp` });
      }
    };
    child.stdout!.on('data', look);
    child.stderr!.on('data', look);
    child.on('exit', (code) => fail(new Error(`${command} exited ${code}:\n${seen}`)));
  });
}

function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const server = createNetServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => done(port));
    });
    server.on('error', fail);
  });
}

/** Starts a child that prints no URL, and resolves once its port accepts connections. */
async function startOnPort(
  command: string,
  args: string[],
  port: number,
): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(command, args, { cwd: root, stdio: ['ignore', 'ignore', 'ignore'] });
  for (let tries = 0; tries < 300; tries++) {
    if (child.exitCode !== null) throw new Error(`${args[0]} exited ${child.exitCode}`);
    const open = await new Promise<boolean>((done) => {
      const socket = connect(port, '127.0.0.1', () => {
        socket.end();
        done(true);
      });
      socket.on('error', () => done(false));
    });
    if (open) return { child, url: `http://127.0.0.1:${port}/mcp` };
    await new Promise((done) => setTimeout(done, 100));
  }
  throw new Error(`${args[0]} did not listen on ${port}`);
}

const stopChild = (child: ChildProcess) =>
  new Promise<void>((done) => {
    if (child.exitCode !== null) return done();
    child.once('exit', () => done());
    child.kill('SIGTERM');
    setTimeout(() => child.kill('SIGKILL'), 5000).unref();
  });

function httpTarget(
  name: string,
  started: { child: ChildProcess; url: string },
  headers: Record<string, string> = {},
): Target & { readonly url: string } {
  return {
    name,
    url: started.url,
    ...(started.child.pid !== undefined ? { pid: started.child.pid } : {}),
    connect: async () => {
      const client = new Client({ name: 'bench', version: '1.0.0' });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(started.url), { requestInit: { headers } }),
      );
      return client;
    },
    stop: () => stopChild(started.child),
  };
}

async function floorTarget(): Promise<Target> {
  return {
    name: 'direct SDK client → server (floor)',
    connect: async () => {
      const client = new Client({ name: 'bench', version: '1.0.0' });
      await client.connect(new StdioClientTransport({ command: process.execPath, args: [upstream] }));
      return client;
    },
    stop: async () => {},
  };
}

async function gatewayTarget(
  dir: string,
  name: string,
  audit: boolean,
  memoryStore = false,
  durability?: 'record',
  commitWindow?: string,
  tree = root,
): Promise<Target & { readonly url: string }> {
  const config = writeGoverningConfig(dir, {
    audit,
    memoryStore,
    maxSessions: SESSIONS + 100,
    ...(durability === undefined ? {} : { durability }),
    ...(commitWindow === undefined ? {} : { commitWindow }),
  });
  const started = await startChild(
    process.execPath,
    [...gatewayCliArgs(tree), 'gateway', '--config', config, '--port', '0'],
    {},
    tree,
  );
  started.child.stderr!.resume();
  return httpTarget(name, started, { authorization: `Bearer ${TOKEN}` });
}

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;

interface Run {
  readonly p50: number;
  readonly p99: number;
  readonly perSecond: number;
  /** The proxy process's CPU per call in µs. */
  readonly cpuPerCall?: number;
  /** The same per round, in the order the rounds ran. */
  readonly cpuRounds?: readonly number[];
}

interface Sample {
  readonly latencies: number[];
  wall: number;
  calls: number;
  /** The proxy process's own CPU over these calls, in ms (no pid: not measured). */
  cpu: number;
  /** CPU per call of each round, in µs (measured slices only). */
  readonly rounds?: number[];
}

/** Adds `calls` calls to `into`, `perSession` at a time on each of `sessions`. */
async function measure(
  sessions: readonly BenchClient[],
  calls: number,
  perSession: number,
  into: Sample,
  pid?: number,
): Promise<void> {
  let next = 0;
  const cpuBefore = pid === undefined ? 0 : cpuMsOf(pid);
  const started = performance.now();
  const worker = async (client: BenchClient) => {
    while (next < calls) {
      next += 1;
      const t0 = performance.now();
      const result = (await client.callTool({ name: 'echo', arguments: { text: 'ping' } })) as {
        isError?: unknown;
        content?: unknown;
      };
      into.latencies.push(performance.now() - t0);
      if (result.isError === true) throw new Error(`a bench call failed: ${JSON.stringify(result.content)}`);
    }
  };
  await Promise.all(sessions.flatMap((client) => Array.from({ length: perSession }, () => worker(client))));
  into.wall += (performance.now() - started) / 1000;
  into.calls += calls;
  if (pid === undefined) return;
  // Work the slice left behind (a commit window's batch, a GC, the log lines of the last turn) is
  // counted in it, not in the next slice of the same process (the 2026-07-28 twin shares one).
  await new Promise((done) => setTimeout(done, SETTLE_MS));
  const used = cpuMsOf(pid) - cpuBefore;
  into.cpu += used;
  into.rounds?.push((used / calls) * 1000);
}

function summary(sample: Sample, pid?: number): Run {
  const sorted = [...sample.latencies].sort((a, b) => a - b);
  return {
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    perSecond: sample.calls / sample.wall,
    ...(pid !== undefined
      ? { cpuPerCall: (sample.cpu / sample.calls) * 1000, cpuRounds: sample.rounds ?? [] }
      : {}),
  };
}

function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)![1]) / 1024;
}

/**
 * MB of RSS per 1,000 open sessions: the least-squares slope of RSS over the count of open sessions,
 * read after each of 5 equal steps, so one heap growth or GC at the wrong moment moves it less than
 * a before/after difference.
 */
async function sessionMemory(target: Target): Promise<number | undefined> {
  if (target.pid === undefined || process.platform !== 'linux') return undefined;
  const points: [number, number][] = [[0, rssMb(target.pid)]];
  const clients: BenchClient[] = [];
  for (let step = 1; step <= 5; step++) {
    while (clients.length < (SESSIONS * step) / 5) clients.push(await target.connect());
    await new Promise((done) => setTimeout(done, 300));
    points.push([clients.length, rssMb(target.pid)]);
  }
  await Promise.all(clients.map((client) => client.close().catch(() => undefined)));
  const meanX = points.reduce((sum, [x]) => sum + x, 0) / points.length;
  const meanY = points.reduce((sum, [, y]) => sum + y, 0) / points.length;
  const covariance = points.reduce((sum, [x, y]) => sum + (x - meanX) * (y - meanY), 0);
  const variance = points.reduce((sum, [x]) => sum + (x - meanX) ** 2, 0);
  return (covariance / variance) * 1000;
}

const fmt = (ms: number) => `${ms.toFixed(2)} ms`;

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'toolgate-bench-gateway-'));
  const targets: Target[] = [];
  try {
    targets.push(await floorTarget());
    targets.push(
      httpTarget(
        'plain SDK pass-through proxy',
        await startChild(process.execPath, [
          '--import',
          'tsx',
          join(here, 'gateway', 'passthrough.ts'),
          process.execPath,
          upstream,
        ]),
      ),
    );
    for (let twin = 1; twin <= TWINS; twin++) {
      for (const audit of [true, false]) {
        const name = twinName(audit ? GATEWAY : GATEWAY_NO_AUDIT, twin);
        const own = join(dir, `${audit ? 'on' : 'off'}-${twin}`);
        mkdirSync(own);
        targets.push(await gatewayTarget(own, name, audit));
      }
    }
    if (WITH_MEMORY_STORE) targets.push(await gatewayTarget(dir, GATEWAY_MEMORY, true, true));
    if (WITH_RECORD_DURABILITY) targets.push(await gatewayTarget(dir, GATEWAY_RECORD, true, false, 'record'));
    if (AUDIT_WINDOW !== undefined)
      targets.push(await gatewayTarget(dir, GATEWAY_WINDOW, true, false, undefined, AUDIT_WINDOW));
    if (BEFORE_TREE !== undefined) {
      // Its own folder: the same configuration file and database names as the governing gateway's.
      const beforeDir = join(dir, 'before');
      mkdirSync(beforeDir);
      targets.push(
        await gatewayTarget(
          beforeDir,
          GATEWAY_BEFORE,
          BEFORE_AUDIT,
          false,
          undefined,
          undefined,
          BEFORE_TREE,
        ),
      );
    }
    const proxyPort = await freePort();
    targets.push(
      httpTarget(
        'mcp-proxy (npm)',
        await startOnPort(
          process.execPath,
          [
            bin('mcp-proxy', 'dist/bin/mcp-proxy.mjs'),
            '--port',
            String(proxyPort),
            '--host',
            '127.0.0.1',
            '--server',
            'stream',
            '--',
            process.execPath,
            upstream,
          ],
          proxyPort,
        ),
      ),
    );
    const sgPort = await freePort();
    targets.push(
      httpTarget(
        'supergateway (npm)',
        await startOnPort(
          process.execPath,
          [
            bin('supergateway', 'dist/index.js'),
            '--stdio',
            `${process.execPath} ${upstream}`,
            '--outputTransport',
            'streamableHttp',
            '--stateful',
            '--port',
            String(sgPort),
            '--logLevel',
            'none',
          ],
          sgPort,
        ),
      ),
    );

    // Last, so the memory section's targets stay where they are.
    if (WITH_MODERN) {
      const modernDir = join(dir, 'modern');
      mkdirSync(modernDir);
      targets.push(modernTwin(await gatewayTarget(modernDir, GATEWAY_MODERN, true)));
    }

    console.log(
      `bench:gateway — node ${process.version}, ${cpus().length} cores, load ${loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}`,
    );
    console.log(
      `${CALLS_C1} calls at concurrency 1 (one session), ${CALLS_C32} at concurrency 32 (${LOAD_SESSIONS} sessions × ${PER_SESSION} calls in flight), after ${WARMUP} warm-up calls, in ${ROUNDS} interleaved rounds\n`,
    );
    // Every target's sessions stay open, and the calls go in ROUNDS interleaved slices, so a change
    // in the machine's load over the run lands on every target alike.
    const sessions = new Map<Target, BenchClient[]>();
    for (const target of targets) {
      const opened: BenchClient[] = [];
      for (let index = 0; index < LOAD_SESSIONS; index++) opened.push(await target.connect());
      await measure(opened.slice(0, 1), WARMUP / 2, 1, { latencies: [], wall: 0, calls: 0, cpu: 0 });
      await measure(opened, WARMUP / 2, PER_SESSION, { latencies: [], wall: 0, calls: 0, cpu: 0 });
      sessions.set(target, opened);
    }
    const empty = (): Sample => ({ latencies: [], wall: 0, calls: 0, cpu: 0, rounds: [] });
    const samples = new Map(targets.map((target) => [target, { c1: empty(), c32: empty() }]));
    for (let round = 0; round < ROUNDS; round++) {
      // Each round starts one target further on, so no target always runs after the same one.
      const order = [...targets.slice(round % targets.length), ...targets.slice(0, round % targets.length)];
      for (const target of order) {
        const first = sessions.get(target)!.slice(0, 1);
        await measure(first, CALLS_C1 / ROUNDS, 1, samples.get(target)!.c1, target.pid);
      }
      for (const target of order)
        await measure(
          sessions.get(target)!,
          CALLS_C32 / ROUNDS,
          PER_SESSION,
          samples.get(target)!.c32,
          target.pid,
        );
    }
    await Promise.all([...sessions.values()].flat().map((client) => client.close()));
    const results = new Map<string, { c1: Run; c32: Run }>();
    for (const [target, { c1, c32 }] of samples)
      results.set(target.name, { c1: summary(c1, target.pid), c32: summary(c32, target.pid) });
    // The twins' slices taken together: calls, CPU and latencies summed, each round's CPU per call
    // over all of them.
    const pooled = (name: string): { c1: Run; c32: Run } => {
      const twins = Array.from({ length: TWINS }, (_, i) =>
        targets.find((t) => t.name === twinName(name, i + 1))!,
      );
      const pool = (key: 'c1' | 'c32'): Run => {
        const all = twins.map((twin) => samples.get(twin)![key]);
        const merged: Sample = {
          latencies: all.flatMap((sample) => sample.latencies),
          wall: all.reduce((sum, sample) => sum + sample.wall, 0),
          calls: all.reduce((sum, sample) => sum + sample.calls, 0),
          cpu: all.reduce((sum, sample) => sum + sample.cpu, 0),
          rounds: all[0]!.rounds!.map(
            (_, r) => all.reduce((sum, sample) => sum + sample.rounds![r]!, 0) / all.length,
          ),
        };
        return summary(merged, twins[0]!.pid);
      };
      return { c1: pool('c1'), c32: pool('c32') };
    };
    const perTwin = (name: string, key: 'c1' | 'c32') =>
      Array.from({ length: TWINS }, (_, i) =>
        results.get(twinName(name, i + 1))![key].cpuPerCall!.toFixed(0),
      ).join(' / ');
    const floor = results.get(targets[0]!.name)!;
    const sdk = results.get(targets[1]!.name)!;
    const cpu = (run: Run) => (run.cpuPerCall === undefined ? '—' : `${run.cpuPerCall.toFixed(0)} µs`);
    const rows = [
      '| target | c=1 p50 | c=1 p99 | added p50 / p99 over floor | calls/s c=1 | CPU/call c=1 | c=32 p50 | c=32 p99 | calls/s c=32 | CPU/call c=32 |',
      '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
    ];
    for (const [name, { c1, c32 }] of results) {
      const added =
        name === targets[0]!.name ? '—' : `${fmt(c1.p50 - floor.c1.p50)} / ${fmt(c1.p99 - floor.c1.p99)}`;
      rows.push(
        `| ${name} | ${fmt(c1.p50)} | ${fmt(c1.p99)} | ${added} | ${c1.perSecond.toFixed(0)} | ${cpu(c1)} | ${fmt(c32.p50)} | ${fmt(c32.p99)} | ${c32.perSecond.toFixed(0)} | ${cpu(c32)} |`,
      );
    }
    console.log(rows.join('\n'));
    const gateway = pooled(GATEWAY);
    const noAudit = pooled(GATEWAY_NO_AUDIT);
    if (TWINS > 1)
      console.log(
        `\nthe governing gateway below: ${TWINS} processes with the audit on and ${TWINS} with it off, taken together; CPU per call of each (µs): on c=1 ${perTwin(GATEWAY, 'c1')}, c=32 ${perTwin(GATEWAY, 'c32')}; off c=1 ${perTwin(GATEWAY_NO_AUDIT, 'c1')}, c=32 ${perTwin(GATEWAY_NO_AUDIT, 'c32')}`,
      );
    const ratio = (a: number | undefined, b: number | undefined) =>
      a === undefined || b === undefined ? 'n/a' : `${(a / b).toFixed(2)}×`;
    // The same CPU ratio taken round by round (both sides ran in the same round, under the same
    // load), as the median and range of the rounds: steadier than the totals on a shared machine.
    const byRound = (a: Run, b: Run) => {
      const ratios = (a.cpuRounds ?? []).map((x, i) => x / (b.cpuRounds ?? [])[i]!).filter(Number.isFinite);
      if (ratios.length === 0) return '';
      const sorted = [...ratios].sort((x, y) => x - y);
      return ` (by round: median ${sorted[Math.floor(sorted.length / 2)]!.toFixed(2)}×, ${sorted[0]!.toFixed(2)}–${sorted.at(-1)!.toFixed(2)})`;
    };
    const addedGateway = gateway.c1.p50 - floor.c1.p50;
    const addedSdk = sdk.c1.p50 - floor.c1.p50;
    console.log(
      `\ngateway's added p50 / SDK pass-through's added p50: ${(addedGateway / addedSdk).toFixed(2)}× (goal ≤ 1.3×)`,
    );
    console.log(
      `gateway CPU per call, audit on ÷ off: c=1 ${ratio(gateway.c1.cpuPerCall, noAudit.c1.cpuPerCall)}${byRound(gateway.c1, noAudit.c1)}, c=32 ${ratio(gateway.c32.cpuPerCall, noAudit.c32.cpuPerCall)}${byRound(gateway.c32, noAudit.c32)} (goal ≤ 1.1×)`,
    );
    const modern = results.get(GATEWAY_MODERN);
    if (modern !== undefined)
      console.log(
        `gateway, 2026-07-28 ÷ 2025-11-25 clients: added p50 c=1 ${ratio(modern.c1.p50 - floor.c1.p50, addedGateway)}, added p99 c=1 ${ratio(modern.c1.p99 - floor.c1.p99, gateway.c1.p99 - floor.c1.p99)}, calls/s c=32 ${ratio(modern.c32.perSecond, gateway.c32.perSecond)}, CPU per call c=1 ${ratio(modern.c1.cpuPerCall, gateway.c1.cpuPerCall)}, c=32 ${ratio(modern.c32.cpuPerCall, gateway.c32.cpuPerCall)} (goal ≤ 1× for added latency and CPU)`,
      );
    const memory = results.get(GATEWAY_MEMORY);
    if (memory !== undefined)
      console.log(
        `  audit on with an in-memory store ÷ audit off: c=1 ${ratio(memory.c1.cpuPerCall, noAudit.c1.cpuPerCall)}, c=32 ${ratio(memory.c32.cpuPerCall, noAudit.c32.cpuPerCall)} (the audit log without SQLite's commits, against the SQLite audit-off twin)`,
      );
    const perRecord = results.get(GATEWAY_RECORD);
    if (perRecord !== undefined)
      console.log(
        `  audit on with durability: record ÷ audit off: c=1 ${ratio(perRecord.c1.cpuPerCall, noAudit.c1.cpuPerCall)}, c=32 ${ratio(perRecord.c32.cpuPerCall, noAudit.c32.cpuPerCall)}; calls/s ÷ the default (batch): c=1 ${ratio(perRecord.c1.perSecond, gateway.c1.perSecond)}, c=32 ${ratio(perRecord.c32.perSecond, gateway.c32.perSecond)}`,
      );
    const before = results.get(GATEWAY_BEFORE);
    const after = BEFORE_AUDIT ? gateway : noAudit;
    if (before !== undefined)
      console.log(
        `  the governing gateway${BEFORE_AUDIT ? '' : ', audit off,'} ÷ the same from ${BEFORE_TREE}: CPU per call c=1 ${ratio(after.c1.cpuPerCall, before.c1.cpuPerCall)}, c=32 ${ratio(after.c32.cpuPerCall, before.c32.cpuPerCall)}; calls/s c=1 ${ratio(after.c1.perSecond, before.c1.perSecond)}, c=32 ${ratio(after.c32.perSecond, before.c32.perSecond)}`,
      );
    const windowed = results.get(GATEWAY_WINDOW);
    if (windowed !== undefined)
      console.log(
        `  audit on with commitWindow: ${AUDIT_WINDOW} ÷ audit off: c=1 ${ratio(windowed.c1.cpuPerCall, noAudit.c1.cpuPerCall)}, c=32 ${ratio(windowed.c32.cpuPerCall, noAudit.c32.cpuPerCall)}`,
      );
    for (const name of ['mcp-proxy (npm)', 'supergateway (npm)']) {
      const other = results.get(name)!;
      console.log(
        `gateway ÷ ${name}: calls/s c=1 ${(gateway.c1.perSecond / other.c1.perSecond).toFixed(2)}×, c=32 ${(gateway.c32.perSecond / other.c32.perSecond).toFixed(2)}× (goal ≥ 1×); CPU per call c=1 ${ratio(gateway.c1.cpuPerCall, other.c1.cpuPerCall)}${byRound(gateway.c1, other.c1)}, c=32 ${ratio(gateway.c32.cpuPerCall, other.c32.cpuPerCall)}${byRound(gateway.c32, other.c32)} (goal ≤ 1×)`,
      );
    }

    if (SESSIONS > 0)
      console.log(
        `\nmemory per open session (slope of RSS while 0 to ${SESSIONS} sessions are open, in 5 steps):`,
      );
    for (const target of SESSIONS > 0 ? targets.slice(1, 4) : []) {
      const perThousand = await sessionMemory(target);
      console.log(
        `  ${target.name}: ${perThousand === undefined ? 'n/a' : `${(perThousand * 1.024).toFixed(1)} kB per session (${perThousand.toFixed(1)} MB per 1,000)`}`,
      );
    }
    console.log(
      '  mcp-proxy, supergateway (stateful): one upstream process per session, so ~1,000 node processes; not measured',
    );
  } finally {
    await Promise.all(targets.map((target) => target.stop()));
    rmSync(dir, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
