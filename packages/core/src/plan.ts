// Per-tool plans: for one (chain, tool), the onion of only the middleware that have something to
// decide for that tool. A middleware that says, from the tool's declarations, that it would only pass
// through is left out; its pass (the same ledger row and gate events) is filed in its place.

import compose from 'koa-compose';
import type { Chain, Middleware, Next } from './chain';
import type { ToolMiddlewareContext } from './middleware-context';
import type { GateEvent } from './events';
import type { LedgerRow } from './outcomes';
import type { Tool } from './tool';

/** What a middleware that has nothing to decide for a tool files on every call of it. */
export interface PassThrough {
  /** The ledger row's `why`, as `ctx.note(why)` would have said it. */
  readonly why?: string;
  /** The gate events it would have emitted, in order, as `ctx.emit` takes them. */
  readonly events?: readonly GateEvent[];
}

/** A left-out middleware's pass, ready to file: one frozen ledger row shared by every call. */
export interface FiledPass {
  readonly gate: string;
  readonly row: LedgerRow;
  readonly events: readonly GateEvent[];
}

export type Composed = (ctx: ToolMiddlewareContext, next?: Next) => Promise<void>;
export type Wrap = (middleware: Middleware) => Composed;

/** The onion one tool's calls run through in one chain. */
export interface Plan {
  /** The middleware that run, in chain order. */
  readonly running: readonly Middleware[];
  /** `passes[i]`: the passes filed just before running middleware `i` (or the executor, at the end). */
  readonly passes: readonly (readonly FiledPass[] | undefined)[];
  readonly composed: Composed;
}

const NO_EVENTS: readonly GateEvent[] = Object.freeze([]);

/** The pass `middleware` declares for `tool`, or undefined when it runs (a throwing declaration runs it). */
function passOf(middleware: Middleware, tool: Tool, chain: Chain): FiledPass | undefined {
  let pass: PassThrough | undefined;
  try {
    pass = middleware.passThrough?.(tool, chain);
  } catch {
    return undefined;
  }
  if (typeof pass !== 'object' || pass === null) return undefined;
  const { why, events } = pass;
  const noted = typeof why === 'string' && why.trim() !== '';
  // The row fileContinue would build, key for key: a left-out gate reads exactly like one that ran.
  const row: LedgerRow = Object.freeze(
    noted
      ? { gate: middleware.name, outcome: 'allow' as const, why, changed: false }
      : { gate: middleware.name, outcome: 'allow' as const, changed: false },
  );
  return {
    gate: middleware.name,
    row,
    events: Array.isArray(events) && events.length > 0 ? Object.freeze([...events]) : NO_EVENTS,
  };
}

/**
 * Builds the plan for `tool` in `chain`. Plans that leave out the same middleware share one composed
 * onion through `onions`, keyed by which positions run.
 */
export function buildPlan(chain: Chain, tool: Tool, wrap: Wrap, onions: Map<string, Composed>): Plan {
  const running: Middleware[] = [];
  const passes: (FiledPass[] | undefined)[] = [];
  let pending: FiledPass[] | undefined;
  let shape = '';
  for (const middleware of chain.middleware) {
    const pass = passOf(middleware, tool, chain);
    if (pass !== undefined) {
      (pending ??= []).push(pass);
      shape += '0';
      continue;
    }
    passes.push(pending);
    pending = undefined;
    running.push(middleware);
    shape += '1';
  }
  passes.push(pending);
  let composed = onions.get(shape);
  if (composed === undefined) {
    composed = compose(running.map(wrap)) as Composed;
    onions.set(shape, composed);
  }
  return { running, passes, composed };
}
