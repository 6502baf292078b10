// A call held as a task of ours through `toolgate gateway` that first waits for approval and then,
// once approved, runs a 2026-07-28 upstream task that asks for input (SEP-2663): the same task shows
// the approval question, then the upstream task's question; the caller's answers reach the check-in,
// then the upstream task (tasks/update); the task completes with the tool's result. No answer reaches
// the gateway's log. The upstream is the mcp package's task-upstream fixture; the client speaks the
// wire (the SDK v2 client rejects `resultType: "task"`).

import { approvedTaskSuite, withKey, taskUpstreamFixture, textOf } from './helpers';

describe("an approved call's upstream task asking for input, through the caller's task of ours", () => {
  const { suite, request, until } = approvedTaskSuite({
    upstream: 'jobs',
    script: taskUpstreamFixture,
    rule: '{ name: names-need-approval, tools: [jobs_ask_name], effect: ask, reason: asking a name needs a person }',
  });

  it('shows the approval, then the upstream question; both answers reach their ends; it completes', async () => {
    const created = await request('tools/call', { name: 'jobs_ask_name', arguments: {} });
    expect(created.result).toMatchObject({ resultType: 'task', status: 'input_required' });
    const taskId = String(created.result!['taskId']);
    await until(taskId, withKey('approval'));
    // Nothing ran before the approval.
    expect(suite.dir.runs()).toEqual([]);
    await request('tasks/update', {
      taskId,
      inputResponses: { approval: { action: 'accept', content: { decision: 'approve' } } },
    });
    const asking = await until(taskId, withKey('name'));
    expect(asking['status']).toBe('input_required');
    expect(Object.keys(asking['inputRequests'] as object)).toEqual(['name']);
    expect(JSON.stringify(asking)).not.toMatch(/up-[a-z0-9]+/);
    await request('tasks/update', {
      taskId,
      inputResponses: { name: { action: 'accept', content: { name: 'Qx-answer-91' } } },
    });
    const done = await until(taskId);
    expect(done['status']).toBe('completed');
    expect(textOf(done['result'])).toBe('Hello, Qx-answer-91!');
    expect(
      suite.dir.runs().filter((line) => line.startsWith('start ') || line.startsWith('update ')),
    ).toEqual(['start ask_name', expect.stringMatching(/^update up-\w+ name$/)]);
    // The answer is the tool's own result's business: the gateway's log does not carry it.
    expect(JSON.stringify(suite.gateway.logs())).not.toContain('Qx-answer-91');
  }, 60_000);
});
