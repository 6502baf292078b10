// `pnpm pack:gateway [folder]`: packs @toolgate/gateway and every @toolgate/* package it depends on
// into one folder (default ./dist-gateway), so the `toolgate` command installs where the repository
// never was, in one command:
//
//   npm install -g ./dist-gateway/*.tgz
//
// npm resolves the gateway's @toolgate/* dependencies to the sibling tarballs given on the same
// command line; nothing of ours is fetched from the registry (those names are not published).
// Needs the build (packages/*/dist): `pnpm install` makes it, `pnpm build` remakes it.

import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath, URL } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const out = resolve(process.argv[2] ?? join(root, 'dist-gateway'));

/** The workspace packages @toolgate/gateway needs at run time (dependencies, transitively), by folder. */
function runtimeClosure() {
  const folders = new Map();
  for (const name of readdirSync(join(root, 'packages'))) {
    const manifest = join(root, 'packages', name, 'package.json');
    if (existsSync(manifest)) folders.set(JSON.parse(readFileSync(manifest, 'utf8')).name, name);
  }
  const needed = new Set();
  const visit = (pkg) => {
    if (needed.has(pkg)) return;
    needed.add(pkg);
    const manifest = JSON.parse(
      readFileSync(join(root, 'packages', folders.get(pkg), 'package.json'), 'utf8'),
    );
    for (const dep of Object.keys(manifest.dependencies ?? {})) if (folders.has(dep)) visit(dep);
  };
  visit('@toolgate/gateway');
  return [...needed].map((pkg) => folders.get(pkg));
}

const folders = runtimeClosure();
const unbuilt = folders.filter((name) => !existsSync(join(root, 'packages', name, 'dist', 'index.js')));
if (unbuilt.length > 0) {
  console.error(`pack:gateway: not built: ${unbuilt.join(', ')}. Run \`pnpm build\` first.`);
  process.exit(1);
}

mkdirSync(out, { recursive: true });
for (const file of readdirSync(out)) if (file.endsWith('.tgz')) rmSync(join(out, file));
// pnpm pack rewrites workspace: ranges to the real versions in each tarball's package.json.
const filters = folders.flatMap((name) => ['--filter', `./packages/${name}`]);
const packed = spawnSync('npx', ['-y', 'pnpm@12.4.2', '-r', ...filters, 'pack', '--pack-destination', out], {
  cwd: root,
  encoding: 'utf8',
  stdio: ['ignore', 'pipe', 'pipe'],
});
const tarballs = existsSync(out)
  ? readdirSync(out)
      .filter((file) => file.endsWith('.tgz'))
      .sort()
  : [];
if (packed.status !== 0 || tarballs.length !== folders.length) {
  process.stderr.write(`${packed.stdout}${packed.stderr}`);
  console.error(`pack:gateway: expected ${folders.length} tarballs in ${out}, found ${tarballs.length}`);
  process.exit(1);
}
const near = relative(process.cwd(), out);
const shown = near === '' ? '.' : near.startsWith('..') ? out : near;
console.log(`pack:gateway: ${tarballs.length} tarballs in ${shown}:`);
for (const file of tarballs) console.log(`  ${file}`);
console.log(`install the toolgate command with:\n  npm install -g ${shown}/*.tgz`);
