// A 2026-07-28 upstream task that asks for input (SEP-2663), through `toolgate gateway`, to an SDK v2
// client on 2026-07-28: the client is asked the task's questions, its answers reach the task with
// tasks/update (no second call of the tool), and the call ends with the task's result, over two
// rounds; the state it holds is the gateway's and refused to another principal before the chain,
// with nothing sent to the upstream. The upstream is the mcp package's task-upstream fixture.

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
  type GatewayProcess,
  type TempDir,
} from './helpers';

const CALLERS = {
  BOT_TOKEN: { token: 'bot-token-0123456789abcdef-0123456789abc', principal: 'support-bot' },
  EVE_TOKEN: { token: 'eve-token-0123456789abcdef-0123456789abc', principal: 'eve' },
};
const TOKENS = tokenEnv(CALLERS);
const MODERN = '2026-07-28';
const fixture = join(repoRoot, 'packages', 'mcp', 'test', 'fixtures', 'task-upstream.ts');

/** A retry's params: the SDK types callTool without the retry fields its own driver adds. */
const retryParams = (params: Record<string, unknown>) => params as Parameters<Client['callTool']>[0];

function config(dir: TempDir): string {
  return `${authYaml(CALLERS)}checkIns: { key: "\${env:TOOLGATE_CHECKIN_KEY}", hold: 200ms }
upstreams:
  jobs:
    command: [node, --import, ${JSON.stringify(tsxLoader)}, ${JSON.stringify(fixture)}]
    prefix: jobs_
    env: { RUN_LOG: ${JSON.stringify(`${dir.path}/runs.log`)} }
policy:
  default: allow
tenants:
  acme: { upstreams: [jobs] }
`;
}

const elicits: ClientCapabilities = { elicitation: { form: {} } };

describe('an upstream task asking for input, through toolgate gateway', () => {
  let dir: TempDir;
  let gateway: GatewayProcess;

  beforeAll(async () => {
    dir = tempDir();
    gateway = await startGateway(dir.write('toolgate.yaml', config(dir)), {
      ...TOKENS,
      TOOLGATE_CHECKIN_KEY: CHECKIN_KEY,
    });
  }, 60_000);
  afterAll(async () => {
    await gateway?.stop();
    dir?.remove();
  });

  const runs = (): string[] => dir.runs();

  async function client(token: string, auto = true): Promise<Client> {
    const made = new Client(
      { name: 'task-input-test', version: '1.0.0' },
      {
        versionNegotiation: { mode: { pin: MODERN } },
        capabilities: elicits,
        ...(auto ? {} : { inputRequired: { autoFulfill: false } }),
      },
    );
    made.setRequestHandler('elicitation/create', (request) => ({
      action: 'accept',
      content: /color/i.test(String(request.params.message)) ? { color: 'green' } : { name: 'Ana' },
    }));
    await made.connect(
      new StreamableHTTPClientTransport(new URL(gateway.url), {
        requestInit: { headers: { authorization: `Bearer ${token}` } },
      }),
    );
    return made;
  }

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
    const bot = await client(TOKENS.BOT_TOKEN, false);
    let state: string;
    try {
      const asked = (await bot.callTool(
        { name: 'jobs_ask_name', arguments: {} },
        { allowInputRequired: true },
      )) as unknown as { resultType?: string; requestState?: string };
      expect(asked.resultType).toBe('input_required');
      state = asked.requestState!;
    } finally {
      await bot.close();
    }
    const before = runs().length;
    const eve = await client(TOKENS.EVE_TOKEN, false);
    try {
      const error = await eve
        .callTool(
          retryParams({
            name: 'jobs_ask_name',
            arguments: {},
            inputResponses: { name: { action: 'accept', content: { name: 'Eve' } } },
            requestState: state,
          }),
          { allowInputRequired: true },
        )
        .then(
          () => undefined,
          (thrown: unknown) => thrown,
        );
      expect(error).toBeInstanceOf(ProtocolError);
      expect((error as ProtocolError).code).toBe(-32602);
      expect((error as ProtocolError).data).toEqual({ code: 'CHECKIN_STATE_INVALID' });
    } finally {
      await eve.close();
    }
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(runs().slice(before)).toEqual([]);
    // The task still waits for its caller, who can finish it.
    const back = await client(TOKENS.BOT_TOKEN, false);
    try {
      const done = await back.callTool(
        retryParams({
          name: 'jobs_ask_name',
          arguments: {},
          inputResponses: { name: { action: 'accept', content: { name: 'Bo' } } },
          requestState: state,
        }),
        { allowInputRequired: true },
      );
      expect(textOf(done)).toBe('Hello, Bo!');
    } finally {
      await back.close();
    }
  }, 30_000);
});
