// Fault injection: every in-process port (permission checker, credential provider, artifact store,
// check-in store) is wrapped so that, at random calls, it throws, rejects, answers a malformed value,
// hangs or answers slowly. Every call fails closed — refused by the gate that owns the faulty port,
// with that gate's named code, within its deadline — and the dispatcher serves the next call normally.
// Aborts: aborting while a gate waits or while the tool runs answers at once (the deadlines are far
// away), refused before execution and failed during it, and the tool's own signal is aborted.

import fc from 'fast-check';
import { Type } from 'typebox';
import {
  checkInApproved,
  createDispatcher,
  defineTool,
  inMemoryCheckIns,
  type ArtifactStore,
  type CheckInStore,
  type CredentialProvider,
  type DispatchOutcome,
  type Middleware,
  type PermissionChecker,
  type Tool,
} from '@toolgate/core';
import { canonicalChain, inMemoryArtifacts } from '@toolgate/middleware';
import {
  deferred,
  faultArb,
  faulty,
  fcOptions,
  GATE_DEADLINE_MS,
  never,
  PROPERTY_TIMEOUT_MS,
  settles,
  sharedValidator,
  throwingObject,
  type Fault,
  type PortCall,
} from '../../../../test-support/hardening';

const KEY = 'faults-key-'.padEnd(32, 'k');
const IDENTITY = { tenant: 'acme' };
const METHODS = [
  'permissions.check',
  'credentials.resolve',
  'artifacts.get',
  'artifacts.list',
  'checkIns.put',
  'checkIns.consume',
] as const;
const CALLS_PER_METHOD = 6;

/** Answers no port may give; `undefined` is a legitimate "not found" from get, and put's answer is ignored. */
const MALFORMED = {
  check: [
    () => ({ allow: 'yes' }),
    () => null,
    () => ({ allow: false }),
    () => 'allow',
    () => throwingObject(),
  ],
  resolve: [
    () => ({ kind: 'api_key' }),
    () => ({ kind: 'api_key', value: 5 }),
    () => null,
    () => throwingObject(),
  ],
  get: [
    () => 42,
    () => 'artifact',
    () => ({ meta: null }),
    () => ({ meta: { kind: 7 } }),
    () => throwingObject(),
  ],
  list: [() => undefined, () => 'refs', () => throwingObject()],
  put: [() => 42],
  consume: [() => 'yes', () => 1, () => ({}), () => null, () => throwingObject()],
};

/** The gate that owns a port call, and the refusal code it must fail closed with. */
function ownerOf(call: PortCall): { gate: string; code: string } {
  switch (`${call.port}.${call.method}`) {
    case 'permissions.check':
      return call.about === 'tool_call'
        ? { gate: 'permission', code: 'CHECKER_FAILED' }
        : { gate: 'capabilities', code: 'CHECKER_FAILED' };
    case 'credentials.resolve':
      return { gate: 'credentials', code: 'CREDENTIAL_FAILED' };
    case 'artifacts.get':
      return call.about === 'props'
        ? { gate: 'check-in', code: 'ARTIFACT_STORE_FAILED' }
        : { gate: 'wants', code: 'ARTIFACT_STORE_FAILED' };
    case 'artifacts.list':
      return { gate: 'wants', code: 'ARTIFACT_STORE_FAILED' };
    default:
      return { gate: 'check-in', code: 'CHECKIN_STORE_FAILED' };
  }
}

/** Whether the fault must make the call fail: a malformed answer to put is harmless (put answers nothing). */
function isHard(call: PortCall): boolean {
  if (call.fault === 'ok' || call.fault === 'slow') return false;
  return !(call.fault === 'malformed' && call.method === 'put');
}

type Step = { readonly tool: 'full' | 'unknown-doc' | 'guarded' };

interface Rig {
  readonly tools: Tool[];
  readonly runs: string[];
  readonly docRef: string;
  readonly propsRef: string;
  readonly ports: {
    permissions: PermissionChecker;
    credentials: CredentialProvider;
    artifacts: ArtifactStore;
    checkIns: CheckInStore;
  };
}

async function rig(
  plan: (port: string, method: string, n: number) => Fault,
  log: PortCall[],
  onCall?: (call: PortCall) => void,
): Promise<Rig> {
  const store = inMemoryArtifacts();
  const docRef = await store.put(IDENTITY, { kind: 'doc/text', data: 'the document' });
  const propsRef = await store.put(IDENTITY, {
    kind: 'screen/props',
    data: { title: 'Approve the payment' },
  });
  const logged: PortCall[] = [];
  const observed = new Proxy(logged, {
    get(target, key, receiver) {
      if (key === 'push')
        return (call: PortCall) => {
          log.push(call);
          onCall?.(call);
          return target.push(call);
        };
      return Reflect.get(target, key, receiver) as unknown;
    },
  });
  const about = (method: string, args: readonly unknown[]): string | undefined => {
    if (method === 'check') return (args[0] as { capability: string }).capability;
    if (method === 'get') return args[1] === propsRef ? 'props' : 'doc';
    return undefined;
  };
  const inject = <T extends object>(name: string, port: T) =>
    faulty(name, port, { plan, log: observed, malformed: MALFORMED, about });
  const runs: string[] = [];
  const execute = (name: string) => async (_args: unknown, ctx: { signal: AbortSignal }) => {
    runs.push(name);
    await Promise.resolve();
    return ctx.signal.aborted ? 'aborted' : `${name} ran`;
  };
  const schema = Type.Object({ doc: Type.Optional(Type.String()), amount: Type.Optional(Type.Number()) });
  return {
    tools: [
      defineTool({
        name: 'full',
        description: 'touches every port',
        inputSchema: schema,
        capabilities: ['payments'],
        needs: { kind: 'api_key', service: 'bank' },
        wants: { doc: 'doc/text' },
        execute: execute('full'),
      }),
      defineTool({
        name: 'guarded',
        description: 'asks a person first',
        inputSchema: schema,
        checkIn: 'always',
        checkInComponent: { id: 'approve-payment', propsRef },
        needs: { kind: 'api_key', service: 'bank' },
        execute: execute('guarded'),
      }),
    ],
    runs,
    docRef,
    propsRef,
    ports: {
      permissions: inject('permissions', {
        governs: ['payments'],
        check: () => Promise.resolve({ allow: true as const }),
      }),
      credentials: inject('credentials', {
        resolve: () => Promise.resolve({ kind: 'api_key', value: 'bank-key' }),
      }),
      artifacts: inject('artifacts', store),
      checkIns: inject('checkIns', inMemoryCheckIns()),
    },
  };
}

function dispatcherOf(r: Rig, deadlineMs: number, extra?: Middleware) {
  const chain = canonicalChain({ ...r.ports, checkInKey: KEY, deadlineMs, validator: sharedValidator });
  return createDispatcher({ tools: r.tools, chain: extra === undefined ? chain : chain.use(extra) });
}

/** Checks one answer against the port calls made while producing it. */
function judge(
  outcome: DispatchOutcome,
  calls: readonly PortCall[],
  healthy: { kind: string; code?: string },
  ran: number,
): void {
  const firstHard = calls.findIndex(isHard);
  if (firstHard !== -1) {
    // Fail closed at the first bad answer, by the gate that asked, and ask nothing more.
    const refusal = outcome.kind === 'refused' ? { gate: outcome.gate, code: outcome.code } : {};
    expect({ kind: outcome.kind, ran: outcome.ran, ...refusal }).toEqual({
      kind: 'refused',
      ran: false,
      ...ownerOf(calls[firstHard]!),
    });
    expect(calls.length).toBe(firstHard + 1);
    expect(ran).toBe(0);
    return;
  }
  if (outcome.kind === 'refused' && outcome.code !== healthy.code) {
    // Only a slow answer that missed its deadline may stop an otherwise healthy call, named as its gate's failure.
    const slow = calls.filter((c) => c.fault === 'slow').map(ownerOf);
    expect(slow).toContainEqual({ gate: outcome.gate, code: outcome.code });
    expect(ran).toBe(0);
    return;
  }
  expect({ kind: outcome.kind, ...(outcome.kind === 'refused' ? { code: outcome.code } : {}) }).toEqual(
    healthy,
  );
  expect(ran).toBe(outcome.ran ? 1 : 0);
}

describe('fault injection', () => {
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => unhandled.push(reason);
  beforeAll(() => process.on('unhandledRejection', onUnhandled));
  afterAll(() => {
    process.off('unhandledRejection', onUnhandled);
  });

  it(
    'a port that throws, rejects, answers garbage, hangs or crawls fails its gate closed, and the next call is served',
    async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.array(faultArb(), {
            minLength: METHODS.length * CALLS_PER_METHOD,
            maxLength: METHODS.length * CALLS_PER_METHOD,
          }),
          fc.array(
            fc.record({ tool: fc.constantFrom('full' as const, 'unknown-doc' as const, 'guarded' as const) }),
            { minLength: 1, maxLength: 3 },
          ),
          async (faults, steps: Step[]) => {
            let healthy = false;
            const log: PortCall[] = [];
            const plan = (port: string, method: string, n: number): Fault => {
              const slot = METHODS.indexOf(`${port}.${method}` as (typeof METHODS)[number]);
              return healthy || slot === -1 || n >= CALLS_PER_METHOD
                ? 'ok'
                : faults[slot * CALLS_PER_METHOD + n]!;
            };
            const r = await rig(plan, log);
            const dispatcher = dispatcherOf(r, GATE_DEADLINE_MS);
            const call = async (
              start: () => Promise<DispatchOutcome>,
              expected: { kind: string; code?: string },
            ) => {
              const fromLog = log.length;
              const fromRuns = r.runs.length;
              const outcome = await settles(start(), 'a call with a faulty port');
              judge(outcome, log.slice(fromLog), expected, r.runs.length - fromRuns);
              return outcome;
            };
            for (const step of steps) {
              if (step.tool === 'guarded') {
                const fromLog = log.length;
                const paused = await call(
                  () => dispatcher.dispatch({ toolName: 'guarded', args: {} }, { identity: IDENTITY }),
                  { kind: 'paused' },
                );
                // A put that answered garbage stored nothing: the approval then finds no pending request.
                const lost = log.slice(fromLog).some((c) => c.method === 'put' && c.fault === 'malformed');
                const approved = lost ? { kind: 'refused', code: 'CHECKIN_NOT_PENDING' } : { kind: 'result' };
                if (paused.kind === 'paused')
                  await call(
                    () => dispatcher.resume(paused.checkIn, checkInApproved({ by: 'alice' })),
                    approved,
                  );
              } else {
                const doc = step.tool === 'full' ? r.docRef : 'art_0000000000000000000000';
                await call(
                  () => dispatcher.dispatch({ toolName: 'full', args: { doc } }, { identity: IDENTITY }),
                  step.tool === 'full' ? { kind: 'result' } : { kind: 'refused', code: 'ARTIFACT_NOT_FOUND' },
                );
              }
            }
            // Whatever happened before, a healthy call is served normally.
            healthy = true;
            const next = await settles(
              dispatcher.dispatch({ toolName: 'full', args: { doc: r.docRef } }, { identity: IDENTITY }),
              'the next call',
            );
            expect(next.kind).toBe('result');
          },
        ),
        fcOptions(8),
      );
      expect(unhandled).toEqual([]);
    },
    PROPERTY_TIMEOUT_MS,
  );
});

type AbortPoint =
  'permission' | 'capabilities' | 'wants' | 'check-in store' | 'credentials' | 'policy' | 'execute';

const ABORT_POINTS: readonly AbortPoint[] = [
  'permission',
  'capabilities',
  'wants',
  'check-in store',
  'credentials',
  'policy',
  'execute',
];

// Seven points times two tools: a finite space, so every case runs rather than a sample of it.
describe('abort signals', () => {
  it.each(ABORT_POINTS.flatMap((point) => [[point, false] as const, [point, true] as const]))(
    "aborting at %s (tool ignores its signal: %s) answers at once: refused before the tool, failed during it, and the tool's signal aborted",
    async (point, toolIgnoresSignal) => {
      const reached = deferred();
      const target: Record<Exclude<AbortPoint, 'policy' | 'execute'>, (c: PortCall) => boolean> = {
        permission: (c) => c.method === 'check' && c.about === 'tool_call',
        capabilities: (c) => c.method === 'check' && c.about === 'payments',
        wants: (c) => c.method === 'get' && c.about === 'doc',
        'check-in store': (c) => c.method === 'put',
        credentials: (c) => c.method === 'resolve',
      };
      const hangsHere = (port: string, method: string): boolean =>
        point !== 'policy' &&
        point !== 'execute' &&
        !reached.settled &&
        target[point]({
          port,
          method,
          fault: 'hang',
          ...(currentAbout !== undefined ? { about: currentAbout } : {}),
        });
      let currentAbout: string | undefined;
      const log: PortCall[] = [];
      let armed = true;
      const r = await rig(
        (port, method) => (armed && hangsHere(port, method) ? 'hang' : 'ok'),
        log,
        (c) => {
          if (c.fault === 'hang') reached.resolve();
        },
      );
      // The port's `about` is known only inside the wrapper; recompute it the same way for the plan.
      const wrapAbout = <T extends object>(
        port: T,
        method: string,
        aboutOf: (args: unknown[]) => string,
      ): T => {
        const original = (port as Record<string, (...a: unknown[]) => unknown>)[method]!;
        return {
          ...port,
          [method]: (...args: unknown[]) => ((currentAbout = aboutOf(args)), original(...args)),
        } as T;
      };
      const ports = {
        ...r.ports,
        permissions: wrapAbout(
          r.ports.permissions,
          'check',
          (a) => (a[0] as { capability: string }).capability,
        ),
        artifacts: wrapAbout(r.ports.artifacts, 'get', (a) => (a[1] === r.propsRef ? 'props' : 'doc')),
      };
      let toolSignal: AbortSignal | undefined;
      const slowTool = defineTool({
        name: 'slow',
        description: 'runs until stopped',
        inputSchema: Type.Object({}),
        execute: (_args, ctx) => {
          toolSignal = ctx.signal;
          reached.resolve();
          if (toolIgnoresSignal) return never();
          return new Promise((_, reject) =>
            ctx.signal.addEventListener('abort', () => reject(new Error('stopped')), { once: true }),
          );
        },
      });
      const policy: Middleware = {
        name: 'policy',
        async run(ctx, next) {
          if (point === 'policy' && !reached.settled) {
            reached.resolve();
            await never();
          }
          await next();
        },
      };
      // Deadlines a minute away: an answer now can only come from the abort.
      const chain = canonicalChain({
        ...ports,
        checkInKey: KEY,
        deadlineMs: 60_000,
        validator: sharedValidator,
      }).use(policy);
      const dispatcher = createDispatcher({ tools: [...r.tools, slowTool], chain });
      const controller = new AbortController();
      const call =
        point === 'execute'
          ? { toolName: 'slow', args: {} }
          : point === 'check-in store'
            ? { toolName: 'guarded', args: {} }
            : { toolName: 'full', args: { doc: r.docRef } };
      const pending = dispatcher.dispatch(call, { identity: IDENTITY, signal: controller.signal });
      await settles(reached.promise, `reaching ${point}`);
      controller.abort();
      const outcome = await settles(pending, `the aborted call at ${point}`, 2_000);
      if (point === 'execute') {
        expect(outcome).toMatchObject({ kind: 'failed', ran: true });
        expect(toolSignal?.aborted).toBe(true);
      } else {
        expect(outcome).toMatchObject({ kind: 'refused', ran: false });
        expect(r.runs).toEqual([]);
      }
      // The dispatcher serves the next call normally.
      armed = false;
      const next = await settles(
        dispatcher.dispatch({ toolName: 'full', args: { doc: r.docRef } }, { identity: IDENTITY }),
        'the next call',
      );
      expect(next.kind).toBe('result');
    },
  );
});
