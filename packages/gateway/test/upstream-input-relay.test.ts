// An upstream's input-required answer through `toolgate gateway` (GATEWAY.md §9), to SDK v2 clients
// on 2026-07-28: the client answers the upstream's questions and the call finishes, over several
// rounds; the requestState it holds is the gateway's, sealed under the check-in key and bound to the
// caller, so another principal or tenant, an edit or another tool gets -32602 CHECKIN_STATE_INVALID
// and the call is refused before the chain. A tool needing what the client did not declare: -32021.

import { join } from 'node:path';
import type { ClientCapabilities } from '@modelcontextprotocol/client';
import {
  CALLERS as ALL_CALLERS,
  gatewayPerSuite,
  modernClient,
  protocolErrorOf,
  relayConfig,
  repoRoot,
  retryAs,
  textOf,
  tokenEnv,
  until,
} from './helpers';

const { BOT_TOKEN, EVE_TOKEN, GLOBEX_TOKEN } = ALL_CALLERS;
const CALLERS = { BOT_TOKEN, EVE_TOKEN, GLOBEX_TOKEN };
const TOKENS = tokenEnv(CALLERS);

const reference = join(repoRoot, 'test-support', 'conformance', 'reference-upstream.ts');

const config = (): string =>
  relayConfig(
    CALLERS,
    { name: 'ref', script: reference, tsx: true, args: ['--stdio'] },
    { tenants: ['acme', 'globex'] },
  );

interface Asked {
  resultType?: string;
  requestState?: string;
  inputRequests?: Record<string, { method: string }>;
}

const all: ClientCapabilities = { elicitation: { form: {} }, sampling: {}, roots: {} };

describe("an upstream's input-required answer through toolgate gateway", () => {
  const suite = gatewayPerSuite(config, TOKENS);

  const client = (token: string, capabilities: ClientCapabilities, auto = true) =>
    modernClient(suite.gateway.url, token, capabilities, auto);

  /** Retries `name` as `token` with `state`, answering user_name with `answer`. */
  const answerAs = (token: string, state: string, name: string, answer: string) =>
    retryAs(suite.gateway.url, token, all, {
      name,
      inputResponses: { user_name: { action: 'accept', content: { name: answer } } },
      requestState: state,
      clientName: 'relay-test',
    });

  it('lets the client answer and finishes the call, over several rounds', async () => {
    const bot = await client(TOKENS.BOT_TOKEN, all);
    try {
      const greeted = await bot.callTool({
        name: 'ref_test_input_required_result_elicitation',
        arguments: {},
      });
      expect(textOf(greeted)).toBe('Hello, Ana!');
      const rounds = await bot.callTool({
        name: 'ref_test_input_required_result_multi_round',
        arguments: {},
      });
      expect(textOf(rounds)).toBe('Done: Ana likes green');
      // Each relayed question is one call line: input-required, asked by the upstream.
      await suite.gateway.waitForLog(
        (line) => line['tool'] === 'ref_test_input_required_result_multi_round' && line['kind'] === 'result',
      );
      const asked = suite.gateway
        .logs()
        .filter(
          (line) => line['msg'] === 'call' && line['tool'] === 'ref_test_input_required_result_multi_round',
        );
      expect(asked.map((line) => line['kind'])).toEqual(['input-required', 'input-required', 'result']);
      expect(asked[0]).toMatchObject({
        asker: 'upstream',
        ran: true,
        upstream: 'ref',
        principal: 'support-bot',
      });
      expect(asked[0]?.['checkInId']).toBeUndefined();
    } finally {
      await bot.close();
    }
  }, 30_000);

  it('refuses the state to another principal, another tenant, an edit and another tool', async () => {
    const bot = await client(TOKENS.BOT_TOKEN, all, false);
    let asked: Asked;
    try {
      asked = (await bot.callTool(
        { name: 'ref_test_input_required_result_tampered_state', arguments: {} },
        { allowInputRequired: true },
      )) as unknown as Asked;
    } finally {
      await bot.close();
    }
    expect(asked.resultType).toBe('input_required');
    expect(asked.requestState).toMatch(/^u1\./);
    const state = asked.requestState!;
    const tool = 'ref_test_input_required_result_tampered_state';
    for (const [token, tried, name] of [
      [TOKENS.EVE_TOKEN, state, tool],
      [TOKENS.GLOBEX_TOKEN, state, tool],
      [TOKENS.BOT_TOKEN, `${state}-TAMPERED`, tool],
      [TOKENS.BOT_TOKEN, state, 'ref_test_input_required_result_elicitation'],
    ] as const) {
      const error = await protocolErrorOf(answerAs(token, tried, name, 'Mallory'));
      expect(error.code).toBe(-32602);
      expect(error.data).toEqual({ code: 'CHECKIN_STATE_INVALID' });
    }
    // The process writes its log lines at the end of a turn, so the last one may trail the answer.
    const refused = () =>
      suite.gateway
        .logs()
        .filter((line) => line['msg'] === 'call' && line['code'] === 'CHECKIN_STATE_INVALID');
    const refusedLines = await until(
      async () => (refused().length >= 4 ? refused() : undefined),
      'four refused states in the log',
    );
    expect(refusedLines).toHaveLength(4);
    // Refused before the chain: no chain id, nothing ran.
    for (const line of refusedLines) expect(line['chainId']).toBeUndefined();
    // The one it was given to still finishes with it.
    const done = await answerAs(TOKENS.BOT_TOKEN, state, tool, 'Ana');
    expect(textOf(done)).toBe('state verified');
  }, 60_000);

  it('asks a sampling-only client only for sampling, and answers -32021 for a tool needing undeclared sampling', async () => {
    const sampler = await client(TOKENS.BOT_TOKEN, { sampling: {} }, false);
    try {
      const asked = (await sampler.callTool(
        { name: 'ref_test_input_required_result_capabilities', arguments: {} },
        { allowInputRequired: true },
      )) as unknown as Asked;
      expect(Object.values(asked.inputRequests ?? {}).map((request) => request.method)).toEqual([
        'sampling/createMessage',
      ]);
    } finally {
      await sampler.close();
    }
    const plain = await client(TOKENS.BOT_TOKEN, {});
    try {
      await expect(
        plain.callTool({ name: 'ref_test_missing_capability', arguments: {} }),
      ).rejects.toMatchObject({
        code: -32021,
        data: { requiredCapabilities: { sampling: {} } },
      });
      const line = await suite.gateway.waitForLog(
        (logged) => logged['msg'] === 'call' && logged['tool'] === 'ref_test_missing_capability',
      );
      expect(line).toMatchObject({ kind: 'refused', gate: 'mcp', code: 'MISSING_CLIENT_CAPABILITY' });
    } finally {
      await plain.close();
    }
  }, 30_000);
});
