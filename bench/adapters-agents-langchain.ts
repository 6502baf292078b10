// `pnpm bench:adapters:agents`: what the OpenAI Agents and LangChain adapters cost per tool call.
// Each framework runs its own loop on the peers' workload — one `echo` tool, N calls per run, a
// scripted model — once with a plain framework tool and once through the adapter (canonical chain,
// no gates configured, so every gate passes). Process CPU time per run, the variants' runs
// interleaved; the figure is the median per-call difference to the plain run (budget: 10 µs).

import os from 'node:os';
import { AIMessage } from '@langchain/core/messages';
import { fakeModel } from '@langchain/core/testing';
import { tool as langchainTool } from '@langchain/core/tools';
import {
  Agent,
  RunContext,
  Runner,
  setTracingDisabled,
  tool as agentsTool,
  Usage,
  type FunctionTool,
  type Model,
} from '@openai/agents';
import { createDispatcher, defineTool, type Dispatcher } from '@toolgate/core';
import { governedTools as langchainGoverned, toolgateMiddleware } from '@toolgate/langchain';
import { canonicalChain } from '@toolgate/middleware';
import { governedTools as agentsGoverned } from '@toolgate/openai-agents';
import { createAgent } from 'langchain';

const CALLS_PER_RUN = Number(process.env.CALLS_PER_RUN ?? 20);
const RUN_MS = Number(process.env.RUN_MS ?? 20_000);
const WARM_RUNS = 20;
const BUDGET_US = 10;

const echoSchema = {
  type: 'object',
  properties: { text: { type: 'string' } },
  required: ['text'],
  additionalProperties: false,
} as const;

function echoDispatcher(): Dispatcher {
  const echo = defineTool({
    name: 'echo',
    description: 'Echo the text.',
    inputSchema: echoSchema,
    execute: ({ text }) => text,
  });
  return createDispatcher({ tools: [echo], chain: canonicalChain() });
}

const cpuMs = () => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
};

type Run = () => Promise<void>;

// --- OpenAI Agents SDK ----------------------------------------------------------------------------

setTracingDisabled(true);

/** Turn one: N echo calls at once; turn two: a final message. */
function agentsModel(): Model {
  const calls = Array.from({ length: CALLS_PER_RUN }, (_, i) => ({
    type: 'function_call' as const,
    name: 'echo',
    callId: `call_${i}`,
    status: 'completed' as const,
    arguments: `{"text":"hello ${i}"}`,
  }));
  const done = {
    type: 'message' as const,
    role: 'assistant' as const,
    status: 'completed' as const,
    content: [{ type: 'output_text' as const, text: 'done' }],
  };
  return {
    async getResponse({ input }) {
      const answered =
        typeof input !== 'string' && input.some((item) => item.type === 'function_call_result');
      return { usage: new Usage(), output: answered ? [done] : calls };
    },
    getStreamedResponse: () => {
      throw new Error('not scripted');
    },
  };
}

function agentsRun(tools: FunctionTool[]): Run {
  const agent = new Agent({ name: 'bench', instructions: 'Echo.', model: agentsModel(), tools });
  const runner = new Runner({ tracingDisabled: true });
  return async () => {
    const result = await runner.run(agent, 'go');
    if (result.finalOutput !== 'done')
      throw new Error(`bench: the agents run ended with ${String(result.finalOutput)}`);
  };
}

const plainAgentsEcho = agentsTool({
  name: 'echo',
  description: 'Echo the text.',
  parameters: echoSchema as never,
  strict: false,
  execute: (input) => (input as { text: string }).text,
});

// --- LangChain ------------------------------------------------------------------------------------

/** LangChain's fake model, refilled per run: N echo calls at once, then a final message. */
function langchainRun(
  make: (model: ReturnType<typeof fakeModel>) => { invoke(input: unknown): Promise<unknown> },
): Run {
  const model = fakeModel();
  const agent = make(model);
  const calls = Array.from({ length: CALLS_PER_RUN }, (_, i) => ({
    name: 'echo',
    args: { text: `hello ${i}` },
    id: `call_${i}`,
  }));
  return async () => {
    model.respondWithTools(calls).respond(new AIMessage('done'));
    const result = (await agent.invoke({ messages: 'go' })) as { messages: { content: unknown }[] };
    if (result.messages.at(-1)?.content !== 'done')
      throw new Error('bench: the langchain run did not finish');
  };
}

const plainLangchainEcho = langchainTool(async ({ text }: { text: string }) => text, {
  name: 'echo',
  description: 'Echo the text.',
  schema: echoSchema as never,
});

// --- the tool call alone: what the framework's loop does per call, without the model turns ---------

const INVOKES_PER_RUN = 500;

function repeated(call: () => Promise<unknown>): Run {
  return async () => {
    for (let i = 0; i < INVOKES_PER_RUN; i++) await call();
  };
}

function agentsInvoke(echo: FunctionTool): Run {
  const context = new RunContext();
  const signal = new AbortController().signal;
  const toolCall = {
    type: 'function_call' as const,
    name: 'echo',
    callId: 'call_0',
    arguments: '{"text":"hello"}',
  };
  return repeated(() => echo.invoke(context, toolCall.arguments, { toolCall, signal }));
}

const langchainCall = { name: 'echo', args: { text: 'hello' }, id: 'call_0', type: 'tool_call' as const };

function langchainInvoke(echo: { invoke(call: typeof langchainCall): Promise<unknown> }): Run {
  return repeated(() => echo.invoke(langchainCall));
}

/** `wrapToolCall` as LangChain's ToolNode calls it; the handler is never reached for a governed tool. */
function middlewareInvoke(): Run {
  const middleware = toolgateMiddleware(echoDispatcher());
  const wrap = middleware.wrapToolCall!;
  const request = {
    toolCall: langchainCall,
    tool: middleware.tools![0],
    state: { messages: [] },
    runtime: { context: undefined, signal: new AbortController().signal },
  } as unknown as Parameters<typeof wrap>[0];
  const handler = () => {
    throw new Error('bench: the middleware handed a governed call to LangChain');
  };
  return repeated(() => Promise.resolve(wrap(request, handler)));
}

// --- measuring -----------------------------------------------------------------------------------

interface Variant {
  readonly name: string;
  readonly run: Run;
  readonly perCallUs: number[];
}

// No forced collection between runs: after a full GC, V8 sweeps the heap lazily as the next run
// allocates, which would bill the whole heap's sweep to whichever variant allocates more.
async function timed(run: Run, callsPerRun: number): Promise<number> {
  const started = cpuMs();
  await run();
  return ((cpuMs() - started) * 1000) / callsPerRun;
}

const median = (values: readonly number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

/**
 * Runs the variants in turn, one run each, until `RUN_MS` of CPU is spent: neighbours in time share
 * the machine's load, so the median of their paired differences is the adapter's cost.
 */
async function measure(framework: string, callsPerRun: number, variants: Variant[]): Promise<boolean> {
  for (let i = 0; i < WARM_RUNS; i++) for (const variant of variants) await variant.run();
  const started = cpuMs();
  while (cpuMs() - started < RUN_MS) {
    for (const variant of variants) variant.perCallUs.push(await timed(variant.run, callsPerRun));
  }
  const [plain, ...governed] = variants;
  const pairs = plain!.perCallUs.length;
  const lines = [
    `\n${framework}: ${callsPerRun} echo calls per run, ${pairs} runs of each variant, interleaved`,
    '| variant | µs per call (median) | adapter cost per call: median of paired differences (IQR) |',
    '| --- | --- | --- |',
    `| ${plain!.name} | ${median(plain!.perCallUs).toFixed(1)} | — |`,
  ];
  let ok = true;
  for (const variant of governed) {
    const differences = variant.perCallUs.map((us, i) => us - plain!.perCallUs[i]!).sort((a, b) => a - b);
    const cost = median(differences);
    const q1 = differences[Math.floor(pairs / 4)]!;
    const q3 = differences[Math.floor((3 * pairs) / 4)]!;
    const within = cost <= BUDGET_US;
    ok &&= within;
    lines.push(
      `| ${variant.name} | ${median(variant.perCallUs).toFixed(1)} | ${cost.toFixed(1)} µs (${q1.toFixed(1)} to ${q3.toFixed(1)}), ${within ? 'within' : '**over**'} ${BUDGET_US} µs |`,
    );
  }
  process.stdout.write(`${lines.join('\n')}\n`);
  return ok;
}

const variant = (name: string, run: Run): Variant => ({ name, run, perCallUs: [] });

process.stdout.write(
  `node ${process.version}, ${os.cpus()[0]?.model ?? 'cpu'} × ${os.cpus().length}, load ${os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}\n`,
);

const agentsCallOk = await measure('OpenAI Agents SDK, FunctionTool.invoke alone', INVOKES_PER_RUN, [
  variant('plain SDK tool()', agentsInvoke(plainAgentsEcho)),
  variant('governedTools(dispatcher)', agentsInvoke(agentsGoverned(echoDispatcher())[0]!)),
]);

const langchainCallOk = await measure('LangChain, the tool call alone', INVOKES_PER_RUN, [
  variant('plain tool().invoke', langchainInvoke(plainLangchainEcho)),
  variant('governedTools(dispatcher)[0].invoke', langchainInvoke(langchainGoverned(echoDispatcher())[0]!)),
  variant('toolgateMiddleware(dispatcher).wrapToolCall', middlewareInvoke()),
]);

const agentsOk = await measure('OpenAI Agents SDK (Runner.run)', CALLS_PER_RUN, [
  variant('plain SDK tool()', agentsRun([plainAgentsEcho])),
  variant('governedTools(dispatcher)', agentsRun(agentsGoverned(echoDispatcher()))),
]);

const langchainOk = await measure('LangChain createAgent', CALLS_PER_RUN, [
  variant(
    'plain tool()',
    langchainRun((model) => createAgent({ model, tools: [plainLangchainEcho] })),
  ),
  variant(
    'governedTools(dispatcher)',
    langchainRun((model) => createAgent({ model, tools: langchainGoverned(echoDispatcher()) })),
  ),
  variant(
    'toolgateMiddleware(dispatcher)',
    langchainRun((model) =>
      createAgent({ model, tools: [], middleware: [toolgateMiddleware(echoDispatcher())] }),
    ),
  ),
]);

process.exitCode = agentsCallOk && langchainCallOk && agentsOk && langchainOk ? 0 : 1;
