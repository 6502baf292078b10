// Shared by the hardening suites: how many cases a property runs, the fault injector that wraps every
// port, a scanner that finds a secret anywhere in what a dispatcher emitted, and the small async
// helpers (deferred, flush, a guard that turns a hang into a failed case instead of a stuck suite).

import { EVENT_TYPES } from '@toolgate/core';
import fc from 'fast-check';
import type { DispatchOutcome, Dispatcher } from '@toolgate/core';
import { ajvValidator } from '@toolgate/middleware';

/** `pnpm test:deep` sets TOOLGATE_DEEP=1: ten times the cases, fresh random seeds. */
export const DEEP = process.env['TOOLGATE_DEEP'] === '1';

/** Generated cases per property: ≥ 1,000 in CI, ≥ 10,000 in the deep run. */
export const RUNS = DEEP ? 10_000 : 1_000;

/** Jest's per-test budget for one property (the deep run is opt-in and may take long). */
export const PROPERTY_TIMEOUT_MS = DEEP ? 60 * 60_000 : 120_000;

/** The per-gate deadline the suites give canonicalChain: hangs end quickly, yet far above a healthy answer. */
export const GATE_DEADLINE_MS = 20;

/**
 * CI replays a fixed seed per property, so a red build is reproducible; the deep run explores fresh
 * seeds. TOOLGATE_SEED replays any seed fast-check printed.
 */
export function fcOptions<T>(fixedSeed: number, extra: fc.Parameters<T> = {}): fc.Parameters<T> {
  const given = process.env['TOOLGATE_SEED'];
  const seed = given !== undefined ? Number(given) : DEEP ? Date.now() ^ fixedSeed : fixedSeed;
  return { numRuns: RUNS, seed, ...extra };
}

/** One ajv for every generated chain: ajv compiles once per schema, so chains stay cheap to build. */
export const sharedValidator = ajvValidator();

export interface Deferred<T> {
  readonly promise: Promise<T>;
  resolve(value: T): void;
  readonly settled: boolean;
}

export function deferred<T = void>(): Deferred<T> {
  let resolve!: (value: T) => void;
  let settled = false;
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  return {
    promise,
    resolve(value) {
      settled = true;
      resolve(value);
    },
    get settled() {
      return settled;
    },
  };
}

/** Lets every already-scheduled microtask and immediate run: work a hung gate does late shows up. */
export async function flush(turns = 3): Promise<void> {
  for (let i = 0; i < turns; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}

/** A promise that never settles, like a port that hangs and ignores its signal. */
export function never<T = never>(): Promise<T> {
  return new Promise<T>(() => undefined);
}

/**
 * Fails the case (instead of hanging the suite) when `promise` does not settle within `ms`. This is a
 * safety net far above every deadline in play, not a timing assertion.
 */
export async function settles<T>(promise: Promise<T>, what: string, ms = 5_000): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const stuck = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not settle within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, stuck]);
  } finally {
    clearTimeout(timer);
  }
}

export { EVENT_TYPES };

export type RecordedEvent = { readonly type: string } & Readonly<Record<string, unknown>>;

/** Records every core event the dispatcher emits, in order. */
export function recordEvents(dispatcher: Dispatcher): RecordedEvent[] {
  const events: RecordedEvent[] = [];
  for (const type of EVENT_TYPES) {
    dispatcher.on(type, (event: object) => {
      events.push({ ...(event as Record<string, unknown>), type });
    });
  }
  return events;
}

/** Every string reachable from `value` (keys included), without calling getters or toJSON. */
export function stringsIn(value: unknown, out: string[] = [], seen = new Set<object>()): string[] {
  if (typeof value === 'string') {
    out.push(value);
    return out;
  }
  if (typeof value !== 'object' || value === null || seen.has(value)) return out;
  seen.add(value);
  for (const key of Reflect.ownKeys(value)) {
    if (typeof key === 'string') out.push(key);
    const descriptor = Object.getOwnPropertyDescriptor(value, key);
    if (descriptor !== undefined && 'value' in descriptor) stringsIn(descriptor.value, out, seen);
  }
  return out;
}

/**
 * Where a secret shows up in `haystack`, whole or in part: any 12-character window of it counts, so a
 * redaction that removes a prefix and leaves the tail is still a leak.
 */
export function leaksOf(secrets: readonly string[], haystack: Readonly<Record<string, unknown>>): string[] {
  const found: string[] = [];
  // A window two secrets share (a shrunk '000…' body) would blame one secret for the other's text.
  const windowsOf = new Map(secrets.map((secret) => [secret, secretWindows(secret)]));
  const shared = (w: string) => secrets.filter((secret) => windowsOf.get(secret)!.includes(w)).length > 1;
  for (const [where, value] of Object.entries(haystack)) {
    const texts = stringsIn(value);
    for (const secret of secrets) {
      const windows = windowsOf.get(secret)!.filter((w) => !shared(w));
      if (texts.some((text) => windows.some((w) => text.includes(w))))
        found.push(`${where} leaks '${secret}'`);
    }
  }
  return found;
}

/** The secret as it is, and as JSON writes it once, twice, and ASCII-only: each form is a leak. */
function secretForms(secret: string): string[] {
  const json = JSON.stringify(secret).slice(1, -1);
  const ascii = json.replace(
    /[\u007f-\uffff]/g,
    (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
  return [...new Set([secret, json, JSON.stringify(json).slice(1, -1), ascii])];
}

function secretWindows(secret: string): string[] {
  const windows: string[] = [];
  for (const form of secretForms(secret)) {
    const size = Math.min(12, form.length);
    for (let i = 0; i + size <= form.length; i++) windows.push(form.slice(i, i + size));
  }
  return windows;
}

/** What the model or an operator can see of an outcome; the tool's own value is the tool's business. */
export function visibleParts(outcome: DispatchOutcome): Record<string, unknown> {
  const parts: Record<string, unknown> = {
    content: outcome.content,
    ledger: outcome.ledger,
  };
  if (outcome.kind === 'refused') parts['reason'] = outcome.reason;
  if (outcome.kind === 'failed') parts['error'] = outcome.error;
  if (outcome.kind === 'paused') {
    // The human reviews the args by design; everything else in the request is checked.
    const { args: _args, review: _review, ...request } = outcome.checkIn;
    parts['checkIn'] = request;
  }
  return parts;
}

const PROTOTYPES: ReadonlyArray<readonly [string, object]> = [
  ['Object.prototype', Object.prototype],
  ['Array.prototype', Array.prototype],
  ['Function.prototype', Function.prototype],
  ['String.prototype', String.prototype],
];

/** The own keys of the built-in prototypes, to compare after every case. */
export function prototypeKeys(): string {
  return PROTOTYPES.map(
    ([name, proto]) => `${name}:${Reflect.ownKeys(proto).map(String).sort().join(',')}`,
  ).join('\n');
}

/** Throws when any built-in prototype gained, lost or changed a key since `baseline`. */
export function assertNoPollution(baseline: string): void {
  const now = prototypeKeys();
  if (now !== baseline) throw new Error(`a built-in prototype changed:\n${now}`);
  const probe = {} as Record<string, unknown>;
  for (const key of ['polluted', 'isAdmin', 'allow']) {
    if (probe[key] !== undefined) throw new Error(`Object.prototype.${key} is defined`);
  }
}

// ---------------------------------------------------------------------------------------------
// Fault injection

/** What one call to a port does. */
export type Fault = 'ok' | 'throw' | 'reject' | 'malformed' | 'hang' | 'slow';

export const FAULTS: readonly Fault[] = ['ok', 'throw', 'reject', 'malformed', 'hang', 'slow'];

export interface PortCall {
  readonly port: string;
  readonly method: string;
  readonly fault: Fault;
  /** What the port was asked (the capability, for a checker). */
  readonly about?: string;
}

/** Chooses the fault for the n-th call (0-based) of `port.method`. */
export type FaultPlan = (port: string, method: string, n: number) => Fault;

/** A value a port must not return: malformed for every port method in the suites. */
export type Malformed = () => unknown;

/**
 * Wraps `port` so each method call does what `plan` says: throw (synchronously), reject, answer a
 * malformed value, hang (ignoring its signal), answer after a few event-loop turns, or delegate.
 * Errors carry `secret` in their message so a leak of port error text is caught.
 */
export function faulty<T extends object>(
  name: string,
  port: T,
  options: {
    readonly plan: FaultPlan;
    readonly log: PortCall[];
    readonly malformed: Readonly<Record<string, readonly Malformed[]>>;
    readonly secret?: string;
    readonly about?: (method: string, args: readonly unknown[]) => string | undefined;
  },
): T {
  const counts = new Map<string, number>();
  const wrapped: Record<string, unknown> = { ...(port as Record<string, unknown>) };
  for (const method of methodsOf(port)) {
    const original = (port as Record<string, (...args: unknown[]) => unknown>)[method]!;
    wrapped[method] = (...args: unknown[]) => {
      const n = counts.get(method) ?? 0;
      counts.set(method, n + 1);
      const fault = options.plan(name, method, n);
      const about = options.about?.(method, args);
      options.log.push({ port: name, method, fault, ...(about !== undefined ? { about } : {}) });
      const message = `${name}.${method} failed: ${options.secret ?? 'no secret'}`;
      switch (fault) {
        case 'ok':
          return original.apply(port, args);
        case 'throw':
          throw new Error(message);
        case 'reject':
          return Promise.reject(new Error(message));
        case 'malformed': {
          const choices = options.malformed[method] ?? [() => 42];
          return Promise.resolve(choices[n % choices.length]!());
        }
        case 'hang':
          return never();
        case 'slow':
          return flush(2).then(() => original.apply(port, args));
      }
    };
  }
  return wrapped as T;
}

function methodsOf(port: object): string[] {
  return Object.keys(port).filter((key) => typeof (port as Record<string, unknown>)[key] === 'function');
}

/** An object whose every property read throws: the nastiest "malformed" answer a port can give. */
export function throwingObject(secret = 'no secret'): object {
  return new Proxy(
    {},
    {
      get() {
        throw new Error(`trap: ${secret}`);
      },
      has() {
        throw new Error(`trap: ${secret}`);
      },
      ownKeys() {
        throw new Error(`trap: ${secret}`);
      },
      getOwnPropertyDescriptor() {
        throw new Error(`trap: ${secret}`);
      },
      getPrototypeOf() {
        throw new Error(`trap: ${secret}`);
      },
    },
  );
}

/** A weighted fault: mostly healthy, so chains get deep enough to meet later ports. */
export function faultArb(weights: Partial<Record<Fault, number>> = {}): fc.Arbitrary<Fault> {
  const w: Record<Fault, number> = { ok: 8, throw: 1, reject: 1, malformed: 1, hang: 1, slow: 1, ...weights };
  return fc.oneof(
    ...FAULTS.filter((f) => w[f] > 0).map((f) => ({ arbitrary: fc.constant(f), weight: w[f] })),
  );
}
