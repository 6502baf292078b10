// Roots carried through mcpClient + mcpServe + serveHttp with real SDK clients and servers: an
// upstream's roots/list during a tool call is answered by the client that made the call and by no
// other; outside a call nobody's roots are handed out; a client's roots/list_changed reaches the
// upstreams it is served; an upstream configured with roots: 'refuse' is not offered roots at all.

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import {
  ListRootsRequestSchema,
  RootsListChangedNotificationSchema,
  type CallToolResult,
} from '@modelcontextprotocol/sdk/types.js';
import { mcpClient, serveHttp, type HttpServing, type McpClient, type McpServed } from '@toolgate/mcp';
import { plainClient, textOf } from './fixtures/conformance';
import { httpUpstream, type HttpUpstream } from './fixtures/http-upstream';
import { linkTo } from './fixtures/in-memory';
import { serveUpstreams } from './fixtures/proxy';

interface Seen {
  /** Per upstream connection: whether the gateway declared roots, and what asking for them outside a call gave. */
  connections: { declared: boolean; outside: string }[];
  changed: number;
}

function rootsServer(seen: Seen) {
  return () => {
    const server = new McpServer({ name: 'roots-upstream', version: '1.0.0' });
    server.server.oninitialized = () => {
      const entry = { declared: server.server.getClientCapabilities()?.roots !== undefined, outside: '' };
      seen.connections.push(entry);
      if (!entry.declared) return;
      server.server.listRoots().then(
        (answer) => {
          entry.outside = `roots: ${answer.roots.map((root) => root.uri).join(', ')}`;
        },
        (error: Error) => {
          entry.outside = `error: ${error.message}`;
        },
      );
    };
    server.server.setNotificationHandler(RootsListChangedNotificationSchema, () => {
      seen.changed += 1;
    });
    server.registerTool('where', { description: "Reads the caller's roots.", inputSchema: {} }, async () => {
      try {
        const answer = await server.server.listRoots();
        return { content: [{ type: 'text', text: answer.roots.map((root) => root.uri).join(', ') }] };
      } catch (error) {
        return { content: [{ type: 'text', text: `no roots (${(error as Error).message})` }] };
      }
    });
    return server;
  };
}

function rootsClient(roots: string[], asked: { count: number }): Client {
  const client = new Client(
    { name: 'roots-client', version: '1.0.0' },
    { capabilities: { roots: { listChanged: true } } },
  );
  client.setRequestHandler(ListRootsRequestSchema, async () => {
    asked.count += 1;
    return { roots: roots.map((uri) => ({ uri, name: uri })) };
  });
  return client;
}

describe('roots carried through mcpServe over Streamable HTTP', () => {
  const seen: Seen = { connections: [], changed: 0 };
  const asked = { count: 0 };
  let upstream: HttpUpstream;
  let imported: McpClient;
  let served: McpServed;
  let http: HttpServing;
  let withRoots: Client;
  let plain: Client;

  beforeAll(async () => {
    upstream = await httpUpstream(rootsServer(seen));
    imported = mcpClient({ name: 'roots', url: upstream.url, prefix: 'r_' });
    served = await serveUpstreams([imported]);
    http = await serveHttp(served);
    withRoots = rootsClient(['file:///projects/alpha'], asked);
    plain = plainClient();
    await withRoots.connect(new StreamableHTTPClientTransport(http.url));
    await plain.connect(new StreamableHTTPClientTransport(http.url));
  });

  afterAll(async () => {
    await Promise.all([withRoots.close(), plain.close()]);
    await http.close();
    await served.close();
    await imported.close();
    await upstream.close();
  });

  it("answers an upstream's roots/list during a call with the calling client's roots", async () => {
    const result = (await withRoots.callTool({ name: 'r_where', arguments: {} })) as CallToolResult;

    expect(textOf(result)).toBe('file:///projects/alpha');
    expect(asked.count).toBe(1);
  });

  it('refuses the upstream when the calling client declared no roots, and asks no other client', async () => {
    const before = asked.count;
    const result = (await plain.callTool({ name: 'r_where', arguments: {} })) as CallToolResult;

    expect(textOf(result)).toMatch(
      /^no roots \(.*roots are not available: no calling client that declared roots/,
    );
    expect(asked.count).toBe(before);
  });

  it("forwards a client's roots/list_changed to the upstreams it is served", async () => {
    await withRoots.sendRootsListChanged();
    await until(() => seen.changed > 0);

    expect(seen.changed).toBe(1);
  });
});

describe('an upstream asking for roots outside a call', () => {
  // In memory: over Streamable HTTP a request outside a call needs the standalone stream.
  it("is refused, and no client's roots are handed out", async () => {
    const seen: Seen = { connections: [], changed: 0 };
    const imported = mcpClient({
      name: 'roots',
      transport: () => linkTo(rootsServer(seen)()),
      prefix: 'r_',
    });
    try {
      await imported.tools();
      await until(() => seen.connections[0] !== undefined && seen.connections[0].outside !== '');
    } finally {
      await imported.close();
    }
    expect(seen.connections).toEqual([
      { declared: true, outside: expect.stringMatching(/^error: .*roots are not available/) },
    ]);
  });
});

describe("an upstream configured with roots: 'refuse'", () => {
  it('is not offered roots, so it never asks for them', async () => {
    const seen: Seen = { connections: [], changed: 0 };
    const upstream = await httpUpstream(rootsServer(seen));
    const imported = mcpClient({ name: 'roots', url: upstream.url, prefix: 'r_', roots: 'refuse' });
    try {
      await imported.tools();
      await until(() => seen.connections.length > 0);
      expect(seen.connections).toEqual([{ declared: false, outside: '' }]);
      await imported.rootsListChanged?.();
    } finally {
      await imported.close();
      await upstream.close();
    }
    expect(seen.changed).toBe(0);
  });
});

async function until(done: () => boolean): Promise<void> {
  for (let i = 0; i < 100 && !done(); i++) await new Promise((resolve) => setTimeout(resolve, 20));
}
