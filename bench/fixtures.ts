// What the benchmark dispatches: the floors, the passive and active canonical chains, the check-in
// round trip and per-tenant chains, each built once so a measured call does only per-call work.

import compose from 'koa-compose';
import {
  checkInApproved,
  createChain,
  createDispatcher,
  defineTool,
  type Chain,
  type CheckInRequest,
  type DispatchOutcome,
  type Dispatcher,
  type Identity,
  type Middleware,
  type ToolgateEmitter,
  type ToolgateEventType,
  type ToolgateListeners,
} from '@toolgate/core';
import { canonicalChain, inMemoryArtifacts } from '@toolgate/middleware';
import { EventEmitter } from 'eventemitter3';

/** A call the benchmark makes: one dispatch (or one round trip) that must end as `result`. */
export type Call = () => Promise<unknown>;

const SMALL_RESULT = Object.freeze({ ok: true, id: 'r_1' });

// A result of about 2 KB, shaped like search hits a model reads, so the ceiling gate measures a realistic payload.
const LARGE_RESULT = Object.freeze({
  total: 8,
  hits: Array.from({ length: 8 }, (_, i) => ({
    id: `doc_${1000 + i}`,
    title: `Refund policy for annual plans, section ${i + 1}`,
    url: `https://docs.example.com/billing/refunds/${i + 1}`,
    snippet:
      'Annual plans can be refunded pro rata within 30 days of renewal; after that, credit is issued for the unused months.',
    score: 97 - i * 3,
  })),
});
export const LARGE_RESULT_CHARS = JSON.stringify(LARGE_RESULT).length;

/** What serializing the active tool's result costs by itself: every dispatcher must do it once. */
export const stringifyLargeResult: Call = async () => JSON.stringify(LARGE_RESULT);

function expectResult(outcome: DispatchOutcome): DispatchOutcome {
  if (outcome.kind !== 'result')
    throw new Error(`bench: expected a result, got ${outcome.kind}: ${outcome.content}`);
  return outcome;
}

// ---- Floors -------------------------------------------------------------------------------

const passiveSchema = { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] } as const;

/** The tool every floor and the passive chain call: it declares nothing. */
export const passiveTool = defineTool({
  name: 'lookup',
  description: 'Looks something up.',
  inputSchema: passiveSchema,
  execute: async () => SMALL_RESULT,
});
export const passiveArgs = Object.freeze({ q: 'refunds' });

/** Floor A: the bare tool, awaited. */
export const floorA: Call = () => passiveTool.execute(passiveArgs, undefined as never) as Promise<unknown>;

interface FloorContext {
  readonly args: unknown;
  result?: unknown;
}
const noop = async (_ctx: FloorContext, next: () => Promise<unknown>): Promise<void> => {
  await next();
};
const floorComposed = compose<FloorContext>([
  ...Array.from({ length: 8 }, () => noop),
  async (ctx) => {
    ctx.result = await passiveTool.execute(ctx.args as never, undefined as never);
  },
]);

/** Floor B: raw koa-compose, composed once, of 8 no-op async middleware around the same execute. */
export const floorB: Call = () => floorComposed({ args: passiveArgs });

// ---- Passive canonical chain --------------------------------------------------------------

export function passiveDispatcher(events?: ToolgateEmitter): Dispatcher {
  return createDispatcher({
    tools: [passiveTool],
    chain: canonicalChain(),
    ...(events !== undefined ? { events } : {}),
  });
}

/**
 * One dispatch, called bare like the floors (no wrapper frame); `verify` checks that it ends as a
 * result before and after it is timed.
 */
/** The dispatcher alone: an empty chain, so only the per-call work of dispatch itself remains. */
export function emptyChainDispatcher(): Dispatcher {
  return createDispatcher({ tools: [passiveTool], chain: createChain([]) });
}

export function dispatchOf(
  dispatcher: Dispatcher,
  toolName: string,
  args: unknown,
  identity?: Identity,
): Call {
  const call = { toolName, args };
  const options = identity === undefined ? {} : { identity };
  return () => dispatcher.dispatch(call, options);
}

/** Runs `call` once and throws if it answered with an outcome other than a result. */
export async function verify(call: Call): Promise<void> {
  const value = await call();
  if (typeof value === 'object' && value !== null && 'kind' in value && 'ledger' in value) {
    expectResult(value as DispatchOutcome);
  }
}

// ---- Active canonical chain ---------------------------------------------------------------

const activeSchema = {
  type: 'object',
  properties: {
    customer: { type: 'string', minLength: 1, maxLength: 64 },
    amount: { type: 'number', minimum: 0 },
    currency: { type: 'string', enum: ['EUR', 'USD', 'GBP'] },
    urgent: { type: 'boolean' },
    doc: { type: 'string' },
  },
  required: ['customer', 'amount', 'currency', 'urgent', 'doc'],
  additionalProperties: false,
} as const;

/** A tool that declares one governed capability, a wanted artifact, a credential and a ceiling. */
export const activeTool = defineTool({
  name: 'refund',
  description: 'Refunds an invoice.',
  inputSchema: activeSchema,
  capabilities: ['payments'],
  wants: { doc: 'invoice' },
  needs: { kind: 'api_key', service: 'billing' },
  resultCeiling: { maxChars: 4096, narrowBy: ['customer'] },
  execute: async () => LARGE_RESULT,
});

export const activeIdentity: Identity = Object.freeze({ tenant: 'acme', principal: 'agent-7' });

export interface ActiveSetup {
  readonly dispatcher: Dispatcher;
  readonly call: Call;
  readonly args: Readonly<Record<string, unknown>>;
}

/**
 * The active chain: a synchronous checker that allows and governs `payments`, ajv on five fields, an
 * artifact resolved from the in-memory store, a credential resolved, the ceiling measuring ~2 KB.
 */
export async function activeSetup(events?: ToolgateEmitter, tool = activeTool): Promise<ActiveSetup> {
  const artifacts = inMemoryArtifacts();
  const ref = await artifacts.put(activeIdentity, {
    kind: 'invoice',
    data: { number: 'INV-1042', total: 1290 },
  });
  const chain = canonicalChain({
    permissions: { check: () => ({ allow: true }), governs: ['payments'] },
    artifacts,
    credentials: { resolve: () => ({ kind: 'api_key', value: 'sk_bench_not_a_secret' }) },
  });
  const dispatcher = createDispatcher({ tools: [tool], chain, ...(events !== undefined ? { events } : {}) });
  const args = Object.freeze({
    customer: 'acme-gmbh',
    amount: 129,
    currency: 'EUR',
    urgent: false,
    doc: ref,
  });
  return { dispatcher, call: dispatchOf(dispatcher, tool.schema.name, args, activeIdentity), args };
}

// ---- Events -------------------------------------------------------------------------------

// A Record, so the compiler names any event type this list forgets.
const EVENT_TYPES: Record<ToolgateEventType, true> = {
  'dispatch.start': true,
  'dispatch.end': true,
  'gate.decision': true,
  'permission.checked': true,
  'capability.checked': true,
  'checkin.requested': true,
  'checkin.resolved': true,
  'credential.resolved': true,
  'credential.failed': true,
  'artifacts.resolved': true,
  'artifacts.refused': true,
  'result.refused': true,
  'tool.start': true,
  'tool.end': true,
  'tool.error': true,
  'chain.rejected': true,
};

/** Adds one listener to every event type; returns the counter it increments. */
export function listenToEverything(dispatcher: Dispatcher): { heard: number } {
  const counter = { heard: 0 };
  const listener = () => {
    counter.heard++;
  };
  for (const type of Object.keys(EVENT_TYPES) as ToolgateEventType[]) dispatcher.on(type, listener);
  return counter;
}

/**
 * An emitter nobody can listen to: `listenerCount` answers 0 without a lookup, so the core builds and
 * emits no event at all. It stands in for "a build with no emitter"; `asked` counts the core's checks.
 */
export class SilentEmitter extends EventEmitter<ToolgateListeners> {
  asked = 0;
  override listenerCount(): number {
    this.asked++;
    return 0;
  }
}

// ---- Check-in round trip ------------------------------------------------------------------

export const checkInTool = defineTool({
  name: 'wire_money',
  description: 'Sends a wire transfer after a person approves it.',
  inputSchema: passiveSchema,
  checkIn: 'always',
  execute: async () => SMALL_RESULT,
});

/** dispatch → paused → resume(approved) → result, as one call. */
export function checkInRoundTrip(): Call {
  const dispatcher = createDispatcher({
    tools: [checkInTool],
    chain: canonicalChain({ checkInKey: 'bench-check-in-key-not-a-secret-0123456789' }),
  });
  const call = { toolName: checkInTool.schema.name, args: passiveArgs };
  const approval = checkInApproved({ by: 'bench@example.com' });
  return async () => {
    const paused = await dispatcher.dispatch(call);
    if (paused.kind !== 'paused')
      throw new Error(`bench: expected a pause, got ${paused.kind}: ${paused.content}`);
    const request: CheckInRequest = paused.checkIn;
    return expectResult(await dispatcher.resume(request, approval));
  };
}

// ---- Per-tenant chains --------------------------------------------------------------------

/** A tenant's own policy: one small middleware that allows and says why. */
export function tenantPolicy(tenant: string): Middleware {
  return {
    name: 'tenant-policy',
    fingerprint: tenant,
    run: async (ctx, next) => {
      ctx.note(`tenant ${tenant} allows`);
      await next();
    },
  };
}

export function tenantBase(): Chain {
  return canonicalChain();
}

/** A dispatcher choosing each caller's chain by tenant, and one identity per tenant. */
export function tenantDispatcher(chains: readonly Chain[]): {
  dispatcher: Dispatcher;
  identities: Identity[];
} {
  const byTenant = new Map<string, Chain>();
  const identities: Identity[] = chains.map((chain, i) => {
    const tenant = `tenant-${i}`;
    byTenant.set(tenant, chain);
    return Object.freeze({ tenant });
  });
  const dispatcher = createDispatcher({
    tools: [passiveTool],
    chain: (identity) => {
      const chain = identity?.tenant === undefined ? undefined : byTenant.get(identity.tenant);
      if (chain === undefined) throw new Error('unknown tenant');
      return chain;
    },
  });
  return { dispatcher, identities };
}

// ---- Scale --------------------------------------------------------------------------------

/** A tool that yields to the event loop before answering, so calls really overlap. */
export function asyncTool(inFlight: { now: number; max: number }) {
  return defineTool({
    name: 'slow_lookup',
    description: 'Looks something up over the network.',
    inputSchema: passiveSchema,
    execute: async () => {
      inFlight.now++;
      if (inFlight.now > inFlight.max) inFlight.max = inFlight.now;
      await new Promise<void>((resolve) => setImmediate(resolve));
      inFlight.now--;
      return SMALL_RESULT;
    },
  });
}
