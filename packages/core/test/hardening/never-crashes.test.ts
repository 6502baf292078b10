// Property 2: dispatch never crashes. Whatever arrives as args (malformed JSON, non-objects, 1 MB
// strings, 10,000 levels of nesting, __proto__/constructor/prototype keys, lone surrogates, numbers at
// the edges, hostile objects) and whatever a tool returns or throws (BigInt, cycles, functions,
// symbols, throwing getters and toJSON), dispatch resolves to an outcome whose content is a string,
// and no built-in prototype is polluted.

import fc from 'fast-check';
import {
  createDispatcher,
  defineTool,
  type DispatchOutcome,
  type Middleware,
  type Tool,
  type ToolCall,
} from '@toolgate/core';
import { canonicalChain, inMemoryArtifacts } from '@toolgate/middleware';
import {
  assertNoPollution,
  fcOptions,
  GATE_DEADLINE_MS,
  PROPERTY_TIMEOUT_MS,
  prototypeKeys,
  settles,
  sharedValidator,
  throwingObject,
} from '../../../../test-support/hardening';

const MB = 'x'.repeat(1 << 20);

function nested(levels: number, wrap: (inner: unknown) => unknown): unknown {
  let value: unknown = 'bottom';
  for (let i = 0; i < levels; i++) value = wrap(value);
  return value;
}

const DEEP_OBJECT = nested(10_000, (inner) => ({ a: inner }));
// Deep enough that a recursive walk can overflow where JSON.stringify still succeeds.
const DEEPISH_OBJECT = nested(4_000, (inner) => ({ a: inner }));
const DEEP_ARRAY = nested(10_000, (inner) => [inner]);
const DEEP_JSON = `${'{"a":'.repeat(10_000)}1${'}'.repeat(10_000)}`;
const DEEP_ARRAY_JSON = `{"a":${'['.repeat(10_000)}${']'.repeat(10_000)}}`;

const edgeNumber = fc.constantFrom(
  NaN,
  -0,
  0,
  1e308,
  -1e308,
  Infinity,
  -Infinity,
  Number.MAX_SAFE_INTEGER + 2,
  Number.MIN_VALUE,
  -Number.MIN_VALUE,
);
const loneSurrogate = fc.constantFrom('\uD800', '\uDFFF', 'a\uD83Dz', '\uDC00\uD800', '\uD83D');
const dangerousKey = fc.constantFrom(
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'hasOwnProperty',
  'valueOf',
  '__defineGetter__',
  '\uD800',
  '',
  'q',
);

/** An object with own properties defined as JSON.parse would, so `__proto__` is an own key. */
function ownObject(entries: ReadonlyArray<readonly [string, unknown]>): Record<string, unknown> {
  const object: Record<string, unknown> = {};
  for (const [key, value] of entries)
    Object.defineProperty(object, key, { value, enumerable: true, writable: true, configurable: true });
  return object;
}

const leaf = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 20 }),
  edgeNumber,
  loneSurrogate,
  fc.boolean(),
  fc.constant(null),
  fc.integer(),
  fc.double(),
);

const { json: jsonish } = fc.letrec<{ json: unknown }>((tie) => ({
  json: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    leaf,
    fc.array(tie('json'), { maxLength: 4 }),
    fc
      .array(fc.tuple(fc.oneof(dangerousKey, fc.string({ maxLength: 8 })), tie('json')), { maxLength: 4 })
      .map(ownObject),
  ),
}));

/** Args objects a program (not a model) might pass, by name: built inside the property, as fast-check would trip on them. */
const HOSTILE_ARGS: Readonly<Record<string, () => unknown>> = {
  'a throwing getter': () => ({
    get q() {
      throw new Error('getter');
    },
  }),
  'a proxy whose every trap throws': () => throwingObject(),
  'a null-prototype object': () => Object.create(null) as object,
  'an inherited polluted-looking key': () =>
    Object.assign(Object.create({ polluted: true }) as object, { q: 'inherited' }),
  'a throwing toJSON': () => ({
    toJSON() {
      throw new Error('toJSON');
    },
  }),
  'a BigInt value': () => ({ q: 1n }),
  'a symbol value': () => ({ q: Symbol('s') }),
  'a function value': () => ({ q: () => 1 }),
  'a cycle': () => {
    const cycle: Record<string, unknown> = { q: 'c' };
    cycle['self'] = cycle;
    return cycle;
  },
  'a Date': () => new Date(0),
  'a Map': () => new Map([['q', 1]]),
  'a frozen object': () => Object.freeze({ q: 'frozen' }),
  'a proxy whose ownKeys throws': () =>
    new Proxy(
      { q: 'x' },
      {
        ownKeys() {
          throw new Error('ownKeys');
        },
      },
    ),
  'a 1 MB value': () => ({ q: MB }),
  'a 1 MB key': () => ownObject([[MB, 1]]),
  '10,000 levels of objects': () => ({ q: DEEP_OBJECT }),
  '10,000 levels of arrays': () => ({ q: DEEP_ARRAY }),
};
const hostileArgs = fc.constantFrom(...Object.keys(HOSTILE_ARGS)).map((hostile) => ({ hostile }));

const malformedJson = fc.oneof(
  fc.string({ maxLength: 30 }),
  fc.constantFrom(
    '{',
    '{"a":',
    '[1,2',
    'nul',
    '{"a":1}garbage',
    '{"__proto__":{"polluted":true}}',
    '{"constructor":{"prototype":{"polluted":true}}}',
    '{"q":"\\ud800"}',
    '1e400',
    '"just a string"',
    '[]',
    'null',
    '  ',
    `{"q":"${MB}"}`,
    DEEP_JSON,
    DEEP_ARRAY_JSON,
  ),
  jsonish.map((value) => {
    try {
      return JSON.stringify(value) ?? 'undefined';
    } catch {
      return '{}';
    }
  }),
);

const args = fc.oneof(
  { arbitrary: jsonish, weight: 4 },
  { arbitrary: malformedJson, weight: 3 },
  { arbitrary: hostileArgs, weight: 2 },
  {
    arbitrary: fc.oneof(
      fc.anything(),
      fc.bigInt(),
      fc.constant(Symbol('s')),
      fc.constant(() => 1),
      fc.constant(undefined),
    ),
    weight: 1,
  },
);

/** What the 'weird' tool returns or throws, by name. */
const WEIRD_RESULTS: ReadonlyArray<readonly [string, () => unknown]> = [
  ['a BigInt', () => 1n],
  ['an object holding a BigInt', () => ({ n: 1n })],
  [
    'a cycle',
    () => {
      const cycle: Record<string, unknown> = {};
      cycle['self'] = cycle;
      return cycle;
    },
  ],
  ['a function', () => () => 1],
  ['a symbol', () => Symbol('s')],
  [
    'an object whose getter throws',
    () => ({
      get boom() {
        throw new Error('getter');
      },
    }),
  ],
  [
    'an object whose toJSON throws',
    () => ({
      toJSON() {
        throw new Error('toJSON');
      },
    }),
  ],
  ['a proxy whose every trap throws', () => throwingObject()],
  [
    'an object whose then getter throws',
    () => ({
      get then() {
        throw new Error('then');
      },
    }),
  ],
  ['undefined', () => undefined],
  ['null', () => null],
  ['NaN', () => NaN],
  ['a 1 MB string', () => MB],
  ['10,000 levels of nesting', () => DEEP_OBJECT],
  ['4,000 levels of nesting', () => DEEPISH_OBJECT],
  ['the credential as a key and a value', () => ({ 'credential-value': ['credential-value'] })],
  ['a lone surrogate', () => '\uD800'],
  ['a rejection with undefined', () => Promise.reject(undefined)],
  ['a rejection with a string', () => Promise.reject('a string')],
  ['a rejection with a symbol', () => Promise.reject(Symbol('s'))],
  ['a rejection with a throwing proxy', () => Promise.reject(throwingObject())],
  [
    'a rejection with an Error whose name and message getters throw',
    () =>
      Promise.reject(
        Object.defineProperties(new Error('x'), {
          message: {
            get() {
              throw new Error('message');
            },
          },
          name: {
            get() {
              throw new Error('name');
            },
          },
        }),
      ),
  ],
  [
    'a throw of an Error whose message is not a string',
    () => {
      throw Object.defineProperty(new Error('x'), 'message', {
        value: {
          toString() {
            throw new Error('toString');
          },
        },
      });
    },
  ],
  [
    'a throw of null',
    () => {
      throw null;
    },
  ],
  [
    'a throw of a throwing proxy',
    () => {
      throw throwingObject();
    },
  ],
];
const weirdResults = fc.constantFrom(...WEIRD_RESULTS.map(([, make]) => make));

/** What a broken middleware might throw, by name. */
const HOSTILE_THROWS: ReadonlyArray<readonly [string, () => unknown]> = [
  ['a proxy whose every trap throws', () => throwingObject()],
  [
    'an Error whose name and message getters throw',
    () =>
      Object.defineProperties(new Error('x'), {
        message: {
          get() {
            throw new Error('message');
          },
        },
        name: {
          get() {
            throw new Error('name');
          },
        },
      }),
  ],
  ['null', () => null],
  ['undefined', () => undefined],
  ['a symbol', () => Symbol('s')],
  ['a frozen object', () => Object.freeze({ message: 'frozen' })],
];

/** Calls a model cannot make well: not an object, a tool name that is not a string, and so on. */
const MALFORMED_CALLS: ReadonlyArray<readonly [string, unknown]> = [
  ['null', null],
  ['undefined', undefined],
  ['a bare string', 'echo'],
  ['a tool name that is an object', { toolName: { name: 'echo' } }],
  ['an unknown tool', { toolName: 'no such tool' }],
  ['a 1 MB tool name', { toolName: MB }],
];

describe('never crashes', () => {
  const baseline = prototypeKeys();
  let nextResult: () => unknown = () => 'ok';
  const tools: Tool[] = [
    defineTool({
      name: 'echo',
      description: 'returns its args',
      inputSchema: { type: 'object' },
      execute: (a: Record<string, unknown>) => a,
    }),
    defineTool({
      name: 'strict',
      description: 'typed args',
      inputSchema: {
        type: 'object',
        properties: { q: { type: 'string' }, n: { type: 'integer' } },
        additionalProperties: false,
      },
      execute: () => 'ok',
    }),
    defineTool({
      name: 'weird',
      description: 'returns anything',
      inputSchema: { type: 'object' },
      execute: () => nextResult(),
    }),
    defineTool({
      name: 'guarded',
      description: 'asks first',
      inputSchema: { type: 'object' },
      checkIn: 'always',
      execute: () => 'ok',
    }),
    defineTool({
      name: 'weird-keyed',
      description: 'returns anything, holding a credential whose value is redacted from it',
      inputSchema: { type: 'object' },
      needs: { kind: 'api_key', service: 'svc' },
      execute: () => nextResult(),
    }),
    defineTool({
      name: 'secretive',
      description: 'needs a key',
      inputSchema: { type: 'object' },
      needs: { kind: 'api_key', service: 'svc' },
      execute: () => 'ok',
    }),
    defineTool({
      name: 'wanting',
      description: 'wants a document',
      inputSchema: { type: 'object', properties: { q: { type: 'string' } } },
      wants: { q: 'doc/text' },
      resultCeiling: { maxChars: 1000 },
      execute: (a: Record<string, unknown>) => a,
    }),
  ];
  const dispatcher = createDispatcher({
    tools,
    chain: canonicalChain({
      artifacts: inMemoryArtifacts(),
      checkInKey: 'k'.repeat(32),
      credentials: { resolve: () => ({ kind: 'api_key', value: 'credential-value' }) },
      deadlineMs: GATE_DEADLINE_MS,
      validator: sharedValidator,
    }),
  });
  // Listeners make the dispatcher build every event, so event building is under test too.
  dispatcher
    .on('gate.decision', () => undefined)
    .on('dispatch.end', () => undefined)
    .on('tool.error', () => undefined);

  async function expectAnOutcome(call: unknown): Promise<DispatchOutcome> {
    const outcome = await settles(dispatcher.dispatch(call as ToolCall), 'dispatch');
    expect(['result', 'refused', 'paused', 'failed']).toContain(outcome.kind);
    expect(typeof outcome.content).toBe('string');
    // The outcome minus the tool's own value must be loggable as JSON.
    const { value: _value, ...rest } = outcome as DispatchOutcome & { value?: unknown };
    expect(() => JSON.stringify(rest)).not.toThrow();
    assertNoPollution(baseline);
    return outcome;
  }

  it(
    'any args to any tool resolve to an outcome with string content and leave every prototype untouched',
    async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.constantFrom('echo', 'strict', 'weird', 'weird-keyed', 'guarded', 'secretive', 'wanting'),
          args,
          weirdResults,
          async (toolName, value, result) => {
            nextResult = result;
            const hostile = (value as { hostile?: string } | null)?.hostile;
            await expectAnOutcome({
              toolName,
              args: hostile === undefined ? value : HOSTILE_ARGS[hostile]!(),
            });
          },
        ),
        fcOptions(2),
      );
    },
    PROPERTY_TIMEOUT_MS,
  );

  it.each(WEIRD_RESULTS)(
    'a tool that returns or throws %s gives a failed or result outcome with string content, with or without a credential to redact',
    async (_label, make) => {
      nextResult = make;
      const outcome = await expectAnOutcome({ toolName: 'weird', args: {} });
      expect(['result', 'failed']).toContain(outcome.kind);
      expect(outcome.ran).toBe(true);
      // Redaction changes what a result says, never what kind of outcome it is.
      const keyed = await expectAnOutcome({ toolName: 'weird-keyed', args: {} });
      expect(keyed.kind).toBe(outcome.kind);
      expect(keyed.content).not.toContain('credential-value');
    },
  );

  it.each(HOSTILE_THROWS)(
    'a middleware that throws %s is refused by that middleware, and nothing runs',
    async (_label, make) => {
      let runs = 0;
      const tool = defineTool({
        name: 'plain',
        description: 'counts',
        inputSchema: { type: 'object' },
        execute: () => ++runs,
      });
      const thrower: Middleware = {
        name: 'thrower',
        run: async () => {
          throw make();
        },
      };
      const hostile = createDispatcher({
        tools: [tool],
        chain: canonicalChain({ validator: sharedValidator }).use(thrower),
      });
      hostile.on('gate.decision', () => undefined);
      const outcome = await settles(hostile.dispatch({ toolName: 'plain', args: {} }), 'dispatch');
      expect(outcome).toMatchObject({ kind: 'refused', gate: 'thrower', code: 'GATE_ERROR', ran: false });
      expect(runs).toBe(0);
      assertNoPollution(baseline);
    },
  );

  it.each(MALFORMED_CALLS)('a malformed call (%s) is a refusal, not a throw', async (_label, call) => {
    const outcome = await expectAnOutcome(call);
    expect(outcome.kind).toBe('refused');
  });
});
