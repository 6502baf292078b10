// Small builders shared by the middleware tests: a tool that records its calls, a clock the test
// moves by hand, a recorder for every event type, and narrowing helpers for outcomes.

import { fixedClock, type FixedClock } from '@toolgate/testing';
import { EVENT_TYPES } from '@toolgate/core';
import {
  defineTool,
  type DispatchOutcome,
  type Dispatcher,
  type PausedOutcome,
  type RefusedOutcome,
  type ResultOutcome,
  type Tool,
  type ToolgateEventType,
  type ToolMiddlewareContext,
} from '@toolgate/core';

export const KEY = 'test-check-in-key-0123456789abcdef';

/** What a recording tool saw on one call, copied while it ran. */
export interface SeenCall {
  readonly args: Record<string, unknown>;
  readonly ctx: ToolMiddlewareContext;
  readonly secret: unknown;
  readonly wanted: Record<string, unknown> | undefined;
}

export type RecordingTool = Tool & { readonly calls: SeenCall[] };

export interface RecordingToolSpec {
  readonly name?: string;
  readonly description?: string;
  readonly inputSchema?: Record<string, unknown>;
  readonly capabilities?: readonly string[];
  readonly checkIn?: Tool['checkIn'];
  readonly checkInComponent?: Tool['checkInComponent'];
  readonly needs?: Tool['needs'];
  readonly resultCeiling?: Tool['resultCeiling'];
  readonly wants?: Tool['wants'];
  readonly egress?: Tool['egress'];
  readonly paths?: Tool['paths'];
}

const OPEN_SCHEMA = { type: 'object', properties: { text: { type: 'string' } } };

/** A tool that records every call (args, credential, wanted) and returns what `respond` returns. */
export function recordingTool(
  spec: RecordingToolSpec = {},
  respond: (args: Record<string, unknown>, ctx: ToolMiddlewareContext) => unknown = () => 'ok',
): RecordingTool {
  const calls: SeenCall[] = [];
  const {
    name = 'echo',
    description = `records its calls`,
    inputSchema = OPEN_SCHEMA,
    ...declarations
  } = spec;
  const tool = defineTool({
    name,
    description,
    inputSchema,
    ...declarations,
    execute: async (args: Record<string, unknown>, ctx: ToolMiddlewareContext) => {
      calls.push({
        args: structuredClone(args),
        ctx,
        secret: ctx.credential?.reveal(),
        wanted: ctx.wanted === undefined ? undefined : structuredClone(ctx.wanted),
      });
      return respond(args, ctx);
    },
  } as never) as Tool;
  return Object.assign(tool, { calls });
}

/** A clock the test moves by hand: the testing kit's fixedClock, started at this suite's date. */
export function manualClock(start: number = Date.parse('2031-03-04T05:06:07.000Z')): FixedClock {
  return fixedClock(start);
}

export { EVENT_TYPES };

export type RecordedEvent = { readonly type: string } & Record<string, unknown>;

/** Records every event of every core type (and any `extra` custom types) a dispatcher emits, in order. */
export function recordEvents(dispatcher: Dispatcher, extra: readonly string[] = []): RecordedEvent[] {
  const events: RecordedEvent[] = [];
  for (const type of [...EVENT_TYPES, ...extra]) {
    dispatcher.on(type as ToolgateEventType, (event: unknown) => {
      events.push({ ...(event as Record<string, unknown>), type });
    });
  }
  return events;
}

export function eventsOf(events: readonly RecordedEvent[], type: string): RecordedEvent[] {
  return events.filter((event) => event.type === type);
}

function summary(outcome: DispatchOutcome): string {
  return `${outcome.kind}: ${outcome.content}`;
}

export function expectRefused(outcome: DispatchOutcome): RefusedOutcome {
  if (outcome.kind !== 'refused') throw new Error(`expected a refusal, got ${summary(outcome)}`);
  return outcome;
}

export function expectPaused(outcome: DispatchOutcome): PausedOutcome {
  if (outcome.kind !== 'paused') throw new Error(`expected a pause, got ${summary(outcome)}`);
  return outcome;
}

export function expectResult(outcome: DispatchOutcome): ResultOutcome {
  if (outcome.kind !== 'result') throw new Error(`expected a result, got ${summary(outcome)}`);
  return outcome;
}

/** A promise that never settles: a port that hangs until its deadline. */
export function never<T>(): Promise<T> {
  return new Promise<T>(() => undefined);
}
