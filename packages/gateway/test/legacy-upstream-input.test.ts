// A 2025-era upstream (SDK 1.x over stdio) that asks its client mid-call, through `toolgate gateway`,
// to an SDK v2 client on 2026-07-28: the upstream's call is parked in the gateway, each question
// reaches the client as input_required, each retry answers the same upstream call (it starts once),
// over two rounds; the state the client holds is refused to another principal before the chain with
// nothing sent upstream, and once answered it reaches nothing again. The gateway's log holds no answer.

import { ProtocolError } from '@modelcontextprotocol/client';
import { askingUpstreamSuite, legacyAskingFixture, protocolErrorOf, textOf } from './helpers';

describe("a 2025-era upstream's mid-call questions, through toolgate gateway", () => {
  const {
    suite,
    tokens: TOKENS,
    runs,
    client,
    ask,
    answerAs: answerToolAs,
  } = askingUpstreamSuite({
    upstream: 'old',
    script: legacyAskingFixture,
    clientName: 'legacy-input-test',
    answerKey: 'elicitation',
  });
  const answerAs = (token: string, name: string, state: string) =>
    answerToolAs(token, 'old_ask_name', name, state);

  it('relays its two questions in turn to the one upstream call and ends with its result', async () => {
    const bot = await client(TOKENS.BOT_TOKEN);
    try {
      const done = await bot.callTool({ name: 'old_ask_twice', arguments: {} });
      expect(textOf(done)).toBe('Ana likes green');
      expect(runs()).toEqual([
        'start ask_twice',
        'answer ask_twice accept Ana',
        'answer ask_twice accept green',
        'end ask_twice',
      ]);
    } finally {
      await bot.close();
    }
  }, 30_000);

  it('refuses the state to another principal before the chain, then serves its caller once', async () => {
    const asked = await ask(TOKENS.BOT_TOKEN, 'old_ask_name');
    expect(asked.resultType).toBe('input_required');
    expect(Object.keys(asked.inputRequests ?? {})).toEqual(['elicitation']);
    const state = asked.requestState!;
    const before = runs().length;
    const error = await protocolErrorOf(answerAs(TOKENS.EVE_TOKEN, 'Eve', state));
    expect(error).toBeInstanceOf(ProtocolError);
    expect(error.code).toBe(-32602);
    expect(error.data).toEqual({ code: 'CHECKIN_STATE_INVALID' });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(runs().slice(before)).toEqual([]);
    // The parked call still waits for its caller, who finishes it.
    const done = await answerAs(TOKENS.BOT_TOKEN, 'Quillon-7', state);
    expect(textOf(done)).toBe('Hello, Quillon-7!');
    // Replayed, it reaches nothing: the call was answered.
    const replayed = await answerAs(TOKENS.BOT_TOKEN, 'Again', state);
    expect(replayed.isError).toBe(true);
    expect(textOf(replayed)).toContain('is not waiting in this process');
    expect(runs().filter((line) => line.startsWith('start ask_name'))).toHaveLength(1);
    // The answer is the client's and the upstream's: no log line of the gateway holds it.
    // Its call lines come in batches: wait (bounded) for all four of old_ask_name's.
    const calls = () =>
      suite.gateway.logs().filter((line) => line['msg'] === 'call' && line['tool'] === 'old_ask_name');
    for (let waited = 0; calls().length < 4 && waited < 5_000; waited += 50)
      await new Promise((resolve) => setTimeout(resolve, 50));
    expect(calls().map((line) => line['kind'])).toEqual(['input-required', 'refused', 'result', 'failed']);
    expect(JSON.stringify(suite.gateway.logs())).not.toContain('Quillon');
    expect(suite.gateway.stdout.join('\n')).not.toContain('Quillon');
  }, 30_000);
});
