// No orphan keeps serving: a gateway started through a wrapper (as `npx toolgate …` or `pnpm toolgate …`
// start it) stops when the wrapper is killed, however it is killed, and takes its stdio upstream with
// it. Linux only: the wrappers are found through /proc.

import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { cliPath, fixtureServer, repoRoot, tempDir, tsxLoader, type TempDir } from './helpers';

const onLinux = existsSync('/proc/self/stat') ? describe : describe.skip;

/** The pids whose parent is `pid`, from /proc. */
function childrenOf(pid: number): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(fields[1]) === pid && fields[0] !== 'Z') found.push(Number(entry));
    } catch {
      // It exited while we looked.
    }
  }
  return found;
}

const alive = (pid: number) => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
};

async function waitFor<T>(probe: () => T | undefined, timeoutMs: number, what: string): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

onLinux('a gateway under a wrapper', () => {
  let dir: TempDir;
  let wrapper: ChildProcess | undefined;
  const started: number[] = [];
  beforeEach(() => (dir = tempDir()));
  afterEach(() => {
    // Whatever the test left running is killed here, never left to the next one.
    for (const pid of started.splice(0)) if (alive(pid)) process.kill(pid, 'SIGKILL');
    wrapper = undefined;
    dir.remove();
  });

  /** `node wrapper.js` running `toolgate gateway` as its child, as npx and pnpm do; its pids once serving. */
  async function startWrapped() {
    const config = dir.write(
      'toolgate.yaml',
      `auth: { tokens: [{ token: tok-0123456789abcdef-0123456789abcdef, identity: { tenant: acme, principal: bot } }] }
upstreams: { shop: { command: [node, ${JSON.stringify(fixtureServer)}] } }
tenants: { acme: { upstreams: [shop] } }
`,
    );
    const gatewayArgv = [
      process.execPath,
      '--import',
      tsxLoader,
      cliPath,
      'gateway',
      '--config',
      config,
      '--port',
      '0',
    ];
    const script = `const { spawn } = require('node:child_process');
const [command, ...args] = JSON.parse(process.argv[1]);
const child = spawn(command, args, { stdio: ['ignore', 'inherit', 'ignore'] });
child.on('exit', (code) => process.exit(code ?? 1));`;
    wrapper = spawn(process.execPath, ['-e', script, JSON.stringify(gatewayArgv)], {
      cwd: repoRoot,
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    started.push(wrapper.pid!);
    let stdout = '';
    wrapper.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    await waitFor(
      () => (stdout.includes('listening on') ? true : undefined),
      30_000,
      'the gateway to listen',
    );
    const gateway = childrenOf(wrapper.pid!)[0]!;
    started.push(gateway);
    const upstream = await waitFor(
      () =>
        childrenOf(gateway).find((pid) =>
          readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('upstream.mjs'),
        ),
      10_000,
      'the upstream to start',
    );
    started.push(upstream);
    return { wrapper: wrapper.pid!, gateway, upstream };
  }

  it.each(['SIGKILL', 'SIGTERM'] as const)(
    'stops, with its upstream, when the wrapper dies by %s',
    async (signal) => {
      const pids = await startWrapped();
      expect([pids.gateway, pids.upstream].every(alive)).toBe(true);
      // The stand-in wrapper passes no signal on: only the gateway's own watch can stop it.
      process.kill(pids.wrapper, signal);
      await waitFor(
        () => (alive(pids.gateway) || alive(pids.upstream) ? undefined : true),
        10_000,
        'both to exit',
      );
      expect(alive(pids.gateway)).toBe(false);
      expect(alive(pids.upstream)).toBe(false);
    },
    60_000,
  );
});
