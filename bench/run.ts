// `pnpm bench`: what a governed dispatch costs, as ratios to a bare execute loop (floor A) and raw
// koa-compose (floor B) measured in the same run, the peers' workload (a fresh agent per run of 200
// calls) and a fresh process's first dispatchers. Prints the tables and writes bench/RESULTS.md.
// TOOLGATE_BENCH_QUICK=1 runs every part briefly, for iterating, and writes nothing.

import { writeFileSync } from 'node:fs';
import os from 'node:os';
import { createDispatcher, type DispatchOutcome, type Dispatcher, type Identity } from '@toolgate/core';
import { canonicalChain } from '@toolgate/middleware';
import {
  activeSetup,
  asyncTool,
  checkInRoundTrip,
  dispatchOf,
  emptyChainDispatcher,
  floorA,
  floorB,
  LARGE_RESULT_CHARS,
  listenToEverything,
  passiveArgs,
  passiveDispatcher,
  passiveTool,
  SilentEmitter,
  stringifyLargeResult,
  tenantBase,
  tenantDispatcher,
  tenantPolicy,
  type Call,
} from './fixtures';
import { coldStart } from './cold-start';
import { batchSize, cpuNowMs, ratioOf, runRounds, settledHeapBytes, spreadOf, type Task } from './measure';
import { peerFit } from './peers';
import { ACTIVE_CHAIN, EMPTY_CHAIN, PASSIVE_CHAIN, renderResults, STRINGIFY, type Report } from './report';

const QUICK = process.env['TOOLGATE_BENCH_QUICK'] === '1';
const ROUNDS = QUICK ? 2 : 7;
const MS_PER_TASK = QUICK ? 100 : 400;
const SAMPLE_MS = 2;
const TENANTS = QUICK ? 1_000 : 10_000;
const CONCURRENT = QUICK ? 1_000 : 10_000;
const SEQUENTIAL = QUICK ? 40_000 : 1_000_000;
const PEER_PAIRS = QUICK ? 15 : 60;
const COLD_PROCESSES = QUICK ? 1 : 5;

const wallStarted = performance.now();
const log = (line: string) => process.stdout.write(`${line}\n`);

interface Tenants {
  readonly dispatcher: Dispatcher;
  readonly identities: readonly Identity[];
}

async function perTenant(report: Report): Promise<Tenants> {
  const base = tenantBase();
  const policies = Array.from({ length: TENANTS }, (_, i) => tenantPolicy(`tenant-${i}`));
  const heapBefore = settledHeapBytes();
  const started = cpuNowMs();
  const chains = policies.map((policy) => base.use(policy));
  const derivedMs = cpuNowMs() - started;
  const heapAfter = settledHeapBytes();
  const tenants = tenantDispatcher(chains);
  const call = { toolName: passiveTool.schema.name, args: passiveArgs };
  // The first call under each chain runs the build-time checks and composes it; later calls reuse both.
  const firstStarted = cpuNowMs();
  for (const identity of tenants.identities) {
    const outcome = await tenants.dispatcher.dispatch(call, { identity });
    if (outcome.kind !== 'result')
      throw new Error(`bench: tenant dispatch ${outcome.kind}: ${outcome.content}`);
  }
  const firstMs = cpuNowMs() - firstStarted;
  report.tenants = {
    count: TENANTS,
    deriveUs: (derivedMs * 1000) / TENANTS,
    retainedBytes: (heapAfter - heapBefore) / TENANTS,
    firstDispatchUs: (firstMs * 1000) / TENANTS,
  };
  return tenants;
}

const FLOOR_A = 'floor A: bare execute';
const FLOOR_B = 'floor B: koa-compose, 8 no-op';
const PASSIVE = PASSIVE_CHAIN;
const ACTIVE = ACTIVE_CHAIN;
const ROUND_ROBIN = `tenant chains, round-robin over ${TENANTS.toLocaleString('en-US')}`;
const ONE_TENANT = 'tenant chain, one tenant';
const noEmitter = (chain: string) => `${chain}, no emitter`;
const allListeners = (chain: string) => `${chain}, one listener per event`;

async function perCall(report: Report, tenants: Tenants): Promise<void> {
  const active = await activeSetup();
  const activeSilent = new SilentEmitter();
  const activeWithoutEmitter = await activeSetup(activeSilent);
  const activeListened = await activeSetup();
  const activeHeard = listenToEverything(activeListened.dispatcher);

  const passiveSilent = new SilentEmitter();
  const passiveWithoutEmitter = passiveDispatcher(passiveSilent);
  const passiveListened = passiveDispatcher();
  const passiveHeard = listenToEverything(passiveListened);
  const passiveCall = (dispatcher: Dispatcher) =>
    dispatchOf(dispatcher, passiveTool.schema.name, passiveArgs);

  const perTenantCalls = tenants.identities.map((identity) =>
    dispatchOf(tenants.dispatcher, passiveTool.schema.name, passiveArgs, identity),
  );
  let next = 0;
  const roundRobin: Call = () => {
    const call = perTenantCalls[next]!;
    next = next + 1 === perTenantCalls.length ? 0 : next + 1;
    return call();
  };
  const solo = tenantDispatcher([tenantBase().use(tenantPolicy('tenant-solo'))]);

  const calls: [string, Call][] = [
    [FLOOR_A, floorA],
    [FLOOR_B, floorB],
    [EMPTY_CHAIN, passiveCall(emptyChainDispatcher())],
    [PASSIVE, passiveCall(passiveDispatcher())],
    [noEmitter(PASSIVE), passiveCall(passiveWithoutEmitter)],
    [allListeners(PASSIVE), passiveCall(passiveListened)],
    [ACTIVE, active.call],
    [noEmitter(ACTIVE), activeWithoutEmitter.call],
    [allListeners(ACTIVE), activeListened.call],
    [STRINGIFY, stringifyLargeResult],
    ['check-in round trip', checkInRoundTrip()],
    [ONE_TENANT, dispatchOf(solo.dispatcher, passiveTool.schema.name, passiveArgs, solo.identities[0])],
    [ROUND_ROBIN, roundRobin],
  ];
  const tasks: Task[] = [];
  for (const [name, call] of calls) tasks.push({ name, call, batch: await batchSize(call, SAMPLE_MS) });
  log(`per-call: ${ROUNDS} rounds × ${tasks.length} tasks × ${MS_PER_TASK} ms of CPU`);
  const result = await runRounds(tasks, ROUNDS, MS_PER_TASK);

  for (const task of tasks) {
    report.perCall.push({
      name: task.name,
      us: spreadOf(result.samples.get(task.name)!),
      overA: ratioOf(result, task.name, FLOOR_A),
      overB: ratioOf(result, task.name, FLOOR_B),
      batch: task.batch,
    });
  }
  const floorMedians = result.roundMedians.get(FLOOR_B)!;
  const stringified = result.roundMedians.get(STRINGIFY)!;
  report.ratios = {
    passive: ratioOf(result, PASSIVE, FLOOR_B),
    active: ratioOf(result, ACTIVE, FLOOR_B),
    // The active chain with its one serialization taken out, per round.
    activeLessStringify: spreadOf(
      result.roundMedians.get(ACTIVE)!.map((us, i) => (us - stringified[i]!) / floorMedians[i]!),
    ),
    stringify: ratioOf(result, STRINGIFY, FLOOR_B),
    roundRobin: ratioOf(result, ROUND_ROBIN, ONE_TENANT),
  };
  const events = async (
    chain: string,
    silent: SilentEmitter,
    heard: { heard: number },
    quiet: Call,
    loud: Call,
  ) => {
    const asked = silent.asked;
    const delivered = heard.heard;
    await quiet();
    await loud();
    return {
      chain,
      zeroListeners: ratioOf(result, chain, noEmitter(chain)),
      allListeners: ratioOf(result, allListeners(chain), noEmitter(chain)),
      checksPerDispatch: silent.asked - asked,
      eventsPerDispatch: heard.heard - delivered,
    };
  };
  report.events = [
    await events(
      PASSIVE,
      passiveSilent,
      passiveHeard,
      passiveCall(passiveWithoutEmitter),
      passiveCall(passiveListened),
    ),
    await events(ACTIVE, activeSilent, activeHeard, activeWithoutEmitter.call, activeListened.call),
  ];
}

async function concurrent(report: Report): Promise<void> {
  const inFlight = { now: 0, max: 0 };
  const tool = asyncTool(inFlight);
  const dispatcher = createDispatcher({ tools: [tool], chain: canonicalChain() });
  const call = { toolName: tool.schema.name, args: passiveArgs };
  await dispatcher.dispatch(call);
  inFlight.max = 0;
  const wall = performance.now();
  const cpu = cpuNowMs();
  const settled = await Promise.allSettled(
    Array.from({ length: CONCURRENT }, () => dispatcher.dispatch(call)),
  );
  const cpuMs = cpuNowMs() - cpu;
  const wallMs = performance.now() - wall;
  const thrown = settled.filter((s) => s.status === 'rejected').length;
  const notResult = settled.filter((s) => s.status === 'fulfilled' && s.value.kind !== 'result').length;
  report.concurrent = { count: CONCURRENT, wallMs, cpuMs, maxInFlight: inFlight.max, thrown, notResult };
}

async function sequential(report: Report): Promise<void> {
  const { call } = await activeSetup();
  for (let i = 0; i < 20_000; i++) await call();
  const heapStart = settledHeapBytes();
  const samples: { done: number; heap: number }[] = [];
  let wallMs = 0;
  let cpuMs = 0;
  let notResult = 0;
  const stride = SEQUENTIAL / 4;
  for (let done = 0; done < SEQUENTIAL; done += stride) {
    const wall = performance.now();
    const cpu = cpuNowMs();
    for (let i = 0; i < stride; i++) if (((await call()) as DispatchOutcome).kind !== 'result') notResult++;
    cpuMs += cpuNowMs() - cpu;
    wallMs += performance.now() - wall;
    samples.push({ done: done + stride, heap: settledHeapBytes() });
  }
  report.sequential = {
    count: SEQUENTIAL,
    wallMs,
    cpuMs,
    heapStart,
    heapEnd: samples[samples.length - 1]!.heap,
    samples,
    notResult,
  };
}

async function main(): Promise<void> {
  const report: Report = {
    date: new Date(),
    loadAtStart: os.loadavg(),
    perCall: [],
    largeResultChars: LARGE_RESULT_CHARS,
    settings: { rounds: ROUNDS, msPerTask: MS_PER_TASK, sampleMs: SAMPLE_MS },
  };
  log(`per-tenant chains: deriving ${TENANTS.toLocaleString('en-US')}`);
  // The 10,000 tenant chains are let go before the scale runs, so their heap is not the GC's work there.
  await perCall(report, await perTenant(report));
  log(`peers' workload: ${PEER_PAIRS} runs of 10 and of 200 calls, a fresh agent each`);
  report.peers = await peerFit(PEER_PAIRS);
  log(`cold start: ${COLD_PROCESSES} fresh processes`);
  report.cold = await coldStart(COLD_PROCESSES);
  log(`scale: ${CONCURRENT.toLocaleString('en-US')} concurrent dispatches`);
  await concurrent(report);
  log(`scale: ${SEQUENTIAL.toLocaleString('en-US')} sequential dispatches`);
  await sequential(report);
  report.totalSeconds = (performance.now() - wallStarted) / 1000;
  const markdown = renderResults(report);
  log('');
  log(markdown);
  if (QUICK) {
    log(`quick run in ${report.totalSeconds.toFixed(0)} s; bench/RESULTS.md left as it was`);
    return;
  }
  writeFileSync(new URL('./RESULTS.md', import.meta.url), markdown);
  log(`wrote bench/RESULTS.md in ${report.totalSeconds.toFixed(0)} s`);
}

await main();
