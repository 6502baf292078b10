// The example as a user runs it: started as its own process, reached by the SDK's real client,
// over stdio and over HTTP.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';

const repoRoot = resolve(__dirname, '../..');
const tsx = pathToFileURL(createRequire(join(repoRoot, 'package.json')).resolve('tsx')).href;
const main = join(__dirname, 'main.ts');

function textOf(result: CallToolResult): string {
  const [block] = result.content;
  return block?.type === 'text' ? block.text : '';
}

/** A client whose person approves every refund. */
function approvingClient(): Client {
  const client = new Client(
    { name: 'example-test', version: '1.0.0' },
    { capabilities: { elicitation: {} } },
  );
  client.setRequestHandler(ElicitRequestSchema, async () => ({
    action: 'accept',
    content: { decision: 'approve', note: 'checked with the customer' },
  }));
  return client;
}

async function exercise(client: Client): Promise<void> {
  const { tools } = await client.listTools();
  expect(tools.map((t) => t.name).sort()).toEqual(['delete_customer', 'lookup_order', 'refund_order']);
  const order = (await client.callTool({
    name: 'lookup_order',
    arguments: { orderId: 'A-17' },
  })) as CallToolResult;
  expect(order.structuredContent).toEqual({ orderId: 'A-17', customer: 'Ada', total: 120, refunded: 0 });
  const refund = (await client.callTool({
    name: 'refund_order',
    arguments: { orderId: 'A-17', amount: 20 },
  })) as CallToolResult;
  expect(refund.structuredContent).toEqual({ orderId: 'A-17', refunded: 20, refundedInTotal: 20 });
  const large = (await client.callTool({
    name: 'refund_order',
    arguments: { orderId: 'B-42', amount: 800 },
  })) as CallToolResult;
  expect([large.isError, textOf(large)]).toEqual([
    true,
    expect.stringMatching(/^\[capabilities refused: .*finance team/),
  ]);
  const deletion = (await client.callTool({
    name: 'delete_customer',
    arguments: { customer: 'Ada' },
  })) as CallToolResult;
  expect([deletion.isError, textOf(deletion)]).toEqual([
    true,
    expect.stringMatching(/^\[permission refused: .*data team/),
  ]);
}

/** Resolves with what the server said once `pattern` appears on its stderr. */
function waitFor(
  stream: NodeJS.ReadableStream,
  pattern: RegExp,
  child?: ChildProcess,
): Promise<RegExpExecArray> {
  return new Promise((found, failed) => {
    let said = '';
    stream.on('data', (chunk: Buffer) => {
      said += chunk.toString();
      const match = pattern.exec(said);
      if (match) found(match);
    });
    child?.once('exit', (code) => failed(new Error(`the example exited (${code}) early: ${said}`)));
  });
}

/** Collects everything a stream says until it closes. */
function collect(stream: NodeJS.ReadableStream): Promise<string> {
  let said = '';
  stream.on('data', (chunk: Buffer) => (said += chunk.toString()));
  return once(stream, 'close').then(() => said);
}

/** Whether a loopback port can be listened on again. */
async function portIsFree(port: number): Promise<boolean> {
  const probe = createServer();
  try {
    probe.listen(port, '127.0.0.1');
    await once(probe, 'listening');
    return true;
  } catch {
    return false;
  } finally {
    probe.close();
  }
}

function startHttp(): ChildProcess {
  return spawn(process.execPath, ['--import', tsx, main, '--http'], {
    cwd: repoRoot,
    env: { ...process.env, PORT: '0' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
}

describe('the governed MCP server example', () => {
  it('serves over stdio to an MCP client: lookups run, refunds ask the person, policy refuses the rest', async () => {
    const client = approvingClient();
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: ['--import', tsx, main],
        cwd: repoRoot,
        stderr: 'pipe',
      }),
    );
    try {
      await exercise(client);
    } finally {
      await client.close();
    }
  });

  it('serves over Streamable HTTP with a bearer token when started with --http', async () => {
    const child: ChildProcess = spawn(process.execPath, ['--import', tsx, main, '--http'], {
      cwd: repoRoot,
      env: { ...process.env, PORT: '0', TOOLGATE_TOKEN: 'example-token' },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    try {
      const url = await new Promise<string>((found, failed) => {
        let said = '';
        child.stderr!.on('data', (chunk: Buffer) => {
          said += chunk.toString();
          const match = /governed MCP server on (http:\S+)/.exec(said);
          if (match) found(match[1]!);
        });
        child.once('exit', (code) =>
          failed(new Error(`the example exited (${code}) before listening: ${said}`)),
        );
      });
      const anonymous = new Client({ name: 'anonymous', version: '1.0.0' });
      await expect(anonymous.connect(new StreamableHTTPClientTransport(new URL(url)))).rejects.toThrow();
      const client = approvingClient();
      await client.connect(
        new StreamableHTTPClientTransport(new URL(url), {
          requestInit: { headers: { authorization: 'Bearer example-token' } },
        }),
      );
      await exercise(client);
      await client.close();
    } finally {
      child.kill();
    }
  });

  it.each(['SIGTERM', 'SIGINT'] as const)(
    'stops on %s over HTTP: exits 0 and frees its port',
    async (signal) => {
      const child = startHttp();
      const [, url] = await waitFor(child.stderr!, /governed MCP server on (http:\S+)/, child);
      const port = Number(new URL(url!).port);
      const exited = once(child, 'exit');
      child.kill(signal);
      const [code] = await exited;
      expect(code).toBe(0);
      expect(await portIsFree(port)).toBe(true);
    },
  );

  it('stops when its stdin closes over stdio, as when the MCP client goes away', async () => {
    const child = spawn(process.execPath, ['--import', tsx, main], {
      cwd: repoRoot,
      stdio: ['pipe', 'ignore', 'pipe'],
    });
    await waitFor(child.stderr!, /governed MCP server on stdio/, child);
    const said = collect(child.stderr!);
    const exited = once(child, 'exit');
    child.stdin!.end();
    const [code] = await exited;
    expect(code).toBe(0);
    expect(await said).toContain('stopping: stdin closed');
  });

  it('stops when a process that started it exits, even one killed without passing a signal on', async () => {
    // As with `npx pnpm mcp:serve`: the outer wrapper is killed outright, while the inner one (pnpm)
    // lives on as the server's parent, so only watching every starter notices.
    const server = `"${process.execPath}" --import "${tsx}" "${main}" --http`;
    const starter = spawn('sh', ['-c', `sh -c '${server} & wait' & wait`], {
      cwd: repoRoot,
      env: { ...process.env, PORT: '0' },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    const [, url] = await waitFor(starter.stderr!, /governed MCP server on (http:\S+)/);
    const said = collect(starter.stderr!);
    starter.kill('SIGKILL');
    // The stream closes only when its last writers, the inner shell and the server, have exited.
    expect(await said).toContain('stopping: the process that started it exited');
    expect(await portIsFree(Number(new URL(url!).port))).toBe(true);
  });
});
