// Resource updates for 2026-07-28 clients, which watch through subscriptions/listen instead of
// resources/subscribe: each resource a listen names is governed as reading it, watched upstream while
// the stream is open, and its updates reach the streams that named it, and no other.

import {
  Client as V2Client,
  StreamableHTTPClientTransport as V2Transport,
} from '@modelcontextprotocol/client';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { SubscribeRequestSchema, UnsubscribeRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { createDispatcher, type Identity } from '@toolgate/core';
import { canonicalChain } from '@toolgate/middleware';
import {
  mcpClient,
  mcpServe,
  serveHttp,
  type HttpServing,
  type McpClient,
  type McpServed,
} from '@toolgate/mcp';
import { httpUpstream, type HttpUpstream } from './fixtures/http-upstream';
import { serveUpstreams } from './fixtures/proxy';

const MODERN = '2026-07-28';

interface Seen {
  subscribed: string[];
  unsubscribed: string[];
  servers: McpServer[];
}

function watchedServer(seen: Seen) {
  return () => {
    const server = new McpServer(
      { name: 'notes', version: '1.0.0' },
      { capabilities: { resources: { subscribe: true } } },
    );
    seen.servers.push(server);
    server.server.setRequestHandler(SubscribeRequestSchema, (request) => {
      seen.subscribed.push(request.params.uri);
      return {};
    });
    server.server.setRequestHandler(UnsubscribeRequestSchema, (request) => {
      seen.unsubscribed.push(request.params.uri);
      return {};
    });
    for (const uri of ['notes://today', 'notes://other', 'notes://secret'])
      server.registerResource(uri, uri, { mimeType: 'text/plain' }, (url) => ({
        contents: [{ uri: url.href, text: uri }],
      }));
    server.registerTool('touch', { description: 'Changes every note.', inputSchema: {} }, async () => {
      for (const s of seen.servers)
        for (const uri of ['notes://today', 'notes://other'])
          await s.server.sendResourceUpdated({ uri }).catch(() => undefined);
      return { content: [{ type: 'text', text: 'touched' }] };
    });
    return server;
  };
}

describe('subscriptions/listen for resources through mcpServe', () => {
  const seen: Seen = { subscribed: [], unsubscribed: [], servers: [] };
  let upstream: HttpUpstream;
  let imported: McpClient;
  let served: McpServed;
  let http: HttpServing;
  const clients: V2Client[] = [];

  const modernClient = async (updated: string[]) => {
    const client = new V2Client(
      { name: 'modern', version: '1.0.0' },
      { versionNegotiation: { mode: { pin: MODERN } } },
    );
    client.setNotificationHandler('notifications/resources/updated', (notification) => {
      updated.push(notification.params.uri);
    });
    await client.connect(new V2Transport(http.url));
    clients.push(client);
    return client;
  };

  beforeAll(async () => {
    upstream = await httpUpstream(watchedServer(seen));
    imported = mcpClient({ name: 'notes', url: upstream.url, prefix: 'n_' });
    const check = ({ capability, target }: { capability: string; target: string }) =>
      capability === 'resource_read' && target === 'n_notes://secret'
        ? { allow: false as const, reason: 'secrets stay secret' }
        : { allow: true as const };
    served = await serveUpstreams([imported], { chain: canonicalChain({ permissions: { check } }) });
    http = await serveHttp(served);
  });

  afterAll(async () => {
    await Promise.all(clients.map((client) => client.close()));
    await http.close();
    await served.close();
    await imported.close();
    await upstream.close();
  });

  it('watches a listened resource upstream and delivers its updates to the stream that named it only', async () => {
    const todayUpdates: string[] = [];
    const otherUpdates: string[] = [];
    const watching = await modernClient(todayUpdates);
    const elsewhere = await modernClient(otherUpdates);
    const today = await watching.listen({ resourceSubscriptions: ['n_notes://today'] });
    const other = await elsewhere.listen({ resourceSubscriptions: ['n_notes://other'] });
    expect(today.honoredFilter).toEqual({ resourceSubscriptions: ['n_notes://today'] });
    expect(seen.subscribed).toEqual(['notes://today', 'notes://other']);

    await watching.callTool({ name: 'n_touch', arguments: {} });
    await until(() => todayUpdates.length > 0 && otherUpdates.length > 0);

    expect(todayUpdates).toEqual(['n_notes://today']);
    expect(otherUpdates).toEqual(['n_notes://other']);

    await today.close();
    await other.close();
    await until(() => seen.unsubscribed.length === 2);
    expect(seen.unsubscribed.sort()).toEqual(['notes://other', 'notes://today']);
  });

  it('watches upstream once for several streams, and stops after the last one closes', async () => {
    seen.subscribed.length = 0;
    seen.unsubscribed.length = 0;
    const first = await (await modernClient([])).listen({ resourceSubscriptions: ['n_notes://today'] });
    const second = await (await modernClient([])).listen({ resourceSubscriptions: ['n_notes://today'] });
    expect(seen.subscribed).toEqual(['notes://today']);

    await first.close();
    await (await modernClient([])).listTools();
    expect(seen.unsubscribed).toEqual([]);
    await second.close();
    await until(() => seen.unsubscribed.length > 0);
    expect(seen.unsubscribed).toEqual(['notes://today']);
  });

  it('refuses a listen naming a resource the chain refuses, watching nothing upstream', async () => {
    seen.subscribed.length = 0;
    const client = await modernClient([]);

    await expect(
      client.listen({ resourceSubscriptions: ['n_notes://today', 'n_notes://secret'] }),
    ).rejects.toThrow(/secrets stay secret/);
    await client.listTools();
    expect(seen.subscribed.filter((uri) => uri === 'notes://secret')).toEqual([]);
    // What it took before the refusal is let go again.
    await until(() => seen.unsubscribed.includes('notes://today'));
    expect(seen.unsubscribed).toContain('notes://today');
  });

  it('refuses a listen naming a resource no upstream serves', async () => {
    const client = await modernClient([]);
    await expect(client.listen({ resourceSubscriptions: ['elsewhere://x'] })).rejects.toThrow(
      /no upstream serves it/,
    );
  });
});

describe('subscriptions/listen per caller (a scope)', () => {
  const seen: Seen = { subscribed: [], unsubscribed: [], servers: [] };
  let upstream: HttpUpstream;
  let imported: McpClient;
  let served: McpServed;
  let http: HttpServing;

  beforeAll(async () => {
    upstream = await httpUpstream(watchedServer(seen));
    imported = mcpClient({ name: 'notes', url: upstream.url, prefix: 'n_' });
    await imported.tools();
    const chain = canonicalChain({ permissions: { check: () => ({ allow: true as const }) } });
    const dispatcher = createDispatcher({ tools: [], chain });
    served = mcpServe([], {
      name: 'gateway',
      version: '1.0.0',
      identityFrom: (authInfo) => (authInfo?.extra as { identity?: Identity } | undefined)?.identity,
      // Only tenant acme is served the upstream.
      scope: (identity) => ({
        dispatcher,
        chain,
        listed: () => [],
        upstreams: identity?.tenant === 'acme' ? [imported] : [],
      }),
    });
    http = await serveHttp(served, {
      authenticate: (request) => {
        const tenant = request.headers.authorization === 'Bearer acme-token' ? 'acme' : 'globex';
        return { token: 't', clientId: tenant, scopes: [], extra: { identity: { tenant, principal: 'p' } } };
      },
    });
  });

  afterAll(async () => {
    await http.close();
    await served.close();
    await imported.close();
    await upstream.close();
  });

  const listenAs = async (token: string) => {
    const client = new V2Client(
      { name: 'modern', version: '1.0.0' },
      { versionNegotiation: { mode: { pin: MODERN } } },
    );
    await client.connect(
      new V2Transport(http.url, { requestInit: { headers: { authorization: `Bearer ${token}` } } }),
    );
    return client;
  };

  it("refuses a tenant a resource of another tenant's upstream, as one no upstream serves, and watches nothing", async () => {
    const other = await listenAs('globex-token');
    try {
      await expect(other.listen({ resourceSubscriptions: ['n_notes://today'] })).rejects.toThrow(
        /no upstream serves it/,
      );
    } finally {
      await other.close();
    }
    expect(seen.subscribed).toEqual([]);

    const own = await listenAs('acme-token');
    try {
      const stream = await own.listen({ resourceSubscriptions: ['n_notes://today'] });
      expect(seen.subscribed).toEqual(['notes://today']);
      await stream.close();
    } finally {
      await own.close();
    }
  });
});

async function until(done: () => boolean): Promise<void> {
  for (let i = 0; i < 150 && !done(); i++) await new Promise((resolve) => setTimeout(resolve, 20));
}
