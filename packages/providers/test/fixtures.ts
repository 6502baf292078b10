// Real provider SDK clients whose HTTP is answered in-process (no network), and an MCP server over the
// SDK's in-memory transport for provenance tests.

import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { mcpClient, type McpClient } from '@toolgate/mcp';

export { KEY, SECRET, world } from '../../../test-support/adapter-world';

/** A fetch that records every request body and answers with the next scripted JSON response. */
export function scriptedFetch(responses: readonly unknown[]) {
  const bodies: Record<string, unknown>[] = [];
  let next = 0;
  const fetch = async (_url: unknown, init?: { body?: unknown }): Promise<Response> => {
    bodies.push(JSON.parse(String(init?.body ?? '{}')) as Record<string, unknown>);
    const body = responses[next++] ?? responses[responses.length - 1];
    return new Response(JSON.stringify(body), {
      status: 200,
      headers: { 'content-type': 'application/json' },
    });
  };
  return { fetch, bodies };
}

/** An mcpClient named 'docs' over an in-memory link to a plain SDK server with one 'lookup' tool. */
export async function docsClient(): Promise<McpClient> {
  const server = new Server({ name: 'docs-server', version: '1.0.0' }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: [
      {
        name: 'lookup',
        description: 'Look up a doc.',
        inputSchema: { type: 'object', properties: { q: { type: 'string' } } },
      },
    ],
  }));
  server.setRequestHandler(CallToolRequestSchema, (request) => ({
    content: [{ type: 'text', text: `doc for ${String(request.params.arguments?.['q'])}` }],
  }));
  const [clientEnd, serverEnd] = InMemoryTransport.createLinkedPair();
  await server.connect(serverEnd);
  return mcpClient({ name: 'docs', transport: clientEnd });
}
