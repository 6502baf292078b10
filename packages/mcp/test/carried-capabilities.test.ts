// What an upstream offers besides tools, carried through mcpClient + mcpServe + serveHttp with real
// SDK clients and servers: logging both ways, completions of prefixed references, resource
// subscriptions and their updates, and sampling during a tool call, each governed and confined to
// the caller that asked.

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpServer, ResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js';
import {
  CompleteRequestSchema,
  CreateMessageRequestSchema,
  LoggingMessageNotificationSchema,
  ResourceUpdatedNotificationSchema,
  SetLevelRequestSchema,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
  type CallToolResult,
  type CreateMessageRequest,
  type LoggingMessageNotification,
} from '@modelcontextprotocol/sdk/types.js';
import { canonicalChain } from '@toolgate/middleware';
import {
  mcpClient,
  mcpServe,
  serveHttp,
  type HttpServing,
  type McpClient,
  type McpServed,
} from '@toolgate/mcp';
import { z } from 'zod';
import { plainClient, textOf } from './fixtures/conformance';
import { httpUpstream, type HttpUpstream } from './fixtures/http-upstream';

const SECRET_URI = 'notes://secret';

interface Seen {
  levels: string[];
  completed: { ref: unknown; argument: unknown }[];
  subscribed: string[];
  unsubscribed: string[];
  sampled: string[];
  servers: McpServer[];
}

function richServer(seen: Seen) {
  return () => {
    const server = new McpServer(
      { name: 'rich-upstream', version: '1.0.0' },
      { capabilities: { logging: {}, completions: {}, resources: { subscribe: true } } },
    );
    seen.servers.push(server);
    server.server.setRequestHandler(SetLevelRequestSchema, (request) => {
      seen.levels.push(request.params.level);
      return {};
    });
    server.server.setRequestHandler(CompleteRequestSchema, (request) => {
      seen.completed.push({ ref: request.params.ref, argument: request.params.argument });
      const values = ['paris', 'park', 'oslo'].filter((v) => v.startsWith(request.params.argument.value));
      return { completion: { values, total: values.length, hasMore: false } };
    });
    server.server.setRequestHandler(SubscribeRequestSchema, (request) => {
      seen.subscribed.push(request.params.uri);
      return {};
    });
    server.server.setRequestHandler(UnsubscribeRequestSchema, (request) => {
      seen.unsubscribed.push(request.params.uri);
      return {};
    });
    server.registerResource('note', 'notes://today', { mimeType: 'text/plain' }, (uri) => ({
      contents: [{ uri: uri.href, text: 'today' }],
    }));
    server.registerResource('secret', SECRET_URI, { mimeType: 'text/plain' }, (uri) => ({
      contents: [{ uri: uri.href, text: 'secret' }],
    }));
    server.registerResource(
      'city',
      new ResourceTemplate('cities://{name}', { list: undefined }),
      { mimeType: 'text/plain' },
      (uri) => ({ contents: [{ uri: uri.href, text: uri.href }] }),
    );
    server.registerPrompt('trip', { argsSchema: { city: z.string() } }, ({ city }) => ({
      messages: [{ role: 'user', content: { type: 'text', text: `a trip to ${city}` } }],
    }));
    server.registerTool(
      'chatty',
      { description: 'Logs while it works.', inputSchema: { what: z.string() } },
      async ({ what }, extra) => {
        // Sent as part of the call, filtered by the level the client set.
        await extra.sendNotification({
          method: 'notifications/message',
          params: { level: 'info', logger: 'chatty', data: `working on ${what}` },
        });
        if (seen.levels.at(-1) === 'debug')
          await extra.sendNotification({
            method: 'notifications/message',
            params: { level: 'debug', logger: 'chatty', data: 'fine detail' },
          });
        return { content: [{ type: 'text', text: `done ${what}` }] };
      },
    );
    server.registerTool(
      'summarize',
      { description: 'Asks the client to sample a summary.', inputSchema: { text: z.string() } },
      async ({ text }) => {
        try {
          const answer = await server.server.createMessage({
            messages: [{ role: 'user', content: { type: 'text', text: `summarize: ${text}` } }],
            maxTokens: 50,
          });
          const content = answer.content as { type: string; text?: string };
          seen.sampled.push(content.text ?? '');
          return { content: [{ type: 'text', text: `summary: ${content.text ?? ''}` }] };
        } catch (error) {
          seen.sampled.push(`error: ${(error as Error).message}`);
          return { content: [{ type: 'text', text: 'no summary' }] };
        }
      },
    );
    server.registerTool(
      'touch',
      { description: 'Changes the note and says so.', inputSchema: {} },
      async () => {
        await Promise.all(
          seen.servers.map((s) => s.server.sendResourceUpdated({ uri: 'notes://today' }).catch(() => {})),
        );
        return { content: [{ type: 'text', text: 'touched' }] };
      },
    );
    return server;
  };
}

function samplingClient(asked: CreateMessageRequest['params'][]): Client {
  const client = new Client(
    { name: 'sampling-client', version: '1.0.0' },
    { capabilities: { sampling: {} } },
  );
  client.setRequestHandler(CreateMessageRequestSchema, async (request) => {
    asked.push(request.params);
    return { role: 'assistant', model: 'test-model', content: { type: 'text', text: 'short' } };
  });
  return client;
}

describe('logging, completions, subscriptions and sampling carried through mcpServe over Streamable HTTP', () => {
  const seen: Seen = {
    levels: [],
    completed: [],
    subscribed: [],
    unsubscribed: [],
    sampled: [],
    servers: [],
  };
  const asked: CreateMessageRequest['params'][] = [];
  let upstream: HttpUpstream;
  let imported: McpClient;
  let served: McpServed;
  let http: HttpServing;
  let sampling: Client;
  let plain: Client;

  beforeAll(async () => {
    upstream = await httpUpstream(richServer(seen));
    imported = mcpClient({ name: 'rich', url: upstream.url, prefix: 'rich_' });
    // The chain refuses reading (and so completing or watching) one resource.
    const check = ({ capability, target }: { capability: string; target: string }) =>
      capability === 'resource_read' && target === `rich_${SECRET_URI}`
        ? { allow: false as const, reason: 'secrets stay secret' }
        : { allow: true as const };
    served = mcpServe(await imported.tools(), {
      name: 'gateway',
      version: '1.0.0',
      chain: canonicalChain({ permissions: { check } }),
      upstreams: [imported],
    });
    http = await serveHttp(served);
    sampling = samplingClient(asked);
    plain = plainClient();
    await sampling.connect(new StreamableHTTPClientTransport(http.url));
    await plain.connect(new StreamableHTTPClientTransport(http.url));
  });

  afterAll(async () => {
    await Promise.all([sampling.close(), plain.close()]);
    await http.close();
    await served.close();
    await imported.close();
    await upstream.close();
  });

  it('declares logging, completions and resource subscriptions', () => {
    expect(sampling.getServerCapabilities()).toMatchObject({
      logging: {},
      completions: {},
      resources: { subscribe: true },
    });
  });

  it("forwards logging/setLevel upstream and relays the upstream's log messages to the calling client only", async () => {
    const heardBySampling: LoggingMessageNotification['params'][] = [];
    const heardByPlain: LoggingMessageNotification['params'][] = [];
    sampling.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
      heardBySampling.push(n.params);
    });
    plain.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
      heardByPlain.push(n.params);
    });

    await sampling.setLoggingLevel('info');
    expect(seen.levels).toContain('info');
    const result = (await sampling.callTool({
      name: 'rich_chatty',
      arguments: { what: 'x' },
    })) as CallToolResult;

    expect(textOf(result)).toBe('done x');
    expect(heardBySampling).toEqual([{ level: 'info', logger: 'chatty', data: 'working on x' }]);
    expect(heardByPlain).toEqual([]);
  });

  it('completes a prompt argument by its prefixed name, asking the upstream with its own name', async () => {
    const result = await sampling.complete({
      ref: { type: 'ref/prompt', name: 'rich_trip' },
      argument: { name: 'city', value: 'pa' },
    });

    expect(result.completion.values).toEqual(['paris', 'park']);
    expect(seen.completed.at(-1)).toEqual({
      ref: { type: 'ref/prompt', name: 'trip' },
      argument: { name: 'city', value: 'pa' },
    });
  });

  it('completes a template variable by its prefixed URI', async () => {
    const result = await sampling.complete({
      ref: { type: 'ref/resource', uri: 'rich_cities://{name}' },
      argument: { name: 'name', value: 'o' },
    });

    expect(result.completion.values).toEqual(['oslo']);
    expect(seen.completed.at(-1)).toMatchObject({ ref: { type: 'ref/resource', uri: 'cities://{name}' } });
  });

  it('refuses completing or watching a resource the chain refuses, without asking the upstream', async () => {
    const before = { completed: seen.completed.length, subscribed: seen.subscribed.length };

    await expect(
      sampling.complete({
        ref: { type: 'ref/resource', uri: `rich_${SECRET_URI}` },
        argument: { name: 'x', value: '' },
      }),
    ).rejects.toThrow(/secrets stay secret/);
    await expect(sampling.subscribeResource({ uri: `rich_${SECRET_URI}` })).rejects.toThrow(
      /secrets stay secret/,
    );
    expect(seen.completed).toHaveLength(before.completed);
    expect(seen.subscribed).toHaveLength(before.subscribed);
  });

  it('refuses a reference no upstream serves', async () => {
    await expect(
      sampling.complete({
        ref: { type: 'ref/prompt', name: 'other_trip' },
        argument: { name: 'c', value: '' },
      }),
    ).rejects.toThrow(/no upstream serves it/);
  });

  it('subscribes upstream once, relays updates with the prefixed URI to subscribers only, and unsubscribes after the last', async () => {
    const updatedSampling: string[] = [];
    const updatedPlain: string[] = [];
    sampling.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
      updatedSampling.push(n.params.uri);
    });
    plain.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
      updatedPlain.push(n.params.uri);
    });

    await sampling.subscribeResource({ uri: 'rich_notes://today' });
    await sampling.subscribeResource({ uri: 'rich_notes://today' });
    expect(seen.subscribed).toEqual(['notes://today']);

    await plain.callTool({ name: 'rich_touch', arguments: {} });
    await until(() => updatedSampling.length > 0);
    expect(updatedSampling).toEqual(['rich_notes://today']);
    expect(updatedPlain).toEqual([]);

    await sampling.unsubscribeResource({ uri: 'rich_notes://today' });
    await until(() => seen.unsubscribed.length > 0);
    expect(seen.unsubscribed).toEqual(['notes://today']);
    await plain.callTool({ name: 'rich_touch', arguments: {} });
    await plain.ping();
    expect(updatedSampling).toEqual(['rich_notes://today']);
  });

  it("relays an upstream's sampling request to the calling client and hands its answer back", async () => {
    const result = (await sampling.callTool({
      name: 'rich_summarize',
      arguments: { text: 'a long story' },
    })) as CallToolResult;

    expect(asked).toHaveLength(1);
    expect(asked[0]?.messages).toEqual([
      { role: 'user', content: { type: 'text', text: 'summarize: a long story' } },
    ]);
    expect(textOf(result)).toBe('summary: short');
  });

  it('refuses the upstream a sampling request when the calling client cannot sample', async () => {
    const before = asked.length;
    const result = (await plain.callTool({
      name: 'rich_summarize',
      arguments: { text: 'x' },
    })) as CallToolResult;

    expect(asked).toHaveLength(before);
    expect(seen.sampled.at(-1)).toMatch(/^error: .*sampling is not available/);
    expect(textOf(result)).toBe('no summary');
  });
});

async function until(done: () => boolean): Promise<void> {
  for (let i = 0; i < 100 && !done(); i++) await new Promise((resolve) => setTimeout(resolve, 20));
}
