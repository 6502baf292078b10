// `node --import tsx bench/gateway/allocations.ts`: what a governed call allocates, by package. Runs
// the governing gateway (bench:gateway's configuration, `createGateway` in this process, its sources
// through tsx) and drives it from a child process (so the driving client's allocations are not
// counted): WARM calls first, then N tools/call at concurrency C (default 32 over 8 sessions) under
// V8's sampling heap profiler, counting objects the collector has already freed too. Prints the bytes per call each package
// allocated (a package's own frames and the Node internals they call) and the heaviest functions.
// Allocation is what the scavenger pays for, on the main thread and its helpers. AUDIT=off runs the
// audit-off twin. Needs node:sqlite (Node 22.13+). Nothing asserted.

import { fork } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createGateway } from '@toolgate/gateway';
import { writeGoverningConfig } from './processes';

const N = Number(process.env['N'] ?? 5000);
const C = Number(process.env['C'] ?? 32);
const WARM = Number(process.env['WARM'] ?? 16_000);
const audit = process.env['AUDIT'] !== 'off';

interface ProfileNode {
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number };
  readonly selfSize: number;
  readonly children: readonly ProfileNode[];
}

if (process.argv[2] === '--drive') {
  // The child: drives the gateway at process.argv[3], WARM calls, then N once the parent says so.
  const { benchClient, driveCalls } = await import('./processes');
  const clients = await Promise.all(Array.from({ length: 8 }, () => benchClient(process.argv[3]!, 'alloc')));
  await driveCalls(clients, WARM, 32);
  process.send!('warm');
  await new Promise((resolve) => process.once('message', resolve));
  await driveCalls(clients, N, C);
  await Promise.all(clients.map((client) => client.close()));
  process.send!('done');
  process.exit(0);
}

const config = writeGoverningConfig(mkdtempSync(join(tmpdir(), 'toolgate-alloc-')), { audit });
const gateway = await createGateway(config, { port: 0, log: () => undefined });
const driver = fork(fileURLToPath(import.meta.url), ['--drive', gateway.url!], {
  execArgv: ['--import', 'tsx'],
});
const heard = () => new Promise((resolve) => driver.once('message', resolve));
await heard();
const session = new Session();
session.connect();
await session.post('HeapProfiler.startSampling', {
  samplingInterval: 256,
  includeObjectsCollectedByMajorGC: true,
  includeObjectsCollectedByMinorGC: true,
} as never);
driver.send('go');
await heard();
const { profile } = (await session.post('HeapProfiler.stopSampling')) as { profile: { head: ProfileNode } };
session.disconnect();

/** The package a frame belongs to: a workspace package, a dependency, or undefined (Node, V8). */
function packageOf(url: string): string | undefined {
  const workspace = /packages\/([^/]+)\/(?:src|dist)\//.exec(url);
  if (workspace !== null) return `@toolgate/${workspace[1]}`;
  const dependency = /node_modules\/(?:\.pnpm\/[^/]+\/node_modules\/)?((?:@[^/]+\/)?[^/]+)/.exec(url);
  return dependency?.[1];
}
const byPackage = new Map<string, number>();
const byFunction = new Map<string, number>();
let total = 0;
const add = (map: Map<string, number>, key: string, bytes: number) =>
  map.set(key, (map.get(key) ?? 0) + bytes);
(function walk(node: ProfileNode, owner: string) {
  const own = packageOf(node.callFrame.url) ?? owner;
  total += node.selfSize;
  add(byPackage, own, node.selfSize);
  const where = node.callFrame.url.replace(/^.*\/(?:packages|node_modules)\//, '');
  add(
    byFunction,
    `${node.callFrame.functionName || '(anonymous)'} ${where}:${node.callFrame.lineNumber + 1}`,
    node.selfSize,
  );
  for (const child of node.children) walk(child, own);
})(profile.head, '(node and V8)');

const perCall = (bytes: number) => `${(bytes / N / 1024).toFixed(2).padStart(7)} kB`;
console.log(
  `allocated per call (audit ${audit ? 'on' : 'off'}, ${N} calls at c=${C} after ${WARM}, node ${process.version}): ${perCall(total).trim()}`,
);
for (const [name, bytes] of [...byPackage].sort((a, b) => b[1] - a[1]).slice(0, 16))
  console.log(`${perCall(bytes)}  ${name}`);
console.log('heaviest functions:');
for (const [name, bytes] of [...byFunction].sort((a, b) => b[1] - a[1]).slice(0, 20))
  console.log(`${perCall(bytes)}  ${name.slice(0, 140)}`);
driver.kill();
await gateway.close();
