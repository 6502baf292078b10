// `pnpm bench:policy`: what `@toolgate/policy` costs. One rule decision (the gate's own compiled CEL
// and first-match walk) beside the same condition as a hand-written JS predicate; and whole dispatches
// through the passive canonical chain, bare and with a policy: one rule, 50 rules scoped by tool (the
// goal: adds at most 1× the passive chain's cost per call), and 50 unscoped rules that all apply, the
// worst case; and the realistic mix (50 unscoped rules of ==, in, startsWith, size() and six
// matches(), all evaluated) beside the same checks in JS, and interleaved. Process CPU time; tasks interleaved and
// rotated each round; ratios per round.

import { Bench } from 'tinybench';
import { createDispatcher, defineTool, type Dispatcher, type Middleware } from '@toolgate/core';
import { canonicalChain } from '@toolgate/middleware';
import { policyGate, type PolicyRule } from '@toolgate/policy';
import { compileFor, decide, variablesFor } from '../packages/policy/src/decide';
import { compileRules } from '../packages/policy/src/rules';

const ROUNDS = 9;
const MS_PER_TASK = 200;
const BATCH = 200;
const MICRO_BATCH = 5000;
const TOOLS = 50;

const cpuNowMs = () => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
};

const toolNamed = (name: string) =>
  defineTool({
    name,
    description: 'a passive tool: no declarations',
    inputSchema: {
      type: 'object',
      properties: {
        order: { type: 'string' },
        amount: { type: 'number' },
        region: { type: 'string' },
        email: { type: 'string' },
        items: { type: 'array', items: { type: 'string' } },
      },
      required: ['order', 'amount'],
    },
    execute: async (args: { order: string }) => ({ order: args.order, status: 'refunded' }),
  });
const tools = Array.from({ length: TOOLS }, (_, i) => toolNamed(`refund_${i}`));
const target = tools[TOOLS - 1]!;
const callArgs = { order: 'A-1', amount: 250, region: 'eu', email: 'ana@example.com', items: ['a', 'b'] };
const call = { toolName: target.schema.name, args: callArgs };
const identity = { tenant: 'acme', principal: 'ana', roles: ['agent'] };

// The condition every variant decides: a big refund by someone who is not a supervisor.
const WHEN = "args.amount > 1000.0 && !('supervisor' in identity.roles)";
const ONE: PolicyRule[] = [{ name: 'cap', tools: [target.schema.name], when: WHEN, effect: 'deny' }];
const SCOPED: PolicyRule[] = tools.map((t, i) => ({
  name: `cap-${i}`,
  tools: [t.schema.name],
  when: WHEN,
  effect: 'deny' as const,
}));
// Worst case: 50 rules that all apply to every tool, none matching, so each call evaluates all 50.
const UNSCOPED: PolicyRule[] = Array.from({ length: TOOLS }, (_, i) => ({
  name: `unscoped-${i}`,
  when: `args.amount > ${1000 + i}.0 && !('supervisor' in identity.roles)`,
  effect: 'deny' as const,
}));

// The realistic mix: 50 unscoped rules that all apply to the tool and none matches, so each call
// evaluates all 50: 14 ==, 10 in, 10 startsWith, 10 size(), six matches(); each paired with a JS check.
type Check = (args: typeof callArgs) => boolean;
const MIX: [PolicyRule, Check][] = [];
for (let i = 0; i < 14; i++)
  MIX.push([
    { name: `eq-${i}`, when: `args.region == 'blocked-${i}'`, effect: 'deny' },
    (a) => a.region === `blocked-${i}`,
  ]);
for (let i = 0; i < 10; i++) {
  const list = [`x${i}`, `y${i}`, `z${i}`];
  MIX.push([
    { name: `in-${i}`, when: `args.region in ['x${i}', 'y${i}', 'z${i}']`, effect: 'deny' },
    (a) => list.includes(a.region),
  ]);
}
for (let i = 0; i < 10; i++)
  MIX.push([
    { name: `prefix-${i}`, when: `args.order.startsWith('BLOCK-${i}')`, effect: 'deny' },
    (a) => a.order.startsWith(`BLOCK-${i}`),
  ]);
for (let i = 0; i < 10; i++)
  MIX.push([
    { name: `size-${i}`, when: `size(args.items) > ${20 + i}`, effect: 'deny' },
    (a) => a.items.length > 20 + i,
  ]);
const PATTERNS: [string, 'email' | 'order' | 'region', RegExp][] = [
  ['^[a-z0-9._%+-]+@blocked\\.example$', 'email', /^[a-z0-9._%+-]+@blocked\.example$/],
  ['^BILL-[0-9]{4,8}$', 'order', /^BILL-[0-9]{4,8}$/],
  ['^(cn|ru)-', 'region', /^(cn|ru)-/],
  ['@competitor\\.', 'email', /@competitor\./],
  ['^[A-Z]{3}-\\d+$', 'order', /^[A-Z]{3}-\d+$/],
  ['test|staging', 'region', /test|staging/],
];
PATTERNS.forEach(([pattern, field, regex], i) =>
  MIX.push([
    {
      name: `matches-${i}`,
      when: `args.${field}.matches('${pattern.replace(/\\/g, '\\\\')}')`,
      effect: 'deny',
    },
    (a) => regex.test(a[field]),
  ]),
);
const MIX_RULES = MIX.map(([rule]) => rule);
// The same 50 rules, interleaved (==, in, startsWith, size(), matches(), ==, …): no two neighbours test
// one field the same way, so none is decided together with another (a run, in policy.md's terms).
const KINDS = ['eq-', 'in-', 'prefix-', 'size-', 'matches-'];
const MIX_INTERLEAVED = MIX_RULES.map((rule) => {
  const kind = KINDS.findIndex((k) => rule.name.startsWith(k));
  return { rule, key: Number(rule.name.slice(KINDS[kind]!.length)) * KINDS.length + kind };
})
  .sort((a, b) => a.key - b.key)
  .map(({ rule }) => rule);
const MIX_CHECKS = MIX.map(([, check]) => check);

const mixPredicate: Middleware = {
  name: 'mix-checks',
  run(ctx, next) {
    const args = ctx.args as typeof callArgs;
    for (const check of MIX_CHECKS) if (check(args)) return ctx.deny('a check refused the call');
    ctx.note('no check refused');
    return next();
  },
};

const predicate: Middleware = {
  name: 'refund-cap',
  run(ctx, next) {
    const amount = ctx.args['amount'];
    if (typeof amount === 'number' && amount > 1000 && !(ctx.identity?.roles ?? []).includes('supervisor'))
      return ctx.deny('refunds over 1,000 need a supervisor');
    ctx.note('within the cap');
    return next();
  },
};

const dispatcherWith = (extra: { policy?: Middleware; use?: Middleware }) => {
  let chain = canonicalChain(extra.policy !== undefined ? { policy: extra.policy } : {});
  if (extra.use !== undefined) chain = chain.use(extra.use);
  return createDispatcher({ tools, chain });
};

const PASSIVE = 'passive chain';
const NOISE = 'passive chain (again)';
const JS_MW = 'passive + JS predicate middleware';
const POLICY_1 = 'passive + policy, 1 rule';
const POLICY_50 = 'passive + policy, 50 rules scoped by tool';
const POLICY_50U = 'passive + policy, 50 unscoped rules (all evaluated)';
const JS_MIX = 'passive + JS middleware, the realistic mix of 50 checks';
const POLICY_MIX = 'passive + policy, the realistic mix: 50 unscoped rules (all evaluated)';
const POLICY_MIX_INTERLEAVED = 'passive + policy, the same mix interleaved (no two neighbours alike)';
const dispatchTasks: [string, Dispatcher][] = [
  [PASSIVE, dispatcherWith({})],
  [NOISE, dispatcherWith({})],
  [JS_MW, dispatcherWith({ use: predicate })],
  [POLICY_1, dispatcherWith({ policy: policyGate(ONE) })],
  [POLICY_50, dispatcherWith({ policy: policyGate(SCOPED) })],
  [POLICY_50U, dispatcherWith({ policy: policyGate(UNSCOPED) })],
  [JS_MIX, dispatcherWith({ use: mixPredicate })],
  [POLICY_MIX, dispatcherWith({ policy: policyGate(MIX_RULES) })],
  [POLICY_MIX_INTERLEAVED, dispatcherWith({ policy: policyGate(MIX_INTERLEAVED) })],
];

// One decision, as the gate makes it: variables built for the call, the compiled rule evaluated.
const compiledOne = compileFor(compileRules(ONE), target, 'allow');
const celDecision = () =>
  decide(compiledOne, variablesFor(compiledOne, { args: call.args, identity, now: 0 })).effect;
const jsDecision = () => {
  const amount = call.args.amount;
  return amount > 1000 && !identity.roles.includes('supervisor') ? 'deny' : 'allow';
};
const compiledMix = compileFor(compileRules(MIX_RULES), target, 'allow');
const celMixDecision = () =>
  decide(compiledMix, variablesFor(compiledMix, { args: callArgs, identity, now: 0 })).effect;
const jsMixDecision = () => (MIX_CHECKS.some((check) => check(callArgs)) ? 'deny' : 'allow');
const CEL_ONE = 'one CEL rule decision';
const JS_ONE = 'one hand-written JS predicate';
const CEL_MIX = 'the realistic mix, 50 CEL rules';
const JS_MIX_ONE = 'the realistic mix, 50 JS checks';
const microTasks: [string, () => string][] = [
  [JS_ONE, jsDecision],
  [CEL_ONE, celDecision],
  [JS_MIX_ONE, jsMixDecision],
  [CEL_MIX, celMixDecision],
];

async function dispatchBatch(dispatcher: Dispatcher): Promise<void> {
  for (let i = 0; i < BATCH; i++) {
    const outcome = await dispatcher.dispatch(call, { identity });
    if (outcome.kind !== 'result')
      throw new Error(`bench: expected a result, got ${outcome.kind}: ${outcome.content}`);
  }
}

let sink = 0;
function microBatch(decision: () => string): void {
  for (let i = 0; i < MICRO_BATCH; i++) if (decision() === 'allow') sink += 1;
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

type Runner = () => unknown;

async function measure(tasks: readonly [string, Runner, number][]): Promise<Map<string, number[]>> {
  const perRound = new Map<string, number[]>(tasks.map(([name]) => [name, []]));
  for (let round = 0; round < ROUNDS; round++) {
    const bench = new Bench({
      now: cpuNowMs,
      time: MS_PER_TASK,
      warmupTime: round === 0 ? MS_PER_TASK : MS_PER_TASK / 5,
      throws: true,
    });
    for (let i = 0; i < tasks.length; i++) {
      const [name, run] = tasks[(i + round) % tasks.length]!;
      bench.add(name, run as () => Promise<void>);
    }
    await bench.run();
    for (const [name, , per] of tasks) {
      const result = bench.getTask(name)?.result;
      if (result === undefined || result.error !== undefined)
        throw result?.error ?? new Error(`${name}: no result`);
      perRound.get(name)!.push(median(result.latency.samples.map((ms) => (ms * 1000) / per)));
    }
  }
  return perRound;
}

function ratios(perRound: Map<string, number[]>, over: string, name: string) {
  const base = perRound.get(over)!;
  const values = perRound.get(name)!.map((v, i) => v / base[i]!);
  return { ratio: median(values), spread: mad(values) };
}

/** (task − base) / base per round: the cost a task adds, in units of the base's whole cost. */
function added(perRound: Map<string, number[]>, base: string, name: string) {
  const b = perRound.get(base)!;
  const values = perRound.get(name)!.map((v, i) => (v - b[i]!) / b[i]!);
  return { ratio: median(values), spread: mad(values) };
}

async function main(): Promise<void> {
  const log = (line: string) => process.stdout.write(`${line}\n`);
  const micro = await measure(microTasks.map(([name, fn]) => [name, () => microBatch(fn), MICRO_BATCH]));
  const dispatch = await measure(dispatchTasks.map(([name, d]) => [name, () => dispatchBatch(d), BATCH]));
  if (sink < 0) log('unreachable');

  log(`@toolgate/policy: ${ROUNDS} rounds × ${MS_PER_TASK} ms of CPU per task, tasks interleaved`);
  log('');
  log('| one decision | µs | × JS predicate (median of rounds) | ± (MAD) |');
  log('| --- | ---: | ---: | ---: |');
  for (const [name] of microTasks) {
    const { ratio, spread } = ratios(micro, JS_ONE, name);
    log(`| ${name} | ${median(micro.get(name)!).toFixed(3)} | ${ratio.toFixed(1)} | ${spread.toFixed(1)} |`);
  }
  log('');
  log('| dispatch | µs per call | × passive chain | added, × passive chain | ± (MAD) |');
  log('| --- | ---: | ---: | ---: | ---: |');
  for (const [name] of dispatchTasks) {
    const whole = ratios(dispatch, PASSIVE, name);
    const extra = added(dispatch, PASSIVE, name);
    log(
      `| ${name} | ${median(dispatch.get(name)!).toFixed(2)} | ${whole.ratio.toFixed(3)} | ${extra.ratio.toFixed(3)} | ${extra.spread.toFixed(3)} |`,
    );
  }
  log('');
  const goal = added(dispatch, PASSIVE, POLICY_50);
  log(
    `goal (50 rules scoped by tool add ≤ 1× the passive chain): added × ${goal.ratio.toFixed(3)} ± ${goal.spread.toFixed(3)}: ${goal.ratio <= 1 ? 'met' : 'NOT met'}`,
  );
  const mix = added(dispatch, PASSIVE, POLICY_MIX);
  const jsMix = added(dispatch, PASSIVE, JS_MIX);
  log(
    `goal (the realistic mix, 50 unscoped rules, adds ≤ 1× the passive chain): added × ${mix.ratio.toFixed(3)} ± ${mix.spread.toFixed(3)} (the same checks in JS: × ${jsMix.ratio.toFixed(3)}): ${mix.ratio <= 1 ? 'met' : 'NOT met'}`,
  );
}

await main();
