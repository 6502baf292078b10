// A call held as a task of ours through `toolgate gateway` that first waits for approval and then,
// once approved, runs on a 2025-era upstream (SDK 1.x over stdio) that asks its client mid-call:
// nothing is parked, the same task shows the approval, then each of the upstream's questions under
// our key; the caller's tasks/update answers reach the check-in, then the one upstream call's pending
// requests; the task completes with the tool's result. A cancel while it waits declines the pending
// request and cancels the upstream call. No answer reaches the gateway's log. The upstream is the
// mcp package's legacy-asking fixture; the client speaks the wire.

import { approvedTaskSuite, legacyAskingFixture, textOf, withKey } from './helpers';

describe("an approved call's 2025-era upstream asking mid-call, through the caller's task of ours", () => {
  const { suite, request, until } = approvedTaskSuite({
    upstream: 'old',
    script: legacyAskingFixture,
    rule: '{ name: asking-needs-approval, tools: [old_ask_name, old_ask_twice], effect: ask, reason: asking needs a person }',
  });
  /** Input requests whose text holds `said`. */
  const saying = (said: string) => (inputRequests: object) => JSON.stringify(inputRequests).includes(said);

  /** Calls `tool` asking for a task of ours and approves it; the task's id. */
  async function approved(tool: string): Promise<string> {
    const created = await request('tools/call', { name: tool, arguments: {} });
    expect(created.result).toMatchObject({ resultType: 'task', status: 'input_required' });
    const taskId = String(created.result!['taskId']);
    await until(taskId, withKey('approval'));
    await request('tasks/update', {
      taskId,
      inputResponses: { approval: { action: 'accept', content: { decision: 'approve' } } },
    });
    return taskId;
  }

  const answer = (taskId: string, content: Record<string, string>) =>
    request('tasks/update', { taskId, inputResponses: { elicitation: { action: 'accept', content } } });

  it('shows the approval, then each upstream question; one upstream call gets both answers', async () => {
    const taskId = await approved('old_ask_twice');
    const first = await until(taskId, saying('What is your name?'));
    expect(Object.keys(first['inputRequests'] as object)).toEqual(['elicitation']);
    await answer(taskId, { name: 'Qx-answer-91' });
    await until(taskId, saying('What is your favourite color?'));
    await answer(taskId, { color: 'Qx-color-17' });
    const done = await until(taskId);
    expect(done['status']).toBe('completed');
    expect(textOf(done['result'])).toBe('Qx-answer-91 likes Qx-color-17');
    expect(suite.dir.runs()).toEqual([
      'start ask_twice',
      'answer ask_twice accept Qx-answer-91',
      'answer ask_twice accept Qx-color-17',
      'end ask_twice',
    ]);
    const logs = JSON.stringify(suite.gateway.logs());
    expect(logs).not.toContain('Qx-answer-91');
    expect(logs).not.toContain('Qx-color-17');
  }, 60_000);

  it('a cancel while it waits declines the pending request and cancels the upstream call', async () => {
    const before = suite.dir.runs().length;
    const taskId = await approved('old_ask_name');
    await until(taskId, saying('What is your name?'));
    await request('tasks/cancel', { taskId });
    for (let i = 0; i < 100 && !suite.dir.runs().slice(before).includes('cancelled ask_name'); i++)
      await new Promise((resolve) => setTimeout(resolve, 50));
    expect(suite.dir.runs().slice(before)).toEqual(
      expect.arrayContaining(['start ask_name', 'cancelled ask_name', 'answer ask_name decline']),
    );
    expect((await request('tasks/get', { taskId })).result).toMatchObject({ status: 'cancelled' });
  }, 60_000);
});
