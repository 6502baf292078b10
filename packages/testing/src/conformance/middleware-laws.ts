// The middleware laws as checks over observable behaviour: each builds its own dispatcher and chain
// around the middleware under test, with a pause service, a mock tool and a sentinel arg value.

import { EventEmitter } from 'eventemitter3';
import {
  canonicalJson,
  checkInApproved,
  createChain,
  createDispatcher,
  inMemoryCheckIns,
  type Dispatcher,
  type DispatchOutcome,
  type Identity,
  type Middleware,
  type Next,
  type ToolArgs,
  type ToolgateEmitter,
  type ToolMiddlewareContext,
} from '@toolgate/core';
import { fixedClock } from '../clock';
import { formatOutcome } from '../format';
import { seededIds } from '../ids';
import { mockTool, type MockTool, type MockToolOptions } from '../mock-tool';

/** Args for a call: a value, or a function called per call (e.g. to store an artifact first). */
export type ConformanceArgs = ToolArgs | ((identity: Identity | undefined) => ToolArgs | Promise<ToolArgs>);

/** A call the middleware under test should refuse. */
export interface RefusedCall {
  readonly args?: ConformanceArgs;
  readonly identity?: Identity;
  /** Tool declarations (or `result`) for this call only, e.g. an oversized result for a ceiling. */
  readonly tool?: Omit<MockToolOptions, 'name' | 'execute'>;
}

export interface MiddlewareConformanceOptions {
  /** The probe tool's name, for middleware that acts on particular tools; default `'conformance_probe'`. */
  readonly toolName?: string;
  /** Declarations that make the middleware act: `{ capabilities }`, `{ needs }`, `{ wants }`, `{ checkIn }`, … */
  readonly tool?: Omit<MockToolOptions, 'name' | 'execute'>;
  /** Args of a call the middleware lets through. The suite adds the sentinel under `secretArg`. */
  readonly args?: ConformanceArgs;
  readonly identity?: Identity;
  /** The arg that carries a sentinel no event, ledger row or refusal may contain; default `'note'`. */
  readonly secretArg?: string;
  /** A call the middleware refuses; checks the refusal's form and that it leaks nothing. */
  readonly refused?: RefusedCall;
  /** The same middleware with its dependency failing (a checker, provider or store that throws). */
  readonly broken?: () => Middleware | Promise<Middleware>;
}

export type MiddlewareFactory = () => Middleware | Promise<Middleware>;

/** A value no event, ledger row or refusal may ever contain. */
export const SENTINEL = 'sentinel-value-7f3a9c1e';

const KEY = 'toolgate-conformance-check-in-key-0123456789';
const DEFAULT_TOOL_NAME = 'conformance_probe';
const TOOL_VALUE = { answer: 42 };
const APPROVER = 'conformance-suite';
const MAX_RESUMES = 5;

type Probe = 'pass' | 'deny' | 'throw' | 'abort';

interface Run {
  readonly outcome: DispatchOutcome;
  readonly tool: MockTool;
  /** How many times the middleware called next in each of its runs (a resume is another run). */
  readonly nextCounts: readonly number[];
  readonly events: readonly { readonly type: string; readonly event: unknown }[];
  readonly name: string;
}

interface Scenario {
  readonly probe?: Probe;
  readonly failingTool?: boolean;
  readonly abortBefore?: boolean;
  readonly call?: RefusedCall;
  readonly middleware?: MiddlewareFactory;
}

/** A failed law: its message says which law and prints the outcome. */
export class ConformanceError extends Error {
  override readonly name = 'ConformanceError';
}

function must(condition: boolean, message: string, run?: Run): asserts condition {
  if (!condition)
    throw new ConformanceError(run === undefined ? message : `${message}\n\n${formatOutcome(run.outcome)}`);
}

/** Stands in for the middleware under test and counts its calls to next, per run. */
function counted(middleware: Middleware, counts: number[]): Middleware {
  return {
    name: middleware.name,
    ...(middleware.after !== undefined ? { after: middleware.after } : {}),
    ...(middleware.before !== undefined ? { before: middleware.before } : {}),
    ...(middleware.innermost !== undefined ? { innermost: middleware.innermost } : {}),
    ...(middleware.transformsArgs !== undefined ? { transformsArgs: middleware.transformsArgs } : {}),
    ...(middleware.fingerprint !== undefined ? { fingerprint: middleware.fingerprint } : {}),
    ...(middleware.checkTool !== undefined ? { checkTool: middleware.checkTool.bind(middleware) } : {}),
    run(ctx: ToolMiddlewareContext, next: Next) {
      const run = counts.push(0) - 1;
      return middleware.run.call(middleware, ctx, () => {
        counts[run]! += 1;
        return next();
      });
    },
  };
}

function probe(kind: Probe, controller: AbortController): Middleware {
  return {
    name: 'conformance-inner-probe',
    async run(ctx, next) {
      if (kind === 'deny') ctx.deny('the conformance probe refused this call.', { code: 'PROBE_DENIED' });
      if (kind === 'throw') throw new Error(`probe failure ${SENTINEL}`);
      if (kind === 'abort') controller.abort();
      await next();
    },
  };
}

/** An emitter that records every event, including gate events nobody else listens to. */
function recordingEmitter(events: { type: string; event: unknown }[]): ToolgateEmitter {
  const emitter = new EventEmitter() as unknown as ToolgateEmitter;
  return Object.assign(emitter, {
    listenerCount: () => 1,
    emit: (type: string, event: unknown) => {
      events.push({ type, event });
      return true;
    },
  });
}

async function argsFor(args: ConformanceArgs | undefined, identity: Identity | undefined): Promise<ToolArgs> {
  if (args === undefined) return {};
  return typeof args === 'function' ? args(identity) : args;
}

async function settle(
  dispatcher: Dispatcher,
  first: DispatchOutcome,
  signal: AbortSignal,
): Promise<DispatchOutcome> {
  let outcome = first;
  for (let i = 0; i < MAX_RESUMES && outcome.kind === 'paused'; i++) {
    outcome = await dispatcher.resume(outcome.checkIn, checkInApproved({ by: APPROVER }), { signal });
  }
  return outcome;
}

/** Everything one law needs: a factory for the middleware and the options describing an allowed call. */
export interface ConformanceSubject {
  readonly factory: MiddlewareFactory;
  readonly options: MiddlewareConformanceOptions;
}

async function run(subject: ConformanceSubject, scenario: Scenario = {}): Promise<Run> {
  const { options } = subject;
  const middleware = await (scenario.middleware ?? subject.factory)();
  const nextCounts: number[] = [];
  const events: { type: string; event: unknown }[] = [];
  const controller = new AbortController();
  const clock = fixedClock();
  const toolName = options.toolName ?? DEFAULT_TOOL_NAME;
  const declarations = { ...options.tool, ...scenario.call?.tool };
  const tool = scenario.failingTool
    ? mockTool({
        ...Object.fromEntries(Object.entries(declarations).filter(([key]) => key !== 'result')),
        name: toolName,
        execute: () => {
          throw new Error('the conformance tool failed');
        },
      })
    : mockTool({ result: TOOL_VALUE, ...declarations, name: toolName });
  const list = [
    counted(middleware, nextCounts),
    ...(scenario.probe === undefined ? [] : [probe(scenario.probe, controller)]),
  ];
  const chain = createChain(list, {
    checkIns: { key: KEY, store: inMemoryCheckIns({ now: clock.now }) },
    unsafeOrder: 'the conformance probe stands inside the middleware under test',
  });
  const dispatcher = createDispatcher({
    tools: [tool],
    chain,
    events: recordingEmitter(events),
    clock: clock.now,
    callIds: seededIds('conformance'),
  });
  const identity = scenario.call?.identity ?? options.identity;
  const secretArg = options.secretArg ?? 'note';
  const args = { ...(await argsFor(scenario.call?.args ?? options.args, identity)), [secretArg]: SENTINEL };
  if (scenario.abortBefore) controller.abort();
  const first = await dispatcher.dispatch(
    { toolName, args },
    { ...(identity !== undefined ? { identity } : {}), signal: controller.signal },
  );
  const outcome = await settle(dispatcher, first, controller.signal);
  if (!controller.signal.aborted) controller.abort();
  return { outcome, tool, nextCounts, events, name: middleware.name };
}

function leaks(run: Run): string[] {
  const found: string[] = [];
  for (const { type, event } of run.events) {
    if (canonicalJson(event).includes(SENTINEL)) found.push(`event '${type}'`);
  }
  run.outcome.ledger.forEach((row, i) => {
    if (canonicalJson(row).includes(SENTINEL)) found.push(`ledger row ${i + 1} ('${row.gate}')`);
  });
  if (run.outcome.kind !== 'result' && run.outcome.content.includes(SENTINEL))
    found.push(`the ${run.outcome.kind} content`);
  return found;
}

function nextAtMostOnce(run: Run, scenario: string): void {
  const worst = Math.max(0, ...run.nextCounts);
  must(
    worst <= 1,
    `'${run.name}' called next() ${worst} times in one run (${scenario}); the law is at most once`,
    run,
  );
}

function isRefusalText(content: string, gate: string): boolean {
  return content.startsWith(`[${gate} refused: `) && content.endsWith(']');
}

export interface MiddlewareLaw {
  readonly title: string;
  /** Whether the law applies given the options (some need a refused call or a broken dependency). */
  readonly applies?: (options: MiddlewareConformanceOptions) => boolean;
  readonly check: (subject: ConformanceSubject) => Promise<void>;
}

export const MIDDLEWARE_LAWS: readonly MiddlewareLaw[] = [
  {
    title: 'lets an allowed call reach the tool exactly once and files its own ledger row',
    async check(subject) {
      const r = await run(subject, { probe: 'pass' });
      must(
        r.outcome.kind === 'result',
        `an allowed call did not end in a result (give options.tool/args/identity that '${r.name}' allows)`,
        r,
      );
      must(r.tool.callCount === 1, `the tool ran ${r.tool.callCount} times for one call`, r);
      must(
        r.outcome.ledger.some((row) => row.gate === r.name),
        `the ledger has no row for '${r.name}'`,
        r,
      );
    },
  },
  {
    title: 'calls next at most once per run',
    async check(subject) {
      nextAtMostOnce(await run(subject, { probe: 'pass' }), 'an allowed call');
      nextAtMostOnce(await run(subject, { probe: 'deny' }), 'a refusal further in');
      nextAtMostOnce(await run(subject, { probe: 'throw' }), 'a throw further in');
      nextAtMostOnce(await run(subject, { probe: 'pass', failingTool: true }), 'a failing tool');
    },
  },
  {
    title: 'cannot answer for the tool: a result is what the tool returned, and only when it ran',
    async check(subject) {
      const allowed = await run(subject, { probe: 'pass' });
      if (allowed.outcome.kind === 'result') {
        const transformed = allowed.outcome.ledger.some(
          (row) => row.gate === allowed.name && row.outcome === 'transform',
        );
        must(allowed.outcome.ran, 'a result was returned although the tool did not run', allowed);
        must(
          allowed.tool.callCount === 1,
          `the tool ran ${allowed.tool.callCount} times for one call: something besides the executor ran it`,
          allowed,
        );
        must(
          transformed || canonicalJson(allowed.outcome.value) === canonicalJson(TOOL_VALUE),
          `the result differs from the tool's value and no 'transform' row from '${allowed.name}' explains it`,
          allowed,
        );
      }
      const failing = await run(subject, { probe: 'pass', failingTool: true });
      must(failing.outcome.kind !== 'result', 'a tool that threw ended in a result', failing);
      const denied = await run(subject, { probe: 'deny' });
      must(
        denied.outcome.kind !== 'result' && denied.tool.callCount === 0,
        'a call refused further in still reached the tool or a result',
        denied,
      );
      must(
        denied.outcome.kind === 'refused' && denied.outcome.code === 'PROBE_DENIED',
        'a refusal further in was not the outcome: it was undone or relabelled',
        denied,
      );
    },
  },
  {
    title: 'treats a throw as a refusal: fail closed, never a crash or a result',
    async check(subject) {
      let r: Run;
      try {
        r = await run(subject, { probe: 'throw' });
      } catch (error) {
        throw new ConformanceError(
          `dispatch threw instead of returning an outcome: ${error instanceof Error ? error.name : typeof error}`,
        );
      }
      must(
        r.outcome.kind === 'refused' && r.tool.callCount === 0,
        'a throw further in did not end in a refusal before the tool',
        r,
      );
      must(!r.outcome.content.includes('probe failure'), "the thrown error's message reached the model", r);
    },
  },
  {
    title: 'fails closed when its dependency fails',
    applies: (options) => options.broken !== undefined,
    async check(subject) {
      const r = await run(subject, { probe: 'pass', middleware: subject.options.broken! });
      must(
        r.outcome.kind === 'refused' && r.outcome.gate === r.name,
        `with a failing dependency, '${r.name}' did not refuse`,
        r,
      );
      must(r.tool.callCount === 0 && !r.outcome.ran, 'with a failing dependency, the tool still ran', r);
      must(
        isRefusalText(r.outcome.content, r.name),
        `the refusal is not in the form '[${r.name} refused: …]'`,
        r,
      );
    },
  },
  {
    title:
      "forwards the call's signal: the tool sees the caller's signal, and an abort stops the call before the tool",
    async check(subject) {
      const allowed = await run(subject, { probe: 'pass' });
      must(allowed.tool.lastCall !== undefined, 'an allowed call did not reach the tool', allowed);
      const seen = allowed.tool.lastCall.signal;
      must(
        seen.aborted,
        "the tool's signal does not follow the caller's (aborting the caller did not reach it)",
        allowed,
      );
      const before = await run(subject, { probe: 'pass', abortBefore: true });
      must(
        before.outcome.kind === 'refused' && before.tool.callCount === 0,
        'a call aborted before dispatch still ran the tool',
        before,
      );
      const during = await run(subject, { probe: 'abort' });
      must(
        during.outcome.kind === 'refused' && !during.outcome.ran && during.tool.callCount === 0,
        'a call aborted on its way in still ran the tool',
        during,
      );
    },
  },
  {
    title: 'puts no argument value in an event, a ledger row or a refusal',
    async check(subject) {
      const scenarios: [string, Scenario][] = [
        ['an allowed call', { probe: 'pass' }],
        ['a refusal further in', { probe: 'deny' }],
        ['a throw further in', { probe: 'throw' }],
        ['a failing tool', { probe: 'pass', failingTool: true }],
        ...(subject.options.refused !== undefined
          ? [['a refused call', { call: subject.options.refused }] as [string, Scenario]]
          : []),
      ];
      for (const [label, scenario] of scenarios) {
        const r = await run(subject, scenario);
        const found = leaks(r);
        must(found.length === 0, `an argument value leaked (${label}) into: ${found.join(', ')}`, r);
      }
    },
  },
  {
    title: 'refuses the call it should refuse, in the refusal form, and says truthfully whether the tool ran',
    applies: (options) => options.refused !== undefined,
    async check(subject) {
      const r = await run(subject, { call: subject.options.refused! });
      must(
        r.outcome.kind === 'refused' && r.outcome.gate === r.name,
        `'${r.name}' did not refuse options.refused`,
        r,
      );
      must(
        isRefusalText(r.outcome.content, r.name),
        `the refusal is not in the form '[${r.name} refused: …]'`,
        r,
      );
      must(
        r.outcome.ran === r.tool.callCount > 0,
        "the outcome's 'ran' disagrees with whether the tool ran",
        r,
      );
    },
  },
];
