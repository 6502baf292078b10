// The never-leaks property of core's hardening suite, run against what OpenTelemetry exports: a secret
// in the credential, in the args, in the tool's result or error, in every port's error messages and in a
// policy middleware's refusal or question never appears, whole or in part, in any exported span's name,
// attributes, events, links or status, nor in any metric attribute.

import fc from 'fast-check';
import {
  checkInApproved,
  checkInDeclined,
  createDispatcher,
  defineTool,
  inMemoryCheckIns,
  type DispatchOutcome,
  type Middleware,
  type Tool,
  type ToolMiddlewareContext,
} from '@toolgate/core';
import { canonicalChain, inMemoryArtifacts } from '@toolgate/middleware';
import { otel } from '@toolgate/otel';
import {
  DEEP,
  faultArb,
  faulty,
  fcOptions,
  GATE_DEADLINE_MS,
  leaksOf,
  PROPERTY_TIMEOUT_MS,
  settles,
  sharedValidator,
  throwingObject,
  type Fault,
  type PortCall,
} from '../../../test-support/hardening';
import { exportedParts, telemetry } from './fixtures';

const BASE62 = [...'0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'];
const secretOf = (prefix: string) =>
  fc
    .string({ unit: fc.constantFrom(...BASE62), minLength: 20, maxLength: 32 })
    .map((body) => `${prefix}-${body}`);

const PORTS = [
  'permissions.check',
  'credentials.resolve',
  'artifacts.get',
  'checkIns.put',
  'checkIns.consume',
] as const;

const leakCase = fc.record({
  credentialSecret: secretOf('cred'),
  argsSecret: secretOf('arg'),
  resultSecret: secretOf('res'),
  portSecret: secretOf('port'),
  argsPlacement: fc.constantFrom('q' as const, 'nested' as const, 'array' as const),
  argsForm: fc.constantFrom('object' as const, 'json' as const, 'broken-json' as const),
  tool: fc.record({ needs: fc.boolean(), checkIn: fc.boolean(), wants: fc.boolean() }),
  policy: fc.constantFrom(
    'pass' as const,
    'deny-with-value' as const,
    'ask-with-value' as const,
    'rewrite' as const,
  ),
  behaviour: fc.constantFrom(
    'result' as const,
    'returns-credential' as const,
    'throws-value' as const,
    'value-in-error-name' as const,
    'oversized' as const,
  ),
  faults: fc.array(faultArb({ ok: 12 }), { minLength: PORTS.length, maxLength: PORTS.length }),
  decision: fc.constantFrom('approve' as const, 'decline' as const),
  tenant: fc.constantFrom('raw' as const, 'hashed' as const, 'omit' as const),
});

type LeakCase = typeof leakCase extends fc.Arbitrary<infer T> ? T : never;

function argsOf(c: LeakCase, docRef: string): unknown {
  const args: Record<string, unknown> = { q: 'find the invoice' };
  if (c.argsPlacement === 'q') args['q'] = c.argsSecret;
  if (c.argsPlacement === 'nested') args['meta'] = { token: c.argsSecret };
  if (c.argsPlacement === 'array') args['tags'] = ['a', c.argsSecret];
  if (c.tool.wants) args['doc'] = docRef;
  if (c.argsForm === 'object') return args;
  const json = JSON.stringify(args);
  return c.argsForm === 'json' ? json : json.slice(0, -3);
}

/** A policy middleware that puts the call's values where only facts belong: its refusal, its question. */
function leakyPolicy(c: LeakCase): Middleware {
  return {
    name: 'leaky-policy',
    async run(ctx, next) {
      const value = JSON.stringify(ctx.args);
      if (c.policy === 'deny-with-value') ctx.deny(`the args ${value} are not allowed`, `operator: ${value}`);
      if (c.policy === 'ask-with-value') await ctx.ask(`may I run with ${value}?`);
      if (c.policy === 'rewrite')
        ctx.setArgs({ ...ctx.args, q: `${c.argsSecret} rewritten` }, `rewrote ${value}`);
      await next();
    },
  };
}

function subjectTool(c: LeakCase): Tool {
  const behave = (args: Record<string, unknown>, ctx: ToolMiddlewareContext): unknown => {
    const revealed = ctx.credential === undefined ? 'none' : JSON.stringify(ctx.credential.reveal());
    switch (c.behaviour) {
      case 'result':
        return { invoice: c.resultSecret, echoed: args };
      case 'returns-credential':
        return { authorization: `Bearer ${revealed}` };
      case 'throws-value':
        throw new Error(`upstream rejected ${JSON.stringify(args)} with ${revealed} and ${c.resultSecret}`);
      case 'value-in-error-name':
        throw Object.assign(new Error('upstream rejected the call'), { name: `AuthError${c.resultSecret}` });
      case 'oversized':
        return `${c.resultSecret} `.repeat(1000);
    }
  };
  return defineTool({
    name: 'subject',
    description: 'the tool under test',
    inputSchema: {
      type: 'object',
      properties: {
        q: { type: 'string' },
        meta: { type: 'object', properties: { token: { type: 'string' } } },
        tags: { type: 'array', items: { type: 'string' } },
        doc: { type: 'string' },
      },
      additionalProperties: false,
    },
    ...(c.tool.needs ? { needs: { kind: 'api_key', service: 'billing' } } : {}),
    ...(c.tool.checkIn ? { checkIn: 'always' as const } : {}),
    ...(c.tool.wants ? { wants: { doc: 'doc/text' } } : {}),
    resultCeiling: { maxChars: 2_000 },
    execute: async (args: Record<string, unknown>, ctx: ToolMiddlewareContext) => behave(args, ctx),
  });
}

describe('otel never leaks', () => {
  it(
    'no arg value, result, credential or port error text appears in an exported span or metric attribute',
    async () => {
      const t = telemetry();
      const tracer = t.tracerProvider.getTracer('never-leaks');
      const meter = t.meterProvider.getMeter('never-leaks');
      const everySecret: string[] = [];
      await fc.assert(
        fc.asyncProperty(leakCase, async (c) => {
          t.exporter.reset();
          const secrets = [c.credentialSecret, c.argsSecret, c.resultSecret, c.portSecret];
          everySecret.push(...secrets);
          const log: PortCall[] = [];
          const plan = (port: string, method: string, n: number): Fault => {
            const slot = PORTS.indexOf(`${port}.${method}` as (typeof PORTS)[number]);
            return slot === -1 || n > 0 ? 'ok' : c.faults[slot]!;
          };
          const secret = c.portSecret;
          const malformed = {
            check: [() => ({ allow: 'no', reason: secret }), () => throwingObject(secret)],
            resolve: [() => ({ value: secret }), () => throwingObject(secret)],
            get: [() => ({ meta: null }), () => throwingObject(secret)],
            put: [() => throwingObject(secret)],
            consume: [() => null, () => throwingObject(secret)],
          };
          const inject = <T extends object>(name: string, port: T) =>
            faulty(name, port, { plan, log, malformed, secret });
          const store = inMemoryArtifacts();
          const docRef = await store.put({ tenant: 'acme' }, { kind: 'doc/text', data: c.argsSecret });
          const chain = canonicalChain({
            permissions: inject('permissions', { check: () => ({ allow: true as const }) }),
            credentials: inject('credentials', {
              resolve: () => ({ kind: 'api_key', value: c.credentialSecret }),
            }),
            artifacts: inject('artifacts', store),
            checkIns: inject('checkIns', inMemoryCheckIns()),
            checkInKey: 'k'.repeat(32),
            deadlineMs: GATE_DEADLINE_MS,
            validator: sharedValidator,
          }).use(leakyPolicy(c));
          const dispatcher = otel(createDispatcher({ tools: [subjectTool(c)], chain }), {
            tracer,
            meter,
            tenant: c.tenant,
          });
          const identity = { tenant: 'acme', principal: 'alice' };
          let outcome: DispatchOutcome = await settles(
            dispatcher.dispatch({ toolName: 'subject', args: argsOf(c, docRef) }, { identity }),
            'dispatch',
          );
          for (let round = 0; outcome.kind === 'paused' && round < 3; round++) {
            const decision =
              c.decision === 'approve'
                ? checkInApproved({ by: 'alice' })
                : checkInDeclined({ by: 'alice', reason: 'not today' });
            outcome = await settles(dispatcher.resume(outcome.checkIn, decision), 'resume');
          }
          const spans = t.spans();
          expect(spans.length).toBeGreaterThan(0);
          const seen: Record<string, unknown> = {};
          spans.forEach((span, i) => {
            seen[`span ${i}`] = exportedParts(span);
          });
          expect(leaksOf(secrets, seen)).toEqual([]);
        }),
        fcOptions(15, DEEP ? {} : { numRuns: 300 }),
      );
      const metrics = {
        outcomes: (await t.points('toolgate.dispatch.outcomes')).map((p) => p.attributes),
        duration: (await t.points('gen_ai.execute_tool.duration')).map((p) => p.attributes),
      };
      expect(metrics.outcomes.length).toBeGreaterThan(3);
      expect(leaksOf(everySecret, metrics)).toEqual([]);
      await t.shutdown();
    },
    PROPERTY_TIMEOUT_MS,
  );
});
