// A fresh process's first dispatchers, run as a child of bench/run.ts so nothing is warm: the first
// agent (build, first call, a whole run of 200 calls), then a second one; a 50-tool dispatcher built
// twice; and the process's peak RSS. Prints one JSON line.

import { createDispatcher, defineTool, type Tool } from '@toolgate/core';
import { canonicalChain } from '@toolgate/middleware';
import { PEER_CALLS, peerAgent } from './peers';

const wallNow = () => performance.now();

async function agentRun(): Promise<{ buildMs: number; firstCallMs: number; runMs: number }> {
  const started = wallNow();
  const dispatcher = peerAgent();
  const built = wallNow();
  let first = 0;
  for (let i = 0; i < PEER_CALLS; i++) {
    const outcome = await dispatcher.dispatch({ toolName: 'echo', args: { text: `message ${i}` } });
    if (outcome.kind !== 'result') throw new Error(`bench: cold run ${outcome.kind}: ${outcome.content}`);
    if (i === 0) first = wallNow();
  }
  const done = wallNow();
  return { buildMs: built - started, firstCallMs: first - built, runMs: done - started };
}

/** Fifty tools, each its own schema; built fresh each time, so only the schema text repeats. */
function manyTools(): Tool<never, unknown>[] {
  return Array.from(
    { length: 50 },
    (_, i) =>
      defineTool({
        name: `tool_${i}`,
        description: `Tool number ${i}.`,
        inputSchema: {
          type: 'object',
          properties: { [`field_${i}`]: { type: 'string', minLength: 1 }, limit: { type: 'integer' } },
          required: [`field_${i}`],
        },
        execute: async () => i,
      }) as Tool<never, unknown>,
  );
}

function buildMany(tools = manyTools()): number {
  const started = wallNow();
  createDispatcher({ tools, chain: canonicalChain() });
  return wallNow() - started;
}

const first = await agentRun();
const second = await agentRun();
// Peak RSS of the process up to here: a fresh process, two agents and their 400 calls.
const runsRssMb = process.resourceUsage().maxRSS / 1024;
const fiftyTools = manyTools();
const fiftyFirst = buildMany(fiftyTools);
// The same tool objects again (tools defined once, a dispatcher per request), then fresh ones.
const fiftySame = buildMany(fiftyTools);
const fiftySecond = buildMany();
// Later builds, once the build code itself is warm.
const fiftyWarm: number[] = [];
for (let i = 0; i < 20; i++) fiftyWarm.push(buildMany());
fiftyWarm.sort((a, b) => a - b);
process.stdout.write(
  `${JSON.stringify({
    first,
    second,
    fiftyFirstMs: fiftyFirst,
    fiftySameMs: fiftySame,
    fiftySecondMs: fiftySecond,
    fiftyWarmMs: fiftyWarm[fiftyWarm.length >> 1],
    runsRssMb,
    maxRssMb: process.resourceUsage().maxRSS / 1024,
  })}\n`,
);
