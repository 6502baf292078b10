// The wrapper every middleware runs in: it tells the context who is speaking, files the ledger row
// for a decision to continue, and applies the laws (silent return, unawaited next, throw = refusal).

import type { Middleware, Next } from './chain';
import type { CallContext } from './context';
import { Refusal, refusalReason } from './refusal';

/**
 * Wraps a middleware so the context knows who speaks, files ledger rows and applies the laws. It hands
 * the middleware koa-compose's own `next`: the context learns that it continued, and when its downstream
 * settled, from the turns that follow, so a call allocates no wrapper per middleware.
 *
 * Not async itself: it chains one reaction onto what the middleware returns, where an async wrapper
 * would cost its own promise and, under an async hook, another for the await. The reaction runs in the
 * same microtask an await would resume in, so the laws see exactly what they saw before.
 */
export function governed(middleware: Middleware): (ctx: CallContext, next: Next) => Promise<void> {
  const { name } = middleware;
  return function gate(ctx, next) {
    const position = ctx.beginTurn();
    ctx.enter(name, true);
    let returned: unknown;
    try {
      returned = middleware.run(ctx, next);
    } catch (error) {
      return Promise.reject(turnFailed(ctx, name, position, error));
    }
    return Promise.resolve(returned).then(
      reactions.returned.bind(undefined, ctx, name, position),
      reactions.rejected.bind(undefined, ctx, name, position),
    );
  };
}

// Reactions bound per call rather than closures made per call: see `reactions` in run.ts.
const reactions = {
  returned(ctx: CallContext, name: string, position: number): void {
    turnReturned(ctx, name, position);
  },
  rejected(ctx: CallContext, name: string, position: number, error: unknown): never {
    throw turnFailed(ctx, name, position, error);
  },
};

/** The middleware returned (or its promise fulfilled): the laws of silent return and unawaited next. */
function turnReturned(ctx: CallContext, name: string, position: number): void {
  try {
    if (!ctx.continuedFrom(position)) {
      throw ctx.refuse(
        new Refusal(
          name,
          refusalReason(
            `'${ctx.toolName}' was stopped by '${name}', which neither continued nor refused`,
            'Retrying will not help',
          ),
          {
            code: 'GATE_SILENT',
            detail: `middleware '${name}' returned without calling next() or ctx.deny()`,
          },
        ),
      );
    }
    if (!ctx.settledAfter(position)) {
      ctx.closed = true;
      throw ctx.refuse(
        new Refusal(
          name,
          refusalReason(
            `'${ctx.toolName}' was stopped because '${name}' finished before the rest of the chain`,
            'Retrying will not help',
          ),
          {
            code: 'GATE_UNAWAITED',
            detail: `middleware '${name}' resolved before downstream; it is probably missing an await on next()`,
          },
        ),
      );
    }
  } finally {
    ctx.endTurn(position);
  }
}

/** The middleware threw (or its promise rejected): what its turn rejects with, classified. */
function turnFailed(ctx: CallContext, name: string, position: number, error: unknown): unknown {
  try {
    return classify(ctx, name, error);
  } finally {
    ctx.endTurn(position);
  }
}

/** Turns whatever a middleware threw into the recorded refusal, pause or failure. */
function classify(ctx: CallContext, name: string, error: unknown): unknown {
  // `throw undefined` must not pass for the recorded refusal while none is recorded yet.
  if (error !== undefined && (error === ctx.stopped || error === ctx.failure)) return error;
  if (ctx.stopped !== undefined) return ctx.stopped;
  let refusal = false;
  let errorName: string = typeof error;
  let doubleNext = false;
  try {
    refusal = error instanceof Refusal;
    if (error instanceof Error) {
      errorName = String(error.name);
      doubleNext = error.message === 'next() called multiple times';
    }
  } catch {
    // A proxy or getter that throws when inspected is still this middleware failing, not the next one out.
    errorName = 'an unreadable value';
  }
  if (refusal) {
    // A refusal not yet recorded was raised here: it is this middleware's, whatever gate it names.
    const raised = error as Refusal;
    if (raised.gate === name) return ctx.refuse(raised);
    return ctx.refuse(
      new Refusal(name, raised.reason, {
        code: raised.code,
        retryable: raised.retryable,
        mentionsRun: raised.mentionsRun,
        ...(raised.detail !== undefined ? { detail: raised.detail } : {}),
      }),
    );
  }
  // Anything else is this middleware failing: fail closed, keep its message off the model's page.
  return ctx.refuse(
    new Refusal(
      name,
      refusalReason(
        `'${ctx.toolName}' was stopped because the '${name}' check failed`,
        'Retrying will not help',
      ),
      {
        code: doubleNext ? 'GATE_NEXT_TWICE' : 'GATE_ERROR',
        detail: doubleNext
          ? `middleware '${name}' called next() twice`
          : `middleware '${name}' threw ${errorName}`,
      },
    ),
  );
}
