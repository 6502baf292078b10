// Runs bench/cold.ts in fresh processes. It is bundled first (esbuild, from the TypeScript sources),
// so the child is plain node: its peak RSS is the library's and the workload's, not a TS loader's.

import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { build, type Plugin } from 'esbuild';
import { spreadOf, type Spread } from './measure';

interface AgentFigures {
  readonly buildMs: number;
  readonly firstCallMs: number;
  readonly runMs: number;
}

interface ColdFigures {
  readonly first: AgentFigures;
  readonly second: AgentFigures;
  readonly fiftyFirstMs: number;
  readonly fiftySameMs: number;
  readonly fiftySecondMs: number;
  readonly fiftyWarmMs: number;
  readonly runsRssMb: number;
  readonly maxRssMb: number;
  readonly baselineRssMb: number;
}

export interface ColdStart {
  readonly processes: number;
  readonly first: { readonly buildMs: Spread; readonly firstCallMs: Spread; readonly runMs: Spread };
  readonly second: { readonly buildMs: Spread; readonly firstCallMs: Spread; readonly runMs: Spread };
  readonly fiftyFirstMs: Spread;
  readonly fiftySameMs: Spread;
  readonly fiftySecondMs: Spread;
  readonly fiftyWarmMs: Spread;
  readonly runsRssMb: Spread;
  readonly maxRssMb: Spread;
  readonly baselineRssMb: Spread;
}

const agentSpread = (runs: readonly ColdFigures[], which: 'first' | 'second') => ({
  buildMs: spreadOf(runs.map((r) => r[which].buildMs)),
  firstCallMs: spreadOf(runs.map((r) => r[which].firstCallMs)),
  runMs: spreadOf(runs.map((r) => r[which].runMs)),
});

// The workspace packages from their sources, as tsx runs them, rather than from a build that may be stale.
const sourcesOfWorkspace: Plugin = {
  name: 'toolgate-sources',
  setup(builder) {
    builder.onResolve({ filter: /^@toolgate\/[a-z-]+$/ }, (args) => ({
      path: new URL(`../packages/${args.path.slice('@toolgate/'.length)}/src/index.ts`, import.meta.url)
        .pathname,
    }));
  },
};

/** Bundles bench/cold.ts once and runs it in `processes` fresh node processes, one after another. */
export async function coldStart(processes: number): Promise<ColdStart> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'toolgate-bench-'));
  try {
    const outfile = path.join(dir, 'cold.mjs');
    await build({
      entryPoints: [new URL('./cold.ts', import.meta.url).pathname],
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      outfile,
      logLevel: 'error',
      plugins: [sourcesOfWorkspace],
      // ajv's CommonJS inside an ES module bundle needs a require.
      banner: {
        js: "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);",
      },
    });
    const runs: ColdFigures[] = [];
    for (let i = 0; i < processes; i++) {
      const baseline = execFileSync(process.execPath, ['-e', 'console.log(process.resourceUsage().maxRSS)'], {
        encoding: 'utf8',
      });
      const line = execFileSync(process.execPath, [outfile], { encoding: 'utf8' }).trim();
      runs.push({ ...(JSON.parse(line) as ColdFigures), baselineRssMb: Number(baseline) / 1024 });
    }
    return {
      processes,
      first: agentSpread(runs, 'first'),
      second: agentSpread(runs, 'second'),
      fiftyFirstMs: spreadOf(runs.map((r) => r.fiftyFirstMs)),
      fiftySameMs: spreadOf(runs.map((r) => r.fiftySameMs)),
      fiftySecondMs: spreadOf(runs.map((r) => r.fiftySecondMs)),
      fiftyWarmMs: spreadOf(runs.map((r) => r.fiftyWarmMs)),
      runsRssMb: spreadOf(runs.map((r) => r.runsRssMb)),
      maxRssMb: spreadOf(runs.map((r) => r.maxRssMb)),
      baselineRssMb: spreadOf(runs.map((r) => r.baselineRssMb)),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
