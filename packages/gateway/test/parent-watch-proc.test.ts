// watchParent against a made-up /proc: which processes above the gateway count as wrappers, and
// that a wrapper's exit (its entry gone, or its pid reused by another process) stops the gateway.

import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { watchParent } from '../src/commands/parent-watch';
import { tempDir, type TempDir } from './helpers';

describe('watchParent', () => {
  let dir: TempDir;
  const watches: { stop(): void }[] = [];
  beforeEach(() => (dir = tempDir()));
  afterEach(() => {
    for (const watch of watches.splice(0)) watch.stop();
    dir.remove();
  });

  /** A /proc entry: `comm`, its parent, start time and command line. */
  function proc(pid: number, comm: string, ppid: number, argv: string[], started = 1000) {
    const at = join(dir.path, String(pid));
    mkdirSync(at, { recursive: true });
    writeFileSync(join(at, 'stat'), `${pid} (${comm}) S ${ppid} ${'0 '.repeat(17)}${started} 0 0\n`);
    writeFileSync(join(at, 'cmdline'), `${argv.join('\0')}\0`);
  }
  const gone = (pid: number) => rmSync(join(dir.path, String(pid)), { recursive: true, force: true });

  function watch() {
    const reasons: string[] = [];
    watches.push(watchParent((why) => reasons.push(why), { intervalMs: 10, procRoot: dir.path }));
    return reasons;
  }
  const settle = () => new Promise((resolve) => setTimeout(resolve, 60));

  it('stops when a wrapper above it exits: pnpm under sh -c under npm exec', async () => {
    proc(process.pid, 'MainThread', 500, ['node', 'cli.js', 'gateway']);
    proc(500, 'sh', 400, ['sh', '-c', 'toolgate gateway']);
    proc(400, 'pnpm', 300, ['pnpm', 'toolgate', 'gateway']);
    proc(300, 'npm exec pnpm@1', 200, ['npm exec pnpm@12.4.2 toolgate gateway']);
    proc(200, 'bash', 1, ['-bash']);
    const reasons = watch();
    await settle();
    expect(reasons).toEqual([]);
    gone(300);
    await settle();
    expect(reasons).toEqual(['the npm it runs under (pid 300) exited']);
  });

  it('treats a reused pid as the wrapper gone', async () => {
    proc(process.pid, 'MainThread', 500, ['node', 'cli.js']);
    proc(500, 'MainThread', 200, ['/usr/bin/node', 'tsx/dist/cli.mjs'], 1000);
    proc(200, 'zsh', 1, ['zsh']);
    const reasons = watch();
    proc(500, 'MainThread', 200, ['/usr/bin/node', 'tsx/dist/cli.mjs'], 2000);
    await settle();
    expect(reasons).toEqual(['the node it runs under (pid 500) exited']);
  });

  it('does not tie itself to an interactive shell, nohup or a service manager', async () => {
    proc(process.pid, 'MainThread', 500, ['node', 'cli.js']);
    proc(500, 'bash', 1, ['-bash']);
    const reasons = watch();
    gone(500);
    await settle();
    expect(reasons).toEqual([]);
  });
});
