// A 2026-07-28 upstream task (SEP-2663) that asks for input, relayed through mcpServe to a 2026-07-28
// client: the call that follows the task answers the client with the task's questions under a sealed
// state of ours naming the task (the task is left waiting, not cancelled); the client's retry runs the
// chain again and sends the task its answers with tasks/update instead of calling the tool again. A
// state edited or echoed by another principal is refused and nothing reaches the upstream. The
// upstream is the task-upstream fixture over stdio (its RUN_LOG shows every start, update and cancel);
// the client is the SDK v2's, over Streamable HTTP.

import { Client, InMemoryTransport, type ClientCapabilities } from '@modelcontextprotocol/client';
import { serveHttp, type HttpServing, type McpCallReport, type McpServed } from '@toolgate/mcp';
import {
  ask,
  authenticate,
  describeStateRefusals,
  identityFromToken,
  modernClient as connect,
  protocolError,
  retry,
  retryAs,
  serveUpstreams,
  taskUpstream,
  text,
  withClient,
  type TaskUpstream,
} from './fixtures/proxy';

let upstream: TaskUpstream;
let served: McpServed;
let http: HttpServing;
const reports: McpCallReport[] = [];

beforeAll(async () => {
  upstream = taskUpstream();
  served = await serveUpstreams([upstream.jobs], {
    name: 'relay',
    identityFrom: identityFromToken,
    onCall: (report) => reports.push(report),
  });
  http = await serveHttp(served, { authenticate });
}, 60_000);

afterAll(async () => {
  await http?.close();
  await served?.close();
  await upstream?.close();
});

const runs = (): string[] => upstream.runs();
const count = (prefix: string) => upstream.count(prefix);

/** A 2026-07-28 client as `who` that answers Ada and teal; manual: it hands back input-required results. */
const modernClient = (who: string, capabilities: ClientCapabilities, options: { manual?: boolean } = {}) =>
  connect(http.url, who, capabilities, { ...options, name: 'Ada', color: 'teal' });

const elicits = { elicitation: { form: {} } } as const;

describe("a 2026-07-28 upstream task's questions, relayed to a 2026-07-28 client", () => {
  it('asks the client, sends the task the answer with tasks/update, and answers with its result', async () => {
    const starts = count('start ask_name');
    const updates = count('update ');
    await withClient(modernClient('alice', elicits), async (client) => {
      const done = await client.callTool({ name: 'jobs_ask_name', arguments: {} });
      expect(done.isError).not.toBe(true);
      expect(text(done)).toBe('Hello, Ada!');
      // One call upstream; the answer went to the task, not to a second tools/call.
      expect(count('start ask_name')).toBe(starts + 1);
      expect(
        runs()
          .filter((line) => line.startsWith('update '))
          .slice(updates),
      ).toEqual([expect.stringMatching(/^update up-\w+ name$/)]);
    });
  }, 30_000);

  it('over two rounds: each question reaches the client in turn, the result carries both answers', async () => {
    const updates = count('update ');
    await withClient(modernClient('alice', elicits), async (client) => {
      const done = await client.callTool({ name: 'jobs_ask_twice', arguments: {} });
      expect(text(done)).toBe('Ada likes teal');
      const sent = runs()
        .filter((line) => line.startsWith('update '))
        .slice(updates);
      expect(sent.map((line) => line.split(' ')[2])).toEqual(['name', 'color']);
      // Both rounds answered the same upstream task.
      expect(new Set(sent.map((line) => line.split(' ')[1])).size).toBe(1);
    });
  }, 30_000);

  it("shows the task's question under a state of ours, and leaves the task waiting (not cancelled)", async () => {
    const cancels = count('cancel ');
    await withClient(modernClient('alice', elicits, { manual: true }), async (client) => {
      const asked = await ask(client, 'jobs_ask_name');
      expect(asked.resultType).toBe('input_required');
      expect(Object.keys(asked.inputRequests ?? {})).toEqual(['name']);
      expect(asked.inputRequests?.['name']).toMatchObject({
        method: 'elicitation/create',
        params: { message: 'What is your name?' },
      });
      expect(asked.requestState).toMatch(/^u1\.[A-Za-z0-9_-]+$/);
      // The upstream's task id is sealed, not shown.
      expect(JSON.stringify(asked)).not.toMatch(/up-\w+/);
      expect(reports.at(-1)).toMatchObject({
        toolName: 'jobs_ask_name',
        settled: { kind: 'input-required', asker: 'upstream' },
      });
      await new Promise((resolve) => setTimeout(resolve, 400));
      expect(count('cancel ')).toBe(cancels);
      const retried = await retry(
        client,
        'jobs_ask_name',
        {
          name: { action: 'accept', content: { name: 'Grace' } },
          // A key the task did not ask is not passed on.
          color: { action: 'accept', content: { color: 'red' } },
        },
        asked.requestState,
      );
      expect(text(retried)).toBe('Hello, Grace!');
      expect(
        runs()
          .filter((line) => line.startsWith('update '))
          .at(-1),
      ).toMatch(/ name$/);
      expect(count('cancel ')).toBe(cancels);
    });
  }, 30_000);

  it('answers -32021 naming elicitation to a client that did not declare it, and cancels the task', async () => {
    const cancels = count('cancel ');
    await withClient(modernClient('alice', { sampling: {} }), async (client) => {
      const error = await protocolError(client.callTool({ name: 'jobs_ask_name', arguments: {} }));
      expect(error.code).toBe(-32021);
      expect((error.data as { requiredCapabilities?: unknown }).requiredCapabilities).toEqual({
        elicitation: {},
      });
      // Nobody will answer it: the task is not left waiting.
      expect(count('cancel ')).toBe(cancels + 1);
    });
  }, 30_000);

  describeStateRefusals(
    'refuses a state that is not this caller’s, and sends nothing upstream',
    {
      url: () => http.url,
      reports,
      capabilities: elicits,
      tool: 'jobs_ask_name',
      otherTool: 'jobs_ask_twice',
      key: 'name',
      upstreamMark: () => runs().length,
      upstreamSince: (mark) => runs().slice(mark),
    },
    (first) => {
      it('and opens for the caller it was given to: the waiting task gets the answer', async () => {
        const done = await retryAs(http.url, 'alice', elicits, {
          name: 'jobs_ask_name',
          inputResponses: { name: { action: 'accept', content: { name: 'Alice' } } },
          requestState: first().requestState,
        });
        expect(text(done)).toBe('Hello, Alice!');
      }, 30_000);

      it('once answered, the same state replayed by its caller sends the task nothing again', async () => {
        const updates = count('update ');
        const replayed = await retryAs(http.url, 'alice', elicits, {
          name: 'jobs_ask_name',
          inputResponses: { name: { action: 'accept', content: { name: 'Eve' } } },
          requestState: first().requestState,
        });
        expect(replayed.isError).toBe(true);
        expect(text(replayed)).toContain('not waiting for these answers');
        expect(count('update ')).toBe(updates);
      }, 30_000);
    },
  );
});

// A client holding a task of ours for the call is asked through that task: task-held-upstream-input.test.ts.

describe('the same task, asked by a 2025-11-25 client', () => {
  it('cancels the upstream task and fails with the reason, as no question can reach that client', async () => {
    const [clientEnd, serverEnd] = InMemoryTransport.createLinkedPair();
    await served.connect(serverEnd);
    const legacy = new Client(
      { name: 'legacy', version: '1.0.0' },
      { versionNegotiation: { mode: 'legacy' }, capabilities: elicits },
    );
    await legacy.connect(clientEnd);
    const cancels = count('cancel ');
    try {
      const failed = await legacy.callTool({ name: 'jobs_ask_name', arguments: {} });
      expect(failed.isError).toBe(true);
      expect(text(failed)).toContain('asked for input, which this call cannot relay');
      expect(count('cancel ')).toBe(cancels + 1);
    } finally {
      await legacy.close();
    }
  }, 30_000);
});
