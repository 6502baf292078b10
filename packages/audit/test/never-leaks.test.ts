// The never-leaks property of core's hardening suite, run against the audit log: a secret in the
// credential, in the args, in the tool's result or error, in every port's error messages (the audit
// store's included) and in a policy gate's refusal or question never appears, whole or in part, in
// any stored record or audit event. Digests are keyed: none is the plain SHA-256 of what it digests.

import fc from 'fast-check';
import {
  canonicalJson,
  checkInApproved,
  checkInDeclined,
  createDispatcher,
  defineTool,
  digestOf,
  inMemoryCheckIns,
  type AuditStore,
  type DispatchOutcome,
  type Middleware,
  type Tool,
  type ToolMiddlewareContext,
} from '@toolgate/core';
import { canonicalChain, inMemoryArtifacts } from '@toolgate/middleware';
import { auditLog, inMemoryAuditStore } from '@toolgate/audit';
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
import { DIGEST_KEY, PRIVATE_PEM, recordsOf } from '../../../test-support/audit-fixtures';

const BASE62 = [...'0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'];
const ESCAPED = ['"', '\\', '/', '\n', '\u00e9', '\u2028', '\u{1f511}'];
const secretOf = (prefix: string) =>
  fc
    .string({
      unit: fc.oneof(
        { arbitrary: fc.constantFrom(...BASE62), weight: 4 },
        { arbitrary: fc.constantFrom(...ESCAPED), weight: 1 },
      ),
      minLength: 20,
      maxLength: 32,
    })
    .map((body) => `${prefix}-${body}`);

const PORTS = [
  'permissions.check',
  'credentials.resolve',
  'artifacts.get',
  'checkIns.put',
  'checkIns.consume',
  'audit.ready',
  'audit.append',
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
  mode: fc.constantFrom('refuse' as const, 'allow' as const),
  action: fc.boolean(),
});

type LeakCase = typeof leakCase extends fc.Arbitrary<infer T> ? T : never;

function argsOf(c: LeakCase, docRef: string): Record<string, unknown> | string {
  const args: Record<string, unknown> = { q: 'find the invoice' };
  if (c.argsPlacement === 'q') args['q'] = c.argsSecret;
  if (c.argsPlacement === 'nested') args['meta'] = { token: c.argsSecret };
  if (c.argsPlacement === 'array') args['tags'] = ['a', c.argsSecret];
  if (c.tool.wants) args['doc'] = docRef;
  if (c.argsForm === 'object') return args;
  const json = JSON.stringify(args);
  return c.argsForm === 'json' ? json : json.slice(0, -3);
}

/** A gate named `policy` (so the log reads its row for a rule) that puts the call's values in its words. */
function leakyPolicy(c: LeakCase): Middleware {
  return {
    name: 'policy',
    async run(ctx, next) {
      const value = JSON.stringify(ctx.args);
      if (c.policy === 'deny-with-value') ctx.deny(`the args ${value} are not allowed`, `operator: ${value}`);
      if (c.policy === 'ask-with-value') await ctx.ask(`may I run with ${value}?`);
      if (c.policy === 'rewrite')
        ctx.setArgs({ ...ctx.args, q: `${c.argsSecret} rewritten` }, `rewrote ${value}`);
      ctx.note(`looked at ${value}`);
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

const sha256Hex = async (text: string) =>
  Buffer.from(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text))).toString('hex');

describe('the audit log never leaks', () => {
  it(
    'no arg value, result, credential or port error text appears in a record or an audit event, and no digest is a plain hash',
    async () => {
      let recorded = 0;
      await fc.assert(
        fc.asyncProperty(leakCase, async (c) => {
          const secrets = [c.credentialSecret, c.argsSecret, c.resultSecret, c.portSecret];
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
            append: [() => [{ seq: secret }], () => throwingObject(secret)],
            ready: [() => throwingObject(secret)],
          };
          const inject = <T extends object>(name: string, port: T) =>
            faulty(name, port, { plan, log, malformed, secret });
          const records = inMemoryAuditStore();
          const audit = auditLog({
            store: inject('audit', records as AuditStore),
            signingKey: PRIVATE_PEM,
            digestKey: DIGEST_KEY,
            deadlineMs: GATE_DEADLINE_MS,
            onAuditFailure: c.mode,
          });
          const artifacts = inMemoryArtifacts();
          const docRef = await artifacts.put({ tenant: 'acme' }, { kind: 'doc/text', data: c.argsSecret });
          const chain = canonicalChain({
            permissions: inject('permissions', { check: () => ({ allow: true as const }) }),
            credentials: inject('credentials', {
              resolve: () => ({ kind: 'api_key', value: c.credentialSecret }),
            }),
            artifacts: inject('artifacts', artifacts),
            checkIns: inject('checkIns', inMemoryCheckIns()),
            checkInKey: 'k'.repeat(32),
            deadlineMs: GATE_DEADLINE_MS,
            validator: sharedValidator,
          }).use(leakyPolicy(c));
          const dispatcher = audit.attach(createDispatcher({ tools: [subjectTool(c)], chain }));
          const events: unknown[] = [];
          for (const type of ['audit.failed', 'audit.failed-open', 'audit.recovered'] as const) {
            dispatcher.events.on(type, (event) => events.push(event));
          }
          const identity = { tenant: 'acme', principal: 'alice' };
          const args = argsOf(c, docRef);
          const outcomes: DispatchOutcome[] = [];
          let outcome = await settles(
            dispatcher.dispatch({ toolName: 'subject', args }, { identity }),
            'dispatch',
          );
          outcomes.push(outcome);
          for (let round = 0; outcome.kind === 'paused' && round < 3; round++) {
            const decision =
              c.decision === 'approve'
                ? checkInApproved({ by: 'alice' })
                : checkInDeclined({ by: 'alice', reason: `not with ${c.argsSecret}` });
            outcome = await settles(dispatcher.resume(outcome.checkIn, decision), 'resume');
            outcomes.push(outcome);
          }
          if (c.action) {
            await audit
              .record({
                kind: 'grant.used',
                tool: 'subject',
                args: { token: c.argsSecret },
                result: c.resultSecret,
              })
              .catch(() => undefined);
          }
          await audit.flush().catch(() => undefined);
          const stored = await recordsOf(records);
          recorded += stored.length;
          expect(leaksOf(secrets, { records: stored, events })).toEqual([]);

          // Keyed: the plain SHA-256 of anything the log digested is nowhere in it.
          const plain = new Set<string>();
          if (typeof args !== 'string') plain.add(await digestOf(args));
          plain.add(await sha256Hex(typeof args === 'string' ? args : canonicalJson(args)));
          for (const o of outcomes) if (o.kind === 'result') plain.add(await digestOf(o.value));
          plain.add(await digestOf({ token: c.argsSecret }));
          plain.add(await digestOf(c.resultSecret));
          const digests = stored
            .flatMap((r) => [r.argsDigest, r.resultDigest])
            .filter((d) => d !== undefined);
          expect(digests.filter((d) => plain.has(d))).toEqual([]);
        }),
        fcOptions(35, DEEP ? {} : { numRuns: 200 }),
      );
      // The property looked at records, not only at empty logs.
      expect(recorded).toBeGreaterThan(100);
    },
    PROPERTY_TIMEOUT_MS,
  );
});
