// A 2025-era upstream (SDK 1.x, revision 2025-11-25) that asks its client mid-call, while a
// 2026-07-28 client holds a task of ours for the call: nothing is parked, the upstream's call keeps
// running inside our task. Our task goes input_required with the question under a key of ours (only
// what the client declared it can answer), the owner's tasks/update answers the upstream's pending
// request with that key only, and our task goes back to working: round after round, until the
// tool's result completes it. A question the client cannot answer fails our task with -32021; a
// cancel of our task or its time to live declines the pending request and cancels the upstream call;
// another principal's update reaches nothing. A 2025-era tool lists no task support, so its call runs
// as a task of ours the way a gateway's does: paused for a check-in, handed out as a task, approved
// (here at once), run under it. A task-asking call that is handed out no task is parked as a plain
// one is. The upstream is the legacy-asking fixture over stdio (its RUN_LOG shows every start,
// answer, cancel and end); the client speaks the wire.

import { checkInApproved, inMemoryCheckIns, inMemoryTaskRecords } from '@toolgate/core';
import { canonicalChain } from '@toolgate/middleware';
import {
  serveHttp,
  type HttpServing,
  type McpCallReport,
  type McpClientEvent,
  type McpServeOptions,
  type McpSettled,
} from '@toolgate/mcp';
import {
  authenticate,
  identityFromToken,
  legacyAskingUpstream,
  serveUpstreams,
  type TaskUpstream,
  expectSamplingRelayed,
  taskCaller,
  TASKS_AND_ELICITS,
} from './fixtures/proxy';
import { recordingEmitter } from './fixtures/recording-emitter';
import { WITH_TASKS } from '../../../test-support/modern-request';

const CHECK_IN_KEY = 'a-check-in-key-of-at-least-32-bytes-0123456789';

let upstream: TaskUpstream;
// The same fixture without check-ins: its calls are handed out no task of ours.
let unchecked: TaskUpstream;
let http: HttpServing;
// Another server sharing `http`'s task store, as another gateway process would.
let otherHttp: HttpServing;
let plainHttp: HttpServing;
const closing: (() => Promise<void>)[] = [];
const reports: McpCallReport[] = [];
// Every event the dispatcher and the upstream client emitted, as emitted.
const events: unknown[] = [];
const clientEvents: McpClientEvent[] = [];

/** mcpServe over `over`: every call checked in, its task approved at once and run under it. */
async function serve(
  over: TaskUpstream,
  tasks: Partial<NonNullable<McpServeOptions['tasks']>> = {},
): Promise<HttpServing> {
  const served = await serveUpstreams([over.jobs], {
    name: 'relay',
    identityFrom: identityFromToken,
    onCall: (report) => reports.push(report),
    events: recordingEmitter(events, { everyType: true }),
    chain: canonicalChain({ checkIns: inMemoryCheckIns(), checkInKey: CHECK_IN_KEY }),
    settlePausedTask: async (first, call, task): Promise<McpSettled> => {
      task.working('Approved.');
      const outcome = await call.dispatcher.resume(first.checkIn, checkInApproved({ by: 'ana' }), {
        signal: task.signal,
      });
      return { kind: 'outcome', outcome };
    },
    tasks: { pollIntervalMs: 100, ...tasks },
  });
  const serving = await serveHttp(served, { authenticate });
  closing.push(
    () => serving.close(),
    () => served.close(),
  );
  return serving;
}

beforeAll(async () => {
  upstream = legacyAskingUpstream({ fromAnnotations: { destructiveHint: { checkIn: 'always' } } });
  unchecked = legacyAskingUpstream();
  upstream.jobs.subscribe((event) => clientEvents.push(event));
  const store = inMemoryTaskRecords();
  http = await serve(upstream, { store, sharedPollMs: 50 });
  otherHttp = await serve(upstream, { store, sharedPollMs: 50 });
  const served = await serveUpstreams([unchecked.jobs], { name: 'relay', identityFrom: identityFromToken });
  plainHttp = await serveHttp(served, { authenticate });
  closing.push(
    () => plainHttp.close(),
    () => served.close(),
  );
}, 60_000);

afterAll(async () => {
  for (const close of closing) await close();
  await upstream?.close();
  await unchecked?.close();
});

const runs = (): string[] => upstream.runs();
const since = (before: number) => runs().slice(before);
const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const logged = (before: number, lines: readonly string[], ms?: number) =>
  upstream.expectLogged(before, lines, ms);

const { request, startTask, update, next: poll } = taskCaller(() => http);

/** Polls our task until it leaves `working`, or shows other questions than `past` (a previous round's). */
const next = (taskId: string, past?: unknown, at?: HttpServing) =>
  poll(taskId, (asked) => JSON.stringify(asked) !== JSON.stringify(past), at);

const named = (name: string) => ({ elicitation: { action: 'accept', content: { name } } });

describe("a 2025-era upstream's mid-call questions, asked through the client's task of ours", () => {
  it('one round: our task shows the question under our key, the answer reaches the same upstream call', async () => {
    const before = runs().length;
    const taskId = await startTask('old_ask_name');
    const asking = await next(taskId);
    expect(asking['status']).toBe('input_required');
    expect(asking['inputRequests']).toEqual({
      elicitation: {
        method: 'elicitation/create',
        params: expect.objectContaining({ mode: 'form', message: 'What is your name?' }),
      },
    });
    // Waiting for the owner: started, not answered, not cancelled.
    expect(since(before)).toEqual(['start ask_name']);
    // A key it was not asked under is not passed on (the upstream would read it as the answer).
    const updated = await update(taskId, {
      sampling: { role: 'assistant', content: { type: 'text', text: 'x' }, model: 'm' },
      ...named('Ada-7f3q'),
    });
    expect(updated.result).toMatchObject({ resultType: 'complete' });
    const done = await next(taskId, asking['inputRequests']);
    expect(done['status']).toBe('completed');
    expect(done['result']).toMatchObject({ content: [{ type: 'text', text: 'Hello, Ada-7f3q!' }] });
    expect(since(before)).toEqual(['start ask_name', 'answer ask_name accept Ada-7f3q', 'end ask_name']);
    expect(reports.filter((report) => report.toolName === 'old_ask_name').at(-1)).toMatchObject({
      settled: { kind: 'outcome', outcome: { kind: 'result' } },
    });
  }, 30_000);

  it('two rounds: each question in turn on our task, one upstream call uses both answers', async () => {
    const before = runs().length;
    const taskId = await startTask('old_ask_twice');
    const first = await next(taskId);
    expect(first['inputRequests']).toEqual({
      elicitation: expect.objectContaining({
        params: expect.objectContaining({ message: 'What is your name?' }),
      }),
    });
    await update(taskId, named('Grace'));
    const second = await next(taskId, first['inputRequests']);
    expect(second['status']).toBe('input_required');
    expect(second['inputRequests']).toEqual({
      elicitation: expect.objectContaining({
        params: expect.objectContaining({ message: 'What is your favourite color?' }),
      }),
    });
    await update(taskId, { elicitation: { action: 'accept', content: { color: 'teal' } } });
    const done = await next(taskId, second['inputRequests']);
    expect(done['status']).toBe('completed');
    expect(done['result']).toMatchObject({ content: [{ type: 'text', text: 'Grace likes teal' }] });
    expect(since(before)).toEqual([
      'start ask_twice',
      'answer ask_twice accept Grace',
      'answer ask_twice accept teal',
      'end ask_twice',
    ]);
  }, 30_000);

  it.each([
    [
      'sampling',
      'old_ask_sample',
      { sampling: { role: 'assistant', content: { type: 'text', text: 'Paris' }, model: 'm' } },
      'The model says Paris',
    ],
    ['roots', 'old_ask_roots', { roots: { roots: [{ uri: 'file:///work' }] } }, 'Roots: file:///work'],
  ] as const)(
    'relays %s the same way',
    async (kind, tool, answer, expected) => {
      const reported = clientEvents.length;
      const taskId = await startTask(tool, { ...WITH_TASKS, [kind]: {} });
      const asking = await next(taskId);
      expect(Object.keys(asking['inputRequests'] as object)).toEqual([kind]);
      await update(taskId, answer);
      const done = await next(taskId, asking['inputRequests']);
      expect(done['result']).toMatchObject({ content: [{ type: 'text', text: expected }] });
      expectSamplingRelayed(clientEvents.slice(reported), kind);
    },
    30_000,
  );

  it('a client that did not declare elicitation: our task fails with -32021, the upstream call is ended', async () => {
    const before = runs().length;
    const taskId = await startTask('old_ask_name', { ...WITH_TASKS, sampling: {} });
    const done = await next(taskId);
    expect(done['status']).toBe('failed');
    expect(done['error']).toMatchObject({
      code: -32021,
      data: { requiredCapabilities: { elicitation: {} } },
    });
    // Its request declined as before, its call cancelled: nothing waits on.
    await logged(before, ['cancelled ask_name', 'answer ask_name decline']);
    expect(reports.at(-1)).toMatchObject({
      toolName: 'old_ask_name',
      settled: { kind: 'refused', code: 'MISSING_CLIENT_CAPABILITY' },
    });
  }, 30_000);

  it('tasks/cancel while it waits: the pending request is declined, the upstream call cancelled', async () => {
    const before = runs().length;
    const taskId = await startTask('old_ask_name');
    expect((await next(taskId))['status']).toBe('input_required');
    expect((await request('alice', 'tasks/cancel', { taskId })).result).toMatchObject({
      resultType: 'complete',
    });
    await logged(before, ['cancelled ask_name', 'answer ask_name decline']);
    // An update after the cancel reaches nothing.
    await update(taskId, named('Late'));
    await wait(300);
    expect(since(before).filter((line) => line.includes('Late'))).toEqual([]);
    expect(since(before).filter((line) => line.startsWith('answer '))).toEqual(['answer ask_name decline']);
    expect((await request('alice', 'tasks/get', { taskId })).result).toMatchObject({ status: 'cancelled' });
  }, 30_000);

  it("a question left unanswered past our task's time to live ends the upstream call", async () => {
    const short = await serve(upstream, { ttlMs: 1_500 });
    const before = runs().length;
    const taskId = await startTask('old_ask_name', TASKS_AND_ELICITS, short);
    expect((await next(taskId, undefined, short))['status']).toBe('input_required');
    await logged(before, ['cancelled ask_name', 'answer ask_name decline'], 8_000);
  }, 30_000);

  it("another principal's update is refused as an unknown task and reaches nothing upstream", async () => {
    const before = runs().length;
    const taskId = await startTask('old_ask_name');
    const asking = await next(taskId);
    expect(asking['status']).toBe('input_required');
    const refused = await update(taskId, named('Mallory'), 'mallory');
    expect(refused.error?.message).toMatch(/Unknown task/);
    await wait(300);
    expect(since(before)).toEqual(['start ask_name']);
    // Its owner's update answering none of the asked keys is no answer: the task keeps waiting.
    await update(taskId, { name: { action: 'accept', content: { name: 'Wrong key' } } });
    await wait(300);
    expect(since(before)).toEqual(['start ask_name']);
    expect((await request('alice', 'tasks/get', { taskId })).result).toMatchObject({
      status: 'input_required',
    });
    await update(taskId, named('Alice'));
    const done = await next(taskId, asking['inputRequests']);
    expect(done['result']).toMatchObject({ content: [{ type: 'text', text: 'Hello, Alice!' }] });
  }, 30_000);

  it('the answer is in no event and no report', async () => {
    const reported = reports.length;
    const emitted = events.length;
    const fromClient = clientEvents.length;
    const taskId = await startTask('old_ask_name');
    const asking = await next(taskId);
    await update(taskId, { elicitation: { action: 'decline', content: { name: 'Zq-secret-answer' } } });
    const done = await next(taskId, asking['inputRequests']);
    expect(done['result']).toMatchObject({ content: [{ type: 'text', text: 'No name (decline)' }] });
    expect(reports.length).toBeGreaterThan(reported);
    expect(events.length).toBeGreaterThan(emitted);
    const seen = JSON.stringify([
      reports.slice(reported),
      events.slice(emitted),
      clientEvents.slice(fromClient),
      done,
    ]);
    expect(seen).not.toContain('Zq-secret-answer');
  }, 30_000);

  it('an upstream that withdraws its question goes on: our task gets what its call ended with', async () => {
    const before = runs().length;
    const taskId = await startTask('old_ask_briefly');
    await logged(before, ['error ask_briefly']);
    const done = await next(
      taskId,
      (await request('alice', 'tasks/get', { taskId })).result?.['inputRequests'],
    );
    expect(done['status']).toBe('completed');
    expect(done['result']).toMatchObject({
      isError: true,
      content: [{ type: 'text', text: expect.stringMatching(/^failed: .*timed out/i) }],
    });
    expect(since(before)).toEqual(['start ask_briefly', 'error ask_briefly']);
  }, 30_000);

  it('a question the upstream withdraws while it works on: our task is working again, then completes', async () => {
    const before = runs().length;
    const taskId = await startTask('old_ask_briefly_then_work');
    expect((await next(taskId))['status']).toBe('input_required');
    await logged(before, ['gave up ask_briefly_then_work']);
    // Polled within the second the tool works on: the withdrawn question is no longer shown.
    let seen: Record<string, unknown> | undefined;
    for (let i = 0; i < 20; i++) {
      seen = (await request('alice', 'tasks/get', { taskId })).result;
      if (seen?.['status'] !== 'input_required') break;
      await wait(25);
    }
    expect(seen).toMatchObject({ status: 'working' });
    const done = await next(taskId);
    expect(done['result']).toMatchObject({ content: [{ type: 'text', text: 'Worked on without a name' }] });
  }, 30_000);

  it('an update given to another server sharing the task store reaches the call running here', async () => {
    const before = runs().length;
    const taskId = await startTask('old_ask_name');
    // The other server reads the question from the store.
    const asking = await next(taskId, undefined, otherHttp);
    expect(Object.keys(asking['inputRequests'] as object)).toEqual(['elicitation']);
    const updated = await request(
      'alice',
      'tasks/update',
      { taskId, inputResponses: named('Hopper') },
      TASKS_AND_ELICITS,
      otherHttp,
    );
    expect(updated.result).toMatchObject({ resultType: 'complete' });
    const done = await next(taskId, asking['inputRequests'], otherHttp);
    expect(done['result']).toMatchObject({ content: [{ type: 'text', text: 'Hello, Hopper!' }] });
    // One call upstream, from the server it runs on.
    expect(since(before)).toEqual(['start ask_name', 'answer ask_name accept Hopper', 'end ask_name']);
  }, 30_000);

  it('a task-asking call handed out no task (its tool lists no task support) is parked as a plain one', async () => {
    const before = unchecked.runs().length;
    const call = (params: Record<string, unknown>) =>
      request(
        'alice',
        'tools/call',
        { name: 'old_ask_name', arguments: {}, ...params },
        TASKS_AND_ELICITS,
        plainHttp,
      );
    const asked = await call({});
    expect(asked.result).toMatchObject({
      resultType: 'input_required',
      inputRequests: { elicitation: { method: 'elicitation/create' } },
    });
    const done = await call({
      inputResponses: named('Plain'),
      requestState: asked.result!['requestState'],
    });
    expect(done.result).toMatchObject({ content: [{ type: 'text', text: 'Hello, Plain!' }] });
    expect(unchecked.runs().slice(before)).toEqual([
      'start ask_name',
      'answer ask_name accept Plain',
      'end ask_name',
    ]);
  }, 30_000);
});
