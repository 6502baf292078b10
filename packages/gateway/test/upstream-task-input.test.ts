// A 2026-07-28 upstream task that asks for input (SEP-2663), through `toolgate gateway`, to an SDK v2
// client on 2026-07-28: the client is asked the task's questions, its answers reach the task with
// tasks/update (no second call of the tool), and the call ends with the task's result, over two
// rounds; the state it holds is the gateway's and refused to another principal before the chain,
// with nothing sent to the upstream. The upstream is the mcp package's task-upstream fixture.

import { ProtocolError } from '@modelcontextprotocol/client';
import { askingUpstreamSuite, protocolErrorOf, taskUpstreamFixture, textOf } from './helpers';

describe('an upstream task asking for input, through toolgate gateway', () => {
  const {
    tokens: TOKENS,
    runs,
    client,
    ask,
    answerAs: answerToolAs,
  } = askingUpstreamSuite({
    upstream: 'jobs',
    script: taskUpstreamFixture,
    clientName: 'task-input-test',
    answerKey: 'name',
  });
  const answerAs = (token: string, name: string, state: string) =>
    answerToolAs(token, 'jobs_ask_name', name, state);

  it("relays the task's two questions in turn and ends with its result", async () => {
    const bot = await client(TOKENS.BOT_TOKEN);
    try {
      const done = await bot.callTool({ name: 'jobs_ask_twice', arguments: {} });
      expect(textOf(done)).toBe('Ana likes green');
      expect(runs().filter((line) => line.startsWith('start '))).toEqual(['start ask_twice']);
      expect(
        runs()
          .filter((line) => line.startsWith('update '))
          .map((line) => line.split(' ')[2]),
      ).toEqual(['name', 'color']);
    } finally {
      await bot.close();
    }
  }, 30_000);

  it('refuses the state to another principal before the chain, and sends the task nothing', async () => {
    const asked = await ask(TOKENS.BOT_TOKEN, 'jobs_ask_name');
    expect(asked.resultType).toBe('input_required');
    const state = asked.requestState!;
    const before = runs().length;
    const error = await protocolErrorOf(answerAs(TOKENS.EVE_TOKEN, 'Eve', state));
    expect(error).toBeInstanceOf(ProtocolError);
    expect(error.code).toBe(-32602);
    expect(error.data).toEqual({ code: 'CHECKIN_STATE_INVALID' });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(runs().slice(before)).toEqual([]);
    // The task still waits for its caller, who can finish it.
    const done = await answerAs(TOKENS.BOT_TOKEN, 'Bo', state);
    expect(textOf(done)).toBe('Hello, Bo!');
  }, 30_000);
});
