// The generated world of the "runs iff allowed" property: random tools, calls, ports and chains made
// of a random subset and order of the canonical gates plus custom middleware, and a model that
// predicts, from the same description, what the dispatcher must answer.

import fc from 'fast-check';
import { Type } from 'typebox';
import {
  canonicalJson,
  defineTool,
  inMemoryCheckIns,
  type ArtifactStore,
  type Chain,
  type CredentialProvider,
  type Middleware,
  type PermissionChecker,
  type Tool,
} from '@toolgate/core';
import { canonicalChain, inMemoryArtifacts } from '@toolgate/middleware';
import { GATE_DEADLINE_MS, never, sharedValidator } from '../../../../test-support/hardening';

export const KEY = 'hardening-key-'.padEnd(32, 'k');
export const CAPS = ['external_net', 'user_data', 'payments'] as const;
export type Cap = (typeof CAPS)[number];
export const GATES = [
  'permission',
  'capabilities',
  'validate-args',
  'wants',
  'check-in',
  'credentials',
  'result-ceiling',
] as const;
export type Gate = (typeof GATES)[number];

export type CheckerAnswer = 'allow' | 'deny' | 'throw' | 'reject' | 'malformed' | 'hang';
export type ProviderAnswer = 'ok' | 'throw' | 'reject' | 'malformed' | 'expired' | 'hang';
/** What a hung middleware does once the caller's deadline aborted the call. */
export type Late = 'stay' | 'next' | 'throw' | 'deny' | 'return';

export type Behaviour =
  | { readonly kind: 'allow' }
  | { readonly kind: 'deny' }
  | { readonly kind: 'transform'; readonly how: 'rewrite' | 'break' }
  | { readonly kind: 'throw'; readonly what: 'error' | 'string' | 'undefined' }
  | { readonly kind: 'silent' }
  | { readonly kind: 'next-twice' }
  | { readonly kind: 'hang'; readonly late: Late }
  | { readonly kind: 'after-deny' }
  | { readonly kind: 'after-throw' }
  | { readonly kind: 'set-result' }
  | { readonly kind: 'swallow' };

export type DocChoice = 'absent' | 'live' | 'wrong-kind' | 'other-scope' | 'unknown' | 'not-a-ref';
export type ArgsFlaw = 'none' | 'q-missing' | 'q-number' | 'extra' | 'n-float';

export interface ToolSpec {
  readonly capabilities: readonly Cap[];
  readonly checkIn: 'none' | 'always' | 'yes' | 'no' | 'throws';
  readonly needs: boolean;
  readonly ceiling: number | undefined;
  readonly wants: 'none' | 'optional' | 'required';
  readonly outcome: { readonly kind: 'value'; readonly chars: number } | { readonly kind: 'throws' };
}

export interface CallSpec {
  readonly flaw: ArgsFlaw;
  readonly n: number | undefined;
  readonly doc: DocChoice;
  readonly asJson: boolean;
}

export interface Scenario {
  readonly include: Readonly<Record<Gate, boolean>>;
  readonly customs: readonly Behaviour[];
  /** Random priorities that pick one valid order among many. */
  readonly keys: readonly number[];
  readonly checker:
    | {
        readonly governs: readonly Cap[];
        readonly answers: Readonly<Record<'tool_call' | Cap, CheckerAnswer>>;
      }
    | undefined;
  readonly provider: ProviderAnswer;
  readonly defaultMaxChars: number | undefined;
  readonly tool: ToolSpec;
  readonly call: CallSpec;
}

const checkerAnswer: fc.Arbitrary<CheckerAnswer> = fc.oneof(
  { arbitrary: fc.constant('allow' as const), weight: 12 },
  {
    arbitrary: fc.constantFrom('deny' as const, 'throw' as const, 'reject' as const, 'malformed' as const),
    weight: 1,
  },
  { arbitrary: fc.constant('hang' as const), weight: 1 },
);

const behaviour: fc.Arbitrary<Behaviour> = fc.oneof(
  { arbitrary: fc.constant({ kind: 'allow' as const }), weight: 6 },
  {
    arbitrary: fc
      .constantFrom('rewrite' as const, 'break' as const)
      .map((how) => ({ kind: 'transform' as const, how })),
    weight: 3,
  },
  { arbitrary: fc.constant({ kind: 'deny' as const }), weight: 1 },
  {
    arbitrary: fc
      .constantFrom('error' as const, 'string' as const, 'undefined' as const)
      .map((what) => ({ kind: 'throw' as const, what })),
    weight: 1,
  },
  { arbitrary: fc.constant({ kind: 'silent' as const }), weight: 1 },
  { arbitrary: fc.constant({ kind: 'next-twice' as const }), weight: 1 },
  {
    arbitrary: fc
      .constantFrom('stay' as const, 'next' as const, 'throw' as const, 'deny' as const, 'return' as const)
      .map((late) => ({ kind: 'hang' as const, late })),
    weight: 1,
  },
  { arbitrary: fc.constant({ kind: 'after-deny' as const }), weight: 1 },
  { arbitrary: fc.constant({ kind: 'after-throw' as const }), weight: 1 },
  { arbitrary: fc.constant({ kind: 'set-result' as const }), weight: 1 },
  { arbitrary: fc.constant({ kind: 'swallow' as const }), weight: 1 },
);

const toolSpec: fc.Arbitrary<ToolSpec> = fc.record({
  capabilities: fc.shuffledSubarray([...CAPS]),
  checkIn: fc.constantFrom(
    'none' as const,
    'none' as const,
    'always' as const,
    'yes' as const,
    'no' as const,
    'throws' as const,
  ),
  needs: fc.boolean(),
  ceiling: fc.option(fc.integer({ min: 1, max: 40 }), { nil: undefined }),
  wants: fc.constantFrom('none' as const, 'optional' as const, 'required' as const),
  outcome: fc.oneof(
    {
      arbitrary: fc.integer({ min: 0, max: 40 }).map((chars) => ({ kind: 'value' as const, chars })),
      weight: 6,
    },
    { arbitrary: fc.constant({ kind: 'throws' as const }), weight: 1 },
  ),
});

const callSpec: fc.Arbitrary<CallSpec> = fc.record({
  flaw: fc.oneof(
    { arbitrary: fc.constant('none' as const), weight: 6 },
    {
      arbitrary: fc.constantFrom(
        'q-missing' as const,
        'q-number' as const,
        'extra' as const,
        'n-float' as const,
      ),
      weight: 1,
    },
  ),
  n: fc.option(fc.integer({ min: -5, max: 5 }), { nil: undefined }),
  doc: fc.oneof(
    { arbitrary: fc.constantFrom('absent' as const, 'live' as const), weight: 4 },
    {
      arbitrary: fc.constantFrom(
        'wrong-kind' as const,
        'other-scope' as const,
        'unknown' as const,
        'not-a-ref' as const,
      ),
      weight: 1,
    },
  ),
  asJson: fc.boolean(),
});

export const scenario: fc.Arbitrary<Scenario> = fc.record({
  include: fc.record(
    Object.fromEntries(
      GATES.map((g) => [
        g,
        fc.oneof({ arbitrary: fc.constant(true), weight: 4 }, { arbitrary: fc.constant(false), weight: 1 }),
      ]),
    ) as Record<Gate, fc.Arbitrary<boolean>>,
  ),
  customs: fc.array(behaviour, { maxLength: 3 }),
  keys: fc.array(fc.integer({ min: 0, max: 1000 }), { minLength: 10, maxLength: 10 }),
  checker: fc.option(
    fc.record({
      governs: fc.subarray([...CAPS]),
      answers: fc.record({
        tool_call: checkerAnswer,
        external_net: checkerAnswer,
        user_data: checkerAnswer,
        payments: checkerAnswer,
      }),
    }),
    { nil: undefined, freq: 4 },
  ),
  provider: fc.oneof(
    { arbitrary: fc.constant('ok' as const), weight: 10 },
    {
      arbitrary: fc.constantFrom(
        'throw' as const,
        'reject' as const,
        'malformed' as const,
        'expired' as const,
      ),
      weight: 1,
    },
    { arbitrary: fc.constant('hang' as const), weight: 1 },
  ),
  defaultMaxChars: fc.option(fc.integer({ min: 1, max: 40 }), { nil: undefined }),
  tool: toolSpec,
  call: callSpec,
});

/** One chain member: a canonical gate or a custom middleware with a scripted behaviour. */
export type Member =
  | { readonly type: 'gate'; readonly name: Gate }
  | { readonly type: 'custom'; readonly name: string; readonly behaviour: Behaviour };

/** A random valid order: a topological sort of the declared constraints, ties broken by `keys`. */
export function orderOf(s: Scenario): Member[] {
  const members: Member[] = [
    ...GATES.filter((g) => s.include[g]).map((name): Member => ({ type: 'gate', name })),
    ...s.customs.map((behaviour, i): Member => ({ type: 'custom', name: `custom-${i}`, behaviour })),
  ];
  const has = (name: string) => members.some((m) => m.name === name);
  const mustPrecede = (a: Member, b: Member): boolean => {
    if (b.name === 'result-ceiling') return a.name !== 'result-ceiling';
    const pairs: Array<[string, string]> = [
      ['permission', 'capabilities'],
      ['validate-args', 'wants'],
      ['validate-args', 'check-in'],
      ['wants', 'check-in'],
      ['check-in', 'credentials'],
    ];
    if (pairs.some(([x, y]) => x === a.name && y === b.name)) return true;
    return a.type === 'custom' && a.behaviour.kind === 'transform' && b.name === 'validate-args';
  };
  const order: Member[] = [];
  const left = members.map((m, i) => ({ m, key: s.keys[i] ?? i }));
  while (left.length > 0) {
    const ready = left.filter(
      ({ m }) => !left.some(({ m: other }) => other !== m && has(other.name) && mustPrecede(other, m)),
    );
    ready.sort((a, b) => a.key - b.key);
    const next = ready[0]!;
    order.push(next.m);
    left.splice(left.indexOf(next), 1);
  }
  return order;
}

// -------------------------------------------------------------------------------------------------
// The concrete world

export const DOC_KIND = 'doc/text';
export const DOC_DATA = 'the document body';
export const UNKNOWN_REF = 'art_0000000000000000000000';
export const TENANT = { tenant: 't1', principal: 'p1' };
export const OTHER_TENANT = { tenant: 't2', principal: 'p1' };

export interface Refs {
  readonly live: string;
  readonly wrongKind: string;
  readonly otherScope: string;
}

export async function seedArtifacts(store: ArtifactStore): Promise<Refs> {
  return {
    live: await store.put(TENANT, { kind: DOC_KIND, data: DOC_DATA }),
    wrongKind: await store.put(TENANT, { kind: 'image/png', data: 'pixels' }),
    otherScope: await store.put(OTHER_TENANT, { kind: DOC_KIND, data: 'another tenant' }),
  };
}

export function argsOf(call: CallSpec, refs: Refs): Record<string, unknown> {
  const args: Record<string, unknown> = { q: 'hello' };
  if (call.n !== undefined) args['n'] = call.n;
  const doc: Record<DocChoice, string | undefined> = {
    absent: undefined,
    live: refs.live,
    'wrong-kind': refs.wrongKind,
    'other-scope': refs.otherScope,
    unknown: UNKNOWN_REF,
    'not-a-ref': 'readme.txt',
  };
  if (doc[call.doc] !== undefined) args['doc'] = doc[call.doc];
  switch (call.flaw) {
    case 'none':
      break;
    case 'q-missing':
      delete args['q'];
      break;
    case 'q-number':
      args['q'] = 7;
      break;
    case 'extra':
      args['extra'] = true;
      break;
    case 'n-float':
      args['n'] = 1.5;
      break;
  }
  return args;
}

export const TRANSFORMS = {
  rewrite: (args: Readonly<Record<string, unknown>>) => ({ ...args, q: 'rewritten' }),
  break: (args: Readonly<Record<string, unknown>>) => ({ ...args, extra: 1 }),
} as const;

export function schemaOf(wants: ToolSpec['wants']) {
  return Type.Object(
    {
      q: Type.String(),
      n: Type.Optional(Type.Integer()),
      doc: wants === 'required' ? Type.String() : Type.Optional(Type.String()),
    },
    { additionalProperties: false },
  );
}

export interface Subject {
  readonly tool: Tool;
  /** The args each execute received, in order. */
  readonly runs: Record<string, unknown>[];
}

export function subjectTool(spec: ToolSpec): Subject {
  const runs: Record<string, unknown>[] = [];
  const tool = defineTool({
    name: 'subject',
    description: 'the tool under test',
    inputSchema: schemaOf(spec.wants),
    ...(spec.capabilities.length > 0 ? { capabilities: [...spec.capabilities] } : {}),
    ...(spec.checkIn === 'none'
      ? {}
      : {
          checkIn:
            spec.checkIn === 'always'
              ? ('always' as const)
              : () => {
                  if (spec.checkIn === 'throws') throw new Error('predicate broke');
                  return spec.checkIn === 'yes';
                },
        }),
    ...(spec.needs ? { needs: { kind: 'api_key', service: 'svc' } } : {}),
    ...(spec.ceiling !== undefined ? { resultCeiling: { maxChars: spec.ceiling } } : {}),
    ...(spec.wants !== 'none' ? { wants: { doc: DOC_KIND } } : {}),
    execute: async (args: Record<string, unknown>) => {
      runs.push({ ...args });
      await Promise.resolve();
      if (spec.outcome.kind === 'throws') throw new Error('the tool broke');
      return 'r'.repeat(spec.outcome.chars);
    },
  });
  return { tool, runs };
}

const MALFORMED_DECISIONS: readonly unknown[] = [
  { allow: 'yes' },
  null,
  { allow: false },
  'allow',
  { allow: false, reason: '  ' },
  undefined,
  1,
];

export function checkerOf(spec: NonNullable<Scenario['checker']>): PermissionChecker {
  let malformed = 0;
  return {
    governs: [...spec.governs],
    check(request) {
      const answer = spec.answers[request.capability as 'tool_call' | Cap];
      switch (answer) {
        case 'allow':
          return Promise.resolve({ allow: true });
        case 'deny':
          return { allow: false, reason: 'policy says no' };
        case 'throw':
          throw new Error('checker broke');
        case 'reject':
          return Promise.reject(new Error('checker broke'));
        case 'malformed':
          return Promise.resolve(MALFORMED_DECISIONS[malformed++ % MALFORMED_DECISIONS.length] as never);
        case 'hang':
          return never();
      }
    },
  };
}

const MALFORMED_CREDENTIALS: readonly unknown[] = [
  { kind: 'api_key' },
  { kind: 'api_key', value: 5 },
  null,
  { kind: '', value: 'x' },
  'token',
  { kind: 'api_key', value: '' },
];

export function providerOf(answer: ProviderAnswer): CredentialProvider {
  let malformed = 0;
  return {
    resolve() {
      switch (answer) {
        case 'ok':
          return Promise.resolve({ kind: 'api_key', value: 'credential-value' });
        case 'throw':
          throw new Error('provider broke');
        case 'reject':
          return Promise.reject(new Error('provider broke'));
        case 'malformed':
          return Promise.resolve(MALFORMED_CREDENTIALS[malformed++ % MALFORMED_CREDENTIALS.length] as never);
        case 'expired':
          return { kind: 'api_key', value: 'old', expiresAt: 1 };
        case 'hang':
          return never();
      }
    },
  };
}

/** Per drive: the hung middleware says it is hanging, so the caller's deadline can fire. */
export interface HangSignal {
  reached(): void;
}

function aborted(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve();
    else signal.addEventListener('abort', () => resolve(), { once: true });
  });
}

export function customOf(name: string, b: Behaviour, hang: HangSignal): Middleware {
  const run = ((): Middleware['run'] => {
    switch (b.kind) {
      case 'allow':
        return async (_ctx, next) => {
          await next();
        };
      case 'deny':
        return async (ctx) => ctx.deny('custom policy says no', { code: 'POLICY_DENIED' });
      case 'transform':
        return async (ctx, next) => {
          ctx.setArgs(TRANSFORMS[b.how](ctx.args), `policy ${b.how}`);
          await next();
        };
      case 'throw':
        return async () => {
          throw b.what === 'error'
            ? new Error('policy broke')
            : b.what === 'string'
              ? 'policy broke'
              : undefined;
        };
      case 'silent':
        return async () => undefined;
      case 'next-twice':
        return async (_ctx, next) => {
          await next();
          await next();
        };
      case 'hang':
        return async (ctx, next) => {
          hang.reached();
          await aborted(ctx.signal);
          switch (b.late) {
            case 'stay':
              return never();
            case 'next':
              return next();
            case 'throw':
              throw new Error('late');
            case 'deny':
              return ctx.deny('late denial');
            case 'return':
              return;
          }
        };
      case 'after-deny':
        return async (ctx, next) => {
          await next();
          ctx.deny('withheld by policy', { code: 'POLICY_DENIED' });
        };
      case 'after-throw':
        return async (_ctx, next) => {
          await next();
          throw new Error('after-half broke');
        };
      case 'set-result':
        return async (ctx, next) => {
          await next();
          ctx.setResult('replaced', 'policy replaced the result');
        };
      case 'swallow':
        return async (_ctx, next) => {
          try {
            await next();
          } catch {
            // Swallowing must not undo a refusal, a pause or a failure.
          }
        };
    }
  })();
  return { name, run, ...(b.kind === 'transform' ? { transformsArgs: true } : {}) };
}

export interface Built {
  readonly chain: Chain;
  readonly order: readonly Member[];
  readonly subject: Subject;
  readonly refs: Refs;
  readonly args: Record<string, unknown>;
}

/**
 * Builds the chain with the builder verbs from a canonical chain: every gate removed, then each member
 * inserted after the previous one, so every intermediate chain must pass the order checks too.
 */
export async function build(s: Scenario, hang: HangSignal): Promise<Built> {
  const artifacts = inMemoryArtifacts();
  const refs = await seedArtifacts(artifacts);
  let chain = canonicalChain({
    ...(s.checker !== undefined ? { permissions: checkerOf(s.checker) } : {}),
    artifacts,
    checkInKey: KEY,
    checkIns: inMemoryCheckIns(),
    credentials: providerOf(s.provider),
    ...(s.defaultMaxChars !== undefined ? { defaultMaxChars: s.defaultMaxChars } : {}),
    deadlineMs: GATE_DEADLINE_MS,
    validator: sharedValidator,
  });
  const gates = new Map(chain.middleware.map((m) => [m.name, m]));
  for (const name of chain.names()) chain = chain.remove(name);
  const order = orderOf(s);
  let previous: string | undefined;
  for (const member of order) {
    const middleware =
      member.type === 'gate' ? gates.get(member.name)! : customOf(member.name, member.behaviour, hang);
    chain = previous === undefined ? chain.use(middleware) : chain.insertAfter(previous, middleware);
    previous = member.name;
  }
  const subject = subjectTool(s.tool);
  return { chain, order, subject, refs, args: argsOf(s.call, refs) };
}

// -------------------------------------------------------------------------------------------------
// The model

export type Row = readonly [gate: string, outcome: 'allow' | 'transform' | 'deny' | 'ask'];

export interface Expected {
  readonly kind: 'result' | 'refused' | 'paused' | 'failed';
  readonly gate?: string;
  /** The refusal code; a hung middleware that reacts to the abort may beat the dispatcher to it. */
  readonly code?: string | readonly string[];
  readonly ran: boolean;
  readonly content?: string;
  readonly rows: readonly Row[];
  /** The args execute receives, when it runs. */
  readonly runArgs?: Record<string, unknown>;
}

function valid(args: Readonly<Record<string, unknown>>, wants: ToolSpec['wants']): boolean {
  if (Object.keys(args).some((key) => !['q', 'n', 'doc'].includes(key))) return false;
  if (typeof args['q'] !== 'string') return false;
  if (args['n'] !== undefined && !Number.isInteger(args['n'])) return false;
  if (args['doc'] !== undefined && typeof args['doc'] !== 'string') return false;
  return !(wants === 'required' && args['doc'] === undefined);
}

function checkerVerdict(answer: CheckerAnswer, deniedCode: string): string | undefined {
  if (answer === 'allow') return undefined;
  return answer === 'deny' ? deniedCode : 'CHECKER_FAILED';
}

/** What a dispatch (or, with `resumed`, an approved resume) of the built call must answer. */
export function predict(s: Scenario, built: Built, resumed: boolean): Expected {
  const { order, refs } = built;
  let args: Record<string, unknown> = { ...built.args };
  let resolved = false;
  // What ctx.reviewArgs() shows: the current args, with a resolved document shown by its ref.
  const review = () => (resolved ? { ...args, doc: refs.live } : args);
  let approved: string | undefined;
  const rows: Row[] = [];
  const refused = (gate: string, code: string | readonly string[], ran = false): Expected => ({
    kind: 'refused',
    gate,
    code,
    ran,
    rows: [...rows, [gate, 'deny']],
  });
  for (const member of order) {
    let changed = false;
    if (member.type === 'custom') {
      const b = member.behaviour;
      if (b.kind === 'deny') return refused(member.name, 'POLICY_DENIED');
      if (b.kind === 'throw') return refused(member.name, 'GATE_ERROR');
      if (b.kind === 'silent') return refused(member.name, 'GATE_SILENT');
      if (b.kind === 'hang') {
        const late = { stay: [], next: [], return: [], throw: ['GATE_ERROR'], deny: ['DENIED'] }[b.late];
        return refused(member.name, ['ABORTED', ...late]);
      }
      if (b.kind === 'transform') {
        args = TRANSFORMS[b.how](args);
        changed = true;
      }
    } else {
      switch (member.name) {
        case 'permission': {
          const code =
            s.checker === undefined
              ? undefined
              : checkerVerdict(s.checker.answers.tool_call, 'PERMISSION_DENIED');
          if (code !== undefined) return refused('permission', code);
          break;
        }
        case 'capabilities': {
          if (s.checker === undefined) break;
          for (const cap of s.tool.capabilities) {
            if (!s.checker.governs.includes(cap)) continue;
            const code = checkerVerdict(s.checker.answers[cap], 'CAPABILITY_DENIED');
            if (code !== undefined) return refused('capabilities', code);
          }
          break;
        }
        case 'validate-args':
          if (!valid(args, s.tool.wants)) return refused('validate-args', 'INVALID_ARGS');
          break;
        case 'wants': {
          if (s.tool.wants === 'none') break;
          const value = args['doc'];
          if (value === undefined) {
            if (s.tool.wants === 'required') return refused('wants', 'ARTIFACT_MISSING');
            break;
          }
          if (value === refs.wrongKind) return refused('wants', 'ARTIFACT_WRONG_KIND');
          if (value !== refs.live) return refused('wants', 'ARTIFACT_NOT_FOUND');
          args = { ...args, doc: DOC_DATA };
          resolved = true;
          changed = true;
          break;
        }
        case 'check-in': {
          const trips = s.tool.checkIn !== 'none' && s.tool.checkIn !== 'no';
          if (!trips) break;
          if (!resumed) return { kind: 'paused', ran: false, rows: [...rows, ['check-in', 'ask']] };
          approved = canonicalJson(review());
          break;
        }
        case 'credentials':
          if (s.tool.needs && s.provider !== 'ok') return refused('credentials', 'CREDENTIAL_FAILED');
          break;
        case 'result-ceiling':
          break;
      }
    }
    rows.push([member.name, changed ? 'transform' : 'allow']);
  }
  if (approved !== undefined && approved !== canonicalJson(review()))
    return refused('check-in', 'CHECKIN_MISMATCH');
  if (s.tool.outcome.kind === 'throws') return { kind: 'failed', ran: true, rows, runArgs: args };
  let text = 'r'.repeat(s.tool.outcome.chars);
  const maxChars = s.tool.ceiling ?? s.defaultMaxChars;
  for (const member of [...order].reverse()) {
    if (member.type === 'gate') {
      if (member.name === 'result-ceiling' && maxChars !== undefined && text.length > maxChars)
        return { ...refused('result-ceiling', 'RESULT_TOO_LARGE', true), runArgs: args };
      continue;
    }
    const b = member.behaviour;
    if (b.kind === 'after-deny') return { ...refused(member.name, 'POLICY_DENIED', true), runArgs: args };
    if (b.kind === 'after-throw') return { ...refused(member.name, 'GATE_ERROR', true), runArgs: args };
    if (b.kind === 'next-twice') return { ...refused(member.name, 'GATE_NEXT_TWICE', true), runArgs: args };
    if (b.kind === 'set-result') {
      text = 'replaced';
      rows.push([member.name, 'transform']);
    }
  }
  return { kind: 'result', ran: true, content: text, rows, runArgs: args };
}
