// A 2025-era upstream (SDK 1.x, revision 2025-11-25) that asks its client mid-call with a
// server-to-client request, relayed through mcpServe to a 2026-07-28 client: the upstream's call is
// parked in this process, the client is answered input_required with the question under a sealed
// state of ours naming the parked call, and its retry runs the chain again, answers the upstream's
// pending request and waits for the result (or the next question). A state edited, echoed by another
// principal or tenant, replayed or raced reaches nothing; a parked call nobody retries is ended after
// its bound; beyond the cap a question is declined as before. The upstream is the legacy-asking
// fixture over stdio (its RUN_LOG shows every start, answer, cancel and end), and one SDK 1.x server
// over Streamable HTTP; the client is the SDK v2's, over Streamable HTTP.

import type { ClientCapabilities } from '@modelcontextprotocol/client';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { canonicalChain } from '@toolgate/middleware';
import {
  mcpClient,
  serveHttp,
  type HttpServing,
  type McpCallReport,
  type McpClientEvent,
  type McpServed,
  type McpServeOptions,
} from '@toolgate/mcp';
import {
  ask,
  askAs,
  authenticate,
  describeStateRefusals,
  identityFromToken,
  legacyAskingUpstream,
  modernClient as connect,
  protocolError,
  retry,
  retryAs,
  serveUpstreams,
  text,
  withClient,
  type TaskUpstream,
  expectSamplingRelayed,
} from './fixtures/proxy';
import { httpUpstream } from './fixtures/http-upstream';
import { recordingEmitter } from './fixtures/recording-emitter';

let upstream: TaskUpstream;
const reports: McpCallReport[] = [];
// Every event the dispatchers and the upstream client emitted, as emitted.
const events: unknown[] = [];
const clientEvents: McpClientEvent[] = [];

const opened: { served: McpServed; http: HttpServing }[] = [];
let http: HttpServing;
// Flipped by a test: the chain refuses every call while it is false.
let allowed = true;

/** mcpServe over the legacy upstream, every call allowed while `allowed`, with `options`; over HTTP. */
async function serve(options: Partial<McpServeOptions> = {}): Promise<HttpServing> {
  const served = await serveUpstreams([upstream.jobs], {
    name: 'relay',
    identityFrom: identityFromToken,
    onCall: (report) => reports.push(report),
    events: recordingEmitter(events, { everyType: true }),
    chain: canonicalChain({
      permissions: {
        check: () =>
          allowed ? { allow: true as const } : { allow: false as const, reason: 'closed for now' },
      },
    }),
    ...options,
  });
  const serving = await serveHttp(served, { authenticate });
  opened.push({ served, http: serving });
  return serving;
}

beforeAll(async () => {
  upstream = legacyAskingUpstream();
  upstream.jobs.subscribe((event) => clientEvents.push(event));
  http = await serve();
}, 60_000);

afterAll(async () => {
  for (const { served, http: serving } of opened) {
    await serving.close();
    await served.close();
  }
  await upstream?.close();
});

const runs = (): string[] => upstream.runs();
const since = (before: number) => runs().slice(before);

const logged = (before: number, lines: readonly string[], ms?: number) =>
  upstream.expectLogged(before, lines, ms);

/** A 2026-07-28 client as `who` that answers Ada, teal, Paris and file:///work. */
const modernClient = (
  who: string,
  capabilities: ClientCapabilities,
  options: { manual?: boolean; at?: HttpServing } = {},
) => connect((options.at ?? http).url, who, capabilities, { ...options, name: 'Ada', color: 'teal' });

const elicits = { elicitation: { form: {} } } as const;
const answer = (name: string) => ({ elicitation: { action: 'accept', content: { name } } });

describe("a 2025-era upstream's mid-call questions, relayed to a 2026-07-28 client", () => {
  it('asks the client, answers the upstream on the same call, and returns its result', async () => {
    const before = runs().length;
    await withClient(modernClient('alice', elicits), async (client) => {
      const done = await client.callTool({ name: 'old_ask_name', arguments: {} });
      expect(done.isError).not.toBe(true);
      expect(text(done)).toBe('Hello, Ada!');
    });
    // One call upstream, answered once, never cancelled.
    expect(since(before)).toEqual(['start ask_name', 'answer ask_name accept Ada', 'end ask_name']);
  }, 30_000);

  it('over two rounds: each question reaches the client in turn, the one call uses both answers', async () => {
    const before = runs().length;
    await withClient(modernClient('alice', elicits), async (client) => {
      const done = await client.callTool({ name: 'old_ask_twice', arguments: {} });
      expect(text(done)).toBe('Ada likes teal');
    });
    expect(since(before)).toEqual([
      'start ask_twice',
      'answer ask_twice accept Ada',
      'answer ask_twice accept teal',
      'end ask_twice',
    ]);
  }, 30_000);

  it.each([
    ['sampling', 'old_ask_sample', { sampling: {} }, 'The model says Paris'],
    ['roots', 'old_ask_roots', { roots: {} }, 'Roots: file:///work'],
  ] as const)(
    'relays %s the same way',
    async (kind, tool, capabilities, expected) => {
      const reported = clientEvents.length;
      await withClient(modernClient('alice', capabilities), async (client) => {
        const done = await client.callTool({ name: tool, arguments: {} });
        expect(text(done)).toBe(expected);
      });
      expectSamplingRelayed(clientEvents.slice(reported), kind);
    },
    30_000,
  );

  it("shows the upstream's question under a key and a state of ours, and keeps the upstream call open", async () => {
    const before = runs().length;
    await withClient(modernClient('alice', elicits, { manual: true }), async (client) => {
      const asked = await ask(client, 'old_ask_name');
      expect(asked.resultType).toBe('input_required');
      expect(asked.inputRequests).toEqual({
        elicitation: {
          method: 'elicitation/create',
          params: expect.objectContaining({ mode: 'form', message: 'What is your name?' }),
        },
      });
      expect(asked.requestState).toMatch(/^u1\.[A-Za-z0-9_-]+$/);
      expect(reports.at(-1)).toMatchObject({
        toolName: 'old_ask_name',
        settled: { kind: 'input-required', asker: 'upstream' },
      });
      await new Promise((resolve) => setTimeout(resolve, 300));
      // Parked: started, not answered, not cancelled.
      expect(since(before)).toEqual(['start ask_name']);
      const retried = await retry(
        client,
        'old_ask_name',
        // A key it was not asked under is not passed on.
        { ...answer('Grace'), sampling: { role: 'assistant', content: { type: 'text', text: 'x' } } },
        asked.requestState,
      );
      expect(text(retried)).toBe('Hello, Grace!');
      expect(since(before)).toEqual(['start ask_name', 'answer ask_name accept Grace', 'end ask_name']);
      // Neither the answer nor the state is in an event.
      expect(events.length).toBeGreaterThan(0);
      const emitted = JSON.stringify([events, clientEvents]);
      expect(emitted).not.toContain('Grace');
      expect(emitted).not.toContain(asked.requestState!.slice(3, 40));
    });
  }, 30_000);

  it('declines for the upstream when the retry gives no answer under the key', async () => {
    const first = await askAs(http.url, 'alice', elicits, 'old_ask_name');
    const done = await retryAs(http.url, 'alice', elicits, {
      name: 'old_ask_name',
      inputResponses: { name: { action: 'accept', content: { name: 'Wrong key' } } },
      requestState: first.requestState,
    });
    expect(text(done)).toBe('No name (decline)');
  }, 30_000);

  it('answers -32021 naming elicitation to a client that did not declare it, and ends the upstream call', async () => {
    const before = runs().length;
    await withClient(modernClient('alice', { sampling: {} }), async (client) => {
      const error = await protocolError(client.callTool({ name: 'old_ask_name', arguments: {} }));
      expect(error.code).toBe(-32021);
      expect((error.data as { requiredCapabilities?: unknown }).requiredCapabilities).toEqual({
        elicitation: {},
      });
    });
    // Its request declined as before, its call cancelled: nothing waits on.
    await logged(before, ['cancelled ask_name', 'answer ask_name decline']);
    expect(reports.at(-1)).toMatchObject({ settled: { kind: 'refused', code: 'MISSING_CLIENT_CAPABILITY' } });
  }, 30_000);

  describeStateRefusals(
    'a state that is not this caller’s reaches nothing upstream',
    {
      url: () => http.url,
      reports,
      capabilities: elicits,
      tool: 'old_ask_name',
      otherTool: 'old_ask_twice',
      key: 'elicitation',
      upstreamMark: () => runs().length,
      upstreamSince: since,
    },
    (first) => {
      it('and still opens for its caller, whose answer the parked call gets', async () => {
        const done = await retryAs(http.url, 'alice', elicits, {
          name: 'old_ask_name',
          inputResponses: answer('Alice'),
          requestState: first().requestState,
        });
        expect(text(done)).toBe('Hello, Alice!');
      }, 30_000);

      it('once answered, the same state replayed by its caller reaches nothing', async () => {
        const before = runs().length;
        const replayed = await retryAs(http.url, 'alice', elicits, {
          name: 'old_ask_name',
          inputResponses: answer('Eve'),
          requestState: first().requestState,
        });
        expect(replayed.isError).toBe(true);
        expect(text(replayed)).toContain('is not waiting in this process');
        await new Promise((resolve) => setTimeout(resolve, 200));
        expect(since(before)).toEqual([]);
      }, 30_000);
    },
  );

  it('two retries of one state racing: one answers the parked call, the other reaches nothing', async () => {
    const first = await askAs(http.url, 'alice', elicits, 'old_ask_name');
    const before = runs().length;
    const both = await Promise.all(
      ['Ann', 'Bob'].map((name) =>
        retryAs(http.url, 'alice', elicits, {
          name: 'old_ask_name',
          inputResponses: answer(name),
          requestState: first.requestState,
        }),
      ),
    );
    const texts = both.map(text);
    expect(texts.filter((said) => /^Hello, (Ann|Bob)!$/.test(said))).toHaveLength(1);
    expect(texts.filter((said) => said.includes('is not waiting in this process'))).toHaveLength(1);
    expect(since(before).filter((line) => line.startsWith('answer '))).toHaveLength(1);
  }, 30_000);

  it('ends a parked call when the chain refuses its retry (policy changed between rounds)', async () => {
    const first = await askAs(http.url, 'alice', elicits, 'old_ask_name');
    const before = runs().length;
    allowed = false;
    try {
      const refusedRetry = await retryAs(http.url, 'alice', elicits, {
        name: 'old_ask_name',
        inputResponses: answer('Nope'),
        requestState: first.requestState,
      });
      expect(refusedRetry.isError).toBe(true);
      expect(text(refusedRetry)).toContain('closed for now');
    } finally {
      allowed = true;
    }
    // Not answered with the client's answer: declined, and its call cancelled.
    await logged(before, ['cancelled ask_name', 'answer ask_name decline']);
    const again = await retryAs(http.url, 'alice', elicits, {
      name: 'old_ask_name',
      inputResponses: answer('Later'),
      requestState: first.requestState,
    });
    expect(text(again)).toContain('is not waiting in this process');
  }, 30_000);

  it('a retry after the upstream gave up on its question gets what its call ended with', async () => {
    const before = runs().length;
    const first = await askAs(http.url, 'alice', elicits, 'old_ask_briefly');
    expect(first.resultType).toBe('input_required');
    await logged(before, ['error ask_briefly']);
    const late = await retryAs(http.url, 'alice', elicits, {
      name: 'old_ask_briefly',
      inputResponses: answer('Late'),
      requestState: first.requestState,
    });
    expect(late.isError).toBe(true);
    expect(text(late)).toMatch(/^failed: .*timed out/i);
    // Answered nothing, called nothing again.
    expect(since(before)).toEqual(['start ask_briefly', 'error ask_briefly']);
  }, 30_000);

  it('ends a parked call nobody retries after its bound: declined, cancelled, its state reaches nothing', async () => {
    const bounded = await serve({ parkedCallMs: 400 });
    const before = runs().length;
    const first = await askAs(bounded.url, 'alice', elicits, 'old_ask_name');
    expect(first.resultType).toBe('input_required');
    await logged(before, ['cancelled ask_name', 'answer ask_name decline']);
    const late = await retryAs(bounded.url, 'alice', elicits, {
      name: 'old_ask_name',
      inputResponses: answer('Late'),
      requestState: first.requestState,
    });
    expect(text(late)).toContain('is not waiting in this process');
    expect(since(before).filter((line) => line.includes('Late'))).toEqual([]);
  }, 30_000);

  describe("a parked call stays admitted: the host's drain waits for it", () => {
    /** mcpServe whose `admit` notes each admission and whether it was released. */
    async function admitting(options: Partial<McpServeOptions> = {}) {
      const admissions: { continuesParkedCall: boolean; released: number }[] = [];
      const at = await serve({
        ...options,
        admit: ({ continuesParkedCall }) => {
          const admission = { continuesParkedCall, released: 0 };
          admissions.push(admission);
          return () => (admission.released += 1);
        },
      });
      return { at, admissions };
    }

    it('until its retry takes it; the retry is admitted as continuing it', async () => {
      const { at, admissions } = await admitting();
      const first = await askAs(at.url, 'alice', elicits, 'old_ask_name');
      expect(first.resultType).toBe('input_required');
      // The request was answered, but its upstream call is parked: still in flight.
      expect(admissions).toEqual([{ continuesParkedCall: false, released: 0 }]);
      const done = await retryAs(at.url, 'alice', elicits, {
        name: 'old_ask_name',
        inputResponses: answer('Held'),
        requestState: first.requestState,
      });
      expect(text(done)).toBe('Hello, Held!');
      expect(admissions).toEqual([
        { continuesParkedCall: false, released: 1 },
        { continuesParkedCall: true, released: 1 },
      ]);
    }, 30_000);

    it('until it is ended, after its bound or when the server closes', async () => {
      const { at, admissions } = await admitting({ parkedCallMs: 300 });
      const before = runs().length;
      await askAs(at.url, 'alice', elicits, 'old_ask_name');
      await logged(before, ['cancelled ask_name', 'answer ask_name decline']);
      expect(admissions).toEqual([{ continuesParkedCall: false, released: 1 }]);

      const closing = await admitting();
      await askAs(closing.at.url, 'alice', elicits, 'old_ask_name');
      expect(closing.admissions[0]!.released).toBe(0);
      const served = opened.find(({ http: serving }) => serving === closing.at)!.served;
      await served.close();
      expect(closing.admissions).toEqual([{ continuesParkedCall: false, released: 1 }]);
    }, 30_000);
  });

  it('declines a question as before once the parked calls reach the cap', async () => {
    const capped = await serve({ maxParkedCalls: 1 });
    const first = await askAs(capped.url, 'alice', elicits, 'old_ask_name');
    expect(first.resultType).toBe('input_required');
    // The one parked call is not running: this call's question is this call's, and finds no room.
    await withClient(modernClient('mallory', elicits, { at: capped }), async (client) => {
      const done = await client.callTool({ name: 'old_ask_name', arguments: {} });
      expect(text(done)).toBe('No name (decline)');
    });
    const done = await retryAs(capped.url, 'alice', elicits, {
      name: 'old_ask_name',
      inputResponses: answer('Capped'),
      requestState: first.requestState,
    });
    expect(text(done)).toBe('Hello, Capped!');
  }, 30_000);

  it('tells a retry that reaches a process without the parked call to reach the one that holds it', async () => {
    // Another server given the same key opens the state (scale-out) but holds no parked call.
    const key = 'a-request-state-key-of-32-bytes-0123456789';
    const holding = await serve({ requestStateKey: key });
    const other = await serve({ requestStateKey: key });
    const first = await askAs(holding.url, 'alice', elicits, 'old_ask_name');
    const before = runs().length;
    const elsewhere = await retryAs(other.url, 'alice', elicits, {
      name: 'old_ask_name',
      inputResponses: answer('Elsewhere'),
      requestState: first.requestState,
    });
    expect(elsewhere.isError).toBe(true);
    expect(text(elsewhere)).toContain('must reach the process that holds the call');
    // Not called again there.
    expect(since(before).filter((line) => line.startsWith('start '))).toEqual([]);
    const done = await retryAs(holding.url, 'alice', elicits, {
      name: 'old_ask_name',
      inputResponses: answer('Home'),
      requestState: first.requestState,
    });
    expect(text(done)).toBe('Hello, Home!');
  }, 30_000);
});

describe('the same, with the 2025-era upstream over Streamable HTTP', () => {
  it("answers the upstream's request on its session while its tools/call stream stays open", async () => {
    const answers: unknown[] = [];
    const remote = await httpUpstream(() => {
      const server = new McpServer({ name: 'asking-over-http', version: '1.0.0' });
      server.registerTool('ask_branch', { description: 'Asks which branch.' }, async (extra) => {
        const answer = await server.server.elicitInput(
          {
            mode: 'form',
            message: 'Deploy which branch?',
            requestedSchema: { type: 'object', properties: { branch: { type: 'string' } } },
          },
          { relatedRequestId: extra.requestId },
        );
        answers.push(answer);
        return { content: [{ type: 'text', text: `deploying ${String(answer.content?.['branch'])}` }] };
      });
      return server;
    });
    const ops = mcpClient({ name: 'ops', url: remote.url, prefix: 'ops_' });
    const served = await serveUpstreams([ops], { name: 'relay', identityFrom: identityFromToken });
    const serving = await serveHttp(served, { authenticate });
    try {
      const first = await askAs(serving.url, 'alice', elicits, 'ops_ask_branch');
      expect(first.inputRequests?.['elicitation']?.params.message).toBe('Deploy which branch?');
      const done = await retryAs(serving.url, 'alice', elicits, {
        name: 'ops_ask_branch',
        inputResponses: { elicitation: { action: 'accept', content: { branch: 'release-7' } } },
        requestState: first.requestState,
      });
      expect(text(done)).toBe('deploying release-7');
      expect(answers).toEqual([{ action: 'accept', content: { branch: 'release-7' } }]);
      // One tools/call reached the upstream.
      const calls = remote.requests.filter(
        (request) => (request.body as { method?: string } | undefined)?.method === 'tools/call',
      );
      expect(calls).toHaveLength(1);
    } finally {
      await serving.close();
      await served.close();
      await ops.close();
      await remote.close();
    }
  }, 30_000);
});
