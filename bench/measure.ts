// How the benchmark measures: process CPU time (so other work on a shared machine does not count),
// calls batched so one tinybench sample spans milliseconds, and rounds that interleave every task so
// each ratio is taken between neighbours in time.

import { Bench } from 'tinybench';
import { verify, type Call } from './fixtures';

/** Milliseconds of CPU this process has used (user + system, all its threads, GC included). */
export function cpuNowMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

export interface Spread {
  /** Median. */
  readonly median: number;
  /** Median absolute deviation. */
  readonly mad: number;
  readonly min: number;
  readonly max: number;
  readonly n: number;
}

export function spreadOf(values: readonly number[]): Spread {
  if (values.length === 0) throw new Error('spreadOf: no values');
  const sorted = [...values].sort((a, b) => a - b);
  const median = medianSorted(sorted);
  const mad = medianSorted(sorted.map((v) => Math.abs(v - median)).sort((a, b) => a - b));
  return { median, mad, min: sorted[0]!, max: sorted[sorted.length - 1]!, n: sorted.length };
}

function medianSorted(sorted: readonly number[]): number {
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** Runs `call` `times` times, one after another. */
async function repeat(call: Call, times: number): Promise<void> {
  for (let i = 0; i < times; i++) await call();
}

/**
 * How many calls make one sample of about `sampleMs`, judged on the wall clock once the call is warm:
 * while V8 still compiles it, the CPU clock also counts the compiler's threads.
 */
export async function batchSize(call: Call, sampleMs: number): Promise<number> {
  const warmUntil = performance.now() + 150;
  while (performance.now() < warmUntil) await repeat(call, 50);
  let times = 50;
  for (;;) {
    const started = performance.now();
    await repeat(call, times);
    const spent = performance.now() - started;
    if (spent >= 20) return Math.max(1, Math.round((times * sampleMs) / spent));
    times *= 2;
  }
}

export interface Task {
  readonly name: string;
  readonly call: Call;
  /** Calls per tinybench sample. */
  readonly batch: number;
}

export interface RoundsResult {
  /** Per task: µs per call of every sample from every round. */
  readonly samples: ReadonlyMap<string, number[]>;
  /** Per task: the median µs per call of each round. */
  readonly roundMedians: ReadonlyMap<string, number[]>;
}

/**
 * Runs every task in `rounds` tinybench runs, rotating their order each round, and keeps each
 * sample as µs per call (a sample times one batch of calls on the CPU clock).
 */
export async function runRounds(
  tasks: readonly Task[],
  rounds: number,
  msPerTask: number,
): Promise<RoundsResult> {
  const samples = new Map<string, number[]>(tasks.map((t) => [t.name, []]));
  const roundMedians = new Map<string, number[]>(tasks.map((t) => [t.name, []]));
  for (let round = 0; round < rounds; round++) {
    const bench = new Bench({
      now: cpuNowMs,
      time: msPerTask,
      iterations: 5,
      warmupTime: round === 0 ? msPerTask : msPerTask / 5,
      warmupIterations: 2,
      throws: true,
    });
    const order = tasks.map((_, i) => tasks[(i + round) % tasks.length]!);
    for (const task of order) bench.add(task.name, () => repeat(task.call, task.batch));
    for (const task of order) await verify(task.call);
    await bench.run();
    for (const task of order) await verify(task.call);
    for (const task of order) {
      const result = bench.getTask(task.name)?.result;
      if (result === undefined || result.error !== undefined)
        throw result?.error ?? new Error(`${task.name}: no result`);
      const perCall = result.latency.samples.map((ms) => (ms * 1000) / task.batch);
      samples.get(task.name)!.push(...perCall);
      roundMedians.get(task.name)!.push(spreadOf(perCall).median);
    }
  }
  return { samples, roundMedians };
}

/** Per round, `task`'s median over `floor`'s median; the spread is across rounds. */
export function ratioOf(result: RoundsResult, task: string, floor: string): Spread {
  const over = result.roundMedians.get(task)!;
  const under = result.roundMedians.get(floor)!;
  return spreadOf(over.map((v, i) => v / under[i]!));
}

/** Heap in use after forcing full collections (node runs with --expose-gc). */
export function settledHeapBytes(): number {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc === undefined) throw new Error('bench: run node with --expose-gc (pnpm bench does)');
  for (let i = 0; i < 4; i++) gc();
  return process.memoryUsage().heapUsed;
}
