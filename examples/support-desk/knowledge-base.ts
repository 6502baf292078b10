// A knowledge-base MCP server, served in-process over the SDK's in-memory transport and imported
// with mcpClient, so its tools arrive stamped `source: 'kb-server'` as any remote tool would.

import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { defineTool, type Tool } from '@toolgate/core';
import { mcpClient, mcpServe, type McpClient } from '@toolgate/mcp';
import { canonicalChain } from '@toolgate/middleware';
import { Type } from 'typebox';

const articles = [
  { id: 'kb-7', title: 'Refund policy', body: 'Refunds over 100 EUR need a supervisor.' },
  { id: 'kb-9', title: 'Resetting 2FA', body: 'Send the reset link from the admin console.' },
];

const searchKb = defineTool({
  name: 'search_kb',
  description: 'Search the public help-centre articles.',
  inputSchema: Type.Object({ query: Type.String() }),
  execute: ({ query }) =>
    articles.filter((a) => `${a.title} ${a.body}`.toLowerCase().includes(query.toLowerCase().split(' ')[0]!)),
});

const deleteArticle = defineTool({
  name: 'delete_article',
  description: 'Delete a help-centre article.',
  inputSchema: Type.Object({ id: Type.String() }),
  execute: ({ id }) => ({ deleted: id }),
});

export interface KnowledgeBase {
  readonly tools: Tool[];
  readonly client: McpClient;
  close(): Promise<void>;
}

/** Starts the server and imports its tools. The server governs its own side with its own chain. */
export async function connectKnowledgeBase(): Promise<KnowledgeBase> {
  const served = mcpServe([searchKb, deleteArticle], {
    name: 'kb-server',
    version: '1.0.0',
    chain: canonicalChain(),
  });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await served.server.connect(serverSide);
  const client = mcpClient({ name: 'kb-server', transport: clientSide });
  // Remote tools declare nothing; our policy decides they reach the outside world.
  const tools = (await client.tools()).map((tool) => ({ ...tool, capabilities: ['external_net'] }));
  return {
    tools,
    client,
    async close() {
      await client.close();
      await served.close();
    },
  };
}
