// The same carrying with a 2026-07-28 upstream (the conformance reference server over stdio), which
// has no session to hold a log level or a resource subscription: the level travels in each call's
// _meta and a subscription becomes a subscriptions/listen stream.

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  LoggingMessageNotificationSchema,
  type CallToolResult,
  type LoggingMessageNotification,
} from '@modelcontextprotocol/sdk/types.js';
import { serveHttp, type HttpServing, type McpClient, type McpServed } from '@toolgate/mcp';
import { textOf } from './fixtures/conformance';
import { referenceUpstream, serveUpstreams } from './fixtures/proxy';

describe('logging, completions and subscriptions with a 2026-07-28 upstream', () => {
  let imported: McpClient;
  let served: McpServed;
  let http: HttpServing;
  let client: Client;
  const heard: LoggingMessageNotification['params'][] = [];

  beforeAll(async () => {
    imported = referenceUpstream();
    served = await serveUpstreams([imported]);
    http = await serveHttp(served);
    client = new Client({ name: 'legacy-client', version: '1.0.0' });
    client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
      heard.push(n.params);
    });
    await client.connect(new StreamableHTTPClientTransport(http.url));
  }, 30_000);

  afterAll(async () => {
    await client.close();
    await http.close();
    await served.close();
    await imported.close();
  });

  const logging = async () => {
    heard.length = 0;
    const result = (await client.callTool({
      name: 'ref_test_tool_with_logging',
      arguments: {},
    })) as CallToolResult;
    expect(textOf(result)).toBe('Tool with logging executed successfully');
    return heard.map((params) => params.data);
  };

  it("relays the upstream's log messages at the level the client set, carried in each call", async () => {
    expect(await logging()).toEqual([
      'Tool execution started',
      'Tool processing data',
      'Tool execution completed',
    ]);

    await client.setLoggingLevel('warning');
    expect(await logging()).toEqual([]);

    await client.setLoggingLevel('info');
    expect(await logging()).toHaveLength(3);
  });

  it('completes a prefixed prompt argument', async () => {
    const result = await client.complete({
      ref: { type: 'ref/prompt', name: 'ref_test_prompt_with_arguments' },
      argument: { name: 'arg1', value: 'par' },
    });
    expect(result.completion.values).toEqual(['paris', 'park', 'party']);
  });

  it('subscribes to and unsubscribes from a prefixed resource through a listen stream', async () => {
    await expect(client.subscribeResource({ uri: 'ref_test://watched-resource' })).resolves.toEqual({});
    await expect(client.unsubscribeResource({ uri: 'ref_test://watched-resource' })).resolves.toEqual({});
  });
});
