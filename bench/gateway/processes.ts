// The proxy processes bench/gateway/cpu.ts and profile.ts drive: one configuration (a bench tenant in
// front of upstream.mjs), each proxy started as its own node process, and an SDK client on it.
import { spawn, type ChildProcess } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const here = dirname(fileURLToPath(import.meta.url));
export const root = resolve(here, '..', '..');
export const upstream = join(here, 'upstream.mjs');
export const passthrough = join(here, 'passthrough.ts');
/**
 * The gateway runs as users run it, the `toolgate` bin built by `pnpm build` (mcp-proxy and
 * supergateway run their published builds too); `BENCH_GATEWAY_FROM=src` runs the TypeScript sources
 * through tsx instead, which keeps names with a `defineProperty` per closure and slows `bind`.
 */
const FROM_SOURCES = process.env['BENCH_GATEWAY_FROM'] === 'src';
function builtCli(tree: string): string {
  const cli = join(tree, 'packages/gateway/dist/cli.js');
  if (!existsSync(cli)) {
    throw new Error(`bench: ${cli} is missing; run \`pnpm build\` first (or BENCH_GATEWAY_FROM=src)`);
  }
  const built = statSync(cli).mtimeMs;
  const packages = join(tree, 'packages');
  for (const name of readdirSync(packages)) {
    const sources = join(packages, name, 'src');
    if (!existsSync(sources)) continue;
    for (const file of readdirSync(sources, { recursive: true, encoding: 'utf8' })) {
      if (statSync(join(sources, file)).mtimeMs > built) {
        throw new Error(`bench: packages/${name}/src/${file} is newer than ${cli}; run \`pnpm build\` first`);
      }
    }
  }
  return cli;
}
/** The node arguments that start the `toolgate` command of the checkout at `tree`. */
export function gatewayCliArgs(tree = root): string[] {
  return FROM_SOURCES ? ['--import', 'tsx', join(tree, 'packages/gateway/src/cli.ts')] : [builtCli(tree)];
}
/**
 * On-CPU time of each thread of `pid` in ms, by the thread's name ('main' for the main thread), from
 * the scheduler's own count (`/proc/PID/task/TID/schedstat`, nanoseconds). /proc's user and system
 * times come in clock ticks of 10 ms, each thread's rounded: over a slice of a few hundred ms that
 * rounding alone moved CPU per call by ±5–10%.
 */
export function cpuMsByThread(pid: number): Map<string, number> {
  const byName = new Map<string, number>();
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    try {
      const ns = Number(readFileSync(`/proc/${pid}/task/${task}/schedstat`, 'utf8').split(' ')[0]);
      const name =
        task === String(pid) ? 'main' : readFileSync(`/proc/${pid}/task/${task}/comm`, 'utf8').trim();
      byName.set(name, (byName.get(name) ?? 0) + ns / 1e6);
    } catch {
      // A thread that ended between the listing and the read.
    }
  }
  return byName;
}

/** On-CPU time of every thread of `pid` in ms (see cpuMsByThread). */
export function cpuMsOf(pid: number): number {
  let total = 0;
  for (const ms of cpuMsByThread(pid).values()) total += ms;
  return total;
}

/** The bearer token every bench config accepts. */
export const BENCH_TOKEN = 'bench-token-0123456789abcdef0123';

/** Writes the gateway's configuration into `dir`; returns its path. */
export function writeBenchConfig(dir: string): string {
  const config = join(dir, 'toolgate.yaml');
  writeFileSync(
    config,
    `auth: { tokens: [{ token: "${BENCH_TOKEN}", identity: { tenant: bench, principal: bench } }] }
upstreams: { up: { command: [${JSON.stringify(process.execPath)}, ${JSON.stringify(upstream)}] } }
tenants: { bench: { upstreams: [up] } }
`,
  );
  return config;
}

// Five rules a tenant writes: each applies to `echo` and none matches the bench's call, so every call
// evaluates all five (membership, a negated annotation, startsWith, size(), a regex) and then the default.
const POLICY = `- name: interns-read-only
  when: "'intern' in identity.roles && !tool.annotations.readOnlyHint"
  effect: deny
  reason: interns may only use read-only tools
- name: no-admin-tools
  when: "tool.name.startsWith('admin_') && identity.principal != 'ops'"
  effect: deny
  reason: admin tools are for the ops principal
- name: text-size-cap
  tools: [echo]
  when: size(args.text) > 4096
  effect: deny
  reason: Send at most 4,096 characters
- name: no-secrets-in-text
  tools: [echo]
  when: "args.text.matches('(?i)(password|api[_-]?key|secret)[=:]')"
  effect: deny
  reason: Do not send credentials through echo
- name: quarantined-tenant
  when: identity.tenant == 'quarantine'
  effect: deny
  reason: this tenant is quarantined
`;

/**
 * Writes into `dir` the configuration users run: the bench token with a role, the five rules above,
 * a SQLite state store (in memory with `memoryStore`, to tell the store's commits from the rest of
 * the audit's cost) and, with `audit`, the audit log signed with a fresh Ed25519 key (`durability`:
 * the gateway's default, `batch`, unless given). Returns its path. Needs a Node with `node:sqlite` (22.13+).
 */
export function writeGoverningConfig(
  dir: string,
  options: {
    audit: boolean;
    maxSessions?: number;
    memoryStore?: boolean;
    durability?: 'record' | 'batch';
    /** `audit.commitWindow`, e.g. '20ms'; the gateway's default (5 ms) when not given. */
    commitWindow?: string;
    /** `audit.journal`; the gateway's default (on, with a SQLite store and batch durability) when not given. */
    journal?: boolean;
  },
): string {
  const name = `${options.audit ? 'audit-on' : 'audit-off'}${options.memoryStore === true ? '-memory' : ''}${options.durability === undefined ? '' : `-${options.durability}`}${options.commitWindow === undefined ? '' : `-window-${options.commitWindow}`}${options.journal === undefined ? '' : `-journal-${options.journal}`}`;
  const config = join(dir, `${name}.yaml`);
  writeFileSync(join(dir, 'policy.yaml'), POLICY);
  // The token read from a file, as the docs tell users to keep secrets out of the configuration: a
  // gateway holding an interpolated secret screens every call for it (own-secrets, secret guard),
  // with the audit log on or off.
  writeFileSync(join(dir, 'bench-token'), BENCH_TOKEN);
  if (options.audit) {
    const { privateKey } = generateKeyPairSync('ed25519');
    writeFileSync(join(dir, 'audit-key.pem'), privateKey.export({ type: 'pkcs8', format: 'pem' }));
  }
  const limit = options.maxSessions;
  writeFileSync(
    config,
    `${limit === undefined ? '' : `listen: { maxSessions: ${limit}, maxSessionsPerClient: ${limit} }\n`}auth: { tokens: [{ token: "\${file:./bench-token}", identity: { tenant: bench, principal: bench, roles: [agent] } }] }
stores: { state: '${options.memoryStore === true ? 'memory:' : `sqlite:./${name}.db`}' }
upstreams: { up: { command: [${JSON.stringify(process.execPath)}, ${JSON.stringify(upstream)}] } }
policy: { file: ./policy.yaml, default: allow }
tenants: { bench: { upstreams: [up] } }
${options.audit ? `audit: { signingKey: "\${file:./audit-key.pem}"${options.durability === undefined ? '' : `, durability: ${options.durability}`}${options.commitWindow === undefined ? '' : `, commitWindow: ${options.commitWindow}`}${options.journal === undefined ? '' : `, journal: ${options.journal}`} }\n` : ''}`,
  );
  return config;
}

/**
 * Starts `node [nodeFlags] ...args` (through tsx when args[0] is TypeScript), with `env` added to this
 * process's environment, and resolves with the MCP URL it prints; rejects if it exits first.
 */
export async function startProxy(
  nodeFlags: readonly string[],
  args: readonly string[],
  env: Readonly<Record<string, string>> = {},
): Promise<{ child: ChildProcess; url: string }> {
  const loader = args[0]?.endsWith('.ts') === true ? ['--import', 'tsx'] : [];
  const child = spawn(process.execPath, [...nodeFlags, ...loader, ...args], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...env },
  });
  const url = await new Promise<string>((done, fail) => {
    let seen = '';
    child.once('exit', (code) =>
      fail(new Error(`bench: ${args[0]} exited (${code}) before it served:\n${seen}`)),
    );
    const look = (chunk: Buffer) => {
      seen += chunk.toString();
      const match = /(http:\/\/127\.0\.0\.1:\d+)/.exec(seen);
      if (match === null) return;
      // Found: the rest of its output (a log line per call) is drained, not kept.
      child.stdout!.off('data', look);
      child.stderr!.off('data', look);
      done(`${match[1]}/mcp`);
    };
    child.stdout!.on('data', look);
    child.stderr!.on('data', look);
  });
  child.stdout!.resume();
  child.stderr!.resume();
  return { child, url };
}

/** What drives a proxy: any MCP client (SDK 1.x or 2.x). */
export interface EchoCaller {
  callTool(request: { name: string; arguments: { text: string } }): Promise<unknown>;
}

/** `calls` echo calls, `concurrency` in flight at once, the workers taking the clients in turn. */
export async function driveCalls(
  clients: readonly EchoCaller[],
  calls: number,
  concurrency: number,
): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async (_, worker) => {
      const client = clients[worker % clients.length]!;
      while (next < calls) {
        next += 1;
        await client.callTool({ name: 'echo', arguments: { text: 'ping' } });
      }
    }),
  );
}

/** An SDK client connected to `url` with the bench token. */
export async function benchClient(url: string, name: string): Promise<Client> {
  const client = new Client({ name, version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), {
      requestInit: { headers: { authorization: `Bearer ${BENCH_TOKEN}` } },
    }),
  );
  return client;
}
