// The proxy processes bench/gateway/cpu.ts and profile.ts drive: one configuration (a bench tenant in
// front of upstream.mjs), each proxy started as its own node process, and an SDK client on it.
import { spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const here = dirname(fileURLToPath(import.meta.url));
export const root = resolve(here, '..', '..');
export const upstream = join(here, 'upstream.mjs');
export const passthrough = join(here, 'passthrough.ts');
export const gatewayCli = join(root, 'packages/gateway/src/cli.ts');
const TOKEN = 'bench-token-0123456789abcdef0123';

/** Writes the gateway's configuration into `dir`; returns its path. */
export function writeBenchConfig(dir: string): string {
  const config = join(dir, 'toolgate.yaml');
  writeFileSync(
    config,
    `auth: { tokens: [{ token: "${TOKEN}", identity: { tenant: bench, principal: bench } }] }
upstreams: { up: { command: [${JSON.stringify(process.execPath)}, ${JSON.stringify(upstream)}] } }
tenants: { bench: { upstreams: [up] } }
`,
  );
  return config;
}

/** Starts `node [nodeFlags] --import tsx ...args` and resolves with the MCP URL it prints. */
export async function startProxy(
  nodeFlags: readonly string[],
  args: readonly string[],
): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, [...nodeFlags, '--import', 'tsx', ...args], {
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

/** An SDK client connected to `url` with the bench token. */
export async function benchClient(url: string, name: string): Promise<Client> {
  const client = new Client({ name, version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), {
      requestInit: { headers: { authorization: `Bearer ${TOKEN}` } },
    }),
  );
  return client;
}
