// `pnpm bench:guards`: what the guards cost. Whole dispatches through the canonical chain, bare and
// with every guard on (egress, paths, commands, secrets, cross-server, result screen) on calls they
// let through (a 7 kB page, a small JSON result), as ratios to the bare chain, each guard alone and all; and the guards' linearity: the same adversarial input at
// 10× the size should cost about 10×. Process CPU time; tasks interleaved and rotated each round;
// ratios per round, median and MAD.

import { createDispatcher, defineTool, type Dispatcher, type Tool } from '@toolgate/core';
import { canonicalChain, type CanonicalGuards } from '@toolgate/middleware';
import { screenForms, secretForms } from '../packages/middleware/src/internal/normalize';
import type { Call } from './fixtures';
import { ratioOf, runRounds, type RoundsResult } from './measure';

const ROUNDS = 7;
const MS_PER_TASK = 300;
const BATCH = 100;

const PAGE = `<article><h1>City council approves budget</h1>${'<p>The council voted 7-2 on Tuesday to approve the budget; the system of ward funding stays as it was.</p>'.repeat(60)}</article>`;

function tools(declared: boolean): Tool[] {
  const fetchUrl = defineTool({
    name: 'fetch_url',
    description: 'fetches a page',
    inputSchema: {
      type: 'object',
      properties: { url: { type: 'string', format: 'uri' } },
      required: ['url'],
    },
    ...(declared ? { egress: ['url'] } : {}),
    execute: async () => PAGE,
  });
  const readFile = defineTool({
    name: 'read_file',
    description: 'reads a file',
    inputSchema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
    ...(declared ? { paths: { path: ['/srv/data'] } } : {}),
    execute: async () => ({ rows: Array.from({ length: 20 }, (_, i) => ({ id: i, name: `row ${i}` })) }),
  });
  const webFetch = { ...fetchUrl, schema: { ...fetchUrl.schema, name: 'web_fetch' }, source: 'web' } as Tool;
  return [fetchUrl, readFile, webFetch];
}

const bare = createDispatcher({ tools: tools(false), chain: canonicalChain() });
const withGuards = (guards: CanonicalGuards, declared = false) =>
  createDispatcher({ tools: tools(declared), chain: canonicalChain({ guards }) });
const ONLY = { egress: false, paths: false, commands: false } as const;
const EVERY: CanonicalGuards = {
  egress: { tenants: { acme: { allowHosts: ['*.example.org'] } } },
  secrets: {},
  crossServer: {},
  results: { mode: 'strip', instructions: 'withhold' },
};
const single: [string, Dispatcher][] = [
  ['egress guard alone', withGuards({ paths: false, commands: false })],
  [
    'path guard alone',
    withGuards({ egress: false, commands: false, paths: { tools: { read_file: { path: ['/srv/data'] } } } }),
  ],
  ['secret guard alone', withGuards({ ...ONLY, secrets: {} })],
  ['cross-server guard alone', withGuards({ ...ONLY, crossServer: {} })],
  ['result screen alone', withGuards({ ...ONLY, results: EVERY.results! })],
];
const guarded = withGuards(EVERY, true);

const identity = { tenant: 'acme', principal: 'ana', conversation: 'c1' };
const calls = [
  { toolName: 'fetch_url', args: { url: 'https://news.example.org/budget' } },
  { toolName: 'read_file', args: { path: '/srv/data/reports/2031.csv' } },
  { toolName: 'web_fetch', args: { url: 'https://news.example.org/budget' } },
];

/** One dispatch per call of the returned function, through the three tools in turn. */
function inTurn(dispatcher: Dispatcher): Call {
  let i = 0;
  return async () => {
    const outcome = await dispatcher.dispatch(calls[i++ % calls.length]!, { identity });
    if (outcome.kind !== 'result') throw new Error(`bench: expected a result, got ${outcome.content}`);
    return outcome;
  };
}

// Linearity: adversarial inputs near every rule's trigger, at n and 10n characters.
const near = (n: number) =>
  'ignore all the previous system note to the '.repeat(Math.ceil(n / 43)).slice(0, n);
const shell = (n: number) => 'a-b_c.d/e '.repeat(Math.ceil(n / 10)).slice(0, n);
function screened(n: number): Dispatcher {
  const text = near(n);
  const tool = defineTool({
    name: 'page',
    description: 'returns a long page',
    inputSchema: { type: 'object', properties: { q: { type: 'string' } } },
    capabilities: ['shell'],
    execute: async () => text,
  });
  return createDispatcher({
    tools: [tool],
    chain: canonicalChain({ guards: { secrets: {}, results: {} }, defaultMaxChars: 10_000_000 }),
  });
}
const SMALL = 100_000;
const screenSmall = screened(SMALL);
const screenLarge = screened(SMALL * 10);
const argsSmall = { q: shell(SMALL) };
const argsLarge = { q: shell(SMALL * 10) };

/**
 * The normalization the guards do for the same three calls, alone: the result screen's forms of each
 * result and the secret guard's forms of each argument (its share of "every guard on" is its ratio
 * over that row's).
 */
const READS = [
  PAGE,
  JSON.stringify({ rows: Array.from({ length: 20 }, (_, i) => ({ id: i, name: `row ${i}` })) }),
  PAGE,
];
function normalizeInTurn(): () => Promise<unknown> {
  let i = 0;
  return async () => {
    const at = i++ % calls.length;
    let n = screenForms(READS[at]!).length;
    for (const value of Object.values(calls[at]!.args)) n += secretForms(String(value)).length;
    return n;
  };
}

function ratio(result: RoundsResult, over: string, name: string) {
  const { median, mad } = ratioOf(result, name, over);
  return `${median.toFixed(2)} ± ${mad.toFixed(2)}`;
}

const PASSIVE = 'canonical chain, no guards';
const NOISE = 'canonical chain, no guards (again)';
const ALL = 'canonical chain, every guard on';
const NORMALIZE =
  'normalization alone, every form of every text (an upper bound: the guards build forms only for text a prefilter flags)';
const SCREEN_N = `screen + secrets on a ${SMALL / 1000}k-char near-miss result`;
const SCREEN_10N = `the same at ${(SMALL * 10) / 1000}k chars`;
const ARGS_N = `secret guard on a ${SMALL / 1000}k-char argument`;
const ARGS_10N = `secret guard on a ${(SMALL * 10) / 1000}k-char argument`;

async function main(): Promise<void> {
  const log = (line: string) => process.stdout.write(`${line}\n`);
  const dispatch = await runRounds(
    [
      { name: PASSIVE, call: inTurn(bare), batch: BATCH },
      { name: NOISE, call: inTurn(bare), batch: BATCH },
      ...single.map(([name, d]) => ({ name, call: inTurn(d), batch: BATCH })),
      { name: ALL, call: inTurn(guarded), batch: BATCH },
      { name: NORMALIZE, call: normalizeInTurn(), batch: BATCH },
    ],
    ROUNDS,
    MS_PER_TASK,
  );
  const linear = await runRounds(
    [
      { name: SCREEN_N, call: () => screenSmall.dispatch({ toolName: 'page', args: {} }), batch: 1 },
      { name: SCREEN_10N, call: () => screenLarge.dispatch({ toolName: 'page', args: {} }), batch: 1 },
      { name: ARGS_N, call: () => screenSmall.dispatch({ toolName: 'page', args: argsSmall }), batch: 1 },
      { name: ARGS_10N, call: () => screenLarge.dispatch({ toolName: 'page', args: argsLarge }), batch: 1 },
    ],
    ROUNDS,
    MS_PER_TASK,
  );

  log(`guards: ${ROUNDS} rounds × ${MS_PER_TASK} ms of CPU per task, tasks interleaved`);
  log('');
  log('| dispatch (3 tools in turn, calls the guards let through) | × no guards (median ± MAD) |');
  log('| --- | ---: |');
  for (const name of [NOISE, ...single.map(([name]) => name), ALL, NORMALIZE])
    log(`| ${name} | ${ratio(dispatch, PASSIVE, name)} |`);
  const share = ratioOf(dispatch, NORMALIZE, PASSIVE).median / ratioOf(dispatch, ALL, PASSIVE).median;
  log(`\nnormalization's share of every guard on, at most: ${(share * 100).toFixed(0)}%`);
  log('');
  log('| linearity | × the smaller input (10× the size: ~10 is linear) |');
  log('| --- | ---: |');
  log(`| ${SCREEN_10N} (${SCREEN_N}) | ${ratio(linear, SCREEN_N, SCREEN_10N)} |`);
  log(`| ${ARGS_10N} (${ARGS_N}) | ${ratio(linear, ARGS_N, ARGS_10N)} |`);
}

await main();
