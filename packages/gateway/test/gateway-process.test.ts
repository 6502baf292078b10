// End to end: `toolgate gateway` as a process with a configuration file, in front of real upstream
// servers (a fixture SDK server and the official memory server), driven by the SDK client.

import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ElicitRequestSchema, ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import {
  CHECKIN_KEY,
  cliPath,
  connectClient,
  fixtureServer,
  referenceServer,
  repoRoot,
  startGateway,
  tempDir,
  textOf,
  tsxLoader,
  type GatewayProcess,
  type TempDir,
} from './helpers';

const TOKENS = {
  ACME_TOKEN: 'acme-token-0123456789abcdef-0123456789',
  GLOBEX_TOKEN: 'globex-token-0123456789abcdef-0123456789',
  OPS_TOKEN: 'ops-token-0123456789abcdef-0123456789',
};

function config(dir: TempDir, extra = ''): string {
  return `listen: { host: 127.0.0.1, port: 8787, maxBody: 64kb, drain: 10s }
auth:
  tokens:
    - { token: "\${env:ACME_TOKEN}", identity: { tenant: acme, principal: support-bot } }
    - { token: "\${env:GLOBEX_TOKEN}", identity: { tenant: globex, principal: ana } }
    - { token: "\${env:OPS_TOKEN}", identity: { tenant: acme, principal: ops, roles: [operator] } }
checkIns: { key: "\${env:TOOLGATE_CHECKIN_KEY}", hold: 300ms }
upstreams:
  shop:
    command: [node, ${JSON.stringify(fixtureServer)}]
    env: { RUN_LOG: ${JSON.stringify(`${dir.path}/runs.log`)} }
    prefix: shop_
    tools: { refund: { checkIn: always } }
  memory:
    command: [node, ${JSON.stringify(referenceServer('memory'))}]
    env: { MEMORY_FILE_PATH: ${JSON.stringify(`${dir.path}/memory.jsonl`)} }
    prefix: mem_
    include: [read_graph, search_nodes, create_entities]
tenants:
  acme: { upstreams: [shop, memory] }
  globex: { upstreams: [memory] }
${extra}`;
}

const env = { ...TOKENS, TOOLGATE_CHECKIN_KEY: CHECKIN_KEY };

describe('toolgate gateway, as a process over Streamable HTTP', () => {
  let dir: TempDir;
  let gateway: GatewayProcess;
  let configFile: string;

  beforeAll(async () => {
    dir = tempDir();
    configFile = dir.write('toolgate.yaml', config(dir));
    gateway = await startGateway(configFile, env);
  });
  afterAll(async () => {
    await gateway?.stop();
    dir?.remove();
  });

  it('prints exactly one line, the MCP URL on a free port', () => {
    expect(gateway.stdout).toHaveLength(1);
    expect(gateway.stdout[0]).toMatch(/^toolgate gateway listening on http:\/\/127\.0\.0\.1:\d+\/mcp$/);
    expect(gateway.url).not.toContain(':8787/');
  });

  it("shows each tenant only its own upstreams' tools, prefixed and filtered", async () => {
    const acme = await connectClient(gateway.url, TOKENS.ACME_TOKEN);
    const globex = await connectClient(gateway.url, TOKENS.GLOBEX_TOKEN);
    try {
      const acmeTools = (await acme.listTools()).tools.map((tool) => tool.name).sort();
      const globexTools = (await globex.listTools()).tools.map((tool) => tool.name).sort();
      expect(globexTools).toEqual(['mem_create_entities', 'mem_read_graph', 'mem_search_nodes']);
      expect(acmeTools).toEqual(
        [
          'mem_create_entities',
          'mem_read_graph',
          'mem_search_nodes',
          'shop_big',
          'shop_crash',
          'shop_echo',
          'shop_refund',
          'shop_slow',
        ].sort(),
      );
      const refund = (await acme.listTools()).tools.find((tool) => tool.name === 'shop_refund');
      expect(refund?.annotations?.destructiveHint).toBe(true);
      // globex cannot call acme's tool even by name
      const result = await globex.callTool({ name: 'shop_echo', arguments: { text: 'hi' } });
      expect(result.isError).toBe(true);
      expect(textOf(result)).toBe(
        "[dispatch refused: there is no tool named 'shop_echo'. Call one of: mem_create_entities, mem_read_graph, mem_search_nodes.]",
      );
    } finally {
      await acme.close();
      await globex.close();
    }
  });

  it('runs a call through the chain and writes one log line without the argument values', async () => {
    const client = await connectClient(gateway.url, TOKENS.ACME_TOKEN);
    try {
      const result = await client.callTool({ name: 'shop_echo', arguments: { text: 'the-secret-argument' } });
      expect(result.isError).toBeFalsy();
      expect(textOf(result)).toBe('the-secret-argument');
      const line = await gateway.waitForLog(
        (l) => l['msg'] === 'call' && l['tool'] === 'shop_echo' && l['tenant'] === 'acme',
      );
      expect(line).toMatchObject({
        tenant: 'acme',
        principal: 'support-bot',
        tool: 'shop_echo',
        upstream: 'shop',
        kind: 'result',
        ran: true,
      });
      expect(typeof line['chainId']).toBe('string');
      expect(typeof line['durationMs']).toBe('number');
      expect(JSON.stringify(gateway.logs())).not.toContain('the-secret-argument');
    } finally {
      await client.close();
    }
  });

  it('refuses a check-in the client cannot answer with CHECKIN_PENDING (retryable), and the tool does not run', async () => {
    const client = await connectClient(gateway.url, TOKENS.ACME_TOKEN);
    try {
      const before = dir.runs().filter((run) => run === 'refund').length;
      const result = await client.callTool({ name: 'shop_refund', arguments: { amount: 20, order: 'A-1' } });
      expect(result.isError).toBe(true);
      expect(textOf(result)).toMatch(
        /^\[check-in refused: 'shop_refund' awaits a person's approval \(check-in [^)]+\)/,
      );
      expect(result._meta?.['io.toolgate/refusal']).toMatchObject({
        gate: 'check-in',
        code: 'CHECKIN_PENDING',
        retryable: true,
      });
      expect(dir.runs().filter((run) => run === 'refund').length).toBe(before);
      await gateway.waitForLog((l) => l['msg'] === 'call' && l['code'] === 'CHECKIN_PENDING');
    } finally {
      await client.close();
    }
  });

  it('asks the person at a client that supports elicitation, and runs the call once on approval', async () => {
    const client = await connectClient(gateway.url, TOKENS.ACME_TOKEN, { elicitation: true });
    const asked: string[] = [];
    client.setRequestHandler(ElicitRequestSchema, (request) => {
      asked.push(request.params.message);
      return { action: 'accept', content: { decision: 'approve', note: 'ok' } };
    });
    try {
      const before = dir.runs().filter((run) => run === 'refund').length;
      const result = await client.callTool({ name: 'shop_refund', arguments: { amount: 35, order: 'B-2' } });
      expect(textOf(result)).toBe('refunded 35 on B-2');
      expect(asked).toHaveLength(1);
      expect(asked[0]).toContain("Tool: 'shop_refund'");
      expect(dir.runs().filter((run) => run === 'refund').length).toBe(before + 1);
    } finally {
      await client.close();
    }
  });

  it('a declined elicitation refuses with the person’s reason', async () => {
    const client = await connectClient(gateway.url, TOKENS.ACME_TOKEN, { elicitation: true });
    client.setRequestHandler(ElicitRequestSchema, () => ({
      action: 'accept',
      content: { decision: 'decline', note: 'order already refunded' },
    }));
    try {
      const result = await client.callTool({ name: 'shop_refund', arguments: { amount: 35, order: 'B-2' } });
      expect(result.isError).toBe(true);
      expect(textOf(result)).toContain('order already refunded');
    } finally {
      await client.close();
    }
  });

  it('answers a missing or wrong token with 401 and resource metadata, and logs it without the token', async () => {
    const missing = await fetch(gateway.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    expect(missing.status).toBe(401);
    expect(missing.headers.get('www-authenticate')).toMatch(
      /^Bearer resource_metadata="http:\/\/127\.0\.0\.1:\d+\/\.well-known\/oauth-protected-resource"$/,
    );
    const wrong = await fetch(gateway.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer not-a-token-we-know' },
      body: '{}',
    });
    expect(wrong.status).toBe(401);
    expect(wrong.headers.get('www-authenticate')).toContain('error="invalid_token"');
    expect(await wrong.text()).not.toContain('not-a-token-we-know');
    await gateway.waitForLog((l) => l['msg'] === 'http.refused' && l['why'] === 'bad-token');
    expect(JSON.stringify(gateway.logs())).not.toContain('not-a-token-we-know');

    const metadata = await fetch(new URL('/.well-known/oauth-protected-resource', gateway.url));
    expect(await metadata.json()).toMatchObject({
      resource: gateway.url,
      bearer_methods_supported: ['header'],
    });
  });

  it('answers an oversized body with 413 and a malformed one with 400, and keeps serving', async () => {
    const headers = {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      authorization: `Bearer ${TOKENS.ACME_TOKEN}`,
    };
    const big = await fetch(gateway.url, {
      method: 'POST',
      headers,
      body: JSON.stringify({ pad: 'x'.repeat(70 * 1024) }),
    });
    expect(big.status).toBe(413);
    const malformed = await fetch(gateway.url, {
      method: 'POST',
      headers,
      body: '{"jsonrpc": "2.0", "method": ',
    });
    expect(malformed.status).toBe(400);
    const health = await fetch(new URL('/healthz', gateway.url));
    expect(await health.json()).toEqual({ status: 'ok' });
  });

  it('reports each upstream and store on /readyz to an operator', async () => {
    const ready = await fetch(new URL('/readyz', gateway.url), {
      headers: { authorization: `Bearer ${TOKENS.OPS_TOKEN}` },
    });
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({
      ready: true,
      upstreams: { shop: { state: 'connected', tools: 5 }, memory: { state: 'connected', tools: 3 } },
      stores: { state: { kind: 'memory', ok: true }, limits: { kind: 'memory', ok: true } },
    });
  });

  it('survives an upstream that crashes mid-call: the call fails, the server is restarted, the next call runs', async () => {
    const client = await connectClient(gateway.url, TOKENS.ACME_TOKEN);
    try {
      const crashed = await client.callTool({ name: 'shop_crash', arguments: {} });
      expect(crashed.isError).toBe(true);
      expect(textOf(crashed)).toContain('shop_crash');
      await gateway.waitForLog((l) => l['msg'] === 'upstream.restarted' && l['upstream'] === 'shop');
      const again = await client.callTool({ name: 'shop_echo', arguments: { text: 'back' } });
      expect(textOf(again)).toBe('back');
      expect(gateway.child.exitCode).toBeNull();
    } finally {
      await client.close();
    }
  });

  it('reloads a changed file for open sessions, and keeps serving the old one when the new one is invalid', async () => {
    const client = await connectClient(gateway.url, TOKENS.GLOBEX_TOKEN);
    let changed = 0;
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      changed += 1;
    });
    try {
      expect((await client.listTools()).tools.map((t) => t.name)).not.toContain('shop_echo');
      dir.write(
        'toolgate.yaml',
        config(dir).replace('globex: { upstreams: [memory] }', 'globex: { upstreams: [memory, shop] }'),
      );
      await gateway.waitForLog((l) => l['msg'] === 'reload');
      expect((await client.listTools()).tools.map((t) => t.name)).toContain('shop_echo');
      expect(textOf(await client.callTool({ name: 'shop_echo', arguments: { text: 'same session' } }))).toBe(
        'same session',
      );
      expect(changed).toBeGreaterThanOrEqual(1);

      dir.write(
        'toolgate.yaml',
        config(dir).replace('globex: { upstreams: [memory] }', 'globex: { upstreams: [memroy] }'),
      );
      const refused = await gateway.waitForLog((l) => l['msg'] === 'reload.refused');
      expect(String(refused['error'])).toMatch(
        /toolgate\.yaml:\d+:\d+: tenants\.globex\.upstreams\[0\]: names the upstream 'memroy'.*did you mean 'memory'/,
      );
      expect(textOf(await client.callTool({ name: 'shop_echo', arguments: { text: 'still served' } }))).toBe(
        'still served',
      );
    } finally {
      await client.close();
    }
  });
});

describe('toolgate gateway: startup and shutdown', () => {
  let dir: TempDir;
  beforeEach(() => {
    dir = tempDir();
  });
  afterEach(() => dir.remove());

  it('never starts on a configuration error: exit 1, file:line:col and the fix, no secret printed', async () => {
    const { runToolgate } = await import('./helpers');
    const file = dir.write('toolgate.yaml', config(dir).replace('prefix: shop_', 'prefx: shop_'));
    const run = await runToolgate(['gateway', '--config', file, '--port', '0'], env);
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain(
      `${file}:12:5: upstreams.shop.prefx: unknown key 'prefx'. Fix: did you mean 'prefix'?`,
    );
    for (const secret of [...Object.values(TOKENS), CHECKIN_KEY]) expect(run.stderr).not.toContain(secret);
  });

  it('drains an in-flight call on SIGTERM: the call completes, then the process exits 0', async () => {
    const gateway = await startGateway(dir.write('toolgate.yaml', config(dir)), env);
    const client = await connectClient(gateway.url, TOKENS.ACME_TOKEN);
    const call = client.callTool({ name: 'shop_slow', arguments: { ms: 1500 } });
    await new Promise((done) => setTimeout(done, 400));
    gateway.child.kill('SIGTERM');
    const result = await call;
    expect(textOf(result)).toBe('waited 1500');
    expect(await gateway.exited).toBe(0);
    expect(gateway.logs().some((l) => l['msg'] === 'shutdown.draining')).toBe(true);
    await client.close().catch(() => undefined);
  });
});

describe('toolgate gateway --stdio', () => {
  it('serves one identity from the configuration over stdin/stdout', async () => {
    const dir = tempDir();
    try {
      const file = dir.write(
        'toolgate.yaml',
        `${config(dir)}stdio: { identity: { tenant: globex, principal: cli-user } }\n`,
      );
      const client = new Client({ name: 'stdio-test', version: '1.0.0' });
      await client.connect(
        new StdioClientTransport({
          command: process.execPath,
          args: ['--import', tsxLoader, cliPath, 'gateway', '--stdio', '--config', file],
          cwd: repoRoot,
          env: { ...(process.env as Record<string, string>), ...env },
          stderr: 'pipe',
        }),
      );
      try {
        const tools = (await client.listTools()).tools.map((tool) => tool.name).sort();
        expect(tools).toEqual(['mem_create_entities', 'mem_read_graph', 'mem_search_nodes']);
        const created = await client.callTool({
          name: 'mem_create_entities',
          arguments: {
            entities: [{ name: 'toolgate', entityType: 'project', observations: ['governs tools'] }],
          },
        });
        expect(created.isError).toBeFalsy();
        const graph = await client.callTool({ name: 'mem_read_graph', arguments: {} });
        expect(textOf(graph)).toContain('governs tools');
      } finally {
        await client.close();
      }
    } finally {
      dir.remove();
    }
  });
});
