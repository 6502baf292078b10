// Property 3: nothing secret leaks. A secret in the credential, a secret inside the args, and a secret
// in every port's error messages (checker, provider, artifact store, check-in store, the per-tenant
// chain function) never appear — whole or in part — in any outcome's content, reason, error or ledger,
// in any event payload, or in a check-in request beyond the args the human reviews.

import fc from 'fast-check';
import {
  checkInApproved,
  checkInDeclined,
  createDispatcher,
  defineTool,
  inMemoryCheckIns,
  type CheckInStore,
  type DispatchOutcome,
  type Tool,
  type ToolMiddlewareContext,
} from '@toolgate/core';
import { canonicalChain, inMemoryArtifacts } from '@toolgate/middleware';
import {
  faultArb,
  faulty,
  fcOptions,
  GATE_DEADLINE_MS,
  leaksOf,
  PROPERTY_TIMEOUT_MS,
  recordEvents,
  settles,
  sharedValidator,
  throwingObject,
  visibleParts,
  type Fault,
  type PortCall,
} from '../../../../test-support/hardening';

const BASE62 = [...'0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'];
// Characters a serializer escapes: quotes, backslashes, '/', control characters, non-ASCII and the
// line separators JSON leaves alone, so a redaction that only searches for the raw secret is caught.
const ESCAPED = ['"', '\\', '/', '\n', '\t', '\u0001', '\u001f', '\u00e9', '\u2028', '\u{1f511}'];
const secretBody = fc.string({
  unit: fc.oneof(
    { arbitrary: fc.constantFrom(...BASE62), weight: 4 },
    { arbitrary: fc.constantFrom(...ESCAPED), weight: 1 },
  ),
  minLength: 20,
  maxLength: 32,
});
const secretOf = (prefix: string) => secretBody.map((body) => `${prefix}-${body}`);

const PORT_METHODS = [
  'permissions.check',
  'credentials.resolve',
  'artifacts.get',
  'artifacts.list',
  'checkIns.put',
  'checkIns.consume',
] as const;

type ToolBehaviour =
  | 'result'
  | 'returns-ctx'
  | 'returns-credential'
  | 'echoes-credential'
  | 'throws-credential'
  | 'credential-in-error-name';

const leakCase = fc.record({
  credentialSecret: secretOf('cred'),
  credentialTail: secretOf('tail'),
  argsSecret: secretOf('arg'),
  portSecret: secretOf('port'),
  credentialShape: fc.constantFrom('string' as const, 'record' as const, 'overlapping' as const),
  argsPlacement: fc.constantFrom('q' as const, 'nested' as const, 'array' as const),
  argsForm: fc.constantFrom('object' as const, 'json' as const, 'broken-json' as const),
  argsFlaw: fc.constantFrom('none' as const, 'none' as const, 'wrong-type' as const, 'extra' as const),
  tool: fc.record({
    needs: fc.boolean(),
    checkIn: fc.boolean(),
    wants: fc.boolean(),
    capability: fc.boolean(),
  }),
  behaviour: fc.constantFrom<ToolBehaviour>(
    'result',
    'returns-ctx',
    'returns-credential',
    'echoes-credential',
    'throws-credential',
    'credential-in-error-name',
  ),
  faults: fc.array(faultArb({ ok: 12 }), {
    minLength: PORT_METHODS.length * 2,
    maxLength: PORT_METHODS.length * 2,
  }),
  decision: fc.constantFrom('approve' as const, 'decline' as const),
  chainThrows: fc.oneof(
    { arbitrary: fc.constant(false), weight: 15 },
    { arbitrary: fc.constant(true), weight: 1 },
  ),
});

type LeakCase = typeof leakCase extends fc.Arbitrary<infer T> ? T : never;

function credentialValue(c: LeakCase): string | Record<string, string> {
  if (c.credentialShape === 'string') return c.credentialSecret;
  if (c.credentialShape === 'record') return { user: 'service-user', password: c.credentialSecret };
  // One secret is a prefix of another: redacting the shorter first would leave the longer one's tail.
  return { id: c.credentialSecret, secret: `${c.credentialSecret}${c.credentialTail}` };
}

function secretsOf(c: LeakCase): string[] {
  const credential = credentialValue(c);
  const fromCredential =
    typeof credential === 'string'
      ? [credential]
      : Object.values(credential).filter((v) => v !== 'service-user');
  return [...fromCredential, c.argsSecret, c.portSecret];
}

function credentialSecretsOf(c: LeakCase): string[] {
  const credential = credentialValue(c);
  return typeof credential === 'string'
    ? [credential]
    : Object.values(credential).filter((v) => v !== 'service-user');
}

function argsOf(c: LeakCase, docRef: string): unknown {
  const args: Record<string, unknown> = { q: 'find the invoice' };
  if (c.argsPlacement === 'q') args['q'] = c.argsSecret;
  if (c.argsPlacement === 'nested') args['meta'] = { token: c.argsSecret };
  if (c.argsPlacement === 'array') args['tags'] = ['a', c.argsSecret];
  if (c.argsFlaw === 'wrong-type') args['limit'] = 'ten';
  if (c.argsFlaw === 'extra') args['unexpected'] = true;
  if (c.tool.wants) args['doc'] = docRef;
  if (c.argsForm === 'object') return args;
  const json = JSON.stringify(args);
  return c.argsForm === 'json' ? json : json.slice(0, -3);
}

function subjectTool(c: LeakCase): Tool {
  const behave = (ctx: ToolMiddlewareContext): unknown => {
    const revealed = ctx.credential === undefined ? 'no credential' : JSON.stringify(ctx.credential.reveal());
    switch (c.behaviour) {
      case 'result':
        return { invoices: 3 };
      case 'returns-ctx':
        return { ctx };
      case 'returns-credential':
        return { credential: ctx.credential, text: String(ctx.credential) };
      case 'echoes-credential':
        // An upstream API that echoes the request's authorization back in its response body.
        return { debug: { authorization: `Bearer ${revealed}` } };
      case 'throws-credential':
        throw new Error(`upstream rejected ${revealed}`);
      case 'credential-in-error-name':
        throw Object.assign(new Error('upstream rejected the call'), { name: `AuthError ${revealed}` });
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
        limit: { type: 'integer' },
        doc: { type: 'string' },
      },
      additionalProperties: false,
    },
    ...(c.tool.needs ? { needs: { kind: 'api_key', service: 'billing' } } : {}),
    ...(c.tool.checkIn ? { checkIn: 'always' as const } : {}),
    ...(c.tool.wants ? { wants: { doc: 'doc/text' } } : {}),
    ...(c.tool.capability ? { capabilities: ['payments'] } : {}),
    execute: async (_args: Record<string, unknown>, ctx: ToolMiddlewareContext) => behave(ctx),
  });
}

describe('never leaks', () => {
  it(
    'no secret from a credential, the args or a port error appears in any outcome, ledger, event or request',
    async () => {
      await fc.assert(
        fc.asyncProperty(leakCase, async (c) => {
          const log: PortCall[] = [];
          const plan = (port: string, method: string, n: number): Fault => {
            const slot = PORT_METHODS.indexOf(`${port}.${method}` as (typeof PORT_METHODS)[number]);
            return slot === -1 || n > 1 ? 'ok' : c.faults[slot * 2 + n]!;
          };
          const secret = c.portSecret;
          const malformed = {
            check: [() => ({ allow: 'no', reason: secret }), () => null, () => throwingObject(secret)],
            resolve: [() => ({ kind: 'api_key' }), () => ({ value: secret }), () => throwingObject(secret)],
            get: [() => 42, () => ({ meta: null }), () => throwingObject(secret)],
            list: [() => undefined, () => 'refs', () => throwingObject(secret)],
            put: [() => throwingObject(secret)],
            consume: [() => null, () => throwingObject(secret)],
          };
          const inject = <T extends object>(name: string, port: T) =>
            faulty(name, port, { plan, log, malformed, secret });
          const store = inMemoryArtifacts();
          const docRef = await store.put({ tenant: 'acme' }, { kind: 'doc/text', data: 'the body' });
          const checkIns: CheckInStore = inject('checkIns', inMemoryCheckIns());
          const chain = canonicalChain({
            permissions: inject('permissions', {
              governs: ['payments'],
              check: () => ({ allow: true as const }),
            }),
            credentials: inject('credentials', {
              resolve: () => ({ kind: 'api_key', value: credentialValue(c) }),
            }),
            artifacts: inject('artifacts', store),
            checkIns,
            checkInKey: 'k'.repeat(32),
            deadlineMs: GATE_DEADLINE_MS,
            validator: sharedValidator,
          });
          // The operator warning of a chain that cannot be used is checked like every other output.
          const warnings: string[] = [];
          const dispatcher = createDispatcher({
            tools: [subjectTool(c)],
            chain: () => {
              if (c.chainThrows) throw new Error(`tenant lookup failed: ${secret}`);
              return chain;
            },
            warn: (message) => warnings.push(message),
          });
          const events = recordEvents(dispatcher);
          const outcomes: DispatchOutcome[] = [];
          const identity = { tenant: 'acme' };
          const first = await settles(
            dispatcher.dispatch({ toolName: 'subject', args: argsOf(c, docRef) }, { identity }),
            'dispatch',
          );
          outcomes.push(first);
          expect(warnings.join('\n')).not.toContain(secret);
          if (first.kind === 'paused') {
            const decision =
              c.decision === 'approve'
                ? checkInApproved({ by: 'alice' })
                : checkInDeclined({ by: 'alice', reason: 'not today' });
            outcomes.push(await settles(dispatcher.resume(first.checkIn, decision), 'resume'));
          }
          const seen: Record<string, unknown> = { events };
          outcomes.forEach((outcome, i) => {
            for (const [part, value] of Object.entries(visibleParts(outcome)))
              seen[`outcome ${i} ${part}`] = value;
          });
          expect(leaksOf(secretsOf(c), seen)).toEqual([]);
          // The tool's value may hold what the tool was given (its args), never the credential.
          const values = Object.fromEntries(
            outcomes.flatMap((outcome, i) =>
              outcome.kind === 'result' ? [[`outcome ${i} value`, outcome.value]] : [],
            ),
          );
          expect(leaksOf(credentialSecretsOf(c), values)).toEqual([]);
        }),
        fcOptions(5),
      );
    },
    PROPERTY_TIMEOUT_MS,
  );
});
