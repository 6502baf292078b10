// Tools with x-mcp-header declarations (SEP-2243) from a 2026-07-28 server over Streamable HTTP:
// a well-formed one is imported and its declared argument reaches the server as an Mcp-Param-*
// header; a malformed one is left out alone, reported as skipped with its reason (where the SDK
// would drop it silently), and the others stay callable.

import { createServer, type IncomingHttpHeaders, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { toNodeHandler, type NodeIncomingMessageLike } from '@modelcontextprotocol/node';
import { createMcpHandler, Server } from '@modelcontextprotocol/server';
import { createDispatcher } from '@toolgate/core';
import { canonicalChain } from '@toolgate/middleware';
import { mcpClient, type McpClient } from '@toolgate/mcp';

const TOOLS = [
  {
    name: 'deploy',
    description: 'Deploys to a region.',
    inputSchema: {
      type: 'object',
      properties: { region: { type: 'string', 'x-mcp-header': 'Region' }, note: { type: 'string' } },
      required: ['region'],
    },
  },
  {
    name: 'spaced',
    description: 'Its header name has a space.',
    inputSchema: { type: 'object', properties: { v: { type: 'string', 'x-mcp-header': 'My Region' } } },
  },
  {
    name: 'scored',
    description: 'Its header is on a number.',
    inputSchema: { type: 'object', properties: { s: { type: 'number', 'x-mcp-header': 'Score' } } },
  },
  { name: 'plain', description: 'No headers.', inputSchema: { type: 'object', properties: {} } },
];

describe('x-mcp-header tools from a 2026-07-28 HTTP server', () => {
  let http: HttpServer;
  let client: McpClient;
  const calls: { name: string; headers: IncomingHttpHeaders }[] = [];

  beforeAll(async () => {
    const handler = toNodeHandler(
      createMcpHandler(() => {
        const server = new Server({ name: 'headers', version: '1.0.0' }, { capabilities: { tools: {} } });
        server.setRequestHandler('tools/list', () => ({ tools: TOOLS }) as never);
        server.setRequestHandler('tools/call', (request) => ({
          content: [{ type: 'text', text: `ran ${request.params.name}` }],
        }));
        return server;
      }),
    );
    http = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => {
        const message =
          body === '' ? undefined : (JSON.parse(body) as { method?: string; params?: { name?: string } });
        if (message?.method === 'tools/call')
          calls.push({ name: String(message.params?.name), headers: req.headers });
        void handler(
          req as unknown as NodeIncomingMessageLike,
          res,
          body === '' ? undefined : JSON.parse(body),
        );
      });
    });
    await new Promise<void>((done) => http.listen(0, '127.0.0.1', done));
    const { port } = http.address() as AddressInfo;
    client = mcpClient({ name: 'headers', url: `http://127.0.0.1:${port}/mcp` });
  });

  afterAll(async () => {
    await client.close();
    await new Promise((done) => http.close(done));
  });

  it('imports the well-formed tools, reports each malformed one with why, and mirrors the header', async () => {
    const tools = await client.tools();
    expect(tools.map((tool) => tool.schema.name)).toEqual(['deploy', 'plain']);
    expect(client.skipped.map((skip) => [skip.toolName, skip.reason])).toEqual([
      ['spaced', expect.stringMatching(/malformed header: x-mcp-header at 'v' is not an HTTP token/)],
      [
        'scored',
        expect.stringMatching(/malformed header: x-mcp-header at 's' is on a property that is not a string/),
      ],
    ]);
    const dispatcher = createDispatcher({ tools, chain: canonicalChain() });
    const outcome = await dispatcher.dispatch({
      toolName: 'deploy',
      args: { region: 'eu-west1', note: 'n' },
    });
    expect(outcome.kind).toBe('result');
    const deployed = calls.find((call) => call.name === 'deploy');
    expect(deployed?.headers['mcp-param-region']).toBe('eu-west1');
    expect(deployed?.headers['mcp-param-note']).toBeUndefined();
  });
});
