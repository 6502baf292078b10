// A stdio upstream is started once per connection: the revision probe (server/discover) runs on the
// server's own process, not on a second copy of it. A server that exits on a request before
// initialize is started once more, in the 2025 handshake.

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { mcpClient, type McpClient } from '@toolgate/mcp';

const sdk = (path: string) =>
  pathToFileURL(createRequire(__filename).resolve(`@modelcontextprotocol/sdk/${path}`)).href;

// A 2025-era SDK server that notes each start in a file.
const sdkServer = (starts: string) => `
import { appendFileSync } from 'node:fs';
import { McpServer } from ${JSON.stringify(sdk('server/mcp.js'))};
import { StdioServerTransport } from ${JSON.stringify(sdk('server/stdio.js'))};
appendFileSync(${JSON.stringify(starts)}, 'start\\n');
const server = new McpServer({ name: 'counted', version: '1.0.0' });
server.registerTool('greet', { description: 'Greets.' }, () => ({ content: [{ type: 'text', text: 'hi' }] }));
await server.connect(new StdioServerTransport());
`;

// A hand-written server that exits when its first request is not initialize (as some older SDKs do).
const strictServer = (starts: string) => `
import { appendFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
appendFileSync(${JSON.stringify(starts)}, 'start\\n');
let first = true;
const send = (message) => process.stdout.write(JSON.stringify({ jsonrpc: '2.0', ...message }) + '\\n');
createInterface({ input: process.stdin }).on('line', (line) => {
  const message = JSON.parse(line);
  if (first && message.method !== 'initialize') process.exit(0);
  first = false;
  if (message.method === 'initialize')
    send({ id: message.id, result: { protocolVersion: message.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'strict', version: '1.0.0' } } });
  else if (message.method === 'tools/list')
    send({ id: message.id, result: { tools: [{ name: 'greet', description: 'Greets.', inputSchema: { type: 'object' } }] } });
  else if (message.id !== undefined) send({ id: message.id, error: { code: -32601, message: 'Method not found' } });
});
`;

describe('stdio upstream starts', () => {
  let dir: string;
  const clients: McpClient[] = [];
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'toolgate-starts-'));
  });
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((client) => client.close()));
    rmSync(dir, { recursive: true, force: true });
  });

  function connect(source: (starts: string) => string): { client: McpClient; starts: () => number } {
    const starts = join(dir, 'starts');
    writeFileSync(starts, '');
    const script = join(dir, 'server.mjs');
    writeFileSync(script, source(starts));
    const client = mcpClient({ name: 'up', command: [process.execPath, script], stderr: 'ignore' });
    clients.push(client);
    return { client, starts: () => readFileSync(starts, 'utf8').split('\n').filter(Boolean).length };
  }

  it('starts a server that answers the probe once', async () => {
    const { client, starts } = connect(sdkServer);
    expect((await client.tools()).map((tool) => tool.schema.name)).toEqual(['greet']);
    expect(starts()).toBe(1);
  });

  it('starts a server that exits on the probe once more, in the 2025 handshake', async () => {
    const { client, starts } = connect(strictServer);
    expect((await client.tools()).map((tool) => tool.schema.name)).toEqual(['greet']);
    expect(starts()).toBe(2);
  });
});
