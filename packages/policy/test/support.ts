// Builders shared by the policy tests: tools with typed schemas, a dispatcher over a canonical chain
// with a policy, an event recorder and outcome narrowing.

import {
  createDispatcher,
  defineTool,
  EVENT_TYPES,
  type Dispatcher,
  type DispatchOutcome,
  type Identity,
  type PausedOutcome,
  type RefusedOutcome,
  type ResultOutcome,
  type Tool,
  type ToolAnnotations,
  type ToolgateEventType,
} from '@toolgate/core';
import { canonicalChain, type CanonicalChainOptions } from '@toolgate/middleware';
import { fixedClock } from '@toolgate/testing';
import { policyGate, type PolicyGateOptions, type PolicyRule } from '@toolgate/policy';

export const KEY = 'policy-tests-check-in-key-0123456789abcdef';
export const NOW = Date.parse('2031-03-04T05:06:07.000Z');

export type CountedTool = Tool & { readonly runs: number };

export interface ToolSpec {
  readonly name: string;
  readonly properties?: Record<string, unknown>;
  readonly required?: readonly string[];
  readonly annotations?: ToolAnnotations;
  readonly capabilities?: readonly string[];
  readonly checkIn?: Tool['checkIn'];
}

/** A tool that counts its runs and answers 'ran <name>'. */
export function countedTool(spec: ToolSpec): CountedTool {
  const tool = defineTool({
    name: spec.name,
    description: `test tool ${spec.name}`,
    inputSchema: {
      type: 'object',
      properties: spec.properties ?? {},
      ...(spec.required !== undefined ? { required: spec.required } : {}),
    },
    ...(spec.annotations !== undefined ? { annotations: spec.annotations } : {}),
    ...(spec.capabilities !== undefined ? { capabilities: spec.capabilities } : {}),
    ...(spec.checkIn !== undefined ? { checkIn: spec.checkIn } : {}),
    execute: () => {
      runs += 1;
      return `ran ${spec.name}`;
    },
  } as never) as Tool;
  let runs = 0;
  // A getter: the dispatcher freezes the tool, so a counter field could not change.
  return Object.defineProperty(tool, 'runs', { get: () => runs, enumerable: false }) as CountedTool;
}

export const refund = (): CountedTool =>
  countedTool({
    name: 'issue_refund',
    properties: { amount: { type: 'number' }, order: { type: 'string' }, items: { type: 'integer' } },
    required: ['amount', 'order'],
  });

export const lookup = (): CountedTool =>
  countedTool({
    name: 'lookup_order',
    properties: { order: { type: 'string' } },
    required: ['order'],
    annotations: { readOnlyHint: true },
  });

export interface Setup {
  readonly dispatcher: Dispatcher;
  readonly events: RecordedEvent[];
  readonly clock: ReturnType<typeof fixedClock>;
}

export type RecordedEvent = { readonly type: string } & Record<string, unknown>;

/** A dispatcher over the canonical chain with `policyGate(rules, options)` in its place. */
export function setup(
  tools: readonly Tool[],
  rules: readonly PolicyRule[],
  options: PolicyGateOptions = {},
  chain: CanonicalChainOptions = {},
): Setup {
  const clock = fixedClock(NOW);
  const dispatcher = createDispatcher({
    tools,
    chain: canonicalChain({ checkInKey: KEY, ...chain, policy: policyGate(rules, options) }),
    clock: clock.now,
  });
  return { dispatcher, events: recordEvents(dispatcher), clock };
}

export function recordEvents(dispatcher: Dispatcher): RecordedEvent[] {
  const events: RecordedEvent[] = [];
  for (const type of [...EVENT_TYPES, 'policy.decided', 'policy.shadow']) {
    dispatcher.on(type as ToolgateEventType, (event: unknown) => {
      events.push({ ...(event as Record<string, unknown>), type });
    });
  }
  return events;
}

export const ana: Identity = { tenant: 'acme', principal: 'ana', roles: ['agent'] };
export const intern: Identity = { tenant: 'acme', principal: 'ivo', roles: ['intern'] };

const summary = (outcome: DispatchOutcome) => `${outcome.kind}: ${outcome.content}`;

export function refused(outcome: DispatchOutcome): RefusedOutcome {
  if (outcome.kind !== 'refused') throw new Error(`expected a refusal, got ${summary(outcome)}`);
  return outcome;
}

export function paused(outcome: DispatchOutcome): PausedOutcome {
  if (outcome.kind !== 'paused') throw new Error(`expected a pause, got ${summary(outcome)}`);
  return outcome;
}

export function result(outcome: DispatchOutcome): ResultOutcome {
  if (outcome.kind !== 'result') throw new Error(`expected a result, got ${summary(outcome)}`);
  return outcome;
}

/** The policy gate's ledger row of an outcome. */
export function policyRow(outcome: DispatchOutcome) {
  return outcome.ledger.find((row) => row.gate === 'policy');
}
