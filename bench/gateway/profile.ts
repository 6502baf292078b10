// Profiles one gateway process (its build: `pnpm build` first) under the bench's workload: `node --import tsx bench/gateway/profile.ts DIR`
// starts `toolgate gateway` with --cpu-prof (profile written into DIR on shutdown), drives
// BENCH_CALLS tools/call at concurrency 1 and 32 through one session, then stops it, and prints
// the heaviest self-time frames of the profile. BENCH_GOVERNING=audit-on (or audit-off) profiles the
// configuration bench:gateway calls governing (five rules, SQLite; run it on Node 22.13+) instead of
// the bare one. BENCH_CONCURRENCY=1 (or 32) drives only that concurrency. BENCH_CLIENT=2026-07-28 calls it with SDK v2 clients pinned to that revision
// (stateless: each call its own HTTP exchange) instead of 2025-11-25 sessions.

import { setMaxListeners } from 'node:events';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import {
  Client as ModernClient,
  StreamableHTTPClientTransport as ModernTransport,
} from '@modelcontextprotocol/client';
import { join, resolve } from 'node:path';
import {
  benchClient,
  BENCH_TOKEN,
  driveCalls,
  gatewayCliArgs,
  startProxy,
  writeBenchConfig,
  writeGoverningConfig,
} from './processes';

setMaxListeners(100_000);
const out = resolve(process.argv[2] ?? mkdtempSync(join(tmpdir(), 'toolgate-profile-')));
mkdirSync(out, { recursive: true });
const CALLS = Number(process.env['BENCH_CALLS'] ?? 3000);
const governing = process.env['BENCH_GOVERNING'];
const config =
  governing === undefined
    ? writeBenchConfig(out)
    : writeGoverningConfig(out, { audit: governing === 'audit-on' });
const { child, url } = await startProxy(
  ['--cpu-prof', `--cpu-prof-dir=${out}`],
  [...gatewayCliArgs(), 'gateway', '--config', config, '--port', '0'],
);
const client =
  process.env['BENCH_CLIENT'] === '2026-07-28' ? await modernClient(url) : await benchClient(url, 'profile');
const CONCURRENCIES = (process.env['BENCH_CONCURRENCY'] ?? '1,32').split(',').map(Number);
for (const concurrency of CONCURRENCIES) {
  const started = performance.now();
  await driveCalls([client], CALLS, concurrency);
  console.log(`c=${concurrency}: ${((CALLS / (performance.now() - started)) * 1000).toFixed(0)} calls/s`);
}
await client.close();
await new Promise<void>((done) => {
  child.once('exit', () => done());
  child.kill('SIGTERM');
});

async function modernClient(url: string): Promise<{
  callTool(params: { name: string; arguments: Record<string, unknown> }): Promise<unknown>;
  close(): Promise<void>;
}> {
  const modern = new ModernClient(
    { name: 'profile', version: '1.0.0' },
    { versionNegotiation: { mode: { pin: '2026-07-28' } } },
  );
  await modern.connect(
    new ModernTransport(new URL(url), {
      requestInit: { headers: { authorization: `Bearer ${BENCH_TOKEN}` } },
    }),
  );
  return modern;
}

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
const file = readdirSync(out).find((name) => name.endsWith('.cpuprofile'));
if (file === undefined) throw new Error(`no profile in ${out}`);
const profile = JSON.parse(readFileSync(join(out, file), 'utf8')) as {
  nodes: Node[];
  samples: number[];
  timeDeltas: number[];
};
const self = new Map<number, number>();
profile.samples.forEach((id, index) => self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[index] ?? 0)));
const byFrame = new Map<string, number>();
let total = 0;
for (const node of profile.nodes) {
  const time = self.get(node.id) ?? 0;
  total += time;
  const where = node.callFrame.url.replace(/^.*node_modules\//, '').replace(/^file:\/\/.*\/packages\//, '');
  const key = `${node.callFrame.functionName || '(anonymous)'} ${where}:${node.callFrame.lineNumber + 1}`;
  byFrame.set(key, (byFrame.get(key) ?? 0) + time);
}
console.log(`profile: ${join(out, file)}; ${(total / 1000).toFixed(0)} ms sampled`);
for (const [key, time] of [...byFrame].sort((a, b) => b[1] - a[1]).slice(0, 40))
  console.log(`${((time / total) * 100).toFixed(1).padStart(5)}%  ${key}`);
