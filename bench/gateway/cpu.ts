// CPU per tools/call of the proxy process itself (user+system from /proc), for the gateway and the
// plain SDK pass-through, interleaved: a load-tolerant companion to bench:gateway's latencies.
import { spawn, type ChildProcess } from 'node:child_process';
import { setMaxListeners } from 'node:events';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

setMaxListeners(100_000);
const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '..', '..');
const upstream = join(here, 'upstream.mjs');
const TOKEN = 'bench-token-0123456789abcdef0123';
const CALLS = Number(process.env['BENCH_CALLS'] ?? 2000);
const dir = mkdtempSync(join(tmpdir(), 'toolgate-cpu-'));
const config = join(dir, 'toolgate.yaml');
writeFileSync(
  config,
  `auth: { tokens: [{ token: "${TOKEN}", identity: { tenant: bench, principal: bench } }] }
upstreams: { up: { command: [${JSON.stringify(process.execPath)}, ${JSON.stringify(upstream)}] } }
tenants: { bench: { upstreams: [up] } }
`,
);

async function start(args: string[]): Promise<{ child: ChildProcess; url: string }> {
  const prof =
    process.env['BENCH_PROFILE'] === undefined
      ? []
      : ['--cpu-prof', `--cpu-prof-dir=${process.env['BENCH_PROFILE']}`];
  const child = spawn(process.execPath, [...prof, '--import', 'tsx', ...args], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const url = await new Promise<string>((done) => {
    let seen = '';
    const look = (chunk: Buffer) => {
      seen += chunk.toString();
      const match = /(http:\/\/127\.0\.0\.1:\d+)/.exec(seen);
      if (match !== null) done(`${match[1]}/mcp`);
    };
    child.stdout!.on('data', look);
    child.stderr!.on('data', look);
  });
  child.stdout!.resume();
  child.stderr!.resume();
  return { child, url };
}
const cpuMs = (pid: number) => {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
};
const targets = {
  gateway: await start([
    join(root, 'packages/gateway/src/cli.ts'),
    'gateway',
    '--config',
    config,
    '--port',
    '0',
  ]),
  passthrough: await start([join(here, 'passthrough.ts'), process.execPath, upstream]),
};
const clients: Record<string, Client> = {};
for (const [name, { url }] of Object.entries(targets)) {
  const client = new Client({ name: 'cpu', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), {
      requestInit: { headers: { authorization: `Bearer ${TOKEN}` } },
    }),
  );
  clients[name] = client;
}
const totals: Record<string, number[]> = { gateway: [], passthrough: [] };
for (let round = 0; round < 6; round++) {
  for (const name of Object.keys(targets) as (keyof typeof targets)[]) {
    const pid = targets[name].child.pid!;
    const before = cpuMs(pid);
    let next = 0;
    const concurrency = round % 2 === 0 ? 1 : 32;
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next < CALLS) {
          next += 1;
          await clients[name]!.callTool({ name: 'echo', arguments: { text: 'ping' } });
        }
      }),
    );
    if (round > 1) totals[name]!.push(((cpuMs(pid) - before) / CALLS) * 1000);
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
