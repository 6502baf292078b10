// `pnpm bench:adapters`: the Vercel AI SDK's own loop (generateText with its mock model) on the peers'
// workload, one `echo` tool called N times in one step, with and without the toolgate adapter. The
// adapter's own cost per call (over the SDK's plain run and the dispatcher's own cost) must stay
// within 10 µs. Self-contained, so it runs alone; prints one table.

import { aiSdkTools } from '@toolgate/ai-sdk';
import { createChain, createDispatcher, defineTool, type Dispatcher } from '@toolgate/core';
import { canonicalChain } from '@toolgate/middleware';
import { generateText, isStepCount, jsonSchema, tool, type JSONSchema7, type ToolSet } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';

const CALLS = 100;
const ROUNDS = 7;
const RUNS_PER_ROUND = 40;
const BUDGET_US = 10;

const schema = {
  type: 'object',
  properties: { text: { type: 'string' } },
  required: ['text'],
  additionalProperties: false,
} as const;
const echo = defineTool({
  name: 'echo',
  description: 'Echo a text back.',
  inputSchema: schema,
  execute: (args: { text: string }) => args.text,
});
const plainTools: ToolSet = {
  echo: tool({
    description: 'Echo a text back.',
    inputSchema: jsonSchema<{ text: string }>(schema as unknown as JSONSchema7),
    execute: (args: { text: string }) => args.text,
  }),
};

const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 1, text: 1, reasoning: 0 },
};
const toolStep = {
  content: Array.from({ length: CALLS }, (_, i) => ({
    type: 'tool-call' as const,
    toolCallId: `c${i}`,
    toolName: 'echo',
    input: JSON.stringify({ text: `hello ${i}` }),
  })),
  finishReason: { unified: 'tool-calls' as const, raw: undefined },
  usage,
  warnings: [],
};
const textStep = {
  content: [{ type: 'text' as const, text: 'done' }],
  finishReason: { unified: 'stop' as const, raw: undefined },
  usage,
  warnings: [],
};

/** One generateText run: the model calls `echo` CALLS times in one step, then answers. */
async function loop(tools: ToolSet): Promise<void> {
  let step = 0;
  const model = new MockLanguageModelV4({ doGenerate: async () => (step++ === 0 ? toolStep : textStep) });
  const result = await generateText({ model, tools, prompt: 'go', stopWhen: isStepCount(3) });
  if (result.toolResults.length !== CALLS || result.text !== 'done')
    throw new Error('bench: the loop did not run');
}

/** The same CALLS dispatches straight through the dispatcher, no framework. */
async function direct(dispatcher: Dispatcher): Promise<void> {
  for (let i = 0; i < CALLS; i++) {
    const outcome = await dispatcher.dispatch({ toolName: 'echo', args: { text: `hello ${i}` } });
    if (outcome.kind !== 'result') throw new Error(`bench: ${outcome.content}`);
  }
}

const cpuNowUs = (): number => {
  const { user, system } = process.cpuUsage();
  return user + system;
};

const emptyDispatcher = createDispatcher({ tools: [echo], chain: createChain([]) });
const governedDispatcher = createDispatcher({ tools: [echo], chain: canonicalChain() });
const identity = { tenant: 'acme' };
const adaptedEmpty = aiSdkTools(emptyDispatcher, { identity });
const adaptedGoverned = aiSdkTools(governedDispatcher, { identity });
const tasks: Record<string, () => Promise<void>> = {
  'ai-sdk loop, plain tool': () => loop(plainTools),
  'ai-sdk loop, aiSdkTools, empty chain': () => loop(adaptedEmpty),
  'ai-sdk loop, aiSdkTools, canonical chain': () => loop(adaptedGoverned),
  'dispatcher alone, empty chain': () => direct(emptyDispatcher),
  'bare execute': async () => {
    for (let i = 0; i < CALLS; i++) await echo.execute({ text: `hello ${i}` }, undefined as never);
  },
};

const names = Object.keys(tasks);
const medians = new Map<string, number[]>(names.map((n) => [n, []]));
for (const name of names) for (let i = 0; i < 5; i++) await tasks[name]!();
for (let round = 0; round < ROUNDS; round++) {
  for (let k = 0; k < names.length; k++) {
    const name = names[(k + round) % names.length]!;
    const perCall: number[] = [];
    for (let run = 0; run < RUNS_PER_ROUND; run++) {
      const started = cpuNowUs();
      await tasks[name]!();
      perCall.push((cpuNowUs() - started) / CALLS);
    }
    perCall.sort((a, b) => a - b);
    medians.get(name)!.push(perCall[perCall.length >> 1]!);
  }
}

const median = (values: readonly number[]): number => [...values].sort((a, b) => a - b)[values.length >> 1]!;
const us = (name: string): number => median(medians.get(name)!);
const plain = us('ai-sdk loop, plain tool');
const withAdapter = us('ai-sdk loop, aiSdkTools, empty chain');
const dispatchCost = us('dispatcher alone, empty chain') - us('bare execute');
const adapterCost = withAdapter - plain - dispatchCost;

const out = (line: string) => process.stdout.write(`${line}\n`);
out(
  `AI SDK adapter, ${CALLS} echo calls per run, median of ${ROUNDS} rounds (CPU µs per call), node ${process.version}`,
);
out('');
out('| run | µs/call | over the plain SDK run |');
out('| --- | ---: | ---: |');
for (const name of names) out(`| ${name} | ${us(name).toFixed(2)} | ${(us(name) - plain).toFixed(2)} |`);
out('');
out(`dispatcher's own cost (empty chain over bare execute): ${dispatchCost.toFixed(2)} µs/call`);
out(
  `adapter's own cost (over the plain SDK run, less the dispatcher's): ${adapterCost.toFixed(2)} µs/call (budget ${BUDGET_US} µs)`,
);
out(`adapter + dispatcher, empty chain, over the plain SDK run: ${(withAdapter - plain).toFixed(2)} µs/call`);
if (withAdapter - plain > BUDGET_US) {
  out(`FAIL: the adapter costs more than ${BUDGET_US} µs per call over the SDK's plain run.`);
  process.exitCode = 1;
}
