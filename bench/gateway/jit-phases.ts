// `node --import tsx bench/gateway/jit-phases.ts`: how long the governing gateway (bench:gateway's
// configuration, its build: `pnpm build` first) keeps compiling. Starts it with V8's --trace-opt and
// --trace-deopt, drives PHASES slices of BENCH_CALLS tools/call each at concurrency 32 (8 sessions ×
// 4), and prints how many functions V8 optimized and deoptimized in each slice. A process still
// compiling spends its helper threads' CPU on it, which CPU per call counts: this is what sizes
// bench:gateway's warm-up. AUDIT=off runs the audit-off twin. Nothing asserted.

import { spawn } from 'node:child_process';
import { appendFileSync, mkdtempSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { benchClient, driveCalls, gatewayCliArgs, writeGoverningConfig } from './processes';

const CALLS = Number(process.env['BENCH_CALLS'] ?? 4000);
const PHASES = Number(process.env['PHASES'] ?? 8);
const dir = mkdtempSync(join(tmpdir(), 'toolgate-jit-'));
const config = writeGoverningConfig(dir, { audit: process.env['AUDIT'] !== 'off' });
// The trace goes to a file, and the phases are marked in it between slices.
const trace = join(dir, 'trace.log');
writeFileSync(trace, '');
const child = spawn(
  process.execPath,
  ['--trace-opt', '--trace-deopt', ...gatewayCliArgs(), 'gateway', '--config', config, '--port', '0'],
  { stdio: ['ignore', openSync(trace, 'a'), 'ignore'] },
);
let url: string | undefined;
for (let tries = 0; tries < 400 && url === undefined; tries++) {
  await new Promise((resolve) => setTimeout(resolve, 50));
  const match = /(http:\/\/127\.0\.0\.1:\d+)/.exec(readFileSync(trace, 'utf8'));
  if (match !== null) url = `${match[1]}/mcp`;
}
if (url === undefined) {
  child.kill('SIGKILL');
  throw new Error(`bench: the gateway did not serve within 20 s (trace: ${trace})`);
}
const clients = await Promise.all(Array.from({ length: 8 }, () => benchClient(url, 'jit')));
for (let phase = 1; phase <= PHASES; phase++) {
  appendFileSync(trace, `\n=== phase ${phase} ===\n`);
  await driveCalls(clients, CALLS, 32);
  // Compile jobs finishing on the helper threads land in the slice that queued them.
  await new Promise((resolve) => setTimeout(resolve, 300));
}
appendFileSync(trace, '\n=== end ===\n');
await Promise.all(clients.map((client) => client.close()));
child.kill('SIGTERM');

const counts = new Map<string, { optimized: number; deoptimized: number }>();
let phase = 'start-up';
for (const line of readFileSync(trace, 'utf8').split('\n')) {
  const mark = /^=== (.+) ===$/.exec(line);
  if (mark !== null) {
    phase = mark[1]!;
    continue;
  }
  const count = counts.get(phase) ?? { optimized: 0, deoptimized: 0 };
  if (line.includes('completed compiling') || line.includes('completed optimizing')) count.optimized++;
  else if (line.includes('bailout (kind:')) count.deoptimized++;
  counts.set(phase, count);
}
console.log(
  `V8 compilations of the gateway (audit ${process.env['AUDIT'] === 'off' ? 'off' : 'on'}, node ${process.version}), slices of ${CALLS} calls at c=32`,
);
let done = 0;
for (const [name, { optimized, deoptimized }] of counts) {
  if (name === 'end') continue;
  const calls = name === 'start-up' ? 'before any call' : `calls ${done}–${(done += CALLS)}`;
  console.log(
    `  ${name.padEnd(9)} ${calls.padEnd(18)} optimized ${String(optimized).padStart(5)}, deoptimized ${String(deoptimized).padStart(4)}`,
  );
}
