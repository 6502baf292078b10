// The one upstream every target proxies: a plain SDK server over stdio with an `echo` tool.
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { z } from 'zod';

const server = new McpServer({ name: 'bench-upstream', version: '1.0.0' });
server.registerTool(
  'echo',
  { description: 'Echoes text.', inputSchema: { text: z.string() } },
  ({ text }) => ({
    content: [{ type: 'text', text }],
  }),
);
await server.connect(new StdioServerTransport());
