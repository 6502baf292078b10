// Small builders shared by the core tests: a counting tool, pass-through middleware, a clock the
// test moves by hand, and a recorder for every event type.

import { fixedClock, type FixedClock } from '@toolgate/testing';
import { EVENT_TYPES } from '@toolgate/core';
import { Type } from 'typebox';
import {
  defineTool,
  type Dispatcher,
  type Middleware,
  type Tool,
  type ToolMiddlewareContext,
} from '@toolgate/core';

/** A tool that records every call and returns `{ echoed: args }` (or what `respond` returns). */
export function countingTool(
  name = 'echo',
  respond: (args: Record<string, unknown>, ctx: ToolMiddlewareContext) => unknown = (args) => ({
    echoed: args,
  }),
): Tool & { readonly calls: Record<string, unknown>[] } {
  const calls: Record<string, unknown>[] = [];
  const tool = defineTool({
    name,
    description: `records its calls (${name})`,
    inputSchema: Type.Object({ text: Type.Optional(Type.String()) }),
    execute: async (args, ctx) => {
      calls.push({ ...args });
      return respond(args, ctx);
    },
  });
  return Object.assign(tool, { calls });
}

/** A middleware that only continues. */
export function passThrough(name: string, extra: Partial<Middleware> = {}): Middleware {
  return {
    name,
    async run(_ctx, next) {
      await next();
    },
    ...extra,
  };
}

/** A middleware that runs `before` and then continues. */
export function beforeNext(
  name: string,
  before: (ctx: ToolMiddlewareContext) => unknown | Promise<unknown>,
): Middleware {
  return {
    name,
    async run(ctx, next) {
      await before(ctx);
      await next();
    },
  };
}

/** A clock the test moves by hand: the testing kit's fixedClock, started at this suite's date. */
export function manualClock(start: number = Date.parse('2030-01-01T00:00:00.000Z')): FixedClock {
  return fixedClock(start);
}

export { EVENT_TYPES };

/** Records every event of every core type a dispatcher emits, in order. */
export function recordEvents(dispatcher: Dispatcher): Array<{ type: string } & Record<string, unknown>> {
  const events: Array<{ type: string } & Record<string, unknown>> = [];
  for (const type of EVENT_TYPES) {
    dispatcher.on(type, (event: object) => {
      events.push({ ...(event as Record<string, unknown>), type });
    });
  }
  return events;
}

export const KEY = 'k'.repeat(32);
