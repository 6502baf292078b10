// CPU per tools/call of the proxy process itself (every thread's on-CPU time, from /proc), for the
// gateway and the plain SDK pass-through, interleaved: a load-tolerant companion to bench:gateway's
// latencies.
import { setMaxListeners } from 'node:events';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  benchClient,
  cpuMsOf,
  driveCalls,
  gatewayCliArgs,
  passthrough,
  startProxy,
  upstream,
  writeBenchConfig,
} from './processes';

setMaxListeners(100_000);
const CALLS = Number(process.env['BENCH_CALLS'] ?? 2000);
const config = writeBenchConfig(mkdtempSync(join(tmpdir(), 'toolgate-cpu-')));
const prof =
  process.env['BENCH_PROFILE'] === undefined
    ? []
    : ['--cpu-prof', `--cpu-prof-dir=${process.env['BENCH_PROFILE']}`];
const targets = {
  gateway: await startProxy(prof, [...gatewayCliArgs(), 'gateway', '--config', config, '--port', '0']),
  passthrough: await startProxy(prof, [passthrough, process.execPath, upstream]),
};
const clients: Record<string, Client> = {};
for (const [name, { url }] of Object.entries(targets)) clients[name] = await benchClient(url, 'cpu');
const totals: Record<string, number[]> = { gateway: [], passthrough: [] };
for (let round = 0; round < 6; round++) {
  for (const name of Object.keys(targets) as (keyof typeof targets)[]) {
    const pid = targets[name].child.pid!;
    const before = cpuMsOf(pid);
    await driveCalls([clients[name]!], CALLS, round % 2 === 0 ? 1 : 32);
    if (round > 1) totals[name]!.push(((cpuMsOf(pid) - before) / CALLS) * 1000);
  }
}
for (const [name, values] of Object.entries(totals))
  console.log(`${name}: CPU µs per call (rounds c=1,c=32,...): ${values.map((v) => v.toFixed(0)).join(' ')}`);
await Promise.all(
  Object.values(targets).map(
    ({ child }) =>
      new Promise((done) => {
        child.once('exit', done);
        child.kill('SIGTERM');
      }),
  ),
);
process.exit(0);
