// A check-in asked at a 2026-07-28 client by mcpServe alone (no gateway), with SDK v2 clients over
// serveHttp: the paused call is answered input-required with the approval form and a sealed state;
// the retry runs the chain again and carries the person's answer out through the single-use resume.
// An edited, foreign, replayed, raced or expired state is CHECKIN_STATE_INVALID and runs nothing.

import {
  Client as V2Client,
  StreamableHTTPClientTransport as V2Transport,
  type ClientCapabilities,
} from '@modelcontextprotocol/client';
import { Type } from 'typebox';
import {
  createChain,
  defineTool,
  inMemoryCheckIns,
  type Chain,
  type CheckInStore,
  type Middleware,
} from '@toolgate/core';
import { canonicalChain } from '@toolgate/middleware';
import { mcpServe, serveHttp, type HttpServing, type McpCallReport, type McpServed } from '@toolgate/mcp';
import { authenticate, identityFromToken } from './fixtures/proxy';
import { recordingEmitter } from './fixtures/recording-emitter';

const MODERN = '2026-07-28';
const CHECK_IN_KEY = 'modern-check-in-key-0123456789abcdef';
const STATE_KEY = 'modern-state-key-0123456789abcdef-0123';
// Values that must never reach an event or a report: an argument, and the person's note.
const SECRET_ORDER = 'order-secret-7731-zq';
const SECRET_NOTE = 'note-secret-4410-xk';

type Answer = { action: 'accept' | 'decline' | 'cancel'; content?: Record<string, string> };
type Asked = {
  resultType?: string;
  requestState?: string;
  inputRequests?: Record<string, { method: string; params: { mode?: string; message: string } }>;
  isError?: boolean;
  content?: { type: string; text?: string }[];
  structuredContent?: Record<string, unknown>;
  _meta?: Record<string, unknown>;
};

const refusalOf = (result: Asked) =>
  result._meta?.['io.toolgate/refusal'] as { gate: string; code: string; retryable: boolean } | undefined;
const textOf = (result: Asked) => (result.content ?? []).map((block) => block.text ?? '').join('');

// What ran: every refund and transfer the tools carried out, with their args.
const ran: { tool: string; args: Record<string, unknown> }[] = [];
const events: unknown[] = [];
const reports: McpCallReport[] = [];
// Flipped by a test: the policy refuses refunds while it is true.
let refundsDenied = false;

const tools = () =>
  (['refund', 'transfer'] as const).map((name) =>
    defineTool({
      name,
      description: `Carries out a ${name}; a person approves each.`,
      inputSchema: Type.Object({
        orderId: Type.String(),
        amount: Type.Number(),
        memo: Type.Optional(Type.String()),
      }),
      checkIn: 'always',
      execute: (args) => {
        ran.push({ tool: name, args: { ...args } });
        return { done: name, orderId: args.orderId, amount: args.amount };
      },
    }),
  );

// A second asker in the chain, before the tool's own check-in: two questions in one call.
const supervisor: Middleware = {
  name: 'supervisor',
  async run(ctx, next) {
    await ctx.ask('A supervisor must look at this too.');
    await next();
  },
};

function chainOver(
  store: CheckInStore,
  options: { ttlMs?: number; evidence?: string; twoAskers?: boolean } = {},
): Chain {
  const { ttlMs, evidence, twoAskers } = options;
  return canonicalChain({
    permissions: {
      check: ({ target }) =>
        refundsDenied && target === 'refund'
          ? { allow: false, reason: 'refunds are closed for the audit' }
          : { allow: true },
    },
    checkInKey: CHECK_IN_KEY,
    checkIns: store,
    ...(ttlMs !== undefined ? { checkInTtlMs: ttlMs } : {}),
    ...(evidence !== undefined ? { evidence: () => evidence } : {}),
    ...(twoAskers === true ? { policy: supervisor } : {}),
  });
}

const opened: { served: McpServed; http: HttpServing }[] = [];
async function serve(
  chain: Chain | (() => Chain),
  requestStateKey: string | null = STATE_KEY,
): Promise<HttpServing> {
  const served = mcpServe(tools(), {
    name: 'modern-check-in',
    version: '1.0.0',
    chain,
    identityFrom: identityFromToken,
    events: recordingEmitter(events, { everyType: true }),
    onCall: (report) => reports.push(report),
    ...(requestStateKey !== null ? { requestStateKey } : {}),
  });
  const http = await serveHttp(served, { port: 0, authenticate });
  opened.push({ served, http });
  return http;
}

let store: CheckInStore;
let http: HttpServing;
beforeAll(async () => {
  store = inMemoryCheckIns();
  http = await serve(chainOver(store));
});
afterAll(async () => {
  for (const { served, http } of opened) {
    await http.close();
    await served.close();
  }
});
beforeEach(() => {
  ran.length = 0;
  refundsDenied = false;
});

const clients: V2Client[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close()));
});

/** An SDK v2 client as `token`; it answers the form with `answer`, or hands input-required back (`manual`). */
async function client(
  token: string,
  capabilities: ClientCapabilities,
  options: { answer?: (message: string) => Answer; manual?: boolean; at?: HttpServing } = {},
): Promise<V2Client> {
  const made = new V2Client(
    { name: `check-in-${token}`, version: '1.0.0' },
    {
      capabilities,
      versionNegotiation: { mode: { pin: MODERN } },
      ...(options.manual === true ? { inputRequired: { autoFulfill: false } } : {}),
    },
  );
  const { answer } = options;
  if (answer !== undefined)
    made.setRequestHandler('elicitation/create', async (request) =>
      answer(String((request.params as { message?: unknown }).message)),
    );
  await made.connect(
    new V2Transport(new URL((options.at ?? http).url), {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
    }),
  );
  clients.push(made);
  return made;
}

const FORM: ClientCapabilities = { elicitation: { form: {} } };

/** One round by hand: the call, with a requestState and the answer to the form when given. */
const round = (
  made: V2Client,
  name: string,
  args: Record<string, unknown>,
  requestState?: string,
  answer?: Answer,
) =>
  made.callTool(
    {
      name,
      arguments: args,
      ...(requestState !== undefined ? { requestState } : {}),
      ...(answer !== undefined ? { inputResponses: { approval: answer } } : {}),
    } as never,
    { allowInputRequired: true },
  ) as Promise<Asked>;

const approve: Answer = { action: 'accept', content: { decision: 'approve' } };
const ARGS = { orderId: 'A-1', amount: 30 };

/** A manual client as alice, asked once about `args`: the client and the state it was given. */
async function askedOnce(args: Record<string, unknown> = ARGS, at?: HttpServing) {
  const alice = await client('alice', FORM, { manual: true, ...(at !== undefined ? { at } : {}) });
  const asked = await round(alice, 'refund', args);
  expect(asked.resultType).toBe('input_required');
  expect(asked.requestState).toMatch(/^c1\.[A-Za-z0-9_-]+$/);
  return { alice, state: asked.requestState!, asked };
}

const pendingCount = async () => (await store.list({ state: 'pending' })).length;
const recordCount = async () => (await store.list()).length;

describe('a check-in at a 2026-07-28 client, asked by mcpServe alone', () => {
  it('approve: the person sees every argument in the form, and the tool runs once with the args', async () => {
    const shown: string[] = [];
    const alice = await client('alice', FORM, {
      answer: (message) => {
        shown.push(message);
        return approve;
      },
    });
    const result = (await alice.callTool({
      name: 'refund',
      arguments: { orderId: 'A-7', amount: 42, memo: 'damaged box' },
    })) as Asked;
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toEqual({ done: 'refund', orderId: 'A-7', amount: 42 });
    expect(ran).toEqual([{ tool: 'refund', args: { orderId: 'A-7', amount: 42, memo: 'damaged box' } }]);
    expect(shown).toHaveLength(1);
    for (const value of ["'refund'", 'orderId: "A-7"', 'amount: 42', 'memo: "damaged box"'])
      expect(shown[0]).toContain(value);
    // The check-in asked about was spent by the run; the retry's own was revoked.
    expect(await pendingCount()).toBe(0);
  });

  it('answers input-required with one form question, the same form the 2025-11-25 path shows', async () => {
    const { asked } = await askedOnce();
    expect(Object.keys(asked.inputRequests ?? {})).toEqual(['approval']);
    const question = asked.inputRequests!['approval']!;
    expect(question.method).toBe('elicitation/create');
    expect(question.params.mode).toBe('form');
    expect(question.params.message).toContain('orderId: "A-1"');
    expect(ran).toEqual([]);
  });

  it("decline: refused with the person's reason, and nothing runs", async () => {
    const before = await pendingCount();
    const alice = await client('alice', FORM, {
      answer: () => ({ action: 'accept', content: { decision: 'decline', note: 'wrong customer' } }),
    });
    const result = (await alice.callTool({ name: 'refund', arguments: ARGS })) as Asked;
    expect(result.isError).toBe(true);
    expect(refusalOf(result)?.code).toBe('CHECKIN_DECLINED');
    expect(textOf(result)).toContain('wrong customer');
    expect(ran).toEqual([]);
    expect(await pendingCount()).toBe(before);
  });

  it('a client that declared no elicitation: CHECKIN_UNAVAILABLE, the check-in revoked, nothing runs', async () => {
    const before = await pendingCount();
    const bot = await client('alice', {});
    const result = (await bot.callTool({ name: 'refund', arguments: ARGS })) as Asked;
    expect(refusalOf(result)).toEqual({ gate: 'check-in', code: 'CHECKIN_UNAVAILABLE', retryable: false });
    expect(ran).toEqual([]);
    expect(await pendingCount()).toBe(before);
  });

  it('arguments too long for the form: CHECKIN_FORM_TOO_LONG, nothing runs', async () => {
    const alice = await client('alice', FORM, { manual: true });
    const result = await round(alice, 'refund', { ...ARGS, memo: 'x'.repeat(25_000) });
    expect(refusalOf(result)?.code).toBe('CHECKIN_FORM_TOO_LONG');
    expect(ran).toEqual([]);
  });

  describe('a state presented by another call is CHECKIN_STATE_INVALID, and nothing is dispatched', () => {
    let state: string;
    beforeAll(async () => {
      ({ state } = await askedOnce());
    });
    const invalid = async (token: string, name: string, args: Record<string, unknown>, sent: string) => {
      const records = await recordCount();
      const other = await client(token, FORM, { manual: true });
      const result = await round(other, name, args, sent, approve);
      expect(refusalOf(result)).toEqual({
        gate: 'check-in',
        code: 'CHECKIN_STATE_INVALID',
        retryable: false,
      });
      expect(ran).toEqual([]);
      // Refused before the chain: no check-in of its own was even raised.
      expect(await recordCount()).toBe(records);
    };
    it('edited', async () => {
      const at = 'c1.'.length + 20;
      const flipped = state[at] === 'A' ? 'B' : 'A';
      await invalid('alice', 'refund', ARGS, `${state.slice(0, at)}${flipped}${state.slice(at + 1)}`);
    });
    it('edited where it still decrypts to claims (a bit of its nonce flipped)', async () => {
      const bytes = Buffer.from(state.slice('c1.'.length), 'base64url');
      // The claims end with the nonce and `"}`; the 16-byte tag follows the ciphertext.
      bytes[bytes.length - 16 - 3]! ^= 1;
      await invalid('alice', 'refund', ARGS, `c1.${bytes.toString('base64url')}`);
    });
    it('not one of ours', () => invalid('alice', 'refund', ARGS, 'v1.forged.state'));
    it('another principal of the tenant', () => invalid('mallory', 'refund', ARGS, state));
    it('the same principal name in another tenant', () => invalid('eve', 'refund', ARGS, state));
    it('other arguments', () => invalid('alice', 'refund', { ...ARGS, amount: 3000 }, state));
    it('another tool', () => invalid('alice', 'transfer', ARGS, state));
    it('none of those spent it: the call it was given for still runs once on it', async () => {
      const alice = await client('alice', FORM, { manual: true });
      const result = await round(alice, 'refund', ARGS, state, approve);
      expect(result.isError).toBeFalsy();
      expect(ran).toEqual([{ tool: 'refund', args: ARGS }]);
    });
  });

  it('a replay after the approval is refused, and the tool ran once', async () => {
    const { alice, state } = await askedOnce();
    expect((await round(alice, 'refund', ARGS, state, approve)).isError).toBeFalsy();
    const replayed = await round(alice, 'refund', ARGS, state, approve);
    expect(refusalOf(replayed)?.code).toBe('CHECKIN_STATE_INVALID');
    expect(ran).toHaveLength(1);
  });

  it('a state is spent on first use: re-asked without an answer, the old state no longer approves', async () => {
    const { alice, state } = await askedOnce();
    // The retry brought no answer: the same check-in is asked again, under a new state.
    const again = await round(alice, 'refund', ARGS, state);
    expect(again.resultType).toBe('input_required');
    expect(again.requestState).not.toBe(state);
    const replayed = await round(alice, 'refund', ARGS, state, approve);
    expect(refusalOf(replayed)?.code).toBe('CHECKIN_STATE_INVALID');
    expect(ran).toEqual([]);
    // The new state still carries the answer.
    expect((await round(alice, 'refund', ARGS, again.requestState, approve)).isError).toBeFalsy();
    expect(ran).toHaveLength(1);
  });

  it('two racing retries of one state: the tool runs once', async () => {
    const { alice, state } = await askedOnce();
    const results = await Promise.all([
      round(alice, 'refund', ARGS, state, approve),
      round(alice, 'refund', ARGS, state, approve),
    ]);
    expect(results.filter((result) => !result.isError)).toHaveLength(1);
    expect(results.map((result) => refusalOf(result)?.code)).toContain('CHECKIN_STATE_INVALID');
    expect(ran).toHaveLength(1);
  });

  it('policy changed between rounds: the retry is refused by it, and the check-in asked about is revoked', async () => {
    const { alice, state } = await askedOnce();
    const pending = await pendingCount();
    refundsDenied = true;
    const result = await round(alice, 'refund', ARGS, state, approve);
    expect(refusalOf(result)).toMatchObject({ gate: 'permission' });
    expect(textOf(result)).toContain('refunds are closed');
    expect(ran).toEqual([]);
    expect(await pendingCount()).toBe(pending - 1);
  });

  it('a state naming a check-in revoked meanwhile is refused, and nothing runs', async () => {
    const { alice, state } = await askedOnce();
    const reported = reports.at(-1)!.settled;
    const checkInId = reported.kind === 'input-required' ? reported.checkInId : undefined;
    expect(await store.revoke(checkInId!)).toBe(true);
    const result = await round(alice, 'refund', ARGS, state, approve);
    expect(refusalOf(result)?.code).toBe('CHECKIN_STATE_INVALID');
    expect(ran).toEqual([]);
  });

  it('a changed chain that still asks: the person is asked afresh, the earlier check-in revoked', async () => {
    const changing = inMemoryCheckIns();
    const before = chainOver(changing);
    const after = chainOver(changing, { evidence: 'the order history' });
    let current = before;
    const at = await serve(() => current);
    const { alice, state } = await askedOnce(ARGS, at);
    const [first] = await changing.list({ state: 'pending' });
    current = after;
    const again = await round(alice, 'refund', ARGS, state, approve);
    expect(again.resultType).toBe('input_required');
    expect(again.inputRequests?.['approval']?.params.message).toContain('the order history');
    expect(ran).toEqual([]);
    expect((await changing.get(first!.request.id))?.state).toBe('revoked');
    expect((await round(alice, 'refund', ARGS, again.requestState, approve)).isError).toBeFalsy();
    expect(ran).toEqual([{ tool: 'refund', args: ARGS }]);
  });

  it('two askers in one call: each is asked in turn, and the call runs once after both approve', async () => {
    const at = await serve(chainOver(inMemoryCheckIns(), { twoAskers: true }));
    const questions: string[] = [];
    const alice = await client('alice', FORM, {
      at,
      answer: (message) => {
        questions.push(message);
        return approve;
      },
    });
    const result = (await alice.callTool({ name: 'refund', arguments: ARGS })) as Asked;
    expect(result.isError).toBeFalsy();
    expect(questions).toHaveLength(2);
    expect(questions[0]).toContain('A supervisor must look at this too.');
    expect(ran).toEqual([{ tool: 'refund', args: ARGS }]);
  });

  it('a call that asks again on every answer is refused CHECKIN_LOOP after 8 questions', async () => {
    // Nine middlewares, each asking once: the ninth question in one call is one too many.
    const askers: Middleware[] = Array.from({ length: 9 }, (_, i) => ({
      name: `asker-${i + 1}`,
      async run(ctx, next) {
        await ctx.ask(`Asker ${i + 1} wants a look.`);
        await next();
      },
    }));
    const at = await serve(
      createChain(askers, { checkIns: { key: CHECK_IN_KEY, store: inMemoryCheckIns() } }),
    );
    const alice = await client('alice', FORM, { manual: true, at });
    let answered = await round(alice, 'refund', ARGS);
    let questions = 0;
    while (answered.resultType === 'input_required' && questions < 20) {
      questions += 1;
      answered = await round(alice, 'refund', ARGS, answered.requestState, approve);
    }
    expect(questions).toBe(8);
    expect(refusalOf(answered)).toMatchObject({ code: 'CHECKIN_LOOP', gate: 'asker-9' });
    expect(ran).toEqual([]);
  });

  it('a check-in store that cannot be read: refused retryable, and nothing runs', async () => {
    const inner = inMemoryCheckIns();
    let failing = false;
    const flaky: CheckInStore = {
      ...inner,
      get: (id) => (failing ? Promise.reject(new Error('store down')) : inner.get(id)),
    };
    const at = await serve(chainOver(flaky));
    const { alice, state } = await askedOnce(ARGS, at);
    failing = true;
    const result = await round(alice, 'refund', ARGS, state, approve);
    expect(refusalOf(result)).toMatchObject({ code: 'CHECKIN_STORE_FAILED', retryable: true });
    expect(ran).toEqual([]);
  });

  it('an expired state is refused before anything is dispatched', async () => {
    const shortStore = inMemoryCheckIns();
    const short = await serve(chainOver(shortStore, { ttlMs: 300 }));
    const { alice, state } = await askedOnce(ARGS, short);
    await new Promise((resolve) => setTimeout(resolve, 400));
    const records = (await shortStore.list()).length;
    const result = await round(alice, 'refund', ARGS, state, approve);
    expect(refusalOf(result)?.code).toBe('CHECKIN_STATE_INVALID');
    expect(ran).toEqual([]);
    expect((await shortStore.list()).length).toBe(records);
  });

  describe('several processes', () => {
    it('with the same key and a shared store a state opens in another; two racing there run once', async () => {
      const shared = inMemoryCheckIns();
      const [one, two] = [await serve(chainOver(shared)), await serve(chainOver(shared))];
      const { state } = await askedOnce(ARGS, one);
      const atOne = await client('alice', FORM, { manual: true, at: one });
      const atTwo = await client('alice', FORM, { manual: true, at: two });
      // Each process spends the state once in its own memory: the store's single use decides.
      const results = await Promise.all([
        round(atOne, 'refund', ARGS, state, approve),
        round(atTwo, 'refund', ARGS, state, approve),
      ]);
      expect(results.filter((result) => !result.isError)).toHaveLength(1);
      expect(ran).toHaveLength(1);
      const refused = results.find((result) => result.isError === true)!;
      expect(['CHECKIN_STATE_INVALID', 'CHECKIN_NOT_PENDING']).toContain(refusalOf(refused)?.code);
    });

    it('replayed to another process after the approval: refused, and the tool ran once', async () => {
      const shared = inMemoryCheckIns();
      const [one, two] = [await serve(chainOver(shared)), await serve(chainOver(shared))];
      const { alice, state } = await askedOnce(ARGS, one);
      expect((await round(alice, 'refund', ARGS, state, approve)).isError).toBeFalsy();
      const atTwo = await client('alice', FORM, { manual: true, at: two });
      const replayed = await round(atTwo, 'refund', ARGS, state, approve);
      expect(refusalOf(replayed)?.code).toBe('CHECKIN_STATE_INVALID');
      expect(ran).toHaveLength(1);
    });

    it('a state does not open in an mcpServe with another key', async () => {
      const shared = inMemoryCheckIns();
      const [ours, theirs] = [
        await serve(chainOver(shared)),
        await serve(chainOver(shared), 'another-state-key-0123456789abcdef'),
      ];
      const { state } = await askedOnce(ARGS, ours);
      const atTheirs = await client('alice', FORM, { manual: true, at: theirs });
      const result = await round(atTheirs, 'refund', ARGS, state, approve);
      expect(refusalOf(result)?.code).toBe('CHECKIN_STATE_INVALID');
      expect(ran).toEqual([]);
    });

    it('without a key given, a state opens only in the process that gave it', async () => {
      const shared = inMemoryCheckIns();
      const [ours, theirs] = [await serve(chainOver(shared), null), await serve(chainOver(shared), null)];
      const { alice, state } = await askedOnce(ARGS, ours);
      const atTheirs = await client('alice', FORM, { manual: true, at: theirs });
      expect(refusalOf(await round(atTheirs, 'refund', ARGS, state, approve))?.code).toBe(
        'CHECKIN_STATE_INVALID',
      );
      expect((await round(alice, 'refund', ARGS, state, approve)).isError).toBeFalsy();
      expect(ran).toHaveLength(1);
    });
  });

  it('no argument value and no answer reaches an event or a report', async () => {
    events.length = 0;
    reports.length = 0;
    const args = { orderId: SECRET_ORDER, amount: 12 };
    const alice = await client('alice', FORM, {
      answer: () => ({ action: 'accept', content: { decision: 'approve', note: SECRET_NOTE } }),
    });
    const result = (await alice.callTool({ name: 'refund', arguments: args })) as Asked;
    expect(result.isError).toBeFalsy();
    expect(ran).toEqual([{ tool: 'refund', args }]);
    const emitted = JSON.stringify(events);
    expect(events.length).toBeGreaterThan(0);
    expect(emitted).not.toContain(SECRET_ORDER);
    expect(emitted).not.toContain(SECRET_NOTE);
    // Two rounds were reported: the question, by its check-in's id (not the form, not the state),
    // and the run, as the 2025-11-25 path reports it (its outcome, the receipt with the note).
    expect(reports.map((report) => report.settled.kind)).toEqual(['input-required', 'outcome']);
    expect(reports[0]!.settled).toEqual({
      kind: 'input-required',
      checkInId: expect.any(String),
      result: { resultType: 'input_required' },
    });
    const { first: _first, ...asked } = reports[0]!;
    expect(JSON.stringify(asked)).not.toContain(SECRET_ORDER);
    expect(reports[1]!.settled).toMatchObject({ kind: 'outcome', via: 'elicitation' });
  });
});
