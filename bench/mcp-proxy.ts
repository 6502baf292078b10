// `pnpm bench:mcp`: what the governing proxy adds to one tools/call. The same reference server
// (@modelcontextprotocol/server-memory, one process per side) is called directly by an SDK client over
// stdio, and through mcpClient → canonical chain → mcpServe with the SDK client in memory in front.
// Calls alternate between the two sides, so load on the machine falls on both alike; wall-clock
// latency per call, p50 and p99, and the proxy's added time at each.

import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { canonicalChain } from '@toolgate/middleware';
import { mcpClient, mcpServe } from '@toolgate/mcp';

const WARMUP = 50;
const CALLS = 1000;

const manifest = createRequire(import.meta.url).resolve('@modelcontextprotocol/server-memory/package.json');
const bin = join(dirname(manifest), 'dist/index.js');
const dir = mkdtempSync(join(tmpdir(), 'toolgate-bench-mcp-'));
const env = (side: string) => ({ MEMORY_FILE_PATH: join(dir, `${side}.jsonl`) });
const entities = [{ name: 'ana', entityType: 'person', observations: ['approves refunds'] }];

const direct = new Client({ name: 'direct', version: '1.0.0' });
await direct.connect(
  new StdioClientTransport({ command: process.execPath, args: [bin], env: env('direct'), stderr: 'ignore' }),
);

const upstream = mcpClient({
  name: 'memory',
  command: [process.execPath, bin],
  env: env('proxied'),
  stderr: 'ignore',
});
const served = mcpServe(await upstream.tools(), {
  name: 'proxy',
  version: '1.0.0',
  chain: canonicalChain({ permissions: { check: () => ({ allow: true }) } }),
  upstreams: [upstream],
});
const [clientEnd, serverEnd] = InMemoryTransport.createLinkedPair();
await served.connect(serverEnd);
const proxied = new Client({ name: 'proxied', version: '1.0.0' });
await proxied.connect(clientEnd);

for (const client of [direct, proxied])
  await client.callTool({ name: 'create_entities', arguments: { entities } });

async function timed(client: Client): Promise<number> {
  const started = performance.now();
  const result = await client.callTool({ name: 'open_nodes', arguments: { names: ['ana'] } });
  const took = performance.now() - started;
  if (result.isError === true) throw new Error('the call failed');
  return took;
}

const times = { direct: [] as number[], proxied: [] as number[] };
for (let i = 0; i < WARMUP + CALLS; i++) {
  // Alternate which side goes first, so neither always follows the other.
  const order = i % 2 === 0 ? (['direct', 'proxied'] as const) : (['proxied', 'direct'] as const);
  for (const side of order) {
    const took = await timed(side === 'direct' ? direct : proxied);
    if (i >= WARMUP) times[side].push(took);
  }
}

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
};
const ms = (value: number) => `${value.toFixed(3)} ms`;
console.log(
  `tools/call open_nodes on server-memory, ${CALLS} calls per side, alternating (Node ${process.version})`,
);
for (const p of [50, 99]) {
  const d = percentile(times.direct, p);
  const x = percentile(times.proxied, p);
  console.log(
    `p${p}: direct ${ms(d)}, through the proxy ${ms(x)}, added ${ms(x - d)} (${(x / d).toFixed(2)}×)`,
  );
}

await Promise.all([direct.close(), proxied.close(), served.close(), upstream.close()]);
rmSync(dir, { recursive: true, force: true });
