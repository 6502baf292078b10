// `pnpm bench:frameworks`: a governed call beside the Vercel AI SDK's tool call, in one process that
// has loaded and run every framework the adapters serve (AI SDK, OpenAI Agents, LangChain), so their
// async hooks and AsyncLocalStorage are live as in an app that uses them. A full GC runs before each
// timed run. The AI SDK's tool call is measured two ways: a `generateText` run whose model calls one
// tool (the call as an app makes it, model steps included; the measure #35's figures were taken with),
// and the marginal cost of one more call in a step (100- less 10-call runs, the loop's fixed cost out).
// Also: the passive canonical chain over koa-compose(8), with and without an async hook enabled, the
// passive chain right after a full GC before the other frameworks load (what a GC alone costs the next
// calls), and the promises one call makes. Process CPU time; rounds interleave the tasks; ratios are
// per round, medians across rounds. Prints one table; nothing asserted. A third variant forces the GC
// and then idles 50 ms before timing: V8 finishes a full GC's sweeping on helper threads, and the
// process CPU time of the run that follows pays for it, so that variant tells the call from the
// collector's leftover work.

import { createHook } from 'node:async_hooks';
import os from 'node:os';
import { AIMessage } from '@langchain/core/messages';
import { fakeModel } from '@langchain/core/testing';
import { tool as langchainTool } from '@langchain/core/tools';
import { Agent, Runner, setTracingDisabled, tool as agentsTool, Usage, type Model } from '@openai/agents';
import { generateText, isStepCount, jsonSchema, tool, type JSONSchema7, type ToolSet } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';
import { createAgent } from 'langchain';
import { floorB, passiveArgs, passiveDispatcher, passiveTool } from './fixtures';
import { cpuNowMs, spreadOf, type Spread } from './measure';

const QUICK = process.env['TOOLGATE_BENCH_QUICK'] === '1';
const ROUNDS = QUICK ? 3 : 9;
const LONG = 100;
const SHORT = 10;
const DISPATCHES = QUICK ? 5_000 : 20_000;

const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error('bench: run node with --expose-gc (pnpm bench:frameworks does)');
const out = (line: string) => process.stdout.write(`${line}\n`);

const echoSchema = {
  type: 'object',
  properties: { text: { type: 'string' } },
  required: ['text'],
  additionalProperties: false,
} as const;

// ---- AI SDK: generateText with its mock model, the model calling `echo` N times in one step ----

const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 1, text: 1, reasoning: 0 },
};
const aiTools: ToolSet = {
  echo: tool({
    description: 'Echo a text back.',
    inputSchema: jsonSchema<{ text: string }>(echoSchema as unknown as JSONSchema7),
    execute: (args: { text: string }) => args.text,
  }),
};
function toolStep(calls: number) {
  return {
    content: Array.from({ length: calls }, (_, i) => ({
      type: 'tool-call' as const,
      toolCallId: `c${i}`,
      toolName: 'echo',
      input: JSON.stringify({ text: `hello ${i}` }),
    })),
    finishReason: { unified: 'tool-calls' as const, raw: undefined },
    usage,
    warnings: [],
  };
}
const textStep = {
  content: [{ type: 'text' as const, text: 'done' }],
  finishReason: { unified: 'stop' as const, raw: undefined },
  usage,
  warnings: [],
};
const steps = new Map([LONG, SHORT, 1].map((n) => [n, toolStep(n)]));
async function aiSdkRun(calls: number): Promise<void> {
  let step = 0;
  const first = steps.get(calls)!;
  const model = new MockLanguageModelV4({ doGenerate: async () => (step++ === 0 ? first : textStep) });
  const result = await generateText({ model, tools: aiTools, prompt: 'go', stopWhen: isStepCount(3) });
  if (result.toolResults.length !== calls) throw new Error('bench: the AI SDK loop did not run');
}

// ---- The other frameworks, each run once so whatever hooks they install are live ----

async function loadOthers(): Promise<void> {
  setTracingDisabled(true);
  const echo = agentsTool({
    name: 'echo',
    description: 'Echo the text.',
    parameters: echoSchema as never,
    strict: false,
    execute: (input) => (input as { text: string }).text,
  });
  const call = { type: 'function_call' as const, name: 'echo', callId: 'c0', status: 'completed' as const };
  const done = {
    type: 'message' as const,
    role: 'assistant' as const,
    status: 'completed' as const,
    content: [{ type: 'output_text' as const, text: 'done' }],
  };
  const model: Model = {
    async getResponse({ input }) {
      const answered = typeof input !== 'string' && input.some((i) => i.type === 'function_call_result');
      return { usage: new Usage(), output: answered ? [done] : [{ ...call, arguments: '{"text":"a"}' }] };
    },
    getStreamedResponse: () => {
      throw new Error('not scripted');
    },
  };
  const agent = new Agent({ name: 'bench', instructions: 'Echo.', model, tools: [echo] });
  await new Runner({ tracingDisabled: true }).run(agent, 'go');
  const fake = fakeModel();
  fake.respondWithTools([{ name: 'echo', args: { text: 'a' }, id: 'c0' }]).respond(new AIMessage('done'));
  const lcEcho = langchainTool(({ text }: { text: string }) => text, {
    name: 'echo',
    description: 'Echo the text.',
    schema: echoSchema as never,
  });
  await createAgent({ model: fake, tools: [lcEcho] }).invoke({ messages: 'go' });
}

// ---- Timing ----

/** Forced GC, then idle long enough for its concurrent sweeping to finish off the clock. */
const SETTLE = 'settled';

/** CPU µs per call of `times` calls of `call`, after a full GC when `collect` (and a settle). */
async function perCall(
  call: () => Promise<unknown>,
  times: number,
  collect: boolean | typeof SETTLE,
): Promise<number> {
  if (collect !== false) gc!();
  if (collect === SETTLE) await new Promise((resolve) => setTimeout(resolve, 50));
  const started = cpuNowMs();
  for (let i = 0; i < times; i++) await call();
  return ((cpuNowMs() - started) * 1000) / times;
}

/** AI SDK µs per tool call: runs of two lengths, so the loop's fixed cost per run drops out. */
async function aiSdkPerCall(collect: boolean | typeof SETTLE): Promise<number> {
  const runs = QUICK ? 10 : 30;
  const long = await perCall(() => aiSdkRun(LONG), runs, collect);
  const short = await perCall(() => aiSdkRun(SHORT), runs, collect);
  return (long - short) / (LONG - SHORT);
}

/** AI SDK µs per `generateText` run whose model calls one tool (two model steps): a call as an app makes it. */
async function aiSdkOneCall(collect: boolean): Promise<number> {
  return perCall(() => aiSdkRun(1), QUICK ? 30 : 100, collect);
}

const dispatcher = passiveDispatcher();
const call = { toolName: passiveTool.schema.name, args: passiveArgs };
const governed = () => dispatcher.dispatch(call);

/** Promises one governed call makes, as an async hook sees them (awaits' throwaway ones included). */
async function promisesPerCall(): Promise<number> {
  let count = 0;
  const hook = createHook({
    init(_id, type) {
      if (type === 'PROMISE') count++;
    },
  });
  hook.enable();
  let fewest = Infinity;
  for (let i = 0; i < 5; i++) {
    count = 0;
    await governed();
    // Less the one throwaway promise of this loop's own await.
    fewest = Math.min(fewest, count - 1);
  }
  hook.disable();
  return fewest;
}

const fmt = (values: readonly number[], digits = 2) => {
  const s: Spread = spreadOf(values);
  return `${s.median.toFixed(digits)} (${s.min.toFixed(digits)}–${s.max.toFixed(digits)})`;
};

async function main(): Promise<void> {
  out(`frameworks: node ${process.version}, ${os.cpus().length} cores, load ${os.loadavg()[0]!.toFixed(1)}`);
  const promises = await promisesPerCall();
  for (let i = 0; i < 3; i++) await aiSdkRun(LONG);
  await perCall(governed, DISPATCHES, false);
  await perCall(floorB, DISPATCHES, false);

  // Part 1, before the other frameworks load: the passive chain over koa-compose(8), with and without
  // an async hook (a no-op one) enabled.
  const passive = { floorB: [] as number[], passive: [] as number[], ratio: [] as number[] };
  const hooked = { floorB: [] as number[], passive: [] as number[], ratio: [] as number[] };
  const afterGc = { passive: [] as number[], ratio: [] as number[] };
  const alone = { aiSdk: [] as number[], ratio: [] as number[] };
  const noop = createHook({ init() {} });
  for (let round = 0; round < ROUNDS; round++) {
    const b = await perCall(floorB, DISPATCHES, false);
    const p = await perCall(governed, DISPATCHES, false);
    const gp = await perCall(governed, DISPATCHES, true);
    const a1 = await aiSdkOneCall(false);
    noop.enable();
    const hb = await perCall(floorB, DISPATCHES, false);
    const hp = await perCall(governed, DISPATCHES, false);
    noop.disable();
    passive.floorB.push(b);
    passive.passive.push(p);
    passive.ratio.push(p / b);
    hooked.floorB.push(hb);
    hooked.passive.push(hp);
    hooked.ratio.push(hp / hb);
    afterGc.passive.push(gp);
    afterGc.ratio.push(gp / p);
    alone.aiSdk.push(a1);
    alone.ratio.push(a1 / p);
  }

  // Part 2, every framework loaded and run once: the AI SDK's tool call over a governed call, with a
  // full GC before each timed run, and without.
  await loadOthers();
  const collected = { aiSdk: [] as number[], governed: [] as number[], ratio: [] as number[] };
  const uncollected = { aiSdk: [] as number[], governed: [] as number[], ratio: [] as number[] };
  const settled = { aiSdk: [] as number[], governed: [] as number[], ratio: [] as number[] };
  const oneCall = { aiSdk: [] as number[], governed: [] as number[], ratio: [] as number[] };
  for (let round = 0; round < ROUNDS; round++) {
    for (const [collect, into] of [
      [true, collected],
      [false, uncollected],
      [SETTLE, settled],
    ] as const) {
      const a = await aiSdkPerCall(collect);
      const g = await perCall(governed, DISPATCHES, collect);
      into.aiSdk.push(a);
      into.governed.push(g);
      into.ratio.push(a / g);
    }
    const one = await aiSdkOneCall(true);
    const g = await perCall(governed, DISPATCHES, true);
    oneCall.aiSdk.push(one);
    oneCall.governed.push(g);
    oneCall.ratio.push(one / g);
  }

  out('');
  out(`| measure (median of ${ROUNDS} rounds, min–max; CPU µs) | value |`);
  out('| --- | ---: |');
  out(`| floor B: koa-compose, 8 no-op, µs/call | ${fmt(passive.floorB, 3)} |`);
  out(`| passive canonical chain, µs/call | ${fmt(passive.passive, 3)} |`);
  out(`| **passive canonical chain ÷ floor B** | **${fmt(passive.ratio)}×** |`);
  out(
    `| passive chain right after a full GC (no other framework loaded), µs/call | ${fmt(afterGc.passive, 3)} |`,
  );
  out(`| passive chain right after a full GC ÷ without the GC | ${fmt(afterGc.ratio)}× |`);
  out(`| floor B with a no-op async hook enabled, µs/call | ${fmt(hooked.floorB, 3)} |`);
  out(`| passive chain with a no-op async hook enabled, µs/call | ${fmt(hooked.passive, 3)} |`);
  out(`| passive ÷ floor B, async hook enabled | ${fmt(hooked.ratio)}× |`);
  out(
    `| AI SDK alone, no forced GC: µs per generateText run whose model calls one tool | ${fmt(alone.aiSdk)} |`,
  );
  out(
    `| AI SDK run with one tool call ÷ governed call, AI SDK alone, no forced GC | ${fmt(alone.ratio, 1)}× |`,
  );
  out(
    `| every framework loaded, GC before each run: AI SDK µs per marginal tool call (${LONG}- less ${SHORT}-call runs) | ${fmt(collected.aiSdk)} |`,
  );
  out(`| every framework loaded, GC before each run: governed call µs | ${fmt(collected.governed, 3)} |`);
  out(
    `| AI SDK marginal tool call ÷ governed call, every framework loaded, GC before each run | ${fmt(collected.ratio, 1)}× |`,
  );
  out(
    `| the same without the forced GC: AI SDK µs, governed µs | ${fmt(uncollected.aiSdk)}, ${fmt(uncollected.governed, 3)} |`,
  );
  out(
    `| AI SDK marginal tool call ÷ governed call, every framework loaded, no forced GC | ${fmt(uncollected.ratio, 1)}× |`,
  );
  out(
    `| the same with the forced GC and 50 ms idle before each timed run: AI SDK µs, governed µs | ${fmt(settled.aiSdk)}, ${fmt(settled.governed, 3)} |`,
  );
  out(
    `| AI SDK marginal tool call ÷ governed call, every framework loaded, GC then idle | ${fmt(settled.ratio, 1)}× |`,
  );
  out(
    `| every framework loaded, GC before each run: AI SDK µs per generateText run whose model calls one tool, governed µs | ${fmt(oneCall.aiSdk)}, ${fmt(oneCall.governed, 3)} |`,
  );
  out(
    `| **AI SDK run with one tool call ÷ governed call, every framework loaded, GC before each run** | **${fmt(oneCall.ratio, 1)}×** |`,
  );
  out(
    `| promises per governed call (passive chain, async tool), as an async hook counts them | ${promises} |`,
  );
}

await main();
