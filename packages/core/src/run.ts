// The per-call run: one context, the tool's plan in the chain, the onion around the executor, and
// the outcome. Shared by dispatch and resume.

import { CallContext, type CallEnvironment, type CallInit } from './context';
import { absorb, executeTurn, raceAbort } from './execute';
import { governed } from './governed';
import { outcomeOf } from './outcome';
import type { DispatchOutcome } from './outcomes';

export type RunRequest = CallInit;

type Onion = (ctx: CallContext, next: (ctx: CallContext) => Promise<void>) => Promise<void>;

/**
 * Runs one call through its plan and answers with its outcome; never throws for what a gate did. Not
 * async itself: the outcome is built in one reaction to the onion settling, where an async frame would
 * cost a promise more (and another for its await under an async hook). A throw here still rejects.
 */
export function runCall(env: CallEnvironment, request: RunRequest): Promise<DispatchOutcome> {
  const { tool, chain, signal, resume } = request;
  const plan = chain.planFor(tool, governed as never);
  const ctx = new CallContext(request, plan, env);
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
    () => finish(env, ctx, started),
    (error: unknown) => {
      absorb(ctx, error, signal);
      return finish(env, ctx, started);
    },
  );
}

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
