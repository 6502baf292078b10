// Bundles the portable suite and runs it on Node, Bun, Deno and workerd (through Miniflare), each
// binary from the npm registry. Prints a table, writes RESULTS.md, and exits non-zero when a runtime
// that started failed a case or read a refusal differently from ajv on Node. A runtime whose binary
// cannot start is reported as skipped, with the reason.
// The runtimes (~320 MB) are not part of the workspace install: only this check needs them, so they are
// fetched here, once, into portability/.runtimes (see runtimes.ts).

import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { build } from 'esbuild';
import type { RuntimeReport } from './entry';
import { installedRuntimes, type Runtimes } from './runtimes';

const here = dirname(fileURLToPath(import.meta.url));
const out = join(here, '.out');
const run = promisify(execFile);
const RUN_TIMEOUT_MS = 120_000;

/** The part of Miniflare's API this check uses (the package lives outside the workspace). */
interface MiniflareModule {
  readonly Miniflare: new (options: { modules: boolean; script: string; compatibilityDate: string }) => {
    dispatchFetch(url: string): Promise<{ json(): Promise<unknown> }>;
    dispose(): Promise<void>;
  };
}

interface Outcome {
  readonly runtime: string;
  readonly version: string;
  readonly report?: RuntimeReport;
  readonly skipped?: string;
}

async function bundle(): Promise<void> {
  await build({
    entryPoints: { cli: join(here, 'cli.ts'), worker: join(here, 'worker.ts') },
    outdir: out,
    bundle: true,
    format: 'esm',
    platform: 'neutral',
    mainFields: ['module', 'main'],
    target: 'es2022',
    tsconfig: join(here, '..', 'tsconfig.json'),
    logLevel: 'error',
  });
}

const firstLine = (text: string) => text.trim().split('\n')[0] ?? '';

async function version(command: string, args: string[]): Promise<string> {
  const { stdout } = await run(command, args, { timeout: 30_000 });
  return /\d+\.\d+\.\d+/.exec(stdout)?.[0] ?? firstLine(stdout);
}

async function onCommandLine(
  runtime: string,
  command: string,
  versionArgs: string[],
  runArgs: string[],
): Promise<Outcome> {
  let found: string;
  try {
    found = await version(command, versionArgs);
  } catch (error) {
    return { runtime, version: '-', skipped: `${runtime} could not start: ${firstLine(String(error))}` };
  }
  const { stdout } = await run(command, [...runArgs, join(out, 'cli.js')], {
    timeout: RUN_TIMEOUT_MS,
    maxBuffer: 16 * 1024 * 1024,
  });
  return {
    runtime,
    version: found,
    report: JSON.parse(firstLine(stdout.split('\n').filter(Boolean).pop() ?? '')),
  };
}

async function onWorkerd(runtimes: Runtimes): Promise<Outcome> {
  const require = createRequire(runtimes.miniflare);
  const workerdVersion = (
    require(require.resolve('workerd/package.json', { paths: [dirname(runtimes.miniflare)] })) as {
      version: string;
    }
  ).version;
  const { Miniflare } = (await import(pathToFileURL(runtimes.miniflare).href)) as MiniflareModule;
  let miniflare: InstanceType<MiniflareModule['Miniflare']> | undefined;
  try {
    miniflare = new Miniflare({
      modules: true,
      script: readFileSync(join(out, 'worker.js'), 'utf8'),
      compatibilityDate: '2025-01-01',
    });
    const response = await miniflare.dispatchFetch('http://portable.test/');
    return { runtime: 'workerd', version: workerdVersion, report: (await response.json()) as RuntimeReport };
  } catch (error) {
    return {
      runtime: 'workerd',
      version: workerdVersion,
      skipped: `workerd could not start: ${firstLine(String(error))}`,
    };
  } finally {
    await miniflare?.dispose();
  }
}

interface Row {
  readonly runtime: string;
  readonly version: string;
  readonly evalFree: string;
  readonly ajv: string;
  readonly sameRefusals: string;
  readonly failures: readonly string[];
}

function rowOf(outcome: Outcome, reference: RuntimeReport['suites'][number]['refusals']): Row {
  if (outcome.report === undefined) {
    return {
      runtime: outcome.runtime,
      version: outcome.version,
      evalFree: 'skipped',
      ajv: 'skipped',
      sameRefusals: '-',
      failures: [],
    };
  }
  const failures: string[] = [];
  const tally = (validator: string) => {
    const suite = outcome.report!.suites.find((s) => s.validator === validator);
    if (suite === undefined) return undefined;
    for (const c of suite.cases.filter((c) => !c.ok))
      failures.push(`${outcome.runtime} / ${validator}: ${c.name}: ${c.error}`);
    return `${suite.cases.filter((c) => c.ok).length}/${suite.cases.length} passed`;
  };
  const evalFree = tally('eval-free') ?? 'missing';
  const ajv =
    tally('ajv') ??
    (/forbids code generation.*evalFreeValidator/.test(outcome.report.ajvRefusal ?? '')
      ? 'refused at build (no code generation), as expected'
      : `unexpected: ${outcome.report.ajvRefusal}`);
  if (ajv.startsWith('unexpected')) failures.push(`${outcome.runtime}: ajv ${ajv}`);
  let same = 0;
  let total = 0;
  for (const suite of outcome.report.suites) {
    for (const refusal of suite.refusals) {
      total += 1;
      const expected = reference.find((r) => r.name === refusal.name)?.content;
      if (expected === refusal.content) same += 1;
      else
        failures.push(
          `${outcome.runtime} / ${suite.validator}: '${refusal.name}' reads differently from ajv on Node`,
        );
    }
  }
  return {
    runtime: outcome.runtime,
    version: outcome.version,
    evalFree,
    ajv,
    sameRefusals: `${same}/${total}`,
    failures,
  };
}

async function main(): Promise<number> {
  const runtimes = installedRuntimes();
  await bundle();
  const node = await onCommandLine('Node', process.execPath, ['--version'], []);
  const outcomes = [
    node,
    await onCommandLine('Bun', runtimes.bun, ['--version'], ['run']),
    await onCommandLine('Deno', runtimes.deno, ['--version'], ['run', '--quiet', '--no-prompt']),
    await onWorkerd(runtimes),
  ];
  const reference = node.report?.suites.find((s) => s.validator === 'ajv')?.refusals;
  if (reference === undefined) throw new Error('the Node run produced no ajv reference');
  const rows = outcomes.map((o) => rowOf(o, reference));
  const table = [
    '| runtime | version | suite, eval-free validator | suite, ajv | refusals identical to ajv on Node |',
    '| --- | --- | --- | --- | --- |',
    ...rows.map((r) => `| ${r.runtime} | ${r.version} | ${r.evalFree} | ${r.ajv} | ${r.sameRefusals} |`),
  ].join('\n');
  const skipped = outcomes.flatMap((o) => (o.skipped === undefined ? [] : [o.skipped]));
  const failures = rows.flatMap((r) => r.failures);
  console.log(table);
  for (const line of skipped) console.log(`skipped: ${line}`);
  for (const line of failures) console.log(`FAILED: ${line}`);
  writeFileSync(
    join(here, 'RESULTS.md'),
    `# Runs on\n\nWritten by \`pnpm runtimes\` (portability/run.ts): the portable suite, bundled once, run on each runtime.\n\n${table}\n${skipped.map((s) => `\nSkipped: ${s}`).join('')}\n`,
  );
  return failures.length === 0 ? 0 : 1;
}

process.exitCode = await main();
