// Bun, Deno and workerd (through Miniflare) come from the npm registry, pinned, installed on demand
// into portability/.runtimes by npm: the workspace install stays light for everyone who never runs
// the portability check. A second run finds them installed and starts at once.

import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The pinned versions; bump them here, and RESULTS.md says which ran. */
export const RUNTIME_PACKAGES: Readonly<Record<string, string>> = {
  bun: '1.4.5',
  deno: '2.9.6',
  miniflare: '4.20260730.0',
};

export interface Runtimes {
  /** Paths of the bun and deno executables, and of miniflare's entry module. */
  readonly bun: string;
  readonly deno: string;
  readonly miniflare: string;
}

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '.runtimes');

/** Installs the pinned runtimes when missing or at another version, then says where they are. */
export function installedRuntimes(): Runtimes {
  const manifest = join(root, 'package.json');
  const wanted = JSON.stringify({ private: true, dependencies: RUNTIME_PACKAGES }, null, 2);
  const current = existsSync(manifest) ? readFileSync(manifest, 'utf8') : '';
  if (current !== wanted || !existsSync(join(root, 'node_modules'))) {
    mkdirSync(root, { recursive: true });
    writeFileSync(manifest, wanted);
    console.log(
      `runtimes: installing ${Object.entries(RUNTIME_PACKAGES)
        .map(([n, v]) => `${n}@${v}`)
        .join(', ')} into portability/.runtimes`,
    );
    // npm rather than pnpm: this folder is outside the workspace on purpose.
    const install = spawnSync('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error'], {
      cwd: root,
      stdio: 'inherit',
    });
    if (install.status !== 0)
      throw new Error('runtimes: npm install failed in portability/.runtimes (see above)');
  }
  const modules = join(root, 'node_modules');
  return {
    bun: join(modules, '.bin', 'bun'),
    deno: join(modules, '.bin', 'deno'),
    miniflare: join(modules, 'miniflare', 'dist', 'src', 'index.js'),
  };
}
