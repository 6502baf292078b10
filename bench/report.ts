// Turns one run's figures into bench/RESULTS.md: machine, Node, date, every figure as a median with
// its spread, and each target of the issue marked met or missed.

import os from 'node:os';
import type { ColdStart } from './cold-start';
import type { Spread } from './measure';
import type { PeerFit } from './peers';

export interface PerCallRow {
  readonly name: string;
  /** µs per call over every sample. */
  readonly us: Spread;
  /** Per round median over the floor's; spread across rounds. */
  readonly overA: Spread;
  readonly overB: Spread;
  readonly batch: number;
}

export interface EventsRow {
  readonly chain: string;
  /** The chain with the default emitter and no listener, over the same chain with no emitter. */
  readonly zeroListeners: Spread;
  readonly allListeners: Spread;
  /** How often the core asked whether anyone listens, per dispatch. */
  readonly checksPerDispatch: number;
  /** Events delivered per dispatch with a listener on every event. */
  readonly eventsPerDispatch: number;
}

export interface Report {
  readonly date: Date;
  readonly loadAtStart: readonly number[];
  readonly settings: { readonly rounds: number; readonly msPerTask: number; readonly sampleMs: number };
  readonly largeResultChars: number;
  readonly perCall: PerCallRow[];
  ratios?: {
    readonly passive: Spread;
    readonly active: Spread;
    readonly activeLessStringify: Spread;
    readonly stringify: Spread;
    readonly roundRobin: Spread;
  };
  peers?: PeerFit;
  cold?: ColdStart;
  events?: readonly EventsRow[];
  tenants?: {
    readonly count: number;
    readonly deriveUs: number;
    readonly retainedBytes: number;
    readonly firstDispatchUs: number;
  };
  concurrent?: {
    readonly count: number;
    readonly wallMs: number;
    readonly cpuMs: number;
    readonly maxInFlight: number;
    readonly thrown: number;
    readonly notResult: number;
  };
  sequential?: {
    readonly count: number;
    readonly wallMs: number;
    readonly cpuMs: number;
    readonly heapStart: number;
    readonly heapEnd: number;
    readonly samples: readonly { readonly done: number; readonly heap: number }[];
    readonly notResult: number;
  };
  totalSeconds?: number;
}

// Task names the report reads figures from; bench/run.ts uses the same constants.
export const EMPTY_CHAIN = 'dispatcher alone, empty chain';
export const PASSIVE_CHAIN = 'passive canonical chain';
export const ACTIVE_CHAIN = 'active canonical chain';
export const STRINGIFY = 'JSON.stringify of the active result alone';

export const TARGETS = {
  passive: 2.0,
  active: 4.0,
  zeroListeners: 1.05,
  heapGrowthMb: 5,
  peerPerCallUs: 8,
  peerFixedMs: 1,
  peerRssMb: 60,
  secondBuildMs: 0.2,
} as const;

const percentOver = (ratio: number) => `${ratio >= 1 ? '+' : '−'}${fixed(Math.abs(ratio - 1) * 100, 1)}%`;

const MB = 1024 * 1024;

function fixed(value: number, digits: number): string {
  return value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

/** `3.21 ± 0.05` (median ± median absolute deviation). */
export function plusMinus(spread: Spread, digits = 2): string {
  return `${fixed(spread.median, digits)} ± ${fixed(spread.mad, digits)}`;
}

/** `1.83× (1.79–1.90)`: the median ratio, and the lowest and highest round. */
export function times(spread: Spread, digits = 2): string {
  return `${fixed(spread.median, digits)}× (${fixed(spread.min, digits)}–${fixed(spread.max, digits)})`;
}

const verdict = (met: boolean) => (met ? '**met**' : '**missed**');

export function targetRows(report: Report): string[][] {
  const rows: string[][] = [];
  const { ratios, sequential, concurrent } = report;
  if (ratios !== undefined) {
    rows.push([
      `passive canonical chain ≤ ${TARGETS.passive.toFixed(1)}× floor B`,
      times(ratios.passive),
      verdict(ratios.passive.median <= TARGETS.passive),
    ]);
    rows.push([
      `active chain ≤ ${TARGETS.active.toFixed(1)}× floor B plus its one serialization (${fixed(ratios.stringify.median, 2)}×)`,
      `${times(ratios.activeLessStringify)} + serialization; ${fixed(ratios.active.median, 2)}× all in`,
      verdict(ratios.activeLessStringify.median <= TARGETS.active),
    ]);
  }
  const { peers, cold } = report;
  if (peers !== undefined) {
    rows.push([
      `peers' workload: ≤ ${TARGETS.peerPerCallUs} µs per call`,
      `${plusMinus(peers.perCallUs)} µs`,
      verdict(peers.perCallUs.median <= TARGETS.peerPerCallUs),
    ]);
    rows.push([
      `peers' workload: ≤ ${TARGETS.peerFixedMs} ms fixed per run`,
      `${plusMinus(peers.fixedMs, 3)} ms`,
      verdict(peers.fixedMs.median <= TARGETS.peerFixedMs),
    ]);
  }
  if (cold !== undefined) {
    rows.push([
      `a fresh process's 200-call runs peak ≤ ${TARGETS.peerRssMb} MB RSS`,
      `${plusMinus(cold.runsRssMb, 1)} MB (bare node: ${fixed(cold.baselineRssMb.median, 1)} MB)`,
      verdict(cold.runsRssMb.median <= TARGETS.peerRssMb),
    ]);
    rows.push([
      `a second dispatcher over the same 50 tools builds in < ${TARGETS.secondBuildMs} ms (fresh process)`,
      `${plusMinus(cold.fiftySameMs, 3)} ms`,
      verdict(cold.fiftySameMs.median < TARGETS.secondBuildMs),
    ]);
    rows.push([
      `a dispatcher over 50 fresh tool objects whose schemas were seen builds in < ${TARGETS.secondBuildMs} ms`,
      `${plusMinus(cold.fiftySecondMs, 3)} ms in a fresh process; ${fixed(cold.fiftyWarmMs.median, 3)} ms once warm`,
      verdict(cold.fiftySecondMs.median < TARGETS.secondBuildMs),
    ]);
  }
  for (const row of report.events ?? []) {
    const { zeroListeners } = row;
    rows.push([
      `${row.chain}: zero listeners ≤ 5% over no emitter`,
      `${percentOver(zeroListeners.median)} (${percentOver(zeroListeners.min)} to ${percentOver(zeroListeners.max)})`,
      verdict(zeroListeners.median <= TARGETS.zeroListeners),
    ]);
  }
  if (sequential !== undefined) {
    const growth = (sequential.heapEnd - sequential.heapStart) / MB;
    rows.push([
      `${sequential.count.toLocaleString('en-US')} dispatches: retained heap growth ≤ ${TARGETS.heapGrowthMb} MB`,
      `${fixed(growth, 2)} MB`,
      verdict(growth <= TARGETS.heapGrowthMb),
    ]);
  }
  if (concurrent !== undefined) {
    rows.push([
      `${concurrent.count.toLocaleString('en-US')} concurrent complete with no error`,
      `${concurrent.count - concurrent.thrown - concurrent.notResult} results, ${concurrent.thrown} thrown, ${concurrent.notResult} other outcomes`,
      verdict(concurrent.thrown === 0 && concurrent.notResult === 0),
    ]);
  }
  return rows;
}

/** The misses explained from this run's own figures (medians, in multiples of floor B). */
function whereTheTimeGoes(report: Report): string[] {
  const overB = (name: string) => report.perCall.find((row) => row.name === name)?.overB.median;
  const empty = overB(EMPTY_CHAIN);
  const passive = overB(PASSIVE_CHAIN);
  const active = overB(ACTIVE_CHAIN);
  const stringify = overB(STRINGIFY);
  const lines: string[] = [];
  if (empty !== undefined && passive !== undefined) {
    lines.push(
      `The dispatcher alone (an empty chain) costs ${fixed(empty, 2)}× floor B: the work every call does around ` +
        `the chain. The passive chain's plan runs one gate, validate-args (ajv on one field), and files the other six ` +
        `gates' passes in their place; together they add ${fixed(passive - empty, 2)}× to ${fixed(passive, 2)}×.`,
    );
  }
  if (active !== undefined && passive !== undefined && stringify !== undefined) {
    lines.push(
      `Serializing the active tool's ${report.largeResultChars.toLocaleString('en-US')}-character result once, ` +
        `which any dispatcher must do to hand the model text and to measure the ceiling, costs ${fixed(stringify, 2)}× ` +
        `floor B by itself. The rest of the active chain over the passive one (${fixed(active - passive - stringify, 2)}×) ` +
        'is the work the tool asked for, and every gate runs for it: the checker asked twice, ajv on five fields, the ' +
        'artifact read from the in-memory store (which clones what it hands out, under a deadline timer because the ' +
        'store answers asynchronously), the credential resolved and wrapped, the result text searched for the ' +
        'secret, and the garbage all of it leaves.',
    );
  }
  return lines;
}

function peersAndColdStart(report: Report): string[] {
  const { peers, cold } = report;
  const out: string[] = [];
  if (peers !== undefined) {
    out.push("## The peers' workload");
    out.push('');
    out.push(
      table(
        ['', ''],
        [
          ['per call (slope between runs of 10 and 200 calls)', `${plusMinus(peers.perCallUs)} µs`],
          ['fixed per run (intercept)', `${plusMinus(peers.fixedMs, 3)} ms`],
          ['a whole run of 200 calls', `${plusMinus(peers.runMs, 2)} ms`],
          ['runs', String(peers.runs)],
        ],
      ),
    );
    out.push('');
    out.push(
      'As the AI SDK, LangChain and OpenAI Agents are measured: one `echo` tool, a scripted model, a fresh agent ' +
        'per run (its own tool object with the same schema text, `canonicalChain()` with five pass-through policy ' +
        'hooks added by `use`, `createDispatcher`), ajv validating every call. Runs of 10 and of 200 calls alternate; ' +
        'each pair gives one slope and one intercept, on the CPU clock, in this warm process.',
    );
    out.push('');
  }
  if (cold !== undefined) {
    const agent = (a: ColdStart['first']) =>
      `build ${plusMinus(a.buildMs, 2)} ms, first call ${plusMinus(a.firstCallMs, 2)} ms, 200 calls ${plusMinus(a.runMs, 1)} ms`;
    out.push('## Cold start');
    out.push('');
    out.push(
      table(
        ['', `median ± MAD over ${cold.processes} fresh processes (wall clock)`],
        [
          ['first agent in a process', agent(cold.first)],
          ['second agent in the same process', agent(cold.second)],
          ['50-tool dispatcher, first build (new schemas)', `${plusMinus(cold.fiftyFirstMs, 2)} ms`],
          [
            '50-tool dispatcher, second build (the same tool objects)',
            `${plusMinus(cold.fiftySameMs, 3)} ms`,
          ],
          [
            '50-tool dispatcher, third build (fresh tool objects, schemas seen)',
            `${plusMinus(cold.fiftySecondMs, 3)} ms`,
          ],
          [
            '50-tool dispatcher, later builds (fresh tool objects, median of 20)',
            `${plusMinus(cold.fiftyWarmMs, 3)} ms`,
          ],
          ['peak RSS after both agents (400 calls)', `${plusMinus(cold.runsRssMb, 1)} MB`],
          ['peak RSS at the end (after the 50-tool builds)', `${plusMinus(cold.maxRssMb, 1)} MB`],
          ['peak RSS of bare `node -e`', `${plusMinus(cold.baselineRssMb, 1)} MB`],
        ],
      ),
    );
    out.push('');
    out.push(
      '`bench/cold.ts`, bundled from the TypeScript sources with esbuild and run by plain node (no TypeScript loader ' +
        "in the process), so the RSS is the library's and the workload's. The first agent pays for loading and " +
        'compiling the modules, ajv and the first schema; the second finds the schema compiled and pays only for its ' +
        'own chain, dispatcher and plan.',
    );
    out.push('');
  }
  return out;
}

function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const line = (cells: readonly string[]) => `| ${cells.join(' | ')} |`;
  return [line(header), line(header.map(() => '---')), ...rows.map(line)].join('\n');
}

export function renderResults(report: Report): string {
  const cpus = os.cpus();
  const { settings, ratios, tenants, concurrent, sequential } = report;
  const out: string[] = [];
  out.push('# toolgate benchmark results');
  out.push('');
  out.push('Written by `pnpm bench` (bench/run.ts) from one run; every figure below comes from that run.');
  out.push('');
  out.push(
    table(
      ['', ''],
      [
        ['date', report.date.toISOString()],
        [
          'machine',
          `${cpus[0]?.model.trim() ?? 'unknown CPU'}, ${cpus.length} cores, ${fixed(os.totalmem() / 1024 / MB, 1)} GiB`,
        ],
        ['os', `${os.type()} ${os.release()} ${os.arch()}`],
        [
          'node',
          `${process.version} (V8 ${process.versions.v8}), --expose-gc, TypeScript sources through tsx`,
        ],
        [
          'load average at start / end',
          `${report.loadAtStart.map((l) => fixed(l, 2)).join(' ')} / ${os
            .loadavg()
            .map((l) => fixed(l, 2))
            .join(' ')}`,
        ],
        ['total run time', report.totalSeconds === undefined ? '?' : `${fixed(report.totalSeconds, 0)} s`],
      ],
    ),
  );
  out.push('');
  out.push('## Targets');
  out.push('');
  out.push(table(['target', 'measured', ''], targetRows(report)));
  out.push('');
  out.push(
    'Counted, not timed, in `packages/middleware/test/hot-path.test.ts` (so a regression fails CI): one ' +
      'koa-compose per chain and plan shape, one plan per chain and tool, one ajv compile per schema per process, no ' +
      'ajv instance for a new chain or dispatcher, one `JSON.stringify` of a result per dispatch.',
  );
  out.push('');
  const breakdown = whereTheTimeGoes(report);
  if (breakdown.length > 0) {
    out.push('## Where the time goes');
    out.push('');
    for (const line of breakdown) out.push(`- ${line}`);
    out.push('');
  }
  out.push('## Cost per call');
  out.push('');
  out.push(
    table(
      ['', 'µs per call', '× floor A', '× floor B', 'calls per sample'],
      report.perCall.map((row) => [
        row.name,
        plusMinus(row.us),
        times(row.overA, 1),
        times(row.overB),
        String(row.batch),
      ]),
    ),
  );
  out.push('');
  out.push(
    '- Floor A: `await tool.execute(args)` in a loop. Floor B: koa-compose of 8 no-op async middleware, composed ' +
      'once, around the same execute. Both floors and the passive chain call the same tool.',
  );
  out.push(
    '- Dispatcher alone: `createChain([])`, so what remains is the work every dispatch does around the chain: ' +
      'find the tool, copy and freeze the args, draw a call id, build the context, run the executor, serialize the ' +
      'result once, build the outcome.',
  );
  out.push(
    '- Passive: `canonicalChain()` with every gate present; the tool declares nothing, so its plan runs only ' +
      "validate-args (a one-field schema that ajv checks) and files the six other gates' ledger rows.",
  );
  out.push(
    `- Active: a synchronous checker that allows and governs \`payments\` (asked once for the tool's one capability), ` +
      `ajv on a 5-field object, an artifact ref resolved from \`inMemoryArtifacts()\`, an \`api_key\` credential ` +
      `resolved, and the ceiling measuring a ${report.largeResultChars.toLocaleString('en-US')}-character result.`,
  );
  out.push(
    '- JSON.stringify of the active result alone: the serialization any dispatcher does once per call, to hand the ' +
      'model its text and to measure the ceiling. It is part of the active figure.',
  );
  out.push(
    '- Check-in round trip: `dispatch` → `paused` → `resume(approved)` → `result`, one call per iteration ' +
      '(HMAC sign and verify with Web Crypto, the in-memory check-in store).',
  );
  out.push(
    '- Events: "no emitter" hands the dispatcher an emitter whose own `listenerCount` always answers 0, so the ' +
      'core builds and emits no event at all; it stands in for a build without an emitter, with no knob added to the ' +
      "public API. With zero listeners the only event work left is the check itself, a read of eventemitter3's " +
      'count of listened event types; the stand-in is called through its override at each check instead, so zero ' +
      'listeners can come out slightly below it.',
  );
  out.push('');
  const { events } = report;
  if (events !== undefined) {
    out.push('## Events');
    out.push('');
    out.push(
      table(
        [
          '',
          'zero listeners over no emitter',
          'one listener on every event over no emitter',
          'listener checks per dispatch',
          'events per dispatch, all heard',
        ],
        events.map((row) => [
          row.chain,
          times(row.zeroListeners, 3),
          times(row.allListeners, 3),
          String(row.checksPerDispatch),
          String(row.eventsPerDispatch),
        ]),
      ),
    );
    out.push('');
  }
  if (tenants !== undefined && ratios !== undefined) {
    out.push('## Per-tenant chains');
    out.push('');
    out.push(
      table(
        ['', ''],
        [
          [
            `derive one tenant chain from a base (\`base.use(policy)\`, ${tenants.count.toLocaleString('en-US')} of them)`,
            `${fixed(tenants.deriveUs, 2)} µs per chain`,
          ],
          ['retained heap per derived chain', `${fixed(tenants.retainedBytes, 0)} bytes`],
          [
            'first dispatch under each chain (build-time checks + compose, once)',
            `${fixed(tenants.firstDispatchUs, 2)} µs`,
          ],
          ['later dispatches, round-robin over every chain, over one tenant', times(ratios.roundRobin)],
        ],
      ),
    );
    out.push('');
    out.push(
      'A round-robin ratio near 1× shows each chain is composed once and reused: composing per call would cost ' +
        'the first-dispatch figure on every call.',
    );
    out.push('');
  }
  out.push(...peersAndColdStart(report));
  if (concurrent !== undefined || sequential !== undefined) {
    out.push('## Scale');
    out.push('');
    const rows: string[][] = [];
    if (concurrent !== undefined) {
      rows.push([
        `${concurrent.count.toLocaleString('en-US')} concurrent dispatches of an async tool (passive chain)`,
        `${fixed(concurrent.wallMs, 0)} ms wall, ${fixed(concurrent.cpuMs, 0)} ms CPU; ${concurrent.maxInFlight.toLocaleString('en-US')} in flight at once; ${concurrent.thrown} thrown, ${concurrent.notResult} not a result`,
      ]);
    }
    if (sequential !== undefined) {
      rows.push([
        `${sequential.count.toLocaleString('en-US')} sequential dispatches (active chain)`,
        `${fixed(sequential.wallMs / 1000, 1)} s wall, ${fixed((sequential.cpuMs * 1000) / sequential.count, 2)} µs CPU per dispatch; ${sequential.notResult} not a result`,
      ]);
      rows.push([
        'heap after forced GC: start → end',
        `${fixed(sequential.heapStart / MB, 2)} MB → ${fixed(sequential.heapEnd / MB, 2)} MB (${fixed((sequential.heapEnd - sequential.heapStart) / MB, 2)} MB)`,
      ]);
      rows.push([
        'heap after forced GC along the way',
        sequential.samples.map((s) => `${fixed(s.done / 1000, 0)}k: ${fixed(s.heap / MB, 2)} MB`).join(', '),
      ]);
    }
    out.push(table(['', ''], rows));
    out.push('');
  }
  out.push('## Method');
  out.push('');
  out.push(
    `- Clock: the process's CPU time (\`process.cpuUsage()\`, user + system, GC threads included), not wall time, ` +
      `so other work on a shared machine does not inflate a figure. Wall time is given where concurrency is the point.`,
  );
  out.push(
    `- tinybench 5 with that clock. One sample times a batch of calls of about ${settings.sampleMs} ms and is ` +
      `divided by the batch size. ${settings.rounds} rounds; each round runs every task for ${settings.msPerTask} ms ` +
      `in a rotated order.`,
  );
  out.push(
    '- µs per call: median of all samples ± median absolute deviation. Ratios: per round, the median of one ' +
      'task over the median of the other; shown as the median round, with the lowest and highest round in brackets.',
  );
  out.push(
    '- The TypeScript sources run through tsx, so `pnpm bench` always measures the current source without a build. ' +
      "tsx's esbuild transform keeps function names by wrapping each named closure in `__name()` when it is created; " +
      'code that creates named closures on every call (the wants gate makes three) pays for that here, not in the ' +
      'built packages.',
  );
  out.push('- Targets are checked against the median.');
  out.push('');
  return out.join('\n');
}
