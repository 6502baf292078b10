// An upstream's sampling request is governed: relayed to the calling client when the upstream may
// sample, refused with an error the upstream reads when its configuration says 'deny' (the client is
// never asked), and reported either way without the message text.

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { CreateMessageRequestSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import {
  mcpClient,
  serveHttp,
  type HttpServing,
  type McpClient,
  type McpClientEvent,
  type McpServed,
} from '@toolgate/mcp';
import { z } from 'zod';
import { textOf } from './fixtures/conformance';
import { httpUpstream, type HttpUpstream } from './fixtures/http-upstream';
import { serveUpstreams } from './fixtures/proxy';

const PRIVATE_TEXT = 'the quarterly numbers';

function samplingServer(answers: string[]) {
  return () => {
    const server = new McpServer({ name: 'sampler', version: '1.0.0' });
    server.registerTool(
      'summarize',
      { description: 'Asks the client to sample a summary.', inputSchema: { text: z.string() } },
      async ({ text }) => {
        try {
          const answer = await server.server.createMessage({
            messages: [{ role: 'user', content: { type: 'text', text: `summarize: ${text}` } }],
            maxTokens: 50,
          });
          answers.push(`sampled: ${(answer.content as { text?: string }).text ?? ''}`);
        } catch (error) {
          answers.push(`error: ${(error as Error).message}`);
        }
        return { content: [{ type: 'text', text: answers.at(-1)! }] };
      },
    );
    return server;
  };
}

async function servedWith(sampling: 'allow' | 'deny' | undefined) {
  const answers: string[] = [];
  const events: McpClientEvent[] = [];
  const asked: unknown[] = [];
  const upstream: HttpUpstream = await httpUpstream(samplingServer(answers));
  const imported: McpClient = mcpClient({
    name: 'sampler',
    url: upstream.url,
    prefix: 's_',
    ...(sampling !== undefined ? { sampling } : {}),
    onEvent: (event) => {
      if (event.type === 'mcp.sampling') events.push(event);
    },
  });
  const served: McpServed = await serveUpstreams([imported], {
    identityFrom: () => ({ tenant: 'acme', principal: 'ana' }),
  });
  const http: HttpServing = await serveHttp(served);
  const client = new Client(
    { name: 'sampling-client', version: '1.0.0' },
    { capabilities: { sampling: {} } },
  );
  client.setRequestHandler(CreateMessageRequestSchema, async (request) => {
    asked.push(request.params);
    return { role: 'assistant', model: 'test-model', content: { type: 'text', text: 'short' } };
  });
  await client.connect(new StreamableHTTPClientTransport(http.url));
  const summarize = async () =>
    textOf(
      (await client.callTool({ name: 's_summarize', arguments: { text: PRIVATE_TEXT } })) as CallToolResult,
    );
  const close = async () => {
    await client.close();
    await http.close();
    await served.close();
    await imported.close();
    await upstream.close();
  };
  return { answers, events, asked, summarize, close };
}

describe('sampling governed per upstream', () => {
  it("refuses a 'deny' upstream's sampling request with a reason it reads, never asking the client", async () => {
    const setup = await servedWith('deny');
    try {
      expect(await setup.summarize()).toMatch(
        /^error: .*sampling refused: this gateway's policy does not let MCP server 'sampler' ask its callers to sample/,
      );
      expect(setup.asked).toEqual([]);
      expect(setup.events).toEqual([
        {
          type: 'mcp.sampling',
          source: 'sampler',
          outcome: 'refused',
          code: 'SAMPLING_DENIED',
          toolName: 's_summarize',
          identity: { tenant: 'acme', principal: 'ana' },
        },
      ]);
      expect(JSON.stringify(setup.events)).not.toContain(PRIVATE_TEXT);
    } finally {
      await setup.close();
    }
  });

  it('relays by default, and reports the relay naming the call and its caller', async () => {
    const setup = await servedWith(undefined);
    try {
      expect(await setup.summarize()).toBe('sampled: short');
      expect(setup.asked).toHaveLength(1);
      expect(setup.events).toEqual([
        {
          type: 'mcp.sampling',
          source: 'sampler',
          outcome: 'relayed',
          toolName: 's_summarize',
          identity: { tenant: 'acme', principal: 'ana' },
        },
      ]);
    } finally {
      await setup.close();
    }
  });
});
