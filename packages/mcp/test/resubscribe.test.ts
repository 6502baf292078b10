// Resource subscriptions outlive the upstream connection: when a stdio server is restarted, the
// resources downstream clients watch are watched again in the new process, and updates keep flowing.

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ResourceUpdatedNotificationSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { canonicalChain } from '@toolgate/middleware';
import {
  mcpClient,
  mcpServe,
  serveHttp,
  type HttpServing,
  type McpClient,
  type McpServed,
} from '@toolgate/mcp';
import { textOf } from './fixtures/conformance';
import { fixtureCwd, fixtureServer } from './fixtures/reference';

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
    served = mcpServe(await imported.tools(), {
      name: 'gateway',
      version: '1.0.0',
      chain: canonicalChain({ permissions: { check: () => ({ allow: true as const }) } }),
      upstreams: [imported],
    });
    http = await serveHttp(served);
    client = new Client({ name: 'watching-client', version: '1.0.0' });
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
      updated.push(n.params.uri);
    });
    await client.connect(new StreamableHTTPClientTransport(http.url));
  }, 30_000);

  afterAll(async () => {
    await client.close();
    await http.close();
    await served.close();
    await imported.close();
  });

  const touch = async () =>
    textOf((await client.callTool({ name: 'w_touch', arguments: {} })) as CallToolResult);

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

async function until(done: () => boolean): Promise<void> {
  for (let i = 0; i < 250 && !done(); i++) await new Promise((resolve) => setTimeout(resolve, 20));
}
