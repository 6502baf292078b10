// `pnpm bench:otel`: what `@toolgate/otel` adds to a governed dispatch. The same dispatcher runs bare,
// wrapped with no SDK registered (the no-op tracer and meter every library ships with), wrapped with a
// no-op tracer passed in (a span is still started and ended), and wrapped with a real SDK tracer that
// records and drops spans. A second bare task measures the noise: two identical
// tasks differ only by it. Time is process CPU time; tasks are interleaved and rotated each round.

import { ProxyTracerProvider } from '@opentelemetry/api';
import { Bench } from 'tinybench';
import { BasicTracerProvider, SimpleSpanProcessor, type SpanExporter } from '@opentelemetry/sdk-trace-base';
import { createDispatcher, defineTool, type Dispatcher } from '@toolgate/core';
import { canonicalChain } from '@toolgate/middleware';
import { otel } from '@toolgate/otel';

const ROUNDS = 11;
const MS_PER_TASK = 300;
const BATCH = 200;

const cpuNowMs = () => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
};

const tool = defineTool({
  name: 'lookup',
  description: 'a passive tool: no declarations',
  inputSchema: { type: 'object', properties: { order: { type: 'string' } } },
  execute: async (args: { order?: string }) => ({ order: args.order ?? '', status: 'shipped' }),
});

/** Spans are built and ended for real, then dropped: the cost of recording, not of shipping. */
const dropping: SpanExporter = {
  export: (_spans, done) => done({ code: 0 }),
  shutdown: () => Promise.resolve(),
};
const recording = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(dropping)] });

const BARE = 'bare dispatch';
const NOISE = 'bare dispatch (again)';
const NOOP = 'otel, no SDK (no-op tracer)';
const NOOP_GIVEN = 'otel, a no-op tracer passed in';
const SDK = 'otel, SDK tracer recording';
// One dispatcher under every task, so the tasks differ only by the wrapper.
const base = createDispatcher({ tools: [tool], chain: canonicalChain() });
const tasks: [string, Dispatcher][] = [
  [BARE, base],
  [NOISE, base],
  [NOOP, otel(base)],
  [NOOP_GIVEN, otel(base, { tracer: new ProxyTracerProvider().getTracer('bench') })],
  [SDK, otel(base, { tracer: recording.getTracer('bench') })],
];

const call = { toolName: 'lookup', args: { order: 'A-1' } };
async function batch(dispatcher: Dispatcher): Promise<void> {
  for (let i = 0; i < BATCH; i++) {
    const outcome = await dispatcher.dispatch(call);
    if (outcome.kind !== 'result') throw new Error(`bench: expected a result, got ${outcome.kind}`);
  }
}

const median = (values: readonly number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};
const mad = (values: readonly number[]) => {
  const m = median(values);
  return median(values.map((v) => Math.abs(v - m)));
};

async function main(): Promise<void> {
  const perRound = new Map<string, number[]>(tasks.map(([name]) => [name, []]));
  for (let round = 0; round < ROUNDS; round++) {
    const bench = new Bench({
      now: cpuNowMs,
      time: MS_PER_TASK,
      warmupTime: round === 0 ? MS_PER_TASK : MS_PER_TASK / 5,
      throws: true,
    });
    for (let i = 0; i < tasks.length; i++) {
      const [name, dispatcher] = tasks[(i + round) % tasks.length]!;
      bench.add(name, () => batch(dispatcher));
    }
    await bench.run();
    for (const [name] of tasks) {
      const result = bench.getTask(name)?.result;
      if (result === undefined || result.error !== undefined)
        throw result?.error ?? new Error(`${name}: no result`);
      perRound.get(name)!.push(median(result.latency.samples.map((ms) => (ms * 1000) / BATCH)));
    }
  }
  const bare = perRound.get(BARE)!;
  const rows = tasks.map(([name]) => {
    const us = perRound.get(name)!;
    const ratios = us.map((v, i) => v / bare[i]!);
    return { name, us: median(us), ratio: median(ratios), spread: mad(ratios) };
  });
  const noise = rows.find((r) => r.name === NOISE)!;
  const noop = rows.find((r) => r.name === NOOP)!;
  const log = (line: string) => process.stdout.write(`${line}\n`);
  log(
    `@toolgate/otel: ${ROUNDS} rounds × ${tasks.length} tasks × ${MS_PER_TASK} ms of CPU, ${BATCH} calls per sample`,
  );
  log('');
  log('| task | µs per call | × bare (median of rounds) | ± (MAD) |');
  log('| --- | ---: | ---: | ---: |');
  for (const row of rows)
    log(`| ${row.name} | ${row.us.toFixed(2)} | ${row.ratio.toFixed(3)} | ${row.spread.toFixed(3)} |`);
  log('');
  // Within noise: the no-op wrapper's distance from 1 is no more than the noise task's, plus their spreads.
  const within = Math.abs(noop.ratio - 1) <= Math.abs(noise.ratio - 1) + noise.spread + noop.spread;
  log(
    `no-op tracer: × ${noop.ratio.toFixed(3)} ± ${noop.spread.toFixed(3)} vs the noise task's × ${noise.ratio.toFixed(3)} ± ${noise.spread.toFixed(3)}: ${within ? 'within noise' : 'ABOVE noise'}`,
  );
  await recording.shutdown();
}

await main();
