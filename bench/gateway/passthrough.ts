// A plain, non-governing pass-through proxy on the official SDK: Streamable HTTP in (one SDK server
// per session), one shared stdio client to the upstream out. What a user writes without toolgate.

import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';

const [command, ...args] = process.argv.slice(2);
const upstream = new Client({ name: 'passthrough', version: '1.0.0' });
await upstream.connect(new StdioClientTransport({ command: command!, args }));

const sessions = new Map<string, StreamableHTTPServerTransport>();
const http = createServer((req, res) => {
  void (async () => {
    const id = req.headers['mcp-session-id'];
    const existing = typeof id === 'string' ? sessions.get(id) : undefined;
    if (existing !== undefined) return existing.handleRequest(req, res);
    const server = new Server({ name: 'passthrough', version: '1.0.0' }, { capabilities: { tools: {} } });
    server.setRequestHandler(ListToolsRequestSchema, (request) => upstream.listTools(request.params));
    server.setRequestHandler(CallToolRequestSchema, (request) => upstream.callTool(request.params));
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (sessionId) => {
        sessions.set(sessionId, transport);
      },
    });
    transport.onclose = () => transport.sessionId !== undefined && sessions.delete(transport.sessionId);
    await server.connect(transport);
    await transport.handleRequest(req, res);
  })().catch(() => res.end());
});
http.listen(0, '127.0.0.1', () => {
  console.log(`listening on http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`);
});
// A clean exit on SIGTERM, so --cpu-prof can write its profile.
process.once('SIGTERM', () => process.exit(0));
