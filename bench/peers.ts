// The workload the peer frameworks are measured on: one `echo` tool, a scripted model, a fresh agent
// (dispatcher, chain, hooks, tool) per run of N calls, five pass-through policy hooks and ajv. A run's
// cost is fitted as fixed + N × per call from runs of two lengths, measured on the CPU clock.

import { createDispatcher, defineTool, type Dispatcher, type Middleware } from '@toolgate/core';
import { canonicalChain } from '@toolgate/middleware';
import { cpuNowMs, spreadOf, type Spread } from './measure';

export const PEER_CALLS = 200;
const SHORT_RUN = 10;

/** What the scripted model asks for, turn by turn: the same tool, a different message each time. */
const script = Array.from({ length: PEER_CALLS }, (_, i) => ({
  toolName: 'echo',
  args: { text: `message ${i}` },
  toolCallId: `call_${i}`,
}));

/** A pass-through policy hook, as a user writes one: it looks at the call and lets it through. */
function hook(i: number): Middleware {
  return {
    name: `hook-${i}`,
    run: async (ctx, next) => {
      if (ctx.toolName === '') ctx.deny('no tool');
      await next();
    },
  };
}

/** A fresh agent: its own tool object (the same schema text), chain and hooks, built per run. */
export function peerAgent(): Dispatcher {
  const echo = defineTool({
    name: 'echo',
    description: 'Echoes the text back.',
    inputSchema: {
      type: 'object',
      properties: { text: { type: 'string' } },
      required: ['text'],
      additionalProperties: false,
    },
    execute: async ({ text }) => ({ text }),
  });
  let chain = canonicalChain();
  for (let i = 1; i <= 5; i++) chain = chain.use(hook(i));
  return createDispatcher({ tools: [echo], chain });
}

/** One run: a fresh agent, then the scripted model's first `calls` turns, each fed back as it would be. */
export async function peerRun(calls: number): Promise<number> {
  const dispatcher = peerAgent();
  let transcript = 0;
  for (let i = 0; i < calls; i++) {
    const outcome = await dispatcher.dispatch(script[i]!);
    if (outcome.kind !== 'result') throw new Error(`bench: peer run ${outcome.kind}: ${outcome.content}`);
    transcript += outcome.content.length;
  }
  return transcript;
}

export interface PeerFit {
  /** µs per call: the slope between runs of SHORT_RUN and PEER_CALLS calls. */
  readonly perCallUs: Spread;
  /** ms per run that does not grow with N. */
  readonly fixedMs: Spread;
  /** A whole run of PEER_CALLS calls, in ms. */
  readonly runMs: Spread;
  readonly runs: number;
}

/** Alternates short and long runs `pairs` times; each pair gives one slope and one intercept. */
export async function peerFit(pairs: number): Promise<PeerFit> {
  for (let i = 0; i < 3; i++) await peerRun(PEER_CALLS);
  const perCall: number[] = [];
  const fixed: number[] = [];
  const run: number[] = [];
  for (let i = 0; i < pairs; i++) {
    let started = cpuNowMs();
    await peerRun(SHORT_RUN);
    const short = cpuNowMs() - started;
    started = cpuNowMs();
    await peerRun(PEER_CALLS);
    const long = cpuNowMs() - started;
    const slope = (long - short) / (PEER_CALLS - SHORT_RUN);
    perCall.push(slope * 1000);
    fixed.push(short - slope * SHORT_RUN);
    run.push(long);
  }
  return { perCallUs: spreadOf(perCall), fixedMs: spreadOf(fixed), runMs: spreadOf(run), runs: pairs * 2 };
}
