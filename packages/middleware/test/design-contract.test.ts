// DESIGN.md as a contract: every concrete statement there, section by section, checked through the
// public API exactly as DESIGN names it. MCP (§9) needs the SDK's client, which resolves only from
// packages/mcp, so its statements live in packages/mcp/test/design-contract.test.ts.

import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Type } from 'typebox';
import {
  CANONICAL_ORDER,
  ChainOrderError,
  checkInApproved,
  checkInDeclined,
  createChain,
  createDispatcher,
  defineTool,
  inMemoryCheckIns,
  type ArtifactStore,
  type Chain,
  type CheckInRequest,
  type CheckInStore,
  type CredentialProvider,
  type Dispatcher,
  type DispatchOutcome,
  type Identity,
  type Middleware,
  type PermissionChecker,
  type PermissionRequest,
  type Tool,
  type ToolMiddlewareContext,
} from '@toolgate/core';
import { canonicalChain, inMemoryArtifacts, type SchemaValidator } from '@toolgate/middleware';
import { fixedClock } from '@toolgate/testing';
import { sqliteArtifacts, sqliteCheckIns } from '@toolgate/store-sqlite';

// ---------------------------------------------------------------------------------------------
// Helpers: independent of the library, so a test cannot pass by agreeing with the code it checks.

const KEY = 'design-contract-key-0123456789abcdef';
const encoder = new TextEncoder();
const hex = (buffer: ArrayBuffer) =>
  [...new Uint8Array(buffer)].map((byte) => byte.toString(16).padStart(2, '0')).join('');

async function sha256Hex(text: string): Promise<string> {
  return hex(await globalThis.crypto.subtle.digest('SHA-256', encoder.encode(text)));
}

async function hmacHex(key: string, text: string): Promise<string> {
  const imported = await globalThis.crypto.subtle.importKey(
    'raw',
    encoder.encode(key),
    { name: 'HMAC', hash: 'SHA-256' },
    false,
    ['sign'],
  );
  return hex(await globalThis.crypto.subtle.sign('HMAC', imported, encoder.encode(text)));
}

/** JSON with keys sorted at every depth: DESIGN's "canonical JSON (sorted keys)". */
function sortedJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(sortedJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const record = value as Record<string, unknown>;
    const keys = Object.keys(record)
      .filter((key) => record[key] !== undefined)
      .sort();
    return `{${keys.map((key) => `${JSON.stringify(key)}:${sortedJson(record[key])}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

type Kind = DispatchOutcome['kind'];
function as<K extends Kind>(outcome: DispatchOutcome, kind: K): Extract<DispatchOutcome, { kind: K }> {
  if (outcome.kind !== kind) throw new Error(`expected ${kind}, got ${outcome.kind}: ${outcome.content}`);
  return outcome as Extract<DispatchOutcome, { kind: K }>;
}

const OPEN = { type: 'object', properties: { text: { type: 'string' } } } as Record<string, unknown>;

type Declarations = Partial<
  Pick<Tool, 'capabilities' | 'checkIn' | 'checkInComponent' | 'needs' | 'resultCeiling' | 'wants'>
>;

interface Seen {
  readonly args: Record<string, unknown>;
  readonly ctx: ToolMiddlewareContext;
  readonly json: string;
  readonly secret: unknown;
}

/** A tool that records what each execution saw, and answers with `respond`. */
function recording(
  name = 'echo',
  declarations: Declarations & { inputSchema?: Record<string, unknown> } = {},
  respond: (args: Record<string, unknown>, ctx: ToolMiddlewareContext) => unknown = () => 'ok',
) {
  const calls: Seen[] = [];
  const { inputSchema = OPEN, ...rest } = declarations;
  const tool = defineTool({
    name,
    description: `the ${name} tool`,
    inputSchema,
    ...rest,
    execute: (args: Record<string, unknown>, ctx: ToolMiddlewareContext) => {
      calls.push({ args: { ...args }, ctx, json: JSON.stringify(ctx), secret: ctx.credential?.reveal() });
      return respond(args, ctx);
    },
  });
  return { tool, calls };
}

function mw(name: string, run: Middleware['run'], extra: Partial<Middleware> = {}): Middleware {
  return { name, run, ...extra };
}
const pass = (name: string, extra: Partial<Middleware> = {}) => mw(name, (_ctx, next) => next(), extra);

const EVENT_TYPES = [
  'dispatch.start',
  'gate.decision',
  'permission.checked',
  'capability.checked',
  'checkin.requested',
  'checkin.resolved',
  'credential.resolved',
  'credential.failed',
  'artifacts.resolved',
  'artifacts.refused',
  'result.refused',
  'tool.start',
  'tool.end',
  'tool.error',
  'dispatch.end',
] as const;

type SeenEvent = { readonly type: string } & Record<string, unknown>;
function recordEvents(dispatcher: Dispatcher): SeenEvent[] {
  const seen: SeenEvent[] = [];
  for (const type of EVENT_TYPES) dispatcher.on(type, (event: unknown) => seen.push(event as SeenEvent));
  return seen;
}

// ---------------------------------------------------------------------------------------------
describe('§2 the Tool', () => {
  it('defineTool takes a flat definition and builds a plain, spreadable Tool whose schema holds name, description and inputSchema', async () => {
    const execute = () => 'done';
    const tool = defineTool({
      name: 'lookup',
      description: 'Looks things up',
      inputSchema: OPEN,
      execute,
      capabilities: ['user_data'],
      resultCeiling: { maxChars: 100, narrowBy: ['text'] },
    });
    expect(tool.schema).toEqual({ name: 'lookup', description: 'Looks things up', inputSchema: OPEN });
    expect(tool.execute).toBe(execute);
    expect(tool.capabilities).toEqual(['user_data']);
    expect(tool.resultCeiling).toEqual({ maxChars: 100, narrowBy: ['text'] });
    expect('source' in tool).toBe(false);
    const spread = { ...tool };
    const outcome = await createDispatcher({ tools: [spread], chain: canonicalChain() }).dispatch({
      toolName: 'lookup',
      args: {},
    });
    expect(as(outcome, 'result').value).toBe('done');
  });

  it('defineTool accepts a TypeBox schema and the dispatcher validates against it', async () => {
    const tool = defineTool({
      name: 'add',
      description: 'Adds',
      inputSchema: Type.Object({ a: Type.Number(), b: Type.Number() }),
      execute: ({ a, b }) => a + b,
    });
    const dispatcher = createDispatcher({ tools: [tool], chain: canonicalChain() });
    expect(as(await dispatcher.dispatch({ toolName: 'add', args: { a: 2, b: 3 } }), 'result').value).toBe(5);
    expect(as(await dispatcher.dispatch({ toolName: 'add', args: { a: 2, b: 'x' } }), 'refused').gate).toBe(
      'validate-args',
    );
  });

  const base = { description: 'd', inputSchema: OPEN, execute: () => 'ok' };
  const build = (definition: Record<string, unknown>) => () =>
    defineTool({ ...base, ...definition } as unknown as Parameters<typeof defineTool>[0]);

  it.each(['has space', 'dot.name', 'a'.repeat(65), 'slash/name'])(
    'defineTool refuses the name %j, naming the tool and the rule',
    (name) => {
      expect(build({ name })).toThrow(/name/i);
      expect(build({ name })).toThrow(name.slice(0, 20));
    },
  );

  it('defineTool refuses an empty name', () => {
    expect(build({ name: '' })).toThrow(/name/i);
  });

  it('defineTool accepts names of letters, digits, underscore and dash up to 64 characters', () => {
    expect(build({ name: 'a'.repeat(64) })).not.toThrow();
    expect(build({ name: 'Get_user-2' })).not.toThrow();
  });

  it.each([0, -5, 1.5, Number.NaN, '100'])(
    'defineTool refuses resultCeiling.maxChars %p, naming the tool and maxChars',
    (maxChars) => {
      expect(build({ name: 'ceil', resultCeiling: { maxChars } })).toThrow(/ceil/);
      expect(build({ name: 'ceil', resultCeiling: { maxChars } })).toThrow(/maxChars/);
    },
  );

  it.each([[[]], [['limit', ' ']], [['']]])('defineTool refuses narrowBy %j', (narrowBy) => {
    expect(build({ name: 'narrow', resultCeiling: { maxChars: 10, narrowBy } })).toThrow(/narrowBy/);
  });

  it.each(['sometimes', true, 1])(
    'defineTool refuses checkIn %p (neither "always" nor a function)',
    (checkIn) => {
      expect(build({ name: 'ci', checkIn })).toThrow(/checkIn/);
    },
  );

  it('defineTool accepts checkIn "always" and a predicate', () => {
    expect(build({ name: 'ci', checkIn: 'always' })).not.toThrow();
    expect(build({ name: 'ci', checkIn: () => true })).not.toThrow();
  });

  it('defineTool refuses checkInComponent without checkIn', () => {
    expect(build({ name: 'comp', checkInComponent: { id: 'refund-form' } })).toThrow(/checkInComponent/);
    expect(build({ name: 'comp', checkIn: 'always', checkInComponent: { id: 'refund-form' } })).not.toThrow();
  });

  it('defineTool refuses a wants argument absent from the input schema, naming the argument', () => {
    expect(build({ name: 'w', wants: { dataset: 'table' } })).toThrow(/dataset/);
  });

  it('defineTool refuses a wants argument that is not type string', () => {
    const inputSchema = { type: 'object', properties: { dataset: { type: 'number' } } };
    expect(build({ name: 'w', inputSchema, wants: { dataset: 'table' } })).toThrow(/dataset/);
    const ok = { type: 'object', properties: { dataset: { type: 'string' } } };
    expect(build({ name: 'w', inputSchema: ok, wants: { dataset: 'table' } })).not.toThrow();
  });

  it.each([
    { service: 'billing' },
    { kind: 'api_key' },
    { kind: '', service: 'billing' },
    { kind: 'api_key', service: ' ' },
  ])('defineTool refuses needs %j (kind and service must be non-empty)', (needs) => {
    expect(build({ name: 'n', needs })).toThrow(/needs/);
  });

  it.each([['ExternalNet'], ['external-net'], ['external net'], ['']])(
    'defineTool refuses a capability that is not snake_case: %j',
    (capability) => {
      expect(build({ name: 'cap', capabilities: [capability] })).toThrow(/capabilit/i);
    },
  );

  it('defineTool refuses a capability listed twice', () => {
    expect(build({ name: 'cap', capabilities: ['payments', 'payments'] })).toThrow(/payments/);
  });

  it('defineTool accepts the built-in capabilities and any other snake_case name (open set)', () => {
    const capabilities = [
      'memory_read',
      'memory_write',
      'external_net',
      'user_data',
      'filesystem',
      'payments',
      'code_exec',
      'send_email',
    ];
    expect(build({ name: 'cap', capabilities })).not.toThrow();
  });

  it('defineTool refuses a source passed in: only MCP clients stamp it', () => {
    expect(build({ name: 'src', source: 'upstream' })).toThrow(/source/);
  });

  it('createDispatcher runs the same checks on hand-built tools, naming the tool', () => {
    const handBuilt = {
      schema: { name: 'hand', description: 'd', inputSchema: OPEN },
      execute: () => 'ok',
      capabilities: ['Not Snake'],
    };
    expect(() =>
      createDispatcher({ tools: [handBuilt as unknown as Tool], chain: canonicalChain() }),
    ).toThrow(/hand/);
    const badCeiling = {
      schema: { name: 'hand2', description: 'd', inputSchema: OPEN },
      execute: () => 'ok',
      resultCeiling: { maxChars: 0 },
    };
    expect(() =>
      createDispatcher({ tools: [badCeiling as unknown as Tool], chain: canonicalChain() }),
    ).toThrow(/hand2/);
  });

  it('createDispatcher accepts a hand-built tool stamped with a source (as an MCP import is), and the outcome carries it', async () => {
    const imported: Tool = {
      schema: { name: 'remote', description: 'd', inputSchema: OPEN },
      execute: () => 'ok',
      source: 'docs',
    };
    const outcome = await createDispatcher({ tools: [imported], chain: canonicalChain() }).dispatch({
      toolName: 'remote',
      args: {},
    });
    expect(as(outcome, 'result').toolSource).toBe('docs');
  });
});

// ---------------------------------------------------------------------------------------------
describe('§3 the context', () => {
  it('carries the identity of the call; toolSource is absent (not undefined) for our own tools', async () => {
    let seen: ToolMiddlewareContext | undefined;
    const { tool } = recording('echo');
    const chain = canonicalChain().use(
      mw('peek', async (ctx, next) => {
        seen = ctx;
        await next();
      }),
    );
    const identity: Identity = { tenant: 'acme', principal: 'ann', conversation: 'c1' };
    const outcome = await createDispatcher({ tools: [tool], chain }).dispatch(
      { toolName: 'echo', args: { text: 'hi' }, toolCallId: 'call-1' },
      { identity },
    );
    expect(outcome.kind).toBe('result');
    expect(seen!.toolName).toBe('echo');
    expect('toolSource' in seen!).toBe(false);
    expect(seen!.toolCallId).toBe('call-1');
    expect(seen!.tool.schema.name).toBe('echo');
    expect(seen!.identity).toEqual(identity);
    expect(seen!.signal).toBeInstanceOf(AbortSignal);
    expect(typeof seen!.state).toBe('object');
    expect(seen!.resumed).toBe(false);
    expect(seen!.chainId).toBe(outcome.chainId);
    expect(seen!.args).toEqual({ text: 'hi' });
    expect('toolSource' in outcome).toBe(false);
  });

  it('copies toolSource from tool.source for an imported tool', async () => {
    let source: string | undefined;
    const imported: Tool = {
      schema: { name: 'remote', description: 'd', inputSchema: OPEN },
      execute: (_args, ctx) => {
        source = ctx.toolSource;
        return 'ok';
      },
      source: 'docs',
    };
    await createDispatcher({ tools: [imported], chain: canonicalChain() }).dispatch({ toolName: 'remote' });
    expect(source).toBe('docs');
  });

  it('tool is read-only: a middleware that strips a declaration is refused, and the declaration still holds next call', async () => {
    const { tool, calls } = recording('refund', { checkIn: 'always' });
    let strip = true;
    const chain = canonicalChain({ checkInKey: KEY }).use(
      mw('stripper', async (ctx, next) => {
        if (strip) (ctx.tool as { checkIn?: unknown }).checkIn = undefined;
        await next();
      }),
    );
    const dispatcher = createDispatcher({ tools: [tool], chain });
    expect(as(await dispatcher.dispatch({ toolName: 'refund' }), 'refused').gate).toBe('stripper');
    strip = false;
    expect((await dispatcher.dispatch({ toolName: 'refund' })).kind).toBe('paused');
    expect(calls).toHaveLength(0);
  });

  it('gives every call a fresh state bag', async () => {
    const sizes: number[] = [];
    const chain = canonicalChain().use(
      mw('stateful', async (ctx, next) => {
        const state = ctx.state as Record<string, unknown>;
        sizes.push(Object.keys(state).length);
        state['mark'] = true;
        await next();
      }),
    );
    const dispatcher = createDispatcher({ tools: [recording().tool], chain });
    await dispatcher.dispatch({ toolName: 'echo' });
    await dispatcher.dispatch({ toolName: 'echo' });
    expect(sizes).toEqual([0, 0]);
  });

  it('args is a read-only view: a middleware that writes to it is refused and the tool does not run', async () => {
    const { tool, calls } = recording();
    const chain = canonicalChain().use(
      mw('mutator', async (ctx, next) => {
        (ctx.args as Record<string, unknown>)['text'] = 'changed';
        await next();
      }),
    );
    const outcome = await createDispatcher({ tools: [tool], chain }).dispatch({
      toolName: 'echo',
      args: { text: 'a' },
    });
    expect(as(outcome, 'refused').gate).toBe('mutator');
    expect(calls).toHaveLength(0);
  });

  it('after next(), result and resultText are set; strings are as they are and the outcome content reuses resultText', async () => {
    const seen: unknown[] = [];
    const chain = canonicalChain().use(
      mw('after', async (ctx, next) => {
        await next();
        seen.push(ctx.result, ctx.resultText, ctx.ran);
      }),
    );
    const strings = createDispatcher({ tools: [recording('s', {}, () => 'plain "text"').tool], chain });
    const outcome = as(await strings.dispatch({ toolName: 's' }), 'result');
    expect(seen).toEqual(['plain "text"', 'plain "text"', true]);
    expect(outcome.content).toBe('plain "text"');
    seen.length = 0;
    const objects = createDispatcher({ tools: [recording('o', {}, () => ({ b: 1, a: [2] })).tool], chain });
    const object = as(await objects.dispatch({ toolName: 'o' }), 'result');
    expect(seen[1]).toBe(JSON.stringify({ b: 1, a: [2] }));
    expect(object.content).toBe(JSON.stringify({ b: 1, a: [2] }));
    expect(object.value).toEqual({ b: 1, a: [2] });
  });

  it('ctx.deny refuses: nothing after it runs, and the model reads the reason from that gate', async () => {
    const { tool, calls } = recording();
    const later = jest.fn();
    const chain = canonicalChain()
      .use(mw('policy', async (ctx) => ctx.deny('echo is closed on Sundays')))
      .insertBefore(
        'validate-args',
        mw('later', async (_ctx, next) => {
          later();
          await next();
        }),
      );
    const outcome = as(
      await createDispatcher({ tools: [tool], chain }).dispatch({ toolName: 'echo' }),
      'refused',
    );
    expect(outcome.gate).toBe('policy');
    expect(outcome.reason).toContain('echo is closed on Sundays');
    expect(outcome.content).toMatch(/^\[policy refused: .*echo is closed on Sundays/);
    expect(outcome.ran).toBe(false);
    expect(later).not.toHaveBeenCalled();
    expect(calls).toHaveLength(0);
    expect(outcome.ledger.at(-1)).toMatchObject({ gate: 'policy', outcome: 'deny', changed: false });
  });

  it('ctx.deny takes an optional detail: a code and retryable land on the outcome', async () => {
    const chain = canonicalChain().use(
      mw('policy', async (ctx) => ctx.deny('busy', { code: 'BUSY', retryable: true })),
    );
    const outcome = as(
      await createDispatcher({ tools: [recording().tool], chain }).dispatch({ toolName: 'echo' }),
      'refused',
    );
    expect(outcome.code).toBe('BUSY');
    expect(outcome.retryable).toBe(true);
  });

  it('ctx.deny takes a plain string as its detail, for the operator, not the model', async () => {
    const decisions: SeenEvent[] = [];
    const chain = canonicalChain().use(
      mw('policy', async (ctx) => ctx.deny('not today', 'quota table row 17')),
    );
    const dispatcher = createDispatcher({ tools: [recording().tool], chain });
    dispatcher.on('gate.decision', (event) => decisions.push(event as unknown as SeenEvent));
    const outcome = as(await dispatcher.dispatch({ toolName: 'echo' }), 'refused');
    expect(outcome.content).toContain('not today');
    expect(outcome.content).not.toContain('quota table');
    expect(decisions.find((e) => e['outcome'] === 'deny')?.['detail']).toBe('quota table row 17');
  });

  it('ctx.setArgs changes the args the tool receives and files a transform row with its why', async () => {
    const { tool, calls } = recording();
    const chain = canonicalChain().use(
      mw(
        'upper',
        async (ctx, next) => {
          ctx.setArgs({ text: String(ctx.args['text']).toUpperCase() }, 'shout');
          await next();
        },
        { transformsArgs: true },
      ),
    );
    const outcome = as(
      await createDispatcher({ tools: [tool], chain }).dispatch({ toolName: 'echo', args: { text: 'hi' } }),
      'result',
    );
    expect(calls[0]!.args).toEqual({ text: 'HI' });
    expect(outcome.ledger.find((row) => row.gate === 'upper')).toEqual({
      gate: 'upper',
      outcome: 'transform',
      why: 'shout',
      changed: true,
    });
  });

  it('ctx.setArgs without a why is that middleware failing: refused, the tool does not run', async () => {
    const { tool, calls } = recording();
    const chain = canonicalChain().use(
      mw(
        'upper',
        async (ctx, next) => {
          ctx.setArgs({ text: 'X' }, '' as string);
          await next();
        },
        { transformsArgs: true },
      ),
    );
    const outcome = as(
      await createDispatcher({ tools: [tool], chain }).dispatch({ toolName: 'echo', args: { text: 'hi' } }),
      'refused',
    );
    expect(outcome.gate).toBe('upper');
    expect(calls).toHaveLength(0);
  });

  it('no middleware can answer for the tool: setResult before execution throws, and the call is refused, not answered', async () => {
    const { tool, calls } = recording();
    const chain = canonicalChain().use(
      mw('forger', async (ctx) => {
        ctx.setResult('forged', 'cached answer');
      }),
    );
    const outcome = as(
      await createDispatcher({ tools: [tool], chain }).dispatch({ toolName: 'echo' }),
      'refused',
    );
    expect(outcome.gate).toBe('forger');
    expect(outcome.ran).toBe(false);
    expect(outcome.content).not.toContain('forged');
    expect(calls).toHaveLength(0);
  });

  it('no middleware can answer for the tool: assigning ctx.result is refused', async () => {
    const chain = canonicalChain().use(
      mw('forger', async (ctx) => {
        (ctx as { result?: unknown }).result = 'forged';
      }),
    );
    const outcome = await createDispatcher({ tools: [recording().tool], chain }).dispatch({
      toolName: 'echo',
    });
    expect(outcome.kind).toBe('refused');
    expect(outcome.content).not.toContain('forged');
  });

  it('ctx.setResult after the tool ran replaces the value and content and files a transform row', async () => {
    const chain = canonicalChain().use(
      mw('masker', async (ctx, next) => {
        await next();
        ctx.setResult({ masked: true }, 'masked the email');
      }),
    );
    const outcome = as(
      await createDispatcher({
        tools: [recording('email', {}, () => 'ann@example.com').tool],
        chain,
      }).dispatch({ toolName: 'email' }),
      'result',
    );
    expect(outcome.value).toEqual({ masked: true });
    expect(outcome.content).toBe('{"masked":true}');
    expect(outcome.content).not.toContain('ann@example.com');
    expect(outcome.ledger).toContainEqual({
      gate: 'masker',
      outcome: 'transform',
      why: 'masked the email',
      changed: true,
    });
  });

  it('ctx.setResult without a why is refused after the tool ran: the outcome says it ran and withholds the result', async () => {
    const chain = canonicalChain().use(
      mw('masker', async (ctx, next) => {
        await next();
        ctx.setResult('x', '');
      }),
    );
    const outcome = as(
      await createDispatcher({ tools: [recording('email', {}, () => 'PAYLOAD-123').tool], chain }).dispatch({
        toolName: 'email',
      }),
      'refused',
    );
    expect(outcome.ran).toBe(true);
    expect(outcome.gate).toBe('masker');
    expect(outcome.content).not.toContain('PAYLOAD-123');
  });

  it('ctx.emit sends a gate event to listeners with the call facts', async () => {
    const chain = canonicalChain().use(
      mw('audit', async (ctx, next) => {
        ctx.emit({ type: 'audit.seen', count: 1 });
        await next();
      }),
    );
    const dispatcher = createDispatcher({ tools: [recording().tool], chain });
    const got: SeenEvent[] = [];
    dispatcher.on('audit.seen', (event) => got.push(event as unknown as SeenEvent));
    await dispatcher.dispatch({ toolName: 'echo', toolCallId: 'call-9' });
    expect(got).toHaveLength(1);
    expect(got[0]).toMatchObject({ type: 'audit.seen', count: 1, toolName: 'echo', toolCallId: 'call-9' });
  });

  it('a middleware that returns without next() and without deny/ask is a refusal: "neither continued nor refused"', async () => {
    const { tool, calls } = recording();
    const chain = canonicalChain().use(mw('lazy', async () => undefined));
    const outcome = as(
      await createDispatcher({ tools: [tool], chain }).dispatch({ toolName: 'echo' }),
      'refused',
    );
    expect(outcome.gate).toBe('lazy');
    expect(outcome.content).toContain('neither continued nor refused');
    expect(calls).toHaveLength(0);
  });

  it.each([
    ['an Error with an internal message', () => new Error('db password is hunter2')],
    ['a string', () => 'hunter2 string'],
    ['undefined', () => undefined],
    ['null', () => null],
  ])('a middleware that throws %s is a refusal by that gate, without its message', async (_what, thrown) => {
    const { tool, calls } = recording();
    const chain = canonicalChain().use(
      mw('flaky', async () => {
        throw thrown();
      }),
    );
    const outcome = as(
      await createDispatcher({ tools: [tool], chain }).dispatch({ toolName: 'echo' }),
      'refused',
    );
    expect(outcome.gate).toBe('flaky');
    expect(outcome.content).not.toContain('hunter2');
    expect(calls).toHaveLength(0);
  });

  it('next() twice is an error: refused by that gate, the tool ran once and the outcome says it ran', async () => {
    const { tool, calls } = recording('echo', {}, () => 'SECRET-RESULT');
    const chain = canonicalChain().use(
      mw('twice', async (_ctx, next) => {
        await next();
        await next();
      }),
    );
    const outcome = as(
      await createDispatcher({ tools: [tool], chain }).dispatch({ toolName: 'echo' }),
      'refused',
    );
    expect(outcome.gate).toBe('twice');
    expect(outcome.ran).toBe(true);
    expect(outcome.content).toMatch(/withheld/);
    expect(calls).toHaveLength(1);
    expect(outcome.content).not.toContain('SECRET-RESULT');
  });

  it('swallowing an inner refusal does not undo it', async () => {
    const { tool, calls } = recording();
    const chain = canonicalChain({
      permissions: { check: () => ({ allow: false, reason: 'no echo for you' }) },
    }).insertBefore(
      'permission',
      mw('swallower', async (_ctx, next) => {
        try {
          await next();
        } catch {
          /* swallowed */
        }
      }),
    );
    const outcome = as(
      await createDispatcher({ tools: [tool], chain }).dispatch({ toolName: 'echo' }),
      'refused',
    );
    expect(outcome.gate).toBe('permission');
    expect(outcome.content).toContain('no echo for you');
    expect(calls).toHaveLength(0);
  });

  it('swallowing an inner pause does not undo it', async () => {
    const { tool, calls } = recording('refund', { checkIn: 'always' });
    const chain = canonicalChain({ checkInKey: KEY }).insertBefore(
      'permission',
      mw('swallower', async (_ctx, next) => {
        try {
          await next();
        } catch {
          /* swallowed */
        }
      }),
    );
    const outcome = await createDispatcher({ tools: [tool], chain }).dispatch({ toolName: 'refund' });
    expect(outcome.kind).toBe('paused');
    expect(calls).toHaveLength(0);
  });

  it("ctx.signal is the caller's signal: a call aborted before it runs is refused and the tool does not run", async () => {
    const { tool, calls } = recording();
    const controller = new AbortController();
    controller.abort();
    const outcome = await createDispatcher({ tools: [tool], chain: canonicalChain() }).dispatch(
      { toolName: 'echo' },
      { signal: controller.signal },
    );
    expect(outcome.kind).toBe('refused');
    expect(outcome.ran).toBe(false);
    expect(calls).toHaveLength(0);
  });

  it('a refusal after execution (the ceiling) clears result and resultText: outer after-halves see the refusal, never the payload', async () => {
    const seen: unknown[] = [];
    const chain = canonicalChain().use(
      mw('outer', async (ctx, next) => {
        try {
          await next();
        } finally {
          seen.push(ctx.ran, ctx.result, ctx.resultText);
        }
      }),
    );
    const tool = recording('big', { resultCeiling: { maxChars: 5 } }, () => 'PAYLOAD-TOO-LONG').tool;
    const outcome = as(
      await createDispatcher({ tools: [tool], chain }).dispatch({ toolName: 'big' }),
      'refused',
    );
    expect(outcome.gate).toBe('result-ceiling');
    expect(seen).toEqual([true, undefined, undefined]);
  });

  it('an error thrown by execute stays a failed outcome through after-halves that deny or swallow it', async () => {
    const tool = recording('boom', {}, () => {
      throw new TypeError('disk full');
    }).tool;
    const denying = canonicalChain().use(
      mw('outer', async (ctx, next) => {
        try {
          await next();
        } catch {
          ctx.deny('relabelled');
        }
      }),
    );
    const failed = as(
      await createDispatcher({ tools: [tool], chain: denying }).dispatch({ toolName: 'boom' }),
      'failed',
    );
    expect(failed.error).toEqual({ name: 'TypeError', message: 'disk full' });
    expect(failed.ran).toBe(true);
    const swallowing = canonicalChain().use(
      mw('outer', async (_ctx, next) => {
        try {
          await next();
        } catch {
          /* swallowed */
        }
      }),
    );
    expect(
      (await createDispatcher({ tools: [tool], chain: swallowing }).dispatch({ toolName: 'boom' })).kind,
    ).toBe('failed');
  });

  it.each([
    ['a deny after the tool returned', (ctx: ToolMiddlewareContext) => ctx.deny('result looks wrong')],
    [
      'a throw after the tool returned',
      () => {
        throw new Error('after-half bug');
      },
    ],
  ])(
    '%s: the outcome says the tool ran and its result was withheld by that middleware',
    async (_what, after) => {
      const { tool, calls } = recording('echo', {}, () => 'RESULT-XYZ');
      const chain = canonicalChain().use(
        mw('checker', async (ctx, next) => {
          await next();
          after(ctx);
        }),
      );
      const outcome = as(
        await createDispatcher({ tools: [tool], chain }).dispatch({ toolName: 'echo' }),
        'refused',
      );
      expect(calls).toHaveLength(1);
      expect(outcome.ran).toBe(true);
      expect(outcome.gate).toBe('checker');
      expect(outcome.content).toMatch(/ran/);
      expect(outcome.content).toMatch(/withheld/);
      expect(outcome.content).toContain('checker');
      expect(outcome.content).not.toContain('RESULT-XYZ');
    },
  );

  it('every outcome carries ran', async () => {
    const dispatcher = createDispatcher({ tools: [recording().tool], chain: canonicalChain() });
    expect((await dispatcher.dispatch({ toolName: 'echo' })).ran).toBe(true);
    expect((await dispatcher.dispatch({ toolName: 'nope' })).ran).toBe(false);
  });

  it('every gate files a ledger row, pass-throughs included, and one gate.decision event fires per row', async () => {
    const dispatcher = createDispatcher({ tools: [recording().tool], chain: canonicalChain() });
    const decisions: SeenEvent[] = [];
    dispatcher.on('gate.decision', (event) => decisions.push(event as unknown as SeenEvent));
    const outcome = as(await dispatcher.dispatch({ toolName: 'echo', args: { text: 'a' } }), 'result');
    expect(outcome.ledger.map((row) => row.gate)).toEqual([...CANONICAL_ORDER]);
    for (const row of outcome.ledger) {
      expect(['allow', 'deny', 'ask', 'transform']).toContain(row.outcome);
      expect(row.changed).toBe(false);
      expect(Object.keys(row).sort()).toEqual(
        row.why === undefined ? ['changed', 'gate', 'outcome'] : ['changed', 'gate', 'outcome', 'why'],
      );
    }
    expect(decisions.map((e) => ({ gate: e['gate'], outcome: e['outcome'], changed: e['changed'] }))).toEqual(
      outcome.ledger.map((row) => ({ gate: row.gate, outcome: row.outcome, changed: row.changed })),
    );
  });

  it('a transform of the result files changed: true; a pass-through files changed: false', async () => {
    const chain = canonicalChain()
      .use(mw('quiet', async (_ctx, next) => next()))
      .use(
        mw('rewriter', async (ctx, next) => {
          await next();
          ctx.setResult('new', 'rewrote');
        }),
      );
    const outcome = as(
      await createDispatcher({ tools: [recording().tool], chain }).dispatch({ toolName: 'echo' }),
      'result',
    );
    expect(outcome.ledger.find((r) => r.gate === 'quiet')).toMatchObject({
      outcome: 'allow',
      changed: false,
    });
    expect(
      outcome.ledger.filter((r) => r.gate === 'rewriter').some((r) => r.changed && r.outcome === 'transform'),
    ).toBe(true);
  });
});

// ---------------------------------------------------------------------------------------------
describe('§4 the chain', () => {
  it('CANONICAL_ORDER names the seven gates in order, and canonicalChain fills it', () => {
    expect([...CANONICAL_ORDER]).toEqual([
      'permission',
      'capabilities',
      'validate-args',
      'wants',
      'check-in',
      'credentials',
      'result-ceiling',
    ]);
    expect(canonicalChain().names()).toEqual([...CANONICAL_ORDER]);
  });

  it('with no permission checker the permission and capabilities gates allow, and the ledger says "no checker"', async () => {
    const outcome = as(
      await createDispatcher({ tools: [recording().tool], chain: canonicalChain() }).dispatch({
        toolName: 'echo',
      }),
      'result',
    );
    expect(outcome.ledger[0]).toMatchObject({ gate: 'permission', outcome: 'allow' });
    expect(outcome.ledger[0]!.why).toMatch(/no checker/);
    expect(outcome.ledger[1]).toMatchObject({ gate: 'capabilities', outcome: 'allow' });
  });

  it('use inserts just before validate-args in a canonical chain', () => {
    const chain = canonicalChain().use(pass('tenant-policy')).use(pass('audit'));
    expect(chain.names()).toEqual([
      'permission',
      'capabilities',
      'tenant-policy',
      'audit',
      'validate-args',
      'wants',
      'check-in',
      'credentials',
      'result-ceiling',
    ]);
  });

  it('use appends in a plain chain, but before any innermost middleware', () => {
    const plain = createChain([pass('a'), pass('inner', { innermost: true })]);
    expect(plain.use(pass('b')).names()).toEqual(['a', 'b', 'inner']);
    expect(
      createChain([pass('a')])
        .use(pass('b'))
        .names(),
    ).toEqual(['a', 'b']);
  });

  it('builder verbs return new chains and leave the original unchanged', () => {
    const base = canonicalChain();
    const before = base.names();
    const derived = [
      base.use(pass('x')),
      base.insertBefore('wants', pass('x')),
      base.insertAfter('permission', pass('x')),
      base.replace('permission', pass('my-permission')),
      base.remove('capabilities'),
    ];
    for (const chain of derived) expect(chain).not.toBe(base);
    expect(base.names()).toEqual(before);
    expect(derived[1]!.names().indexOf('x')).toBe(derived[1]!.names().indexOf('wants') - 1);
    expect(derived[2]!.names()[1]).toBe('x');
    expect(derived[3]!.names()[0]).toBe('my-permission');
    expect(derived[4]!.names()).not.toContain('capabilities');
  });

  it('a replaced gate runs in its place', async () => {
    const chain = canonicalChain().replace(
      'permission',
      mw('permission', async (ctx) => ctx.deny('replaced gate says no')),
    );
    const outcome = as(
      await createDispatcher({ tools: [recording().tool], chain }).dispatch({ toolName: 'echo' }),
      'refused',
    );
    expect(outcome.content).toContain('replaced gate says no');
  });

  it('a transform placed after validate-args throws ChainOrderError naming both middleware and the reason', () => {
    const transformer = pass('rewrite-args', { transformsArgs: true });
    let error: unknown;
    try {
      canonicalChain().insertAfter('check-in', transformer);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ChainOrderError);
    expect(String((error as Error).message)).toContain('rewrite-args');
    expect(String((error as Error).message)).toContain('validate-args');
  });

  it('a transform that declares after: validate-args itself (as wants does) may stand after it', () => {
    expect(() =>
      canonicalChain().insertAfter(
        'validate-args',
        pass('resolver', { transformsArgs: true, after: ['validate-args'] }),
      ),
    ).not.toThrow();
  });

  it('nothing may stand after the innermost result-ceiling', () => {
    expect(() => canonicalChain().insertAfter('result-ceiling', pass('late'))).toThrow(ChainOrderError);
    expect(() => canonicalChain().insertAfter('result-ceiling', pass('late'))).toThrow(
      /result-ceiling[\s\S]*late|late[\s\S]*result-ceiling/,
    );
  });

  it('credentials must stand after check-in', () => {
    const chain = canonicalChain().remove('check-in');
    expect(() => chain.insertAfter('credentials', pass('check-in'))).toThrow(ChainOrderError);
    expect(() => chain.insertAfter('credentials', pass('check-in'))).toThrow(/credentials[\s\S]*check-in/);
  });

  it('check-in must stand after wants and validate-args', () => {
    expect(() => canonicalChain().remove('wants').insertAfter('check-in', pass('wants'))).toThrow(
      ChainOrderError,
    );
    expect(() =>
      canonicalChain().remove('validate-args').insertAfter('check-in', pass('validate-args')),
    ).toThrow(ChainOrderError);
  });

  it('after constraints are vacuous when the other middleware is absent', () => {
    expect(canonicalChain().remove('check-in').names()).not.toContain('check-in');
    expect(canonicalChain().remove('validate-args').remove('wants').names()).toContain('check-in');
  });

  it('before constraints are checked by every verb', () => {
    expect(() => canonicalChain().use(pass('early', { before: ['permission'] }))).toThrow(ChainOrderError);
    expect(() =>
      canonicalChain().insertBefore('permission', pass('early', { before: ['permission'] })),
    ).not.toThrow();
  });

  it('ChainOrderError names every violation at once', () => {
    let error: unknown;
    try {
      createChain([pass('inner', { innermost: true }), pass('needs-c', { after: ['c'] }), pass('c')]);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ChainOrderError);
    const message = (error as Error).message;
    expect(message).toContain('inner');
    expect(message).toContain('needs-c');
  });

  it('an explicit { unsafeOrder: reason } as the last argument lets a verb break order', () => {
    const transformer = pass('rewrite-args', { transformsArgs: true });
    const chain = canonicalChain().insertAfter('check-in', transformer, {
      unsafeOrder: 'the rewrite is idempotent and pre-validated',
    });
    expect(chain.names()).toContain('rewrite-args');
    expect(
      canonicalChain()
        .insertAfter('result-ceiling', pass('late'), { unsafeOrder: 'measuring only' })
        .names()
        .at(-1),
    ).toBe('late');
    expect(
      createChain([pass('inner', { innermost: true }), pass('b')], { unsafeOrder: 'test' }).names(),
    ).toEqual(['inner', 'b']);
  });

  it("describe() returns the effective order with each middleware's constraints", () => {
    const described = canonicalChain().use(pass('tenant-policy')).describe();
    expect(described.map((d) => d.name)).toEqual([
      'permission',
      'capabilities',
      'tenant-policy',
      'validate-args',
      'wants',
      'check-in',
      'credentials',
      'result-ceiling',
    ]);
    const by = (name: string) => described.find((d) => d.name === name) as unknown as Record<string, unknown>;
    expect(by('check-in')['after']).toEqual(expect.arrayContaining(['validate-args', 'wants']));
    expect(by('credentials')['after']).toEqual(['check-in']);
    expect(by('result-ceiling')['innermost']).toBe(true);
    expect(by('wants')['transformsArgs']).toBe(true);
  });

  it("a chain built by createChain with checkIns carries a pause service: any middleware's ctx.ask signs with its key", async () => {
    const chain = createChain(
      [
        mw('approver', async (ctx, next) => {
          await ctx.ask('May I?');
          await next();
        }),
      ],
      { checkIns: { key: KEY } },
    );
    const dispatcher = createDispatcher({ tools: [recording().tool], chain });
    const paused = as(await dispatcher.dispatch({ toolName: 'echo' }), 'paused');
    expect(paused.checkIn.asker).toBe('approver');
    const { signature, ...unsigned } = paused.checkIn;
    expect(signature).toBe(await hmacHex(KEY, sortedJson(unsigned)));
    expect(as(await dispatcher.resume(paused.checkIn, checkInApproved({ by: 'ann' })), 'result').value).toBe(
      'ok',
    );
  });

  it('createChain with a checkIns store keeps requests in that store', async () => {
    const store = inMemoryCheckIns();
    const chain = createChain(
      [
        mw('approver', async (ctx, next) => {
          await ctx.ask('May I?');
          await next();
        }),
      ],
      { checkIns: { key: KEY, store, ttlMs: 60_000 } },
    );
    const paused = as(
      await createDispatcher({ tools: [recording().tool], chain }).dispatch({ toolName: 'echo' }),
      'paused',
    );
    expect((await store.get(paused.checkIn.id))?.state).toBe('pending');
    expect(Date.parse(paused.checkIn.expiresAt) - Date.parse(paused.checkIn.createdAt)).toBe(60_000);
  });
});

// ---------------------------------------------------------------------------------------------
describe('§5 dispatch', () => {
  it('createDispatcher returns dispatch, resume, schemas, on and off', () => {
    const dispatcher = createDispatcher({ tools: [recording().tool], chain: canonicalChain() });
    for (const verb of ['dispatch', 'resume', 'schemas', 'on', 'off'] as const)
      expect(typeof dispatcher[verb]).toBe('function');
  });

  it('schemas() is what the model sees: name, description, inputSchema, never needs', () => {
    const tool = recording('pay', { needs: { kind: 'api_key', service: 'billing' } }).tool;
    const schemas = createDispatcher({
      tools: [tool],
      chain: canonicalChain({ credentials: { resolve: () => ({ kind: 'api_key', value: 's' }) } }),
    }).schemas();
    expect(schemas).toEqual([{ name: 'pay', description: 'the pay tool', inputSchema: OPEN }]);
    expect(JSON.stringify(schemas)).not.toContain('billing');
  });

  it('args may arrive as a JSON string from a model', async () => {
    const { tool, calls } = recording();
    const outcome = await createDispatcher({ tools: [tool], chain: canonicalChain() }).dispatch({
      toolName: 'echo',
      args: '{"text":"from json"}',
    });
    expect(outcome.kind).toBe('result');
    expect(calls[0]!.args).toEqual({ text: 'from json' });
  });

  it.each([['{"text": '], ['not json'], ['[1,2]'], ['42']])(
    'args %j are a refusal the model can read, and the tool does not run',
    async (args) => {
      const { tool, calls } = recording();
      const outcome = as(
        await createDispatcher({ tools: [tool], chain: canonicalChain() }).dispatch({
          toolName: 'echo',
          args,
        }),
        'refused',
      );
      expect(outcome.content).toMatch(/^\[\w[\w-]* refused: /);
      expect(outcome.content).toMatch(/JSON|object/);
      expect(calls).toHaveLength(0);
    },
  );

  it('uses the toolCallId given, and makes one when none is', async () => {
    const dispatcher = createDispatcher({ tools: [recording().tool], chain: canonicalChain() });
    expect((await dispatcher.dispatch({ toolName: 'echo', toolCallId: 'tc-42' })).toolCallId).toBe('tc-42');
    const made = (await dispatcher.dispatch({ toolName: 'echo' })).toolCallId;
    expect(typeof made).toBe('string');
    expect(made.length).toBeGreaterThan(0);
  });

  it('opts.identity reaches the context and the checker', async () => {
    const requests: PermissionRequest[] = [];
    const { tool, calls } = recording();
    const chain = canonicalChain({
      permissions: {
        check: (request) => {
          requests.push(request);
          return { allow: true };
        },
      },
    });
    await createDispatcher({ tools: [tool], chain }).dispatch(
      { toolName: 'echo' },
      { identity: { tenant: 't1', principal: 'p1' } },
    );
    expect(requests[0]!.identity).toEqual({ tenant: 't1', principal: 'p1' });
    expect(calls[0]!.ctx.identity).toEqual({ tenant: 't1', principal: 'p1' });
  });

  it('the caller never picks the policy: a chain function chooses it per identity', async () => {
    const strict = canonicalChain({
      permissions: { check: () => ({ allow: false, reason: 'tenant b may not' }) },
    });
    const lenient = canonicalChain();
    const chooser = jest.fn((identity: Identity | undefined) =>
      identity?.tenant === 'b' ? strict : lenient,
    );
    const dispatcher = createDispatcher({ tools: [recording().tool], chain: chooser });
    const a = await dispatcher.dispatch({ toolName: 'echo' }, { identity: { tenant: 'a' } });
    const b = await dispatcher.dispatch({ toolName: 'echo' }, { identity: { tenant: 'b' } });
    expect(a.kind).toBe('result');
    expect(as(b, 'refused').content).toContain('tenant b may not');
    expect(a.chainId).not.toBe(b.chainId);
    expect(chooser).toHaveBeenCalledWith({ tenant: 'b' });
  });

  it('refuses duplicate tool names at build, naming the tool', () => {
    expect(() =>
      createDispatcher({ tools: [recording('twin').tool, recording('twin').tool], chain: canonicalChain() }),
    ).toThrow(/twin/);
  });

  it('refuses at build a wants tool with no artifact store, naming the tool', () => {
    const tool = recording('load', {
      inputSchema: { type: 'object', properties: { data: { type: 'string' } } },
      wants: { data: 'table' },
    }).tool;
    expect(() => createDispatcher({ tools: [tool], chain: canonicalChain() })).toThrow(/load/);
    expect(() =>
      createDispatcher({ tools: [tool], chain: canonicalChain({ artifacts: inMemoryArtifacts() }) }),
    ).not.toThrow();
  });

  it('refuses at build a needs tool with no credential provider, naming the tool', () => {
    const tool = recording('pay', { needs: { kind: 'api_key', service: 'billing' } }).tool;
    expect(() => createDispatcher({ tools: [tool], chain: canonicalChain() })).toThrow(/pay/);
  });

  it('refuses at build a checkIn tool with no check-in key, naming the tool', () => {
    const tool = recording('refund', { checkIn: 'always' }).tool;
    expect(() => createDispatcher({ tools: [tool], chain: canonicalChain() })).toThrow(/refund/);
    expect(() =>
      createDispatcher({ tools: [tool], chain: canonicalChain({ checkInKey: KEY }) }),
    ).not.toThrow();
  });

  it('refuses at build any gate whose checkTool answers, naming the tool', () => {
    const picky = pass('picky', {
      checkTool: (tool: Tool) => (tool.schema.name === 'odd' ? 'odd tools are not served' : undefined),
    });
    expect(() =>
      createDispatcher({ tools: [recording('odd').tool], chain: canonicalChain().use(picky) }),
    ).toThrow(/odd/);
    expect(() =>
      createDispatcher({ tools: [recording('even').tool], chain: canonicalChain().use(picky) }),
    ).not.toThrow();
  });

  it("runs the checks on a chain function's chain the first time it is returned, cached per chain", async () => {
    const checked = jest.fn(() => undefined);
    const tenantChains = new Map([
      ['a', canonicalChain().use(pass('a-policy', { checkTool: checked }))],
      ['b', canonicalChain().use(pass('b-policy', { checkTool: checked }))],
    ]);
    const dispatcher = createDispatcher({
      tools: [recording().tool],
      chain: (identity) => tenantChains.get(identity!.tenant!)!,
    });
    expect(checked).toHaveBeenCalledTimes(0);
    for (const tenant of ['a', 'a', 'b', 'a', 'b'])
      await dispatcher.dispatch({ toolName: 'echo' }, { identity: { tenant } });
    expect(checked).toHaveBeenCalledTimes(2);
  });

  it('a call whose per-tenant chain fails the checks is refused, an operator event says why, and other tenants still run', async () => {
    const tool = recording('pay', { needs: { kind: 'api_key', service: 'billing' } }).tool;
    const good = canonicalChain({ credentials: { resolve: () => ({ kind: 'api_key', value: 'k' }) } });
    const bad = canonicalChain();
    const dispatcher = createDispatcher({
      tools: [tool],
      chain: (identity) => (identity?.tenant === 'bad' ? bad : good),
      warn: () => undefined,
    });
    const rejected: SeenEvent[] = [];
    dispatcher.on('chain.rejected', (event) => rejected.push(event as unknown as SeenEvent));
    const refused = as(
      await dispatcher.dispatch({ toolName: 'pay' }, { identity: { tenant: 'bad' } }),
      'refused',
    );
    expect(refused.ran).toBe(false);
    expect(rejected).toHaveLength(1);
    expect(JSON.stringify(rejected[0])).toMatch(/pay/);
    expect(JSON.stringify(rejected[0])).toMatch(/credential/);
    expect((await dispatcher.dispatch({ toolName: 'pay' }, { identity: { tenant: 'good' } })).kind).toBe(
      'result',
    );
  });

  it('a chain function that throws refuses the call instead of throwing', async () => {
    const dispatcher = createDispatcher({
      tools: [recording().tool],
      chain: () => {
        throw new Error('tenant db down');
      },
      warn: () => undefined,
    });
    const outcome = as(
      await dispatcher.dispatch({ toolName: 'echo' }, { identity: { tenant: 'x' } }),
      'refused',
    );
    expect(outcome.ran).toBe(false);
    expect(outcome.content).not.toContain('tenant db down');
  });

  it('dispatch never throws for anything the model sent', async () => {
    const dispatcher = createDispatcher({ tools: [recording().tool], chain: canonicalChain() });
    const odd: unknown[] = [
      null,
      undefined,
      42,
      {},
      { toolName: 7 },
      { toolName: 'echo', args: 5 },
      { toolName: 'echo', args: null },
      { toolName: '../etc' },
    ];
    for (const call of odd) {
      const outcome = await dispatcher.dispatch(call as never);
      expect(outcome.kind).toBe('refused');
    }
  });

  it('an unknown tool is refused by gate dispatch, listing the known tool names', async () => {
    const dispatcher = createDispatcher({
      tools: [recording('alpha').tool, recording('beta').tool],
      chain: canonicalChain(),
    });
    const outcome = as(await dispatcher.dispatch({ toolName: 'gamma' }), 'refused');
    expect(outcome.gate).toBe('dispatch');
    expect(outcome.content).toContain('alpha');
    expect(outcome.content).toContain('beta');
    expect(outcome.ran).toBe(false);
    expect(outcome.ledger.length).toBeGreaterThan(0);
  });

  it('outcomes carry their fields: result {value, content, ledger}; refused {gate, reason, content, ledger}; failed {error, content, ledger}', async () => {
    const dispatcher = createDispatcher({
      tools: [
        recording('ok', {}, () => ({ n: 1 })).tool,
        recording('bad', {}, () => {
          throw new Error('broke');
        }).tool,
      ],
      chain: canonicalChain(),
    });
    const result = as(await dispatcher.dispatch({ toolName: 'ok', toolCallId: 'a' }), 'result');
    expect(result).toMatchObject({
      kind: 'result',
      value: { n: 1 },
      content: '{"n":1}',
      toolName: 'ok',
      toolCallId: 'a',
      ran: true,
    });
    expect(Array.isArray(result.ledger)).toBe(true);
    expect(typeof result.chainId).toBe('string');
    const failed = as(await dispatcher.dispatch({ toolName: 'bad' }), 'failed');
    expect(failed.error).toEqual({ name: 'Error', message: 'broke' });
    expect(failed.content).toContain('broke');
    expect(failed.ran).toBe(true);
    const refused = as(await dispatcher.dispatch({ toolName: 'zzz' }), 'refused');
    expect(typeof refused.gate).toBe('string');
    expect(typeof refused.reason).toBe('string');
    expect(refused.content).toContain(refused.reason);
  });

  it.each([
    ['a BigInt', () => ({ n: 10n })],
    [
      'a cycle',
      () => {
        const a: Record<string, unknown> = {};
        a['self'] = a;
        return a;
      },
    ],
    [
      'a throwing toJSON',
      () => ({
        toJSON() {
          throw new Error('nope');
        },
      }),
    ],
  ])('a result with %s is failed, with a reason', async (_what, respond) => {
    const outcome = as(
      await createDispatcher({
        tools: [recording('odd', {}, respond).tool],
        chain: canonicalChain(),
      }).dispatch({ toolName: 'odd' }),
      'failed',
    );
    expect(outcome.ran).toBe(true);
    expect(outcome.error.message.length).toBeGreaterThan(0);
    expect(outcome.content.length).toBeGreaterThan(0);
  });

  it("a tool's error message has every credential value resolved for the call replaced by [redacted]", async () => {
    const secret = 'sk_live_SUPERSECRET';
    const tool = recording('pay', { needs: { kind: 'api_key', service: 'billing' } }, (_args, ctx) => {
      throw new Error(`upstream rejected key ${String(ctx.credential?.reveal())} for account`);
    }).tool;
    const credentials: CredentialProvider = { resolve: () => ({ kind: 'api_key', value: secret }) };
    const outcome = as(
      await createDispatcher({ tools: [tool], chain: canonicalChain({ credentials }) }).dispatch({
        toolName: 'pay',
      }),
      'failed',
    );
    expect(outcome.error.message).toContain('[redacted]');
    expect(outcome.error.message).not.toContain(secret);
    expect(JSON.stringify(outcome)).not.toContain(secret);
  });

  it('redacts every value of a multi-part credential', async () => {
    const tool = recording('login', { needs: { kind: 'basic', service: 'crm' } }, () => {
      throw new Error('bad login admin-user / p4ssw0rd-xyz');
    }).tool;
    const credentials: CredentialProvider = {
      resolve: () => ({ kind: 'basic', value: { username: 'admin-user', password: 'p4ssw0rd-xyz' } }),
    };
    const outcome = as(
      await createDispatcher({ tools: [tool], chain: canonicalChain({ credentials }) }).dispatch({
        toolName: 'login',
      }),
      'failed',
    );
    expect(outcome.error.message).not.toContain('admin-user');
    expect(outcome.error.message).not.toContain('p4ssw0rd-xyz');
  });

  it('chainId is stable for the same chain configuration and differs with names, fingerprints and order', async () => {
    const run = async (chain: Chain) =>
      (await createDispatcher({ tools: [recording().tool], chain }).dispatch({ toolName: 'echo' })).chainId;
    const a = await run(canonicalChain());
    expect(await run(canonicalChain())).toBe(a);
    expect(typeof a).toBe('string');
    expect(a.length).toBeGreaterThan(0);
    expect(a.length).toBeLessThanOrEqual(64);
    expect(await run(canonicalChain({ defaultMaxChars: 1000 }))).not.toBe(a);
    expect(await run(canonicalChain().use(pass('x')))).not.toBe(a);
    const ab = await run(createChain([pass('a'), pass('b')]));
    const ba = await run(createChain([pass('b'), pass('a')]));
    expect(ab).not.toBe(ba);
    expect(await run(createChain([pass('a', { fingerprint: 'one' })]))).not.toBe(
      await run(createChain([pass('a', { fingerprint: 'two' })])),
    );
  });

  it('every outcome kind carries chainId', async () => {
    const chain = canonicalChain({ checkInKey: KEY });
    const dispatcher = createDispatcher({
      tools: [
        recording().tool,
        recording('ask', { checkIn: 'always' }).tool,
        recording('boom', {}, () => {
          throw new Error('x');
        }).tool,
      ],
      chain,
    });
    const outcomes = [
      await dispatcher.dispatch({ toolName: 'echo' }),
      await dispatcher.dispatch({ toolName: 'ask' }),
      await dispatcher.dispatch({ toolName: 'boom' }),
      await dispatcher.dispatch({ toolName: 'nope' }),
    ];
    expect(outcomes.map((o) => o.kind)).toEqual(['result', 'paused', 'failed', 'refused']);
    expect(new Set(outcomes.map((o) => o.chainId)).size).toBe(1);
  });
});

// ---------------------------------------------------------------------------------------------
describe('§6 check-in: pause and resume', () => {
  const refundSchema = {
    type: 'object',
    properties: { amount: { type: 'number' }, note: { type: 'string' } },
    required: ['amount'],
  };

  function refundSetup(options: Parameters<typeof canonicalChain>[0] = {}, declarations: Declarations = {}) {
    const store = options.checkIns ?? inMemoryCheckIns();
    const { tool, calls } = recording(
      'refund',
      { inputSchema: refundSchema, checkIn: 'always', ...declarations },
      (args) => ({ refunded: args['amount'] }),
    );
    const chain = canonicalChain({ checkInKey: KEY, checkIns: store, ...options });
    const dispatcher = createDispatcher({ tools: [tool], chain });
    return { dispatcher, calls, store, chain };
  }

  it('a tripped check-in returns paused with a JSON-serializable CheckInRequest carrying every field', async () => {
    const { dispatcher, calls } = refundSetup(
      { evidence: (ctx) => ({ amount: ctx.args['amount'], policy: 'refunds > 0' }) },
      { checkInComponent: { id: 'refund-form', props: { currency: 'EUR' } } },
    );
    const outcome = as(
      await dispatcher.dispatch(
        { toolName: 'refund', args: { amount: 40 }, toolCallId: 'call-r' },
        { identity: { tenant: 'acme', principal: 'bot' } },
      ),
      'paused',
    );
    expect(calls).toHaveLength(0);
    expect(outcome.ran).toBe(false);
    const request = outcome.checkIn;
    expect(JSON.parse(JSON.stringify(request))).toEqual(request);
    expect(request).toMatchObject({
      asker: 'check-in',
      toolName: 'refund',
      toolCallId: 'call-r',
      args: { amount: 40 },
      review: { amount: 40 },
      chainId: outcome.chainId,
      evidence: { amount: 40, policy: 'refunds > 0' },
      component: { id: 'refund-form', props: { currency: 'EUR' } },
      identity: { tenant: 'acme', principal: 'bot' },
    });
    expect(typeof request.id).toBe('string');
    expect(typeof request.question).toBe('string');
    expect(request.question.length).toBeGreaterThan(0);
    expect('toolSource' in request).toBe(false);
    expect('receipts' in request).toBe(false);
    expect(outcome.ledger.at(-1)).toMatchObject({ gate: 'check-in', outcome: 'ask' });
  });

  it('times are ISO 8601, the lifetime defaults to 15 minutes, and checkInTtlMs changes it', async () => {
    const iso = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;
    const first = as(
      await refundSetup().dispatcher.dispatch({ toolName: 'refund', args: { amount: 1 } }),
      'paused',
    ).checkIn;
    expect(first.createdAt).toMatch(iso);
    expect(first.expiresAt).toMatch(iso);
    expect(Date.parse(first.expiresAt) - Date.parse(first.createdAt)).toBe(15 * 60 * 1000);
    const short = as(
      await refundSetup({ checkInTtlMs: 30_000 }).dispatcher.dispatch({
        toolName: 'refund',
        args: { amount: 1 },
      }),
      'paused',
    ).checkIn;
    expect(Date.parse(short.expiresAt) - Date.parse(short.createdAt)).toBe(30_000);
  });

  it('signature is lowercase hex HMAC-SHA-256 over the canonical JSON of the request without signature', async () => {
    const request = as(
      await refundSetup().dispatcher.dispatch({ toolName: 'refund', args: { note: 'n', amount: 3 } }),
      'paused',
    ).checkIn;
    expect(request.signature).toMatch(/^[0-9a-f]{64}$/);
    const { signature, ...unsigned } = request;
    expect(signature).toBe(await hmacHex(KEY, sortedJson(unsigned)));
  });

  it('a Uint8Array check-in key signs the same way', async () => {
    const bytes = encoder.encode(KEY);
    const request = as(
      await refundSetup({ checkInKey: bytes }).dispatcher.dispatch({
        toolName: 'refund',
        args: { amount: 3 },
      }),
      'paused',
    ).checkIn;
    const { signature, ...unsigned } = request;
    expect(signature).toBe(await hmacHex(KEY, sortedJson(unsigned)));
  });

  it('argsDigest is the SHA-256 of review as canonical JSON (sorted keys)', async () => {
    const request = as(
      await refundSetup().dispatcher.dispatch({ toolName: 'refund', args: { note: 'zz', amount: 7 } }),
      'paused',
    ).checkIn;
    expect(request.argsDigest).toBe(await sha256Hex(sortedJson(request.review)));
    expect(request.argsDigest).toBe(await sha256Hex('{"amount":7,"note":"zz"}'));
  });

  it("args are the call's args as dispatched; review is the final args as they reached the asker", async () => {
    const { tool } = recording('refund', { inputSchema: refundSchema, checkIn: 'always' });
    const chain = canonicalChain({ checkInKey: KEY }).use(
      mw(
        'round',
        async (ctx, next) => {
          ctx.setArgs({ ...ctx.args, amount: Math.round(Number(ctx.args['amount'])) }, 'rounded');
          await next();
        },
        { transformsArgs: true },
      ),
    );
    const request = as(
      await createDispatcher({ tools: [tool], chain }).dispatch({
        toolName: 'refund',
        args: '{"amount": 9.7}',
      }),
      'paused',
    ).checkIn;
    expect(request.args).toEqual({ amount: 9.7 });
    expect(request.review).toEqual({ amount: 10 });
  });

  it('a resolved artifact is shown in review by its ref, while the tool receives its data', async () => {
    const artifacts = inMemoryArtifacts();
    const ref = await artifacts.put({ tenant: 't' }, { kind: 'table', data: [1, 2, 3] });
    const { tool, calls } = recording('load', {
      inputSchema: { type: 'object', properties: { data: { type: 'string' } }, required: ['data'] },
      wants: { data: 'table' },
      checkIn: 'always',
    });
    const dispatcher = createDispatcher({
      tools: [tool],
      chain: canonicalChain({ checkInKey: KEY, artifacts }),
    });
    const paused = as(
      await dispatcher.dispatch({ toolName: 'load', args: { data: ref } }, { identity: { tenant: 't' } }),
      'paused',
    );
    expect(paused.checkIn.review).toEqual({ data: ref });
    expect(paused.checkIn.args).toEqual({ data: ref });
    expect(as(await dispatcher.resume(paused.checkIn, checkInApproved({ by: 'ann' })), 'result').kind).toBe(
      'result',
    );
    expect(calls[0]!.args).toEqual({ data: [1, 2, 3] });
  });

  it('resume with an approval re-runs the chain from the top, answers the ask, and runs the tool once', async () => {
    const requests: PermissionRequest[] = [];
    const { dispatcher, calls } = refundSetup({
      permissions: {
        check: (r) => {
          requests.push(r);
          return { allow: true };
        },
      },
    });
    const paused = as(await dispatcher.dispatch({ toolName: 'refund', args: { amount: 5 } }), 'paused');
    const outcome = as(
      await dispatcher.resume(paused.checkIn, checkInApproved({ by: 'ann', note: 'fine' })),
      'result',
    );
    expect(outcome.value).toEqual({ refunded: 5 });
    expect(calls).toHaveLength(1);
    expect(calls[0]!.ctx.resumed).toBe(true);
    expect(calls[0]!.ctx.checkIn).toMatchObject({ approved: true, by: 'ann' });
    expect(requests).toHaveLength(2);
    expect(outcome.toolCallId).toBe(paused.toolCallId);
  });

  it('an approval yields a receipt on the outcome and in the store: who, when, the digest and both chainIds', async () => {
    const { dispatcher, store } = refundSetup();
    const paused = as(await dispatcher.dispatch({ toolName: 'refund', args: { amount: 5 } }), 'paused');
    const outcome = as(
      await dispatcher.resume(paused.checkIn, checkInApproved({ by: 'ann', note: 'ok by me' })),
      'result',
    );
    expect(outcome.receipts).toHaveLength(1);
    const receipt = outcome.receipts![0]! as unknown as Record<string, unknown>;
    const text = JSON.stringify(receipt);
    expect(text).toContain('ann');
    expect(text).toContain(paused.checkIn.argsDigest);
    expect(text).toContain(paused.checkIn.chainId);
    expect(text).toContain(outcome.chainId);
    expect(
      Object.values(receipt).some((value) => typeof value === 'string' && /^\d{4}-\d{2}-\d{2}T/.test(value)),
    ).toBe(true);
    const record = await store.get(paused.checkIn.id);
    expect(record?.state).toBe('consumed');
    expect(record?.receipt).toEqual(outcome.receipts![0]);
  });

  it('a request that travelled as JSON (a UI, a queue, a database) resumes', async () => {
    const { dispatcher } = refundSetup();
    const paused = as(await dispatcher.dispatch({ toolName: 'refund', args: { amount: 5 } }), 'paused');
    const travelled = JSON.parse(JSON.stringify(paused.checkIn)) as CheckInRequest;
    expect((await dispatcher.resume(travelled, checkInApproved({ by: 'ann' }))).kind).toBe('result');
  });

  it('each request is single use: a second resume is refused and the tool does not run again', async () => {
    const { dispatcher, calls } = refundSetup();
    const paused = as(await dispatcher.dispatch({ toolName: 'refund', args: { amount: 5 } }), 'paused');
    expect((await dispatcher.resume(paused.checkIn, checkInApproved({ by: 'ann' }))).kind).toBe('result');
    const again = await dispatcher.resume(paused.checkIn, checkInApproved({ by: 'ann' }));
    expect(again.kind).toBe('refused');
    expect(calls).toHaveLength(1);
  });

  it('concurrent resumes of one request run the tool once', async () => {
    const { dispatcher, calls } = refundSetup();
    const paused = as(await dispatcher.dispatch({ toolName: 'refund', args: { amount: 5 } }), 'paused');
    const outcomes = await Promise.all(
      [1, 2, 3, 4].map(() => dispatcher.resume(paused.checkIn, checkInApproved({ by: 'ann' }))),
    );
    expect(outcomes.filter((o) => o.kind === 'result')).toHaveLength(1);
    expect(calls).toHaveLength(1);
  });

  it.each([
    ['its args changed', (r: CheckInRequest) => ({ ...r, args: { amount: 5000 } })],
    [
      'its review and digest changed',
      (r: CheckInRequest) => ({ ...r, review: { amount: 5000 }, argsDigest: '0'.repeat(64) }),
    ],
    ['its signature changed', (r: CheckInRequest) => ({ ...r, signature: 'f'.repeat(64) })],
    ['its asker changed', (r: CheckInRequest) => ({ ...r, asker: 'permission' })],
    ['its expiry was pushed out', (r: CheckInRequest) => ({ ...r, expiresAt: '2999-01-01T00:00:00.000Z' })],
  ])('a request whose %s is refused by resume, and the tool does not run', async (_what, tamper) => {
    const { dispatcher, calls } = refundSetup();
    const paused = as(await dispatcher.dispatch({ toolName: 'refund', args: { amount: 5 } }), 'paused');
    const outcome = await dispatcher.resume(tamper(paused.checkIn), checkInApproved({ by: 'ann' }));
    expect(outcome.kind).toBe('refused');
    expect(calls).toHaveLength(0);
  });

  it('resume verifies with the chain it resumes under: another key refuses', async () => {
    const { dispatcher } = refundSetup();
    const paused = as(await dispatcher.dispatch({ toolName: 'refund', args: { amount: 5 } }), 'paused');
    const other = createDispatcher({
      tools: [recording('refund', { inputSchema: refundSchema, checkIn: 'always' }).tool],
      chain: canonicalChain({ checkInKey: 'another-key-entirely-0123456789abcdef' }),
    });
    expect((await other.resume(paused.checkIn, checkInApproved({ by: 'ann' }))).kind).toBe('refused');
  });

  it('an expired request is refused by resume', async () => {
    const clock = fixedClock();
    const { tool, calls } = recording('refund', { inputSchema: refundSchema, checkIn: 'always' });
    const dispatcher = createDispatcher({
      tools: [tool],
      chain: canonicalChain({ checkInKey: KEY, checkInTtlMs: 60_000 }),
      clock: clock.now,
    });
    const paused = as(await dispatcher.dispatch({ toolName: 'refund', args: { amount: 5 } }), 'paused');
    clock.advance(60_001);
    const outcome = as(await dispatcher.resume(paused.checkIn, checkInApproved({ by: 'ann' })), 'refused');
    expect(outcome.content).toMatch(/expired/);
    expect(calls).toHaveLength(0);
  });

  it('gates before the asker run again: a permission revoked while the human was away is honored', async () => {
    let allowed = true;
    const { dispatcher, calls } = refundSetup({
      permissions: { check: () => (allowed ? { allow: true } : { allow: false, reason: 'refunds frozen' }) },
    });
    const paused = as(await dispatcher.dispatch({ toolName: 'refund', args: { amount: 5 } }), 'paused');
    allowed = false;
    const outcome = as(await dispatcher.resume(paused.checkIn, checkInApproved({ by: 'ann' })), 'refused');
    expect(outcome.gate).toBe('permission');
    expect(outcome.content).toContain('refunds frozen');
    expect(calls).toHaveLength(0);
  });

  it("a declined check-in is refused, and the model reads the human's reason", async () => {
    const { dispatcher, calls } = refundSetup();
    const paused = as(await dispatcher.dispatch({ toolName: 'refund', args: { amount: 5 } }), 'paused');
    const outcome = as(
      await dispatcher.resume(
        paused.checkIn,
        checkInDeclined({ by: 'ann', reason: 'customer already refunded twice' }),
      ),
      'refused',
    );
    expect(outcome.content).toContain('customer already refunded twice');
    expect(outcome.ran).toBe(false);
    expect(calls).toHaveLength(0);
  });

  it('checkInApproved and checkInDeclined build decisions from { by, note? } and { by, reason }', () => {
    expect(checkInApproved({ by: 'ann' })).toMatchObject({ approved: true, by: 'ann' });
    expect(checkInApproved({ by: 'ann', note: 'n' })).toMatchObject({ approved: true, by: 'ann', note: 'n' });
    expect(checkInDeclined({ by: 'bob', reason: 'no' })).toMatchObject({
      approved: false,
      by: 'bob',
      reason: 'no',
    });
  });

  it('the ask is answered only if the final args arriving now match the approved digest', async () => {
    let suffix = 'a';
    const { tool, calls } = recording('refund', { inputSchema: refundSchema, checkIn: 'always' });
    const chain = canonicalChain({ checkInKey: KEY }).use(
      mw(
        'stamp',
        async (ctx, next) => {
          ctx.setArgs({ ...ctx.args, note: `run-${suffix}` }, 'stamped');
          await next();
        },
        { transformsArgs: true },
      ),
    );
    const dispatcher = createDispatcher({ tools: [tool], chain });
    const paused = as(await dispatcher.dispatch({ toolName: 'refund', args: { amount: 5 } }), 'paused');
    suffix = 'b';
    const outcome = as(await dispatcher.resume(paused.checkIn, checkInApproved({ by: 'ann' })), 'refused');
    expect(outcome.gate).toBe('check-in');
    expect(calls).toHaveLength(0);
  });

  it('a resumed run that never reaches its asker is refused', async () => {
    let ask = true;
    const { tool, calls } = recording('refund', { inputSchema: refundSchema, checkIn: () => ask });
    const dispatcher = createDispatcher({ tools: [tool], chain: canonicalChain({ checkInKey: KEY }) });
    const paused = as(await dispatcher.dispatch({ toolName: 'refund', args: { amount: 5 } }), 'paused');
    ask = false;
    expect((await dispatcher.resume(paused.checkIn, checkInApproved({ by: 'ann' }))).kind).toBe('refused');
    expect(calls).toHaveLength(0);
  });

  it('a checkIn predicate that answers false lets the call through without asking', async () => {
    const { tool, calls } = recording('refund', {
      inputSchema: refundSchema,
      checkIn: (args) => Number(args['amount']) > 100,
    });
    const dispatcher = createDispatcher({ tools: [tool], chain: canonicalChain({ checkInKey: KEY }) });
    expect((await dispatcher.dispatch({ toolName: 'refund', args: { amount: 5 } })).kind).toBe('result');
    expect((await dispatcher.dispatch({ toolName: 'refund', args: { amount: 500 } })).kind).toBe('paused');
    expect(calls).toHaveLength(1);
  });

  it('any middleware can ask; a later, different ask pauses again carrying signed receipts, and the next resume answers both', async () => {
    const answers: unknown[] = [];
    const { tool, calls } = recording('refund', { inputSchema: refundSchema, checkIn: 'always' });
    const chain = canonicalChain({ checkInKey: KEY }).use(
      mw('manager-policy', async (ctx, next) => {
        answers.push(await ctx.ask('Manager: allow refunds today?', { day: 'monday' }));
        await next();
      }),
    );
    const dispatcher = createDispatcher({ tools: [tool], chain });
    const first = as(await dispatcher.dispatch({ toolName: 'refund', args: { amount: 5 } }), 'paused');
    expect(first.checkIn.asker).toBe('manager-policy');
    expect(first.checkIn.question).toBe('Manager: allow refunds today?');
    expect(first.checkIn.evidence).toEqual({ day: 'monday' });
    const second = as(await dispatcher.resume(first.checkIn, checkInApproved({ by: 'manager' })), 'paused');
    expect(second.checkIn.asker).toBe('check-in');
    expect(second.checkIn.id).not.toBe(first.checkIn.id);
    expect(second.checkIn.receipts).toHaveLength(1);
    expect(JSON.stringify(second.checkIn.receipts)).toContain('manager');
    const { signature, ...unsigned } = second.checkIn;
    expect(signature).toBe(await hmacHex(KEY, sortedJson(unsigned)));
    const done = as(await dispatcher.resume(second.checkIn, checkInApproved({ by: 'clerk' })), 'result');
    expect(done.receipts).toHaveLength(2);
    expect(calls).toHaveLength(1);
    expect(answers).toEqual([
      expect.objectContaining({ approved: true, by: 'manager' }),
      expect.objectContaining({ approved: true, by: 'manager' }),
    ]);
    expect((await dispatcher.resume(first.checkIn, checkInApproved({ by: 'manager' }))).kind).toBe('refused');
    expect((await dispatcher.resume(second.checkIn, checkInApproved({ by: 'clerk' }))).kind).toBe('refused');
  });

  it('a chain without a pause service cannot pause: an ask there is refused, not thrown', async () => {
    const chain = createChain([
      mw('approver', async (ctx, next) => {
        await ctx.ask('May I?');
        await next();
      }),
    ]);
    const outcome = await createDispatcher({ tools: [recording().tool], chain }).dispatch({
      toolName: 'echo',
    });
    expect(outcome.kind).toBe('refused');
  });

  it('CheckInStore: put, get, consume exactly once, list by filter, revoke', async () => {
    const { dispatcher } = refundSetup();
    const store = inMemoryCheckIns();
    const request = as(
      await dispatcher.dispatch(
        { toolName: 'refund', args: { amount: 5 } },
        { identity: { tenant: 'acme' } },
      ),
      'paused',
    ).checkIn;
    await store.put(request);
    expect((await store.get(request.id))?.request).toEqual(request);
    expect(await store.get('chk_missing')).toBeUndefined();
    expect((await store.list({ tenant: 'acme' })).map((r) => r.request.id)).toEqual([request.id]);
    expect(await store.list({ tenant: 'other' })).toEqual([]);
    expect(await store.consume(request.id)).toBe(true);
    expect(await store.consume(request.id)).toBe(false);
    expect(await store.revoke(request.id)).toBe(false);
    expect((await store.list({ state: 'consumed' })).map((r) => r.request.id)).toEqual([request.id]);
  });

  it('a revoked request cannot be resumed', async () => {
    const { dispatcher, store, calls } = refundSetup();
    const paused = as(await dispatcher.dispatch({ toolName: 'refund', args: { amount: 5 } }), 'paused');
    expect(await store.revoke(paused.checkIn.id)).toBe(true);
    expect((await dispatcher.resume(paused.checkIn, checkInApproved({ by: 'ann' }))).kind).toBe('refused');
    expect(calls).toHaveLength(0);
  });

  it('a check-in store that throws on put refuses with a named, retryable refusal; the tool does not run', async () => {
    const failing: CheckInStore = {
      ...inMemoryCheckIns(),
      put: async () => {
        throw new Error('db down at 10.0.0.7');
      },
    };
    const { dispatcher, calls } = refundSetup({ checkIns: failing });
    const outcome = as(await dispatcher.dispatch({ toolName: 'refund', args: { amount: 5 } }), 'refused');
    expect(outcome.retryable).toBe(true);
    expect(outcome.content).toMatch(/store/);
    expect(outcome.content).not.toContain('10.0.0.7');
    expect(calls).toHaveLength(0);
  });

  it('a check-in store that never answers is refused at the per-gate deadline', async () => {
    const hanging: CheckInStore = { ...inMemoryCheckIns(), put: () => new Promise(() => undefined) };
    const { dispatcher, calls } = refundSetup({ checkIns: hanging, deadlineMs: 20 });
    const outcome = as(await dispatcher.dispatch({ toolName: 'refund', args: { amount: 5 } }), 'refused');
    expect(outcome.retryable).toBe(true);
    expect(calls).toHaveLength(0);
  });

  it('an evidence builder that throws refuses the check-in without leaking its message', async () => {
    const { dispatcher, calls } = refundSetup({
      evidence: () => {
        throw new Error('crm password=abc');
      },
    });
    const outcome = as(await dispatcher.dispatch({ toolName: 'refund', args: { amount: 5 } }), 'refused');
    expect(outcome.gate).toBe('check-in');
    expect(outcome.content).not.toContain('password');
    expect(calls).toHaveLength(0);
  });

  it('a check-in store that throws on consume refuses the resume with a retryable refusal', async () => {
    const inner = inMemoryCheckIns();
    const failing: CheckInStore = {
      ...inner,
      consume: async () => {
        throw new Error('db down');
      },
    };
    const { dispatcher, calls } = refundSetup({ checkIns: failing });
    const paused = as(await dispatcher.dispatch({ toolName: 'refund', args: { amount: 5 } }), 'paused');
    const outcome = as(await dispatcher.resume(paused.checkIn, checkInApproved({ by: 'ann' })), 'refused');
    expect(outcome.retryable).toBe(true);
    expect(calls).toHaveLength(0);
  });

  it('the SQLite CheckInStore serves the pause service, and a fresh process (new chain, same key and file) resumes', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'toolgate-contract-'));
    try {
      const path = join(dir, 'check-ins.db');
      const firstStore = sqliteCheckIns({ path });
      const first = refundSetup({ checkIns: firstStore });
      const paused = as(
        await first.dispatcher.dispatch({ toolName: 'refund', args: { amount: 5 } }),
        'paused',
      );
      firstStore.close();
      const secondStore = sqliteCheckIns({ path });
      const second = refundSetup({ checkIns: secondStore });
      const outcome = as(
        await second.dispatcher.resume(paused.checkIn, checkInApproved({ by: 'ann' })),
        'result',
      );
      expect(second.calls).toHaveLength(1);
      expect((await secondStore.get(paused.checkIn.id))?.receipt).toEqual(outcome.receipts![0]);
      expect((await second.dispatcher.resume(paused.checkIn, checkInApproved({ by: 'ann' }))).kind).toBe(
        'refused',
      );
      secondStore.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('credentials are resolved only after consent: not while paused, only on the approved resume', async () => {
    const resolve = jest.fn(() => ({ kind: 'api_key', value: 'k-123' }));
    const { dispatcher, calls } = refundSetup(
      { credentials: { resolve } },
      { needs: { kind: 'api_key', service: 'billing' } },
    );
    const paused = as(await dispatcher.dispatch({ toolName: 'refund', args: { amount: 5 } }), 'paused');
    expect(resolve).not.toHaveBeenCalled();
    await dispatcher.resume(paused.checkIn, checkInApproved({ by: 'ann' }));
    expect(resolve).toHaveBeenCalledTimes(1);
    expect(calls[0]!.secret).toBe('k-123');
  });

  it("a request raised under one tenant's chain resumes under that tenant's chain", async () => {
    const chains = new Map([
      ['a', canonicalChain({ checkInKey: KEY })],
      ['b', canonicalChain({ checkInKey: KEY, defaultMaxChars: 5000 })],
    ]);
    const { tool } = recording('refund', { inputSchema: refundSchema, checkIn: 'always' });
    const dispatcher = createDispatcher({
      tools: [tool],
      chain: (identity) => chains.get(identity?.tenant ?? 'a')!,
    });
    const paused = as(
      await dispatcher.dispatch({ toolName: 'refund', args: { amount: 5 } }, { identity: { tenant: 'b' } }),
      'paused',
    );
    const outcome = as(await dispatcher.resume(paused.checkIn, checkInApproved({ by: 'ann' })), 'result');
    expect(outcome.chainId).toBe(paused.chainId);
  });
});

// ---------------------------------------------------------------------------------------------
describe('§7 permission and capabilities', () => {
  it('the checker is asked { capability: "tool_call", target, toolSource, identity, args }', async () => {
    const requests: PermissionRequest[] = [];
    const permissions: PermissionChecker = {
      check: (r) => {
        requests.push(r);
        return { allow: true };
      },
    };
    const imported: Tool = {
      schema: { name: 'remote', description: 'd', inputSchema: OPEN },
      execute: () => 'ok',
      source: 'docs',
    };
    const dispatcher = createDispatcher({
      tools: [recording().tool, imported],
      chain: canonicalChain({ permissions }),
    });
    await dispatcher.dispatch({ toolName: 'echo', args: { text: 'a' } }, { identity: { tenant: 't' } });
    await dispatcher.dispatch({ toolName: 'remote', args: { text: 'b' } });
    expect(requests[0]).toMatchObject({
      capability: 'tool_call',
      target: 'echo',
      identity: { tenant: 't' },
      args: { text: 'a' },
    });
    expect('toolSource' in requests[0]!).toBe(false);
    expect(requests[1]).toMatchObject({
      capability: 'tool_call',
      target: 'remote',
      toolSource: 'docs',
      args: { text: 'b' },
    });
  });

  it("a denial refuses by gate permission with the checker's reason; the tool does not run", async () => {
    const { tool, calls } = recording();
    const outcome = as(
      await createDispatcher({
        tools: [tool],
        chain: canonicalChain({
          permissions: { check: () => ({ allow: false, reason: 'interns may not echo' }) },
        }),
      }).dispatch({ toolName: 'echo' }),
      'refused',
    );
    expect(outcome.gate).toBe('permission');
    expect(outcome.content).toContain('interns may not echo');
    expect(calls).toHaveLength(0);
  });

  it.each([
    [
      'throws',
      () => {
        throw new Error('LDAP at 10.1.1.1 down');
      },
    ],
    ['rejects', () => Promise.reject(new Error('LDAP at 10.1.1.1 down'))],
    ['answers null', () => null],
    ['answers undefined', () => undefined],
    ['answers { allow: "yes" }', () => ({ allow: 'yes' })],
    ['answers { allow: 1 }', () => ({ allow: 1 })],
    ['answers { allow: false } without a reason', () => ({ allow: false })],
    ['answers a string', () => 'allow'],
  ])('a checker that %s denies, without leaking its message', async (_what, check) => {
    const { tool, calls } = recording();
    const permissions = { check } as unknown as PermissionChecker;
    const outcome = as(
      await createDispatcher({ tools: [tool], chain: canonicalChain({ permissions }) }).dispatch({
        toolName: 'echo',
      }),
      'refused',
    );
    expect(outcome.gate).toBe('permission');
    expect(outcome.content).not.toContain('10.1.1.1');
    expect(calls).toHaveLength(0);
  });

  it('a checker that exceeds its per-gate deadline denies', async () => {
    const { tool, calls } = recording();
    const permissions: PermissionChecker = { check: () => new Promise(() => undefined) };
    const outcome = as(
      await createDispatcher({
        tools: [tool],
        chain: canonicalChain({ permissions, deadlineMs: 20 }),
      }).dispatch({ toolName: 'echo' }),
      'refused',
    );
    expect(outcome.gate).toBe('permission');
    expect(calls).toHaveLength(0);
  });

  it('a capability is asked about only when the tool declares it AND the checker governs it', async () => {
    const asked: string[] = [];
    const permissions: PermissionChecker = {
      governs: ['payments', 'filesystem'],
      check: (r) => {
        asked.push(r.capability);
        return { allow: true };
      },
    };
    const tool = recording('pay', { capabilities: ['payments', 'external_net'] }).tool;
    await createDispatcher({
      tools: [tool, recording('plain').tool],
      chain: canonicalChain({ permissions }),
    }).dispatch({ toolName: 'pay' });
    expect(asked).toEqual(['tool_call', 'payments']);
  });

  it('a capability denial refuses by gate capabilities, naming the capability', async () => {
    const permissions: PermissionChecker = {
      governs: ['payments'],
      check: (r) =>
        r.capability === 'payments' ? { allow: false, reason: 'no money today' } : { allow: true },
    };
    const { tool, calls } = recording('pay', { capabilities: ['payments'] });
    const outcome = as(
      await createDispatcher({ tools: [tool], chain: canonicalChain({ permissions }) }).dispatch({
        toolName: 'pay',
      }),
      'refused',
    );
    expect(outcome.gate).toBe('capabilities');
    expect(outcome.content).toContain('payments');
    expect(outcome.content).toContain('no money today');
    expect(calls).toHaveLength(0);
  });

  it('a capability checker that throws denies', async () => {
    const permissions: PermissionChecker = {
      governs: ['payments'],
      check: (r) => {
        if (r.capability === 'payments') throw new Error('x');
        return { allow: true };
      },
    };
    const outcome = await createDispatcher({
      tools: [recording('pay', { capabilities: ['payments'] }).tool],
      chain: canonicalChain({ permissions }),
    }).dispatch({ toolName: 'pay' });
    expect(as(outcome, 'refused').gate).toBe('capabilities');
  });
});

describe('§7 credentials', () => {
  const secret = 'sk_test_TOPSECRET_42';
  const need = { kind: 'api_key', service: 'billing', scopes: ['charges:write'] };

  it('the provider is asked resolve(need, { identity, toolName, toolSource, signal }) and the tool reads the secret through reveal()', async () => {
    const seen: unknown[] = [];
    const credentials: CredentialProvider = {
      resolve: (n, context) => {
        seen.push(n, context);
        return { kind: 'api_key', value: secret, expiresAt: '2999-01-01T00:00:00Z' };
      },
    };
    const { tool, calls } = recording('pay', { needs: need });
    await createDispatcher({ tools: [tool], chain: canonicalChain({ credentials }) }).dispatch(
      { toolName: 'pay' },
      { identity: { tenant: 'acme' } },
    );
    expect(seen[0]).toEqual(need);
    expect(seen[1]).toMatchObject({ identity: { tenant: 'acme' }, toolName: 'pay' });
    expect((seen[1] as { signal: unknown }).signal).toBeInstanceOf(AbortSignal);
    expect(calls[0]!.secret).toBe(secret);
    expect(calls[0]!.ctx.credential?.reveal()).toBe(secret);
  });

  it('the secret never appears in args, outcome, ledger, events, or JSON.stringify(ctx) / of the credential', async () => {
    const credentials: CredentialProvider = { resolve: () => ({ kind: 'api_key', value: secret }) };
    const { tool, calls } = recording('pay', { needs: need }, () => 'paid');
    const dispatcher = createDispatcher({ tools: [tool], chain: canonicalChain({ credentials }) });
    const events = recordEvents(dispatcher);
    const outcome = await dispatcher.dispatch({ toolName: 'pay', args: { text: 'x' } });
    expect(outcome.kind).toBe('result');
    expect(JSON.stringify(outcome)).not.toContain(secret);
    expect(JSON.stringify(events)).not.toContain(secret);
    expect(calls[0]!.json).not.toContain(secret);
    expect(JSON.stringify(calls[0]!.args)).not.toContain(secret);
    expect(JSON.stringify(calls[0]!.ctx.credential)).not.toContain(secret);
    expect(String(calls[0]!.ctx.credential)).not.toContain(secret);
    expect(events.some((e) => e.type === 'credential.resolved')).toBe(true);
  });

  it('the Credential reveals its secret only through reveal(): not by spread, keys, values or String()', async () => {
    const credentials: CredentialProvider = { resolve: () => ({ kind: 'api_key', value: secret }) };
    const { tool, calls } = recording('pay', { needs: need });
    await createDispatcher({ tools: [tool], chain: canonicalChain({ credentials }) }).dispatch({
      toolName: 'pay',
    });
    const credential = calls[0]!.ctx.credential!;
    expect(credential.reveal()).toBe(secret);
    expect(JSON.stringify({ ...credential })).not.toContain(secret);
    expect(JSON.stringify(Object.values(credential))).not.toContain(secret);
    expect(Object.keys(credential).join()).not.toContain(secret);
    expect(`${String(credential)}`).not.toContain(secret);
  });

  it.each([
    [
      'throws',
      () => {
        throw new Error('vault token expired at https://vault.internal');
      },
    ],
    ['rejects', () => Promise.reject(new Error('vault token expired at https://vault.internal'))],
    ['answers nothing', () => undefined],
    ['never answers', () => new Promise(() => undefined)],
  ])(
    'a provider that %s refuses with a named, retryable refusal naming kind and service, never the provider text',
    async (_what, resolve) => {
      const { tool, calls } = recording('pay', { needs: need });
      const dispatcher = createDispatcher({
        tools: [tool],
        chain: canonicalChain({ credentials: { resolve } as unknown as CredentialProvider, deadlineMs: 20 }),
      });
      const events = recordEvents(dispatcher);
      const outcome = as(await dispatcher.dispatch({ toolName: 'pay' }), 'refused');
      expect(outcome.gate).toBe('credentials');
      expect(outcome.retryable).toBe(true);
      expect(outcome.content).toContain('api_key');
      expect(outcome.content).toContain('billing');
      expect(outcome.content).not.toContain('vault');
      expect(JSON.stringify(events)).not.toContain('vault');
      expect(events.some((e) => e.type === 'credential.failed')).toBe(true);
      expect(calls).toHaveLength(0);
    },
  );
});

describe('§7 wants and the ArtifactStore', () => {
  const schema = { type: 'object', properties: { data: { type: 'string' } }, required: ['data'] };
  const acme: Identity = { tenant: 'acme', principal: 'ann', conversation: 'c1' };

  function setup(artifacts: ArtifactStore = inMemoryArtifacts()) {
    const { tool, calls } = recording('chart', { inputSchema: schema, wants: { data: 'table' } }, (args) => ({
      rows: (args['data'] as unknown[]).length,
    }));
    const dispatcher = createDispatcher({ tools: [tool], chain: canonicalChain({ artifacts }) });
    return { artifacts, dispatcher, calls };
  }

  it('ArtifactStore: put(scope, { kind, data, meta?, ttlMs? }) → ref; get(scope, ref) → { meta, data }; list(scope, kind, limit)', async () => {
    const store = inMemoryArtifacts();
    const ref = await store.put(acme, { kind: 'table', data: [1, 2], meta: { title: 'Q1' }, ttlMs: 60_000 });
    expect(ref).toMatch(/^art_[0-9A-Za-z]{22}$/);
    const got = await store.get(acme, ref);
    expect(got?.data).toEqual([1, 2]);
    expect(got?.meta).toMatchObject({ ref, kind: 'table', meta: { title: 'Q1' } });
    expect((await store.list(acme, 'table', 10)).map((m) => m.ref)).toEqual([ref]);
    expect(await store.list(acme, 'image', 10)).toEqual([]);
    expect(await store.get({ tenant: 'other' }, ref)).toBeUndefined();
    expect(await store.list({ tenant: 'other' }, 'table', 10)).toEqual([]);
  });

  it('refs are art_ followed by 22 random base62 characters', async () => {
    const store = inMemoryArtifacts();
    const refs = await Promise.all(Array.from({ length: 50 }, () => store.put(acme, { kind: 'k', data: 1 })));
    for (const ref of refs) expect(ref).toMatch(/^art_[0-9A-Za-z]{22}$/);
    expect(new Set(refs).size).toBe(50);
  });

  it("the gate swaps the resolved data in before execute, in the caller's scope, and records it in ctx.wanted", async () => {
    const { artifacts, dispatcher, calls } = setup();
    const ref = await artifacts.put(acme, { kind: 'table', data: [{ a: 1 }, { a: 2 }] });
    const outcome = as(
      await dispatcher.dispatch({ toolName: 'chart', args: { data: ref } }, { identity: acme }),
      'result',
    );
    expect(outcome.value).toEqual({ rows: 2 });
    expect(calls[0]!.args).toEqual({ data: [{ a: 1 }, { a: 2 }] });
    expect(calls[0]!.ctx.wanted?.['data']).toMatchObject({ ref, kind: 'table' });
  });

  it("an unknown ref never reaches the tool; the refusal lists up to 10 live refs of the wanted kind in the caller's scope", async () => {
    const { artifacts, dispatcher, calls } = setup();
    const live: string[] = [];
    for (let i = 0; i < 12; i++) live.push(await artifacts.put(acme, { kind: 'table', data: [i] }));
    const image = await artifacts.put(acme, { kind: 'image', data: 'png' });
    const theirs = await artifacts.put({ tenant: 'globex' }, { kind: 'table', data: [] });
    const outcome = as(
      await dispatcher.dispatch(
        { toolName: 'chart', args: { data: 'art_0000000000000000000000' } },
        { identity: acme },
      ),
      'refused',
    );
    expect(outcome.gate).toBe('wants');
    const listed = outcome.content.match(/art_[0-9A-Za-z]{22}/g) ?? [];
    expect(listed.length).toBe(10);
    for (const ref of listed) expect(live).toContain(ref);
    expect(outcome.content).not.toContain(image);
    expect(outcome.content).not.toContain(theirs);
    expect(calls).toHaveLength(0);
  });

  it("another tenant's ref reads exactly like an unknown one", async () => {
    const { artifacts, dispatcher, calls } = setup();
    await artifacts.put(acme, { kind: 'table', data: [1] });
    const theirs = await artifacts.put(
      { tenant: 'globex', principal: 'ann', conversation: 'c1' },
      { kind: 'table', data: [2] },
    );
    const unknown = 'art_ZZZZZZZZZZZZZZZZZZZZZZ';
    const a = as(
      await dispatcher.dispatch(
        { toolName: 'chart', args: { data: theirs }, toolCallId: 'x' },
        { identity: acme },
      ),
      'refused',
    );
    const b = as(
      await dispatcher.dispatch(
        { toolName: 'chart', args: { data: unknown }, toolCallId: 'x' },
        { identity: acme },
      ),
      'refused',
    );
    expect(a.content).toBe(b.content);
    expect(a.code).toBe(b.code);
    expect(calls).toHaveLength(0);
  });

  it('a wrong-kind ref never reaches the tool', async () => {
    const { artifacts, dispatcher, calls } = setup();
    const image = await artifacts.put(acme, { kind: 'image', data: 'png' });
    const outcome = as(
      await dispatcher.dispatch({ toolName: 'chart', args: { data: image } }, { identity: acme }),
      'refused',
    );
    expect(outcome.content).toContain('table');
    expect(calls).toHaveLength(0);
  });

  it('a stale (expired) ref never reaches the tool', async () => {
    const clock = fixedClock();
    const { artifacts, dispatcher, calls } = setup(inMemoryArtifacts({ now: clock.now }));
    const ref = await artifacts.put(acme, { kind: 'table', data: [1], ttlMs: 1000 });
    clock.advance(1001);
    expect(
      (await dispatcher.dispatch({ toolName: 'chart', args: { data: ref } }, { identity: acme })).kind,
    ).toBe('refused');
    expect(calls).toHaveLength(0);
  });

  it.each(['get', 'list'] as const)(
    'an artifact store whose %s throws refuses with a named, retryable refusal',
    async (method) => {
      const inner = inMemoryArtifacts();
      const failing: ArtifactStore = {
        ...inner,
        [method]: async () => {
          throw new Error('s3 bucket secret-bucket-9 unreachable');
        },
      };
      const ref =
        method === 'get' ? 'art_0000000000000000000000' : await inner.put(acme, { kind: 'image', data: 1 });
      const { dispatcher, calls } = setup(failing);
      const outcome = as(
        await dispatcher.dispatch({ toolName: 'chart', args: { data: ref } }, { identity: acme }),
        'refused',
      );
      expect(outcome.gate).toBe('wants');
      expect(outcome.retryable).toBe(true);
      expect(outcome.content).not.toContain('secret-bucket-9');
      expect(calls).toHaveLength(0);
    },
  );

  it('an artifact store that never answers is refused at the per-gate deadline', async () => {
    const hanging: ArtifactStore = { ...inMemoryArtifacts(), get: () => new Promise(() => undefined) };
    const { tool, calls } = recording('chart', { inputSchema: schema, wants: { data: 'table' } });
    const dispatcher = createDispatcher({
      tools: [tool],
      chain: canonicalChain({ artifacts: hanging, deadlineMs: 20 }),
    });
    const outcome = as(
      await dispatcher.dispatch(
        { toolName: 'chart', args: { data: 'art_0000000000000000000000' } },
        { identity: acme },
      ),
      'refused',
    );
    expect(outcome.gate).toBe('wants');
    expect(outcome.retryable).toBe(true);
    expect(calls).toHaveLength(0);
  });

  it('the SQLite ArtifactStore serves the wants gate with the same scope isolation', async () => {
    const store = sqliteArtifacts({ path: ':memory:' });
    try {
      const { dispatcher, calls } = setup(store);
      const ref = await store.put(acme, { kind: 'table', data: [1, 2, 3] });
      expect(ref).toMatch(/^art_[0-9A-Za-z]{22}$/);
      expect(
        as(
          await dispatcher.dispatch({ toolName: 'chart', args: { data: ref } }, { identity: acme }),
          'result',
        ).value,
      ).toEqual({ rows: 3 });
      expect(
        (
          await dispatcher.dispatch(
            { toolName: 'chart', args: { data: ref } },
            { identity: { tenant: 'globex' } },
          )
        ).kind,
      ).toBe('refused');
      expect(calls).toHaveLength(1);
    } finally {
      store.close();
    }
  });
});

describe('§7 result ceiling', () => {
  it('measures string results as they are (not JSON-quoted)', async () => {
    const tool = recording('s', { resultCeiling: { maxChars: 10 } }, () => 'x'.repeat(10)).tool;
    expect(
      (await createDispatcher({ tools: [tool], chain: canonicalChain() }).dispatch({ toolName: 's' })).kind,
    ).toBe('result');
  });

  it('refuses (never truncates) a result over the ceiling, naming the true size, the ceiling and narrowBy', async () => {
    const tool = recording(
      'search',
      { resultCeiling: { maxChars: 8000, narrowBy: ['limit', 'query'] } },
      () => 'y'.repeat(48210),
    ).tool;
    const outcome = as(
      await createDispatcher({ tools: [tool], chain: canonicalChain() }).dispatch({ toolName: 'search' }),
      'refused',
    );
    expect(outcome.gate).toBe('result-ceiling');
    expect(outcome.ran).toBe(true);
    expect(outcome.content).toMatch(/48,?210/);
    expect(outcome.content).toMatch(/8,?000/);
    expect(outcome.content).toContain('limit');
    expect(outcome.content).toContain('query');
    expect(outcome.content).not.toContain('yyyy');
  });

  it('the oversized payload never enters the outcome, the ledger or any event; an event carries the true size', async () => {
    const payload = `BEGIN-${'z'.repeat(500)}-END`;
    const tool = recording('dump', { resultCeiling: { maxChars: 100 } }, () => ({ payload })).tool;
    const dispatcher = createDispatcher({ tools: [tool], chain: canonicalChain() });
    const events = recordEvents(dispatcher);
    const outcome = as(await dispatcher.dispatch({ toolName: 'dump' }), 'refused');
    expect(JSON.stringify(outcome)).not.toContain('BEGIN-');
    expect(JSON.stringify(events)).not.toContain('BEGIN-');
    const refused = events.find((e) => e.type === 'result.refused');
    expect(refused).toBeDefined();
    expect(JSON.stringify(refused)).toContain(String(JSON.stringify({ payload }).length));
  });

  it("an operator default ceiling applies to tools that declare none; a tool's own ceiling wins", async () => {
    const chain = canonicalChain({ defaultMaxChars: 20 });
    const dispatcher = createDispatcher({
      tools: [
        recording('plain', {}, () => 'a'.repeat(21)).tool,
        recording('own', { resultCeiling: { maxChars: 100 } }, () => 'a'.repeat(50)).tool,
      ],
      chain,
    });
    expect(as(await dispatcher.dispatch({ toolName: 'plain' }), 'refused').gate).toBe('result-ceiling');
    expect((await dispatcher.dispatch({ toolName: 'own' })).kind).toBe('result');
  });
});

describe('§7 result ceiling: one measurement', () => {
  it('the result is stringified once: the ceiling measures the same text the model reads', async () => {
    let serialized = 0;
    const tool = recording('counted', { resultCeiling: { maxChars: 100 } }, () => ({
      toJSON() {
        serialized++;
        return { a: 1 };
      },
    })).tool;
    const chain = canonicalChain().use(
      mw('reader', async (ctx, next) => {
        await next();
        void ctx.resultText;
        void ctx.resultText;
      }),
    );
    const outcome = as(
      await createDispatcher({ tools: [tool], chain }).dispatch({ toolName: 'counted' }),
      'result',
    );
    expect(outcome.content).toBe('{"a":1}');
    expect(serialized).toBe(1);
  });
});

describe('§7 validate-args', () => {
  const schema = {
    type: 'object',
    properties: {
      amount: { type: 'number' },
      customer: { type: 'object', properties: { email: { type: 'string' } } },
    },
    required: ['amount'],
  };

  it('refusals name the path and the expected type, never the value supplied', async () => {
    const { tool, calls } = recording('charge', { inputSchema: schema });
    const dispatcher = createDispatcher({ tools: [tool], chain: canonicalChain() });
    const outcome = as(
      await dispatcher.dispatch({ toolName: 'charge', args: { amount: 'SECRET-AMOUNT-VALUE' } }),
      'refused',
    );
    expect(outcome.gate).toBe('validate-args');
    expect(outcome.content).toContain('amount');
    expect(outcome.content).toMatch(/number/);
    expect(outcome.content).not.toContain('SECRET-AMOUNT-VALUE');
    const nested = as(
      await dispatcher.dispatch({ toolName: 'charge', args: { amount: 1, customer: { email: 4242424242 } } }),
      'refused',
    );
    expect(nested.content).toMatch(/customer[./]email/);
    expect(nested.content).toMatch(/string/);
    expect(nested.content).not.toContain('4242424242');
    const missing = as(await dispatcher.dispatch({ toolName: 'charge', args: {} }), 'refused');
    expect(missing.content).toContain('amount');
    expect(calls).toHaveLength(0);
  });

  it('judges the args that will run: a policy transform is validated', async () => {
    const { tool, calls } = recording('charge', { inputSchema: schema });
    const chain = canonicalChain().use(
      mw(
        'breaker',
        async (ctx, next) => {
          ctx.setArgs({ amount: 'oops' }, 'broke it');
          await next();
        },
        { transformsArgs: true },
      ),
    );
    expect(
      as(
        await createDispatcher({ tools: [tool], chain }).dispatch({
          toolName: 'charge',
          args: { amount: 1 },
        }),
        'refused',
      ).gate,
    ).toBe('validate-args');
    expect(calls).toHaveLength(0);
  });

  it('a pluggable SchemaValidator replaces ajv and is compiled once per schema', async () => {
    const compile = jest.fn(
      (_schema: Record<string, unknown>) => (args: Readonly<Record<string, unknown>>) =>
        typeof args['amount'] === 'number'
          ? { valid: true as const }
          : { valid: false as const, problems: [{ path: 'amount', expected: 'must be a number' }] },
    );
    const validator: SchemaValidator = { compile };
    const { tool, calls } = recording('charge', { inputSchema: schema });
    const dispatcher = createDispatcher({ tools: [tool], chain: canonicalChain({ validator }) });
    for (let i = 0; i < 3; i++) await dispatcher.dispatch({ toolName: 'charge', args: { amount: i } });
    const bad = as(await dispatcher.dispatch({ toolName: 'charge', args: { amount: 'x' } }), 'refused');
    expect(bad.content).toContain('must be a number');
    expect(compile).toHaveBeenCalledTimes(1);
    expect(calls).toHaveLength(3);
  });
});

// ---------------------------------------------------------------------------------------------
describe('§8 events', () => {
  it('every event named in DESIGN fires in the flows that produce it', async () => {
    const secret = 'sk_evt_secret';
    const artifacts = inMemoryArtifacts();
    const identity = { tenant: 'acme' };
    const ref = await artifacts.put(identity, { kind: 'table', data: [1] });
    const schema = { type: 'object', properties: { data: { type: 'string' } } };
    const permissions: PermissionChecker = { governs: ['payments'], check: () => ({ allow: true }) };
    const dispatcher = createDispatcher({
      tools: [
        recording('full', {
          inputSchema: schema,
          wants: { data: 'table' },
          capabilities: ['payments'],
          checkIn: 'always',
          needs: { kind: 'api_key', service: 'billing' },
        }).tool,
        recording('broken', { needs: { kind: 'api_key', service: 'nowhere' } }).tool,
        recording('big', { resultCeiling: { maxChars: 1 } }, () => 'too long').tool,
        recording('boom', {}, () => {
          throw new Error('x');
        }).tool,
      ],
      chain: canonicalChain({
        permissions,
        artifacts,
        checkInKey: KEY,
        credentials: {
          resolve: (need) => {
            if (need.service === 'nowhere') throw new Error('x');
            return { kind: 'api_key', value: secret };
          },
        },
      }),
    });
    const events = recordEvents(dispatcher);
    const paused = as(
      await dispatcher.dispatch({ toolName: 'full', args: { data: ref } }, { identity }),
      'paused',
    );
    expect((await dispatcher.resume(paused.checkIn, checkInApproved({ by: 'ann' }))).kind).toBe('result');
    await dispatcher.dispatch(
      { toolName: 'full', args: { data: 'art_0000000000000000000000' } },
      { identity },
    );
    await dispatcher.dispatch({ toolName: 'broken' });
    await dispatcher.dispatch({ toolName: 'big' });
    await dispatcher.dispatch({ toolName: 'boom' });
    expect([...new Set(events.map((e) => e.type))].sort()).toEqual([...EVENT_TYPES].sort());
    for (const event of events) {
      expect(event).toMatchObject({
        type: expect.any(String),
        toolName: expect.any(String),
        toolCallId: expect.any(String),
      });
    }
  });

  it('events carry facts, not values: no args, no results, no secrets', async () => {
    const secret = 'sk_never_in_events';
    const dispatcher = createDispatcher({
      tools: [
        recording(
          'pay',
          { needs: { kind: 'api_key', service: 'billing' }, capabilities: ['payments'] },
          () => ({ receipt: 'RESULT-MARKER-77' }),
        ).tool,
      ],
      chain: canonicalChain({
        permissions: { governs: ['payments'], check: () => ({ allow: true }) },
        credentials: { resolve: () => ({ kind: 'api_key', value: secret }) },
      }),
    });
    const events = recordEvents(dispatcher);
    expect((await dispatcher.dispatch({ toolName: 'pay', args: { text: 'ARG-MARKER-55' } })).kind).toBe(
      'result',
    );
    const text = JSON.stringify(events);
    expect(events.length).toBeGreaterThan(5);
    expect(text).not.toContain('ARG-MARKER-55');
    expect(text).not.toContain('RESULT-MARKER-77');
    expect(text).not.toContain(secret);
  });

  it('every dispatch and resume emits exactly one dispatch.start and one dispatch.end, whatever its outcome', async () => {
    const dispatcher = createDispatcher({
      tools: [recording().tool, recording('refund', { checkIn: 'always' }).tool],
      chain: canonicalChain({ checkInKey: KEY }),
    });
    const events = recordEvents(dispatcher);
    await dispatcher.dispatch({ toolName: 'echo' });
    await dispatcher.dispatch({ toolName: 'missing' });
    await dispatcher.dispatch({ toolName: 'echo', args: '{bad json' });
    const paused = as(await dispatcher.dispatch({ toolName: 'refund' }), 'paused');
    await dispatcher.resume({ ...paused.checkIn, signature: '0'.repeat(64) }, checkInApproved({ by: 'ann' }));
    await dispatcher.resume(paused.checkIn, checkInApproved({ by: 'ann' }));
    expect(events.filter((e) => e.type === 'dispatch.start')).toHaveLength(6);
    expect(events.filter((e) => e.type === 'dispatch.end')).toHaveLength(6);
  });

  it('off() removes a listener', async () => {
    const dispatcher = createDispatcher({ tools: [recording().tool], chain: canonicalChain() });
    const listener = jest.fn();
    dispatcher.on('dispatch.end', listener);
    await dispatcher.dispatch({ toolName: 'echo' });
    dispatcher.off('dispatch.end', listener);
    await dispatcher.dispatch({ toolName: 'echo' });
    expect(listener).toHaveBeenCalledTimes(1);
  });

  it('createDispatcher({ events }) emits into the emitter it is given', async () => {
    const shared = createDispatcher({ tools: [recording('other').tool], chain: canonicalChain() }).events;
    const listener = jest.fn();
    shared.on('tool.end', listener);
    await createDispatcher({ tools: [recording().tool], chain: canonicalChain(), events: shared }).dispatch({
      toolName: 'echo',
    });
    expect(listener).toHaveBeenCalledTimes(1);
  });

  it('a listener that throws does not decide or crash the call', async () => {
    const dispatcher = createDispatcher({ tools: [recording().tool], chain: canonicalChain() });
    dispatcher.on('gate.decision', () => {
      throw new Error('listener bug');
    });
    expect((await dispatcher.dispatch({ toolName: 'echo' })).kind).toBe('result');
  });
});

// ---------------------------------------------------------------------------------------------
describe('§1 layout and portability', () => {
  // Read from the repository itself: these statements are about the source, not behaviour.
  const packages = join(__dirname, '..', '..');
  const manifest = (name: string) =>
    JSON.parse(readFileSync(join(packages, name, 'package.json'), 'utf8')) as {
      dependencies?: Record<string, string>;
    };
  const sources = (name: string): string[] => {
    const walk = (dir: string): string[] =>
      readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
        entry.isDirectory()
          ? walk(join(dir, entry.name))
          : entry.name.endsWith('.ts')
            ? [readFileSync(join(dir, entry.name), 'utf8')]
            : [],
      );
    return walk(join(packages, name, 'src'));
  };

  it('core depends on koa-compose, eventemitter3 and typebox only; middleware adds ajv, ajv-formats, the linear-time re2js, @cfworker/json-schema for eval-free runtimes, and unhomoglyph for Unicode confusables', () => {
    expect(Object.keys(manifest('core').dependencies ?? {}).sort()).toEqual([
      'eventemitter3',
      'koa-compose',
      'typebox',
    ]);
    expect(Object.keys(manifest('middleware').dependencies ?? {}).sort()).toEqual([
      '@cfworker/json-schema',
      '@toolgate/core',
      'ajv',
      'ajv-formats',
      're2js',
      'unhomoglyph',
    ]);
  });

  it('nothing imports "up": core imports no toolgate package, middleware only core', () => {
    const imports = (name: string) =>
      sources(name).flatMap((text) => [...text.matchAll(/from '(@toolgate\/[a-z-]+)/g)].map((m) => m[1]));
    expect(imports('core')).toEqual([]);
    expect(new Set(imports('middleware'))).toEqual(new Set(['@toolgate/core']));
    for (const edge of ['mcp', 'testing', 'store-sqlite']) {
      for (const used of imports(edge)) expect(['@toolgate/core', '@toolgate/middleware']).toContain(used);
    }
  });

  it('the root package has the scripts build, test, demo, bench, lint and typecheck; every package extends tsconfig.base.json', () => {
    const root = JSON.parse(readFileSync(join(packages, '..', 'package.json'), 'utf8')) as {
      scripts: Record<string, string>;
    };
    for (const script of ['build', 'test', 'demo', 'bench', 'lint', 'typecheck'])
      expect(root.scripts[script]).toEqual(expect.any(String));
    for (const name of ['core', 'middleware', 'testing', 'mcp', 'store-sqlite']) {
      expect(readFileSync(join(packages, name, 'tsconfig.json'), 'utf8')).toContain('tsconfig.base.json');
    }
  });

  it('core and middleware use no node: imports, no Buffer and no AsyncLocalStorage', () => {
    for (const name of ['core', 'middleware']) {
      for (const text of sources(name)) {
        expect(text).not.toMatch(/from 'node:|require\('node:/);
        expect(text).not.toMatch(/\bBuffer\./);
        expect(text).not.toMatch(/AsyncLocalStorage/);
      }
    }
  });
});
