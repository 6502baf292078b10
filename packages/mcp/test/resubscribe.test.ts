// Resource subscriptions outlive the upstream connection: when a stdio server is restarted, or an HTTP
// server loses the session, the resources downstream clients watch are watched again in the new
// process or session, and updates keep flowing.

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import {
  ResourceUpdatedNotificationSchema,
  SubscribeRequestSchema,
  type CallToolResult,
} from '@modelcontextprotocol/sdk/types.js';
import { mcpClient, serveHttp, type HttpServing, type McpClient, type McpServed } from '@toolgate/mcp';
import { textOf } from './fixtures/conformance';
import { httpUpstream, type HttpUpstream } from './fixtures/http-upstream';
import { fixtureCwd, fixtureServer } from './fixtures/reference';
import { serveUpstreams } from './fixtures/proxy';

/** A client of the served gateway that records each resource update it is sent. */
async function watchingClient(http: HttpServing, updated: string[]): Promise<Client> {
  const client = new Client({ name: 'watching-client', version: '1.0.0' });
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
    updated.push(n.params.uri);
  });
  await client.connect(new StreamableHTTPClientTransport(http.url));
  return client;
}

/** Calls the upstream's `touch`, which updates every resource its session watches. */
const touchThrough = async (client: Client) =>
  textOf((await client.callTool({ name: 'w_touch', arguments: {} })) as CallToolResult);

describe('resource subscriptions across an upstream restart', () => {
  let imported: McpClient;
  let served: McpServed;
  let http: HttpServing;
  let client: Client;
  const updated: string[] = [];

  beforeAll(async () => {
    imported = mcpClient({
      name: 'watched',
      command: fixtureServer('watched'),
      cwd: fixtureCwd,
      stderr: 'ignore',
      prefix: 'w_',
      backoff: { initialDelayMs: 20, maxDelayMs: 200 },
    });
    served = await serveUpstreams([imported]);
    http = await serveHttp(served);
    client = await watchingClient(http, updated);
  }, 30_000);

  afterAll(async () => {
    await client.close();
    await http.close();
    await served.close();
    await imported.close();
  });

  const touch = () => touchThrough(client);

  it('watches the resource again in the restarted process, and its updates reach the subscriber', async () => {
    await client.subscribeResource({ uri: 'w_notes://today' });
    expect(await touch()).toBe('touched 1');
    await until(() => updated.length === 1);
    expect(updated).toEqual(['w_notes://today']);

    const crashed = (await client.callTool({ name: 'w_crash', arguments: {} })) as CallToolResult;
    expect(crashed.isError).toBe(true);
    await until(() => imported.status().state === 'connected');
    expect(imported.status().state).toBe('connected');

    // The new process was asked to watch it before any call could reach it.
    expect(await touch()).toBe('touched 1');
    await until(() => updated.length === 2);
    expect(updated).toEqual(['w_notes://today', 'w_notes://today']);
  }, 30_000);

  it('does not watch again what the client stopped watching before the restart', async () => {
    await client.unsubscribeResource({ uri: 'w_notes://today' });
    await client.callTool({ name: 'w_crash', arguments: {} });
    await until(() => imported.status().state === 'connected');

    expect(await touch()).toBe('touched 0');
  }, 30_000);
});

describe('resource subscriptions across a lost HTTP session', () => {
  // Per session: what it was asked to watch. A forgotten session forgets its subscriptions.
  const watchedBySession = new Map<McpServer, Set<string>>();
  let upstream: HttpUpstream;
  let imported: McpClient;
  let served: McpServed;
  let http: HttpServing;
  let client: Client;
  const updated: string[] = [];

  beforeAll(async () => {
    upstream = await httpUpstream(() => {
      const server = new McpServer(
        { name: 'watched', version: '1.0.0' },
        { capabilities: { resources: { subscribe: true } } },
      );
      const watched = new Set<string>();
      watchedBySession.set(server, watched);
      server.registerResource('note', 'notes://today', { mimeType: 'text/plain' }, (uri) => ({
        contents: [{ uri: uri.href, text: 'today' }],
      }));
      server.server.setRequestHandler(SubscribeRequestSchema, (request) => {
        watched.add(request.params.uri);
        return {};
      });
      server.registerTool(
        'touch',
        { description: 'Changes what this session watches.', inputSchema: {} },
        async () => {
          for (const uri of watched) await server.server.sendResourceUpdated({ uri });
          return { content: [{ type: 'text', text: `touched ${watched.size}` }] };
        },
      );
      return server;
    });
    imported = mcpClient({
      name: 'watched',
      url: upstream.url,
      prefix: 'w_',
      backoff: { initialDelayMs: 20, maxDelayMs: 200 },
    });
    served = await serveUpstreams([imported]);
    http = await serveHttp(served);
    client = await watchingClient(http, updated);
  });

  afterAll(async () => {
    await client.close();
    await http.close();
    await served.close();
    await imported.close();
    await upstream.close();
  });

  const touch = () => touchThrough(client);

  it('opens a new session when the server lost ours, and watches the resource again in it', async () => {
    await client.subscribeResource({ uri: 'w_notes://today' });
    expect(await touch()).toBe('touched 1');
    await until(() => updated.length === 1);

    const lostAt = Date.now();
    upstream.forgetSessions();
    // The call that finds the session gone fails without running; the connection comes back.
    expect(((await client.callTool({ name: 'w_touch', arguments: {} })) as CallToolResult).isError).toBe(
      true,
    );
    const back = () =>
      imported.status().state === 'connected' && Date.parse(imported.status().since) >= lostAt;
    await until(back);
    expect(back()).toBe(true);

    expect(await touch()).toBe('touched 1');
    await until(() => updated.length === 2);
    expect(updated).toEqual(['w_notes://today', 'w_notes://today']);
  });
});

async function until(done: () => boolean): Promise<void> {
  for (let i = 0; i < 250 && !done(); i++) await new Promise((resolve) => setTimeout(resolve, 20));
}
