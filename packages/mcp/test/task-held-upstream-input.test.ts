// A 2026-07-28 upstream task (SEP-2663) that asks for input while a 2026-07-28 client holds a task of
// ours for the call: our task goes input_required with the upstream task's questions (those the
// client can answer), the client's tasks/update reaches the running call (in this process, or in
// another one sharing the task store) and the upstream task gets the answers with tasks/update; our
// task completes with the tool's result. A cancel of our task cancels the upstream task; another
// principal's update reaches nothing. The upstream is the task-upstream fixture over stdio (its
// RUN_LOG shows every start, update and cancel); the client speaks the wire (the SDK v2 client
// rejects `resultType: "task"`).

import { inMemoryTaskRecords } from '@toolgate/core';
import { serveHttp, type HttpServing, type McpCallReport, type McpServed } from '@toolgate/mcp';
import {
  authenticate,
  identityFromToken,
  serveUpstreams,
  taskUpstream,
  type TaskUpstream,
  taskCaller,
  TASKS_AND_ELICITS,
} from './fixtures/proxy';
import { WITH_TASKS } from '../../../test-support/modern-request';

let upstream: TaskUpstream;
// Two servers over one task store, as two gateway processes would be.
let served: McpServed;
let other: McpServed;
let http: HttpServing;
let otherHttp: HttpServing;
const reports: McpCallReport[] = [];
const logged: string[] = [];

beforeAll(async () => {
  upstream = taskUpstream();
  const store = inMemoryTaskRecords();
  const options = {
    name: 'relay',
    identityFrom: identityFromToken,
    onCall: (report: McpCallReport) => {
      reports.push(report);
      logged.push(JSON.stringify(report));
    },
    tasks: { store, pollIntervalMs: 100, sharedPollMs: 50 },
  };
  served = await serveUpstreams([upstream.jobs], options);
  other = await serveUpstreams([upstream.jobs], options);
  http = await serveHttp(served, { authenticate });
  otherHttp = await serveHttp(other, { authenticate });
}, 60_000);

afterAll(async () => {
  await http?.close();
  await otherHttp?.close();
  await served?.close();
  await other?.close();
  await upstream?.close();
});

const runs = (): string[] => upstream.runs();
const count = (prefix: string) => upstream.count(prefix);
const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const { request, startTask, update, next: poll } = taskCaller(() => http);

/** Polls our task until it leaves `working`, or asks under a key not in `past`. */
const next = (taskId: string, past: readonly string[] = [], at?: HttpServing) =>
  poll(
    taskId,
    (asked) => !Object.keys((asked as object | undefined) ?? {}).every((key) => past.includes(key)),
    at,
  );

const answer = (key: string, field: string, value: string) => ({
  [key]: { action: 'accept', content: { [field]: value } },
});

const updates = (since: number) =>
  runs()
    .filter((line) => line.startsWith('update '))
    .slice(since);

describe("an upstream task's questions, asked through the client's task of ours", () => {
  it('one round: our task shows the question, the answer reaches the upstream task, the task completes', async () => {
    const before = count('update ');
    const cancels = count('cancel ');
    const taskId = await startTask('jobs_ask_name');
    const asking = await next(taskId);
    expect(asking['status']).toBe('input_required');
    expect(asking['inputRequests']).toEqual({
      name: {
        method: 'elicitation/create',
        params: expect.objectContaining({ mode: 'form', message: 'What is your name?' }),
      },
    });
    // The upstream's task id is never shown: our task is our own.
    expect(JSON.stringify(asking)).not.toMatch(/up-[a-z0-9]+/);
    expect(taskId).not.toMatch(/^up-/);
    // A key the upstream task did not ask is not passed on.
    const updated = await update(taskId, {
      ...answer('name', 'name', 'Ada-7f3q'),
      color: { action: 'accept', content: {} },
    });
    expect(updated.result).toMatchObject({ resultType: 'complete' });
    const done = await next(taskId, ['name']);
    expect(done['status']).toBe('completed');
    expect(done['result']).toMatchObject({ content: [{ type: 'text', text: 'Hello, Ada-7f3q!' }] });
    expect(updates(before)).toEqual([expect.stringMatching(/^update up-\w+ name$/)]);
    expect(count('cancel ')).toBe(cancels);
    // The result went through the chain: reported once, as the tool's result.
    expect(reports.filter((report) => report.toolName === 'jobs_ask_name').at(-1)).toMatchObject({
      settled: { kind: 'outcome', outcome: { kind: 'result' } },
    });
  }, 30_000);

  it('a declined question: the upstream task ends with its error result; the answer is in no report', async () => {
    reports.length = 0;
    logged.length = 0;
    const taskId = await startTask('jobs_ask_name');
    expect((await next(taskId))['status']).toBe('input_required');
    await update(taskId, { name: { action: 'decline', content: { name: 'Zq-secret-answer' } } });
    const done = await next(taskId, ['name']);
    expect(done['status']).toBe('completed');
    expect(done['result']).toMatchObject({
      isError: true,
      content: [{ type: 'text', text: 'declined name' }],
    });
    expect(reports).toHaveLength(1);
    expect(logged.join('\n')).not.toContain('Zq-secret-answer');
    expect(JSON.stringify(done)).not.toContain('Zq-secret-answer');
  }, 30_000);

  it('two rounds: each question in turn, then the result carrying both answers; one upstream task', async () => {
    const before = count('update ');
    const starts = count('start ask_twice');
    const taskId = await startTask('jobs_ask_twice');
    const first = await next(taskId);
    expect(Object.keys(first['inputRequests'] as object)).toEqual(['name']);
    await update(taskId, answer('name', 'name', 'Grace'));
    const second = await next(taskId, ['name']);
    expect(second['status']).toBe('input_required');
    expect(Object.keys(second['inputRequests'] as object)).toEqual(['color']);
    await update(taskId, answer('color', 'color', 'teal'));
    const done = await next(taskId, ['color']);
    expect(done['status']).toBe('completed');
    expect(done['result']).toMatchObject({ content: [{ type: 'text', text: 'Grace likes teal' }] });
    const sent = updates(before);
    expect(sent.map((line) => line.split(' ')[2])).toEqual(['name', 'color']);
    expect(new Set(sent.map((line) => line.split(' ')[1])).size).toBe(1);
    expect(count('start ask_twice')).toBe(starts + 1);
  }, 30_000);

  it('a client that declared no elicitation: the upstream task is cancelled, our task fails with -32021', async () => {
    const cancels = count('cancel ');
    const before = count('update ');
    const taskId = await startTask('jobs_ask_name', { ...WITH_TASKS, sampling: {} });
    const done = await next(taskId);
    expect(done['status']).toBe('failed');
    expect(done['error']).toMatchObject({
      code: -32021,
      message: expect.stringContaining('did not declare it can answer'),
      data: { requiredCapabilities: { elicitation: {} } },
    });
    expect(count('cancel ')).toBe(cancels + 1);
    expect(count('update ')).toBe(before);
    expect(reports.at(-1)).toMatchObject({
      toolName: 'jobs_ask_name',
      settled: { kind: 'refused', code: 'MISSING_CLIENT_CAPABILITY' },
    });
  }, 30_000);

  it("a question left unanswered past our task's time to live cancels the upstream task", async () => {
    const short = await serveUpstreams([upstream.jobs], {
      name: 'relay',
      identityFrom: () => ({ tenant: 'acme', principal: 'alice' }),
      tasks: { ttlMs: 1_500, pollIntervalMs: 100 },
    });
    const shortHttp = await serveHttp(short, { authenticate });
    const cancels = count('cancel ');
    try {
      const created = await request(
        'alice',
        'tools/call',
        { name: 'jobs_ask_name', arguments: {} },
        TASKS_AND_ELICITS,
        shortHttp,
      );
      const taskId = String(created.result!['taskId']);
      expect((await next(taskId, [], shortHttp))['status']).toBe('input_required');
      for (let i = 0; i < 60 && count('cancel ') === cancels; i++) await wait(100);
      expect(count('cancel ')).toBe(cancels + 1);
    } finally {
      await shortHttp.close();
      await short.close();
    }
  }, 30_000);

  it('tasks/cancel on our task while it waits cancels the upstream task; nothing is sent it', async () => {
    const cancels = count('cancel ');
    const before = count('update ');
    const taskId = await startTask('jobs_ask_name');
    expect((await next(taskId))['status']).toBe('input_required');
    expect((await request('alice', 'tasks/cancel', { taskId })).result).toMatchObject({
      resultType: 'complete',
    });
    for (let i = 0; i < 50 && count('cancel ') === cancels; i++) await wait(50);
    expect(count('cancel ')).toBe(cancels + 1);
    // An update after the cancel reaches nothing.
    await update(taskId, answer('name', 'name', 'Late'));
    await wait(300);
    expect(count('update ')).toBe(before);
    expect((await request('alice', 'tasks/get', { taskId })).result).toMatchObject({ status: 'cancelled' });
  }, 30_000);

  it("another principal's update is refused as an unknown task and reaches nothing upstream", async () => {
    const before = count('update ');
    const taskId = await startTask('jobs_ask_name');
    expect((await next(taskId))['status']).toBe('input_required');
    for (const at of [http, otherHttp]) {
      const refused = await update(taskId, answer('name', 'name', 'Mallory'), 'mallory', at);
      expect(refused.error?.message).toMatch(/Unknown task/);
    }
    await wait(400);
    expect(count('update ')).toBe(before);
    expect((await request('alice', 'tasks/get', { taskId })).result).toMatchObject({
      status: 'input_required',
    });
    // Its owner's update answering none of the asked keys is no answer: the task keeps waiting.
    await update(taskId, answer('color', 'color', 'red'));
    await wait(300);
    expect(count('update ')).toBe(before);
    expect((await request('alice', 'tasks/get', { taskId })).result).toMatchObject({
      status: 'input_required',
    });
    // Its owner's answer does reach it.
    await update(taskId, answer('name', 'name', 'Alice'));
    const done = await next(taskId, ['name']);
    expect(done['result']).toMatchObject({ content: [{ type: 'text', text: 'Hello, Alice!' }] });
  }, 30_000);

  it('an update given to another server sharing the task store reaches the call running here', async () => {
    const before = count('update ');
    const taskId = await startTask('jobs_ask_twice');
    // The other server reads the questions from the store.
    const asking = await next(taskId, [], otherHttp);
    expect(Object.keys(asking['inputRequests'] as object)).toEqual(['name']);
    const updated = await update(taskId, answer('name', 'name', 'Hopper'), 'alice', otherHttp);
    expect(updated.result).toMatchObject({ resultType: 'complete' });
    const second = await next(taskId, ['name'], otherHttp);
    expect(Object.keys(second['inputRequests'] as object)).toEqual(['color']);
    await update(taskId, answer('color', 'color', 'red'), 'alice', otherHttp);
    const done = await next(taskId, ['color'], otherHttp);
    expect(done['status']).toBe('completed');
    expect(done['result']).toMatchObject({ content: [{ type: 'text', text: 'Hopper likes red' }] });
    expect(updates(before).map((line) => line.split(' ')[2])).toEqual(['name', 'color']);
  }, 30_000);
});
