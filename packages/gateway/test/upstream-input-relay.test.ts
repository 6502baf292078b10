// An upstream's input-required answer through `toolgate gateway` (GATEWAY.md §9), to SDK v2 clients
// on 2026-07-28: the client answers the upstream's questions and the call finishes, over several
// rounds; the requestState it holds is the gateway's, sealed under the check-in key and bound to the
// caller, so another principal or tenant, an edit or another tool gets -32602 CHECKIN_STATE_INVALID
// and the call is refused before the chain. A tool needing what the client did not declare: -32021.

import { join } from 'node:path';
import {
  Client,
  ProtocolError,
  StreamableHTTPClientTransport,
  type ClientCapabilities,
} from '@modelcontextprotocol/client';
import {
  authYaml,
  CHECKIN_KEY,
  repoRoot,
  startGateway,
  tempDir,
  textOf,
  tokenEnv,
  tsxLoader,
  until,
  type GatewayProcess,
  type TempDir,
} from './helpers';

const CALLERS = {
  BOT_TOKEN: { token: 'bot-token-0123456789abcdef-0123456789abc', principal: 'support-bot' },
  EVE_TOKEN: { token: 'eve-token-0123456789abcdef-0123456789abc', principal: 'eve' },
  GLOBEX_TOKEN: {
    token: 'globex-token-0123456789abcdef-012345678',
    tenant: 'globex',
    principal: 'support-bot',
  },
};
const TOKENS = tokenEnv(CALLERS);
const MODERN = '2026-07-28';

/** A retry's params: the SDK types callTool without the retry fields its own driver adds. */
const retryParams = (params: Record<string, unknown>) => params as Parameters<Client['callTool']>[0];
const reference = join(repoRoot, 'test-support', 'conformance', 'reference-upstream.ts');

function config(): string {
  return `${authYaml(CALLERS)}checkIns: { key: "\${env:TOOLGATE_CHECKIN_KEY}", hold: 200ms }
upstreams:
  ref:
    command: [node, --import, ${JSON.stringify(tsxLoader)}, ${JSON.stringify(reference)}, --stdio]
    prefix: ref_
policy:
  default: allow
tenants:
  acme: { upstreams: [ref] }
  globex: { upstreams: [ref] }
`;
}

interface Asked {
  resultType?: string;
  requestState?: string;
  inputRequests?: Record<string, { method: string }>;
}

const all: ClientCapabilities = { elicitation: { form: {} }, sampling: {}, roots: {} };

describe("an upstream's input-required answer through toolgate gateway", () => {
  let dir: TempDir;
  let gateway: GatewayProcess;

  beforeAll(async () => {
    dir = tempDir();
    gateway = await startGateway(dir.write('toolgate.yaml', config()), {
      ...TOKENS,
      TOOLGATE_CHECKIN_KEY: CHECKIN_KEY,
    });
  }, 60_000);
  afterAll(async () => {
    await gateway?.stop();
    dir?.remove();
  });

  async function client(token: string, capabilities: ClientCapabilities, auto = true): Promise<Client> {
    const made = new Client(
      { name: 'relay-test', version: '1.0.0' },
      {
        versionNegotiation: { mode: { pin: MODERN } },
        capabilities,
        ...(auto ? {} : { inputRequired: { autoFulfill: false } }),
      },
    );
    if (capabilities.elicitation !== undefined)
      made.setRequestHandler('elicitation/create', (request) => ({
        action: 'accept',
        content: /color/i.test(String(request.params.message)) ? { color: 'green' } : { name: 'Ana' },
      }));
    if (capabilities.sampling !== undefined)
      made.setRequestHandler('sampling/createMessage', () => ({
        role: 'assistant',
        content: { type: 'text', text: 'Paris' },
        model: 'test',
      }));
    await made.connect(
      new StreamableHTTPClientTransport(new URL(gateway.url), {
        requestInit: { headers: { authorization: `Bearer ${token}` } },
      }),
    );
    return made;
  }

  async function refusedState(token: string, state: string, name: string): Promise<ProtocolError> {
    const retrying = await client(token, all, false);
    try {
      await retrying.callTool(
        retryParams({
          name,
          arguments: {},
          inputResponses: { user_name: { action: 'accept', content: { name: 'Mallory' } } },
          requestState: state,
        }),
        { allowInputRequired: true },
      );
    } catch (error) {
      if (error instanceof ProtocolError) return error;
      throw error;
    } finally {
      await retrying.close();
    }
    throw new Error('expected the state to be refused');
  }

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
      await gateway.waitForLog(
        (line) => line['tool'] === 'ref_test_input_required_result_multi_round' && line['kind'] === 'result',
      );
      const asked = gateway
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
      const error = await refusedState(token, tried, name);
      expect(error.code).toBe(-32602);
      expect(error.data).toEqual({ code: 'CHECKIN_STATE_INVALID' });
    }
    // The process writes its log lines at the end of a turn, so the last one may trail the answer.
    const refused = () =>
      gateway.logs().filter((line) => line['msg'] === 'call' && line['code'] === 'CHECKIN_STATE_INVALID');
    const refusedLines = await until(
      async () => (refused().length >= 4 ? refused() : undefined),
      'four refused states in the log',
    );
    expect(refusedLines).toHaveLength(4);
    // Refused before the chain: no chain id, nothing ran.
    for (const line of refusedLines) expect(line['chainId']).toBeUndefined();
    // The one it was given to still finishes with it.
    const finishing = await client(TOKENS.BOT_TOKEN, all, false);
    try {
      const done = await finishing.callTool(
        retryParams({
          name: tool,
          arguments: {},
          inputResponses: { user_name: { action: 'accept', content: { name: 'Ana' } } },
          requestState: state,
        }),
        { allowInputRequired: true },
      );
      expect(textOf(done)).toBe('state verified');
    } finally {
      await finishing.close();
    }
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
      const line = await gateway.waitForLog(
        (logged) => logged['msg'] === 'call' && logged['tool'] === 'ref_test_missing_capability',
      );
      expect(line).toMatchObject({ kind: 'refused', gate: 'mcp', code: 'MISSING_CLIENT_CAPABILITY' });
    } finally {
      await plain.close();
    }
  }, 30_000);
});
