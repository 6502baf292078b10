// `node --import tsx bench/gateway/audit-ab.ts`: what the audit log costs the gateway, and whether a
// change moved it. Starts the governing gateway (bench:gateway's configuration) with the audit on
// and off from one build (CLI, a built `dist/cli.js`) or two (CLI_B: another checkout's build), keeps
// them all running, and drives BENCH_CALLS tools/call at concurrency C (1, or 32 over 8 sessions)
// through each in turn, ROUNDS times. Prints each process's CPU per call (every thread's on-CPU time
// from /proc, also split by thread; median of the rounds) and the on ÷ off ratio of each round:
// ratios taken within a round, so a machine whose load moves between rounds moves both sides.
// WIN_A/WIN_B set `audit.commitWindow`, JOURNAL_A/JOURNAL_B `audit.journal` (true, false); ENV_B adds `NAME=value,…` to B's environment; PIN=1 runs each
// gateway on the second core and this process and the upstreams on the first (taskset); IDLE_MS
// idles every gateway that long before each of its slices. Linux only;
// nothing asserted.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { benchClient, cpuMsByThread, driveCalls, startProxy, writeGoverningConfig } from './processes';

const CALLS = Number(process.env['BENCH_CALLS'] ?? 2000);
const C = Number(process.env['C'] ?? 1);
const ROUNDS = Number(process.env['ROUNDS'] ?? 4);
const IDLE_MS = Number(process.env['IDLE_MS'] ?? 0);
const MIXED_C32 = Number(process.env['MIXED_C32'] ?? 0);
const clis = [process.env['CLI']!, ...(process.env['CLI_B'] ? [process.env['CLI_B']] : [])];

async function start(
  cli: string,
  audit: boolean,
  window: string | undefined,
  journal: string | undefined,
  extraEnv: string | undefined,
) {
  const dir = mkdtempSync(join(tmpdir(), 'tp-'));
  const config = writeGoverningConfig(dir, {
    audit,
    ...(window !== undefined ? { commitWindow: window } : {}),
    ...(journal !== undefined && audit ? { journal: journal === 'true' } : {}),
  });
  const { child, url } = await startProxy(
    [],
    [resolve(cli), 'gateway', '--config', config, '--port', '0'],
    Object.fromEntries(
      (extraEnv ?? '')
        .split(',')
        .filter(Boolean)
        // The first '=' only: a value may hold more (NODE_OPTIONS=--flag=value).
        .map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]),
    ),
  );
  const clients = await Promise.all(Array.from({ length: C === 1 ? 1 : 8 }, () => benchClient(url, 'p')));
  return { child, clients };
}

const targets: {
  name: string;
  cli: string;
  audit: boolean;
  window: string | undefined;
  journal: string | undefined;
  samples: number[];
  /** µs per call of each thread kind, per round. */
  threads: Map<string, number[]>;
}[] = [];
clis.forEach((cli, i) => {
  for (const audit of [true, false])
    targets.push({
      name: `${i === 0 ? 'A' : 'B'} audit ${audit ? 'on ' : 'off'}`,
      cli,
      audit,
      window: process.env[i === 0 ? 'WIN_A' : 'WIN_B'],
      journal: process.env[i === 0 ? 'JOURNAL_A' : 'JOURNAL_B'],
      samples: [],
      threads: new Map(),
    });
});
const running = await Promise.all(
  targets.map((t) =>
    start(t.cli, t.audit, t.window, t.journal, t.name.startsWith('B') ? process.env['ENV_B'] : undefined),
  ),
);
if (process.env['PIN'] !== undefined) {
  // Each gateway on one core, this process and the upstreams on the other: the gateways' CPU per
  // call no longer moves with what shares their core.
  const { execFileSync } = await import('node:child_process');
  const { readFileSync } = await import('node:fs');
  const pin = (pid: number, cpu: number) =>
    execFileSync('taskset', ['-a', '-p', '-c', String(cpu), String(pid)]);
  pin(process.pid, 0);
  for (const { child } of running) {
    pin(child.pid!, 1);
    for (const upstream of readFileSync(`/proc/${child.pid}/task/${child.pid}/children`, 'utf8')
      .split(' ')
      .filter(Boolean))
      pin(Number(upstream), 0);
  }
}
// Warm, as bench:gateway does (BENCH_WARMUP): V8 compiles a gateway's hot code for thousands of calls.
const WARMUP = Number(process.env['BENCH_WARMUP'] ?? 16_000);
for (const { clients } of running) await driveCalls(clients, WARMUP, 32);
for (let round = 0; round < ROUNDS; round++) {
  for (const [i, target] of targets.entries()) {
    const { child, clients } = running[i]!;
    // IDLE_MS: every gateway idles that long before its slice, as one among many targets does.
    if (IDLE_MS > 0) await new Promise((d) => setTimeout(d, IDLE_MS));
    const before = cpuMsByThread(child.pid!);
    await driveCalls(clients, CALLS, C);
    await new Promise((d) => setTimeout(d, 100));
    const after = cpuMsByThread(child.pid!);
    // MIXED_C32=N: after its measured slice, N calls at concurrency 32 not measured (as bench:gateway's
    // c=32 slices follow its c=1 ones in every round).
    if (MIXED_C32 > 0) await driveCalls(clients, MIXED_C32, 32);
    let total = 0;
    for (const [kind, ms] of after) {
      const used = ms - (before.get(kind) ?? 0);
      total += used;
      const rounds = target.threads.get(kind) ?? [];
      rounds.push((used * 1000) / CALLS);
      target.threads.set(kind, rounds);
    }
    target.samples.push((total * 1000) / CALLS);
  }
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
for (const t of targets)
  console.log(
    `${t.name}: ${median(t.samples).toFixed(0)} µs/call  [${t.samples.map((x) => x.toFixed(0)).join(' ')}]`,
  );
// Where the CPU went, by thread (median µs per call over the rounds): the main thread's own work,
// V8's compiler and collector helpers (V8Worker), libuv's pool (fsync).
for (const t of targets)
  console.log(
    `  ${t.name} by thread: ${[...t.threads]
      .map(([kind, rounds]) => `${kind} ${median(rounds).toFixed(0)}`)
      .join(', ')}`,
  );
for (let i = 0; i < targets.length; i += 2) {
  const ratios = targets[i]!.samples.map((on, r) => on / targets[i + 1]!.samples[r]!);
  console.log(
    `${targets[i]!.name.slice(0, 1)} on÷off per round: ${ratios.map((x) => x.toFixed(2)).join(' ')}; median ${median(ratios).toFixed(2)}`,
  );
}
if (targets.length === 4) {
  // Two builds (or one build, B with ENV_B): how far B's audit-on gateway is from A's, round by round.
  const ratios = targets[2]!.samples.map((b, r) => b / targets[0]!.samples[r]!);
  console.log(
    `B on÷A on per round: ${ratios.map((x) => x.toFixed(2)).join(' ')}; median ${median(ratios).toFixed(2)}`,
  );
}
for (const { child, clients } of running) {
  await Promise.all(clients.map((c) => c.close()));
  child.kill('SIGTERM');
}
