// Runs on `pnpm install` (the root `prepare` script): builds the packages when a package's dist/ is
// missing or older than its sources, so a fresh clone's first install leaves importable packages
// (packages/*/dist) and a warm install stays instant. CI builds in a step of its own, so it skips.

import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, URL } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));

if (process.env.CI) {
  console.log('build-if-stale: CI builds in its own step; skipping');
  process.exit(0);
}

/** Newest (or oldest) modification time of the files under `path`. */
function mtimes(path) {
  if (!existsSync(path)) return [];
  const stat = statSync(path);
  if (!stat.isDirectory()) return [stat.mtimeMs];
  return readdirSync(path).flatMap((name) => (name === 'node_modules' ? [] : mtimes(join(path, name))));
}

const packagesDir = join(root, 'packages');
const stale = readdirSync(packagesDir).filter((name) => {
  const dir = join(packagesDir, name);
  if (!existsSync(join(dir, 'package.json')) || !existsSync(join(dir, 'tsup.config.ts'))) return false;
  const built = mtimes(join(dir, 'dist'));
  if (built.length === 0) return true;
  const inputs = [
    ...mtimes(join(dir, 'src')),
    ...mtimes(join(dir, 'package.json')),
    ...mtimes(join(dir, 'tsup.config.ts')),
    ...mtimes(join(dir, 'tsconfig.json')),
    ...mtimes(join(root, 'tsconfig.base.json')),
  ];
  return Math.max(...inputs) > Math.min(...built);
});

if (stale.length === 0) {
  console.log('build-if-stale: every package is built');
  process.exit(0);
}

console.log(`build-if-stale: building the packages (${stale.join(', ')} not built or out of date)`);
// Inside `pnpm install`, npm_execpath is the pnpm that runs us; otherwise fall back to npx.
const pnpm = process.env.npm_execpath;
// Only the stale packages: tsup leaves sibling packages external, so the others need no rebuild.
const build = ['-r', ...stale.flatMap((name) => ['--filter', `./packages/${name}`]), 'run', 'build'];
const [command, args] =
  pnpm === undefined || pnpm === ''
    ? ['npx', ['-y', 'pnpm@12.4.2', ...build]]
    : /\.[cm]?js$/.test(pnpm)
      ? [process.execPath, [pnpm, ...build]]
      : [pnpm, build];
// The build's own log (a few hundred lines) is kept back; a failure prints it whole.
const started = Date.now();
const run = spawnSync(command, args, { cwd: root, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
if (run.status !== 0) {
  process.stdout.write(run.stdout ?? '');
  process.stderr.write(run.stderr ?? '');
  console.error(
    'build-if-stale: the build failed (its log is above); the demo and tests run from source, but packages/*/dist is incomplete. Run `pnpm build` to see it again.',
  );
  process.exit(run.status ?? 1);
}
console.log(`build-if-stale: built ${stale.length} package(s) in ${((Date.now() - started) / 1000).toFixed(1)} s`);
