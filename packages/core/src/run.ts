// The per-call run: one context, the tool's plan in the chain, the onion around the executor, and
// the outcome. Shared by dispatch and resume.

import { CallContext, type CallEnvironment, type CallInit } from './context';
import { absorb, executeTurn, raceAbort } from './execute';
import { governed } from './governed';
import { outcomeOf } from './outcome';
import type { DispatchOutcome } from './outcomes';

export type RunRequest = CallInit;

type Onion = (ctx: CallContext, next: (ctx: CallContext) => Promise<void>) => Promise<void>;

const NO_ARGS = Object.freeze({});
const SOMEONE = Object.freeze({});

/**
 * Per plan, one context that never runs, made like its calls' contexts but holding none of their data.
 * A context's hidden class is reached from the class's first one only through weak transitions: with
 * no call in flight, a full GC frees it, and V8 throws away every optimized function that handled a
 * context, to compile them again on the next calls (several times a call's cost, measured after
 * forced GCs). While one such context lives, the class lives with it. It holds the plan's tool and
 * chain, which the plan holds anyway, and no call's args, identity or result.
 */
const shapeKeepers = new WeakMap<object, CallContext>();

function keepShape(request: RunRequest, plan: object, env: CallEnvironment): void {
  if (shapeKeepers.has(plan)) return;
  const { tool, chain } = request;
  const identity = request.identity === undefined ? undefined : SOMEONE;
  const init = { tool, chain, args: NO_ARGS, toolCallId: '', identity, signal: undefined, resume: undefined };
  shapeKeepers.set(plan, new CallContext(init, plan as never, env));
}

/**
 * Runs one call through its plan and answers with its outcome; never throws for what a gate did. Not
 * async itself: the outcome is built in one reaction to the onion settling, where an async frame would
 * cost a promise more (and another for its await under an async hook). A throw here still rejects.
 */
export function runCall(env: CallEnvironment, request: RunRequest): Promise<DispatchOutcome> {
  const { tool, chain, signal, resume } = request;
  const plan = chain.planFor(tool, governed as never);
  const ctx = new CallContext(request, plan, env);
  keepShape(request, plan, env);
  // Timed only when someone may hear dispatch.end; a listener added mid-call reads 0.
  const started = env.quiet() ? undefined : env.now();
  if (env.wants('dispatch.start')) ctx.publish('dispatch.start', () => ({ resumed: resume !== undefined }));
  let running: Promise<void>;
  try {
    running = (plan.composed as unknown as Onion)(ctx, executeTurn);
  } catch (error) {
    running = Promise.reject(error);
  }
  return (signal === undefined ? running : raceAbort(running, signal)).then(
    reactions.finished.bind(undefined, env, ctx, started),
    reactions.failed.bind(undefined, env, ctx, started, signal),
  );
}

/**
 * A call's reactions (here, in governed.ts and in execute.ts) are methods bound per call, never
 * closures made per call. Closures of one kind share their optimized code only through a weak slot:
 * with no call in flight, a full GC frees them all and that code with them, and each kind runs
 * interpreted and is compiled again on the next calls, the compiling charged to the process. A method
 * lives as long as its module, and its code with it. Methods, not function declarations: a loader that
 * redefines a function's `name` (tsx, esbuild's keepNames) sends `bind` of that function down V8's
 * slow path, where it costs more than the closure it replaces.
 */
const reactions = {
  finished(env: CallEnvironment, ctx: CallContext, started: number | undefined): DispatchOutcome {
    return finish(env, ctx, started);
  },
  failed(
    env: CallEnvironment,
    ctx: CallContext,
    started: number | undefined,
    signal: AbortSignal | undefined,
    error: unknown,
  ): DispatchOutcome {
    absorb(ctx, error, signal);
    return finish(env, ctx, started);
  },
};

function finish(env: CallEnvironment, ctx: CallContext, started: number | undefined): DispatchOutcome {
  ctx.closed = true;
  const outcome = outcomeOf(ctx);
  if (env.wants('dispatch.end')) {
    ctx.publish('dispatch.end', () => ({
      kind: outcome.kind,
      ran: outcome.ran,
      ...(outcome.kind === 'refused' ? { gate: outcome.gate, code: outcome.code } : {}),
      durationMs: started === undefined ? 0 : env.now() - started,
    }));
  }
  return outcome;
}
