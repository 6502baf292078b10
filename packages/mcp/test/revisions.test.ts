// Both protocol revisions on one endpoint: a 2026-07-28 client is served statelessly (no session, its
// revision and capabilities in each request's _meta), a 2025-11-25 client keeps its session; a request
// whose headers disagree with its body, or that names a revision nobody offers, runs nothing.

import {
  Client as V2Client,
  StreamableHTTPClientTransport as V2Transport,
} from '@modelcontextprotocol/client';
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as V1Transport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Type } from 'typebox';
import { defineTool } from '@toolgate/core';
import { mcpClient, serveHttp, type HttpServing, type McpServed } from '@toolgate/mcp';
import { governedServe, governedTools } from './fixtures/governed';

let served: McpServed;
let http: HttpServing;
let recorded: string[] = [];

beforeAll(async () => {
  const record = defineTool({
    name: 'record',
    description: 'Records the text.',
    inputSchema: Type.Object({ text: Type.String() }),
    execute: ({ text }) => {
      recorded.push(text);
      return { recorded: text };
    },
  });
  served = governedServe({}, [...governedTools(), record]);
  http = await serveHttp(served, { port: 0 });
});

afterAll(async () => {
  await http.close();
  await served.close();
});

const MODERN = '2026-07-28';

function modernEnvelope() {
  return {
    'io.modelcontextprotocol/protocolVersion': MODERN,
    'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1.0.0' },
    'io.modelcontextprotocol/clientCapabilities': {},
  };
}

async function post(body: unknown, headers: Record<string, string> = {}) {
  const response = await fetch(http.url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': MODERN,
      ...headers,
    },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  const data = text.startsWith('{') ? text : (/^data: (.*)$/m.exec(text)?.[1] ?? '{}');
  return { status: response.status, session: response.headers.get('mcp-session-id'), json: JSON.parse(data) };
}

describe('one endpoint, both revisions', () => {
  it('serves a 2026-07-28 client without a session: discover, list, call through the chain', async () => {
    const client = new V2Client(
      { name: 'modern', version: '1.0.0' },
      { versionNegotiation: { mode: { pin: MODERN } } },
    );
    await client.connect(new V2Transport(http.url));
    try {
      const { tools } = await client.listTools();
      expect(tools.map((tool) => tool.name)).toEqual(expect.arrayContaining(['echo', 'delete_account']));
      const echoed = await client.callTool({ name: 'echo', arguments: { text: 'hi' } });
      expect(echoed.isError).not.toBe(true);
      expect(echoed.structuredContent).toEqual({ echoed: 'hi' });
      // The chain still decides: the permission checker refuses, with the code in _meta.
      const refused = await client.callTool({ name: 'delete_account', arguments: { accountId: 'a1' } });
      expect(refused.isError).toBe(true);
      expect(refused._meta?.['io.toolgate/refusal']).toMatchObject({ gate: 'permission' });
    } finally {
      await client.close();
    }
    expect(http.sessionCount).toBe(0);
  });

  it('tells a 2026-07-28 client listening on subscriptions/listen that the tool list changed', async () => {
    const client = new V2Client(
      { name: 'listener', version: '1.0.0' },
      { versionNegotiation: { mode: { pin: MODERN } } },
    );
    await client.connect(new V2Transport(http.url));
    let changed = 0;
    client.setNotificationHandler('notifications/tools/list_changed', () => {
      changed += 1;
    });
    const subscription = await client.listen({ toolsListChanged: true });
    try {
      served.listChanged('tools');
      const deadline = Date.now() + 5_000;
      while (changed === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      expect(changed).toBe(1);
    } finally {
      await subscription.close();
      await client.close();
    }
  });

  it('refuses a check-in on a 2026-07-28 request from a client without elicitation, and runs nothing', async () => {
    const client = new V2Client(
      { name: 'asker', version: '1.0.0' },
      { versionNegotiation: { mode: { pin: MODERN } } },
    );
    await client.connect(new V2Transport(http.url));
    try {
      const result = await client.callTool({ name: 'refund', arguments: { orderId: 'A-1', amount: 5 } });
      expect(result.isError).toBe(true);
      expect(result._meta?.['io.toolgate/refusal']).toEqual({
        gate: 'check-in',
        code: 'CHECKIN_UNAVAILABLE',
        retryable: false,
      });
      const runs = await client.callTool({ name: 'refund_runs', arguments: { orderId: 'A-1' } });
      expect(runs.structuredContent).toMatchObject({ runs: 0 });
    } finally {
      await client.close();
    }
  });

  it('answers server/discover with the revisions it serves, and opens no session', async () => {
    const { status, session, json } = await post(
      {
        jsonrpc: '2.0',
        id: 1,
        method: 'server/discover',
        params: { _meta: modernEnvelope() },
      },
      { 'mcp-method': 'server/discover' },
    );
    expect(status).toBe(200);
    expect(session).toBeNull();
    expect(JSON.stringify(json.result)).toContain(MODERN);
    expect(json.result.resultType).toBeDefined();
  });

  it('keeps serving a 2025-11-25 client on the same endpoint, in a session', async () => {
    const client = new V1Client({ name: 'legacy', version: '1.0.0' });
    const transport = new V1Transport(http.url);
    await client.connect(transport);
    try {
      expect(transport.sessionId).toEqual(expect.any(String));
      const echoed = await client.callTool({ name: 'echo', arguments: { text: 'old' } });
      expect(echoed.structuredContent).toEqual({ echoed: 'old' });
    } finally {
      await client.close();
    }
  });

  it('refuses a request whose Mcp-Method header disagrees with its body, and runs nothing', async () => {
    recorded = [];
    const call = (headers: Record<string, string>) =>
      post(
        {
          jsonrpc: '2.0',
          id: 2,
          method: 'tools/call',
          params: { name: 'record', arguments: { text: 'smuggled' }, _meta: modernEnvelope() },
        },
        headers,
      );
    const { status, json } = await call({ 'mcp-method': 'tools/list', 'mcp-name': 'record' });
    expect(status).toBeGreaterThanOrEqual(400);
    expect(json.error).toBeDefined();
    expect(JSON.stringify(json)).not.toContain('smuggled');
    expect(recorded).toEqual([]);
    // The same request with agreeing headers runs: the refusal above was the headers, not the tool.
    const agreeing = await call({ 'mcp-method': 'tools/call', 'mcp-name': 'record' });
    expect(agreeing.json.result.structuredContent).toEqual({ recorded: 'smuggled' });
    expect(recorded).toEqual(['smuggled']);
  });

  it('refuses a request whose Mcp-Name header names another tool than its body', async () => {
    const { status, json } = await post(
      {
        jsonrpc: '2.0',
        id: 3,
        method: 'tools/call',
        params: { name: 'record', arguments: { text: 'renamed' }, _meta: modernEnvelope() },
      },
      { 'mcp-method': 'tools/call', 'mcp-name': 'echo' },
    );
    expect(status).toBeGreaterThanOrEqual(400);
    expect(json.error).toBeDefined();
    expect(recorded).not.toContain('renamed');
  });

  it('answers a revision nobody offers with a protocol error naming the ones it serves', async () => {
    const envelope = { ...modernEnvelope(), 'io.modelcontextprotocol/protocolVersion': '2099-01-01' };
    const { status, json } = await post(
      { jsonrpc: '2.0', id: 4, method: 'tools/list', params: { _meta: envelope } },
      { 'mcp-protocol-version': '2099-01-01', 'mcp-method': 'tools/list' },
    );
    expect(status).toBeGreaterThanOrEqual(400);
    expect(json.error).toBeDefined();
    expect(JSON.stringify(json.error)).toContain(MODERN);
  });
});

describe('an upstream in the newest revision it offers', () => {
  it('imports from a 2026-07-28 server in 2026-07-28, and carries the caller and trace context in _meta', async () => {
    const seen: { version: unknown; traceparent: unknown; identity: unknown }[] = [];
    const upstream = governedServe({
      identityFrom: (_auth, extra) => {
        const envelope = extra.mcpReq.envelope as Record<string, unknown> | undefined;
        if (extra.mcpReq.method === 'tools/call')
          seen.push({
            version: envelope?.['io.modelcontextprotocol/protocolVersion'],
            traceparent: extra.mcpReq._meta?.['traceparent'],
            identity: extra.mcpReq._meta?.['io.toolgate/identity'],
          });
        return { principal: 'gateway' };
      },
    });
    const upstreamHttp = await serveHttp(upstream, { port: 0 });
    const client = mcpClient({ name: 'modern', url: upstreamHttp.url, prefix: 'modern_' });
    try {
      const tools = await client.tools();
      const echo = tools.find((tool) => tool.schema.name === 'modern_echo');
      expect(echo).toBeDefined();
      const traceparent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
      // Served on, to a 2026-07-28 client that sends its own trace context in _meta.
      const downstream = governedServe({ identityFrom: () => ({ tenant: 'acme', principal: 'ana' }) }, [
        ...tools,
      ]);
      const downstreamHttp = await serveHttp(downstream, { port: 0 });
      const caller = new V2Client(
        { name: 'caller', version: '1.0.0' },
        { versionNegotiation: { mode: { pin: MODERN } } },
      );
      await caller.connect(new V2Transport(downstreamHttp.url));
      const result = await caller.callTool({
        name: 'modern_echo',
        arguments: { text: 'up' },
        _meta: { traceparent },
      });
      expect(result.structuredContent).toEqual({ echoed: 'up' });
      await caller.close();
      await downstreamHttp.close();
      expect(seen).toEqual([
        {
          version: MODERN,
          traceparent,
          identity: expect.objectContaining({ tenant: 'acme', principal: 'ana' }),
        },
      ]);
      expect(upstreamHttp.sessionCount).toBe(0);
      await downstream.close();
    } finally {
      await client.close();
      await upstreamHttp.close();
      await upstream.close();
    }
  });
});
