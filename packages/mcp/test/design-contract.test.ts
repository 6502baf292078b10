// DESIGN.md §9 as a contract, through the public API and the official MCP SDK with a real client:
// mcpClient imports tools stamped with their source, mcpServe serves the same chain as an MCP server.

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  ElicitRequestSchema,
  ListToolsRequestSchema,
  type CallToolResult,
} from '@modelcontextprotocol/sdk/types.js';
import {
  createDispatcher,
  defineTool,
  type Identity,
  type PermissionRequest,
  type Tool,
  type ToolMiddlewareContext,
} from '@toolgate/core';
import { canonicalChain } from '@toolgate/middleware';
import { mcpClient, mcpServe } from '@toolgate/mcp';

const KEY = 'mcp-contract-key-0123456789abcdef';
const OPEN = { type: 'object', properties: { text: { type: 'string' } } } as Record<string, unknown>;

function textOf(result: CallToolResult): string {
  return result.content.map((block) => (block.type === 'text' ? block.text : '')).join('');
}

/** A plain SDK server standing in for a third-party MCP server. */
function thirdParty() {
  const calls: { name: string; args: Record<string, unknown> }[] = [];
  const server = new Server({ name: 'third-party', version: '1.0.0' }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: [
      {
        name: 'search',
        description: 'Searches the docs',
        inputSchema: { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] },
      },
    ],
  }));
  server.setRequestHandler(CallToolRequestSchema, (request) => {
    const args = request.params.arguments ?? {};
    calls.push({ name: request.params.name, args });
    return { content: [{ type: 'text', text: `found ${String(args['query'])}` }] };
  });
  return { server, calls };
}

async function linked(server: { connect(transport: InMemoryTransport): Promise<void> }, authInfo?: AuthInfo) {
  const [client, serverEnd] = InMemoryTransport.createLinkedPair();
  if (authInfo !== undefined) {
    const send = client.send.bind(client);
    client.send = (message, options) => send(message, { ...options, authInfo });
  }
  await server.connect(serverEnd);
  return client;
}

function recording(name: string, declarations: Partial<Pick<Tool, 'checkIn'>> = {}) {
  const calls: { args: Record<string, unknown>; ctx: ToolMiddlewareContext }[] = [];
  const tool = defineTool({
    name,
    description: `the ${name} tool`,
    inputSchema: OPEN,
    ...declarations,
    execute: (args: Record<string, unknown>, ctx: ToolMiddlewareContext) => {
      calls.push({ args: { ...args }, ctx });
      return `ran ${name} with ${String(args['text'])}`;
    },
  });
  return { tool, calls };
}

describe('§9 mcpClient', () => {
  it('mcpClient({ name, transport }) → { tools(), close() }; each Tool carries source: name and forwards execute over MCP', async () => {
    const remote = thirdParty();
    const docs = mcpClient({ name: 'docs', transport: await linked(remote.server) });
    const tools = await docs.tools();
    expect(tools).toHaveLength(1);
    expect(tools[0]!.source).toBe('docs');
    expect(tools[0]!.schema).toEqual({
      name: 'search',
      description: 'Searches the docs',
      // Closed on import: an argument the server never declared cannot reach it.
      inputSchema: {
        type: 'object',
        properties: { query: { type: 'string' } },
        required: ['query'],
        additionalProperties: false,
      },
    });
    const requests: PermissionRequest[] = [];
    const dispatcher = createDispatcher({
      tools,
      chain: canonicalChain({
        permissions: {
          check: (r) => {
            requests.push(r);
            return { allow: true };
          },
        },
      }),
    });
    const outcome = await dispatcher.dispatch({ toolName: 'search', args: { query: 'refunds' } });
    expect(outcome.kind).toBe('result');
    expect(outcome.content).toBe('found refunds');
    expect(outcome.toolSource).toBe('docs');
    expect(requests[0]!.toolSource).toBe('docs');
    expect(remote.calls).toEqual([{ name: 'search', args: { query: 'refunds' } }]);
    await docs.close();
  });

  it('imported tools are governed like our own: validate-args refuses before anything goes over MCP', async () => {
    const remote = thirdParty();
    const docs = mcpClient({ name: 'docs', transport: await linked(remote.server) });
    const dispatcher = createDispatcher({ tools: await docs.tools(), chain: canonicalChain() });
    const outcome = await dispatcher.dispatch({ toolName: 'search', args: { query: 42 } });
    expect(outcome.kind).toBe('refused');
    expect(remote.calls).toHaveLength(0);
    await docs.close();
  });

  it('after close(), an imported tool no longer reaches the server and the call fails rather than throws', async () => {
    const remote = thirdParty();
    const docs = mcpClient({ name: 'docs', transport: await linked(remote.server) });
    const dispatcher = createDispatcher({ tools: await docs.tools(), chain: canonicalChain() });
    await docs.close();
    const outcome = await dispatcher.dispatch({ toolName: 'search', args: { query: 'x' } });
    expect(outcome.kind).toBe('failed');
    expect(remote.calls).toHaveLength(0);
  });
});

describe('§9 mcpServe', () => {
  async function clientFor(
    served: { connect(transport: InMemoryTransport): Promise<void> },
    options: { elicit?: (message: string) => Record<string, unknown>; authInfo?: AuthInfo } = {},
  ) {
    const client = new Client(
      { name: 'contract-client', version: '1.0.0' },
      options.elicit === undefined ? {} : { capabilities: { elicitation: {} } },
    );
    if (options.elicit !== undefined) {
      const answer = options.elicit;
      client.setRequestHandler(
        ElicitRequestSchema,
        async (request) => answer(String(request.params.message)) as never,
      );
    }
    await client.connect(await linked(served, options.authInfo));
    return client;
  }

  it('mcpServe(tools, { name, version, chain }) is an MCP server: a real client lists the tools and calls them through the chain', async () => {
    const { tool, calls } = recording('echo');
    const served = mcpServe([tool], { name: 'governed', version: '1.2.3', chain: canonicalChain() });
    const client = await clientFor(served);
    expect(client.getServerVersion()).toMatchObject({ name: 'governed', version: '1.2.3' });
    const { tools } = await client.listTools();
    expect(tools.map((t) => [t.name, t.description])).toEqual([['echo', 'the echo tool']]);
    expect(tools[0]!.inputSchema).toMatchObject({ type: 'object' });
    const result = (await client.callTool({ name: 'echo', arguments: { text: 'hi' } })) as CallToolResult;
    expect(result.isError).not.toBe(true);
    expect(textOf(result)).toBe('ran echo with hi');
    expect(calls).toHaveLength(1);
    await client.close();
    await served.close();
  });

  it('refusals are isError tool results carrying the teaching text, not protocol errors', async () => {
    const { tool, calls } = recording('echo');
    const chain = canonicalChain({
      permissions: { check: () => ({ allow: false, reason: 'echo is off-limits here' }) },
    });
    const served = mcpServe([tool], { name: 'governed', version: '1.0.0', chain });
    const client = await clientFor(served);
    const result = (await client.callTool({ name: 'echo', arguments: { text: 'hi' } })) as CallToolResult;
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/^\[permission refused: /);
    expect(textOf(result)).toContain('echo is off-limits here');
    const unknown = (await client.callTool({ name: 'nope', arguments: {} })) as CallToolResult;
    expect(unknown.isError).toBe(true);
    expect(textOf(unknown)).toContain('echo');
    expect(calls).toHaveLength(0);
    await client.close();
    await served.close();
  });

  it("identity comes from the transport's auth info through identityFrom", async () => {
    const seen: (Identity | undefined)[] = [];
    const chain = canonicalChain({
      permissions: {
        check: (r) => {
          seen.push(r.identity);
          return { allow: true };
        },
      },
    });
    const served = mcpServe([recording('echo').tool], {
      name: 'governed',
      version: '1.0.0',
      chain,
      identityFrom: (authInfo) =>
        authInfo === undefined
          ? undefined
          : { tenant: String(authInfo.extra?.['tenant']), principal: authInfo.clientId },
    });
    const authInfo: AuthInfo = { token: 't', clientId: 'alice', scopes: [], extra: { tenant: 'acme' } };
    const client = await clientFor(served, { authInfo });
    await client.callTool({ name: 'echo', arguments: { text: 'x' }, _meta: { tenant: 'evil' } });
    expect(seen).toEqual([{ tenant: 'acme', principal: 'alice' }]);
    await client.close();
    await served.close();
  });

  it('a per-tenant chain function chooses the policy from the transport identity', async () => {
    const chain = (identity: Identity | undefined) =>
      identity?.tenant === 'acme'
        ? canonicalChain()
        : canonicalChain({ permissions: { check: () => ({ allow: false, reason: 'unknown tenant' }) } });
    const served = mcpServe([recording('echo').tool], {
      name: 'governed',
      version: '1.0.0',
      chain,
      identityFrom: (authInfo) => (authInfo ? { tenant: String(authInfo.extra?.['tenant']) } : undefined),
    });
    const acme = await clientFor(served, {
      authInfo: { token: 'a', clientId: 'a', scopes: [], extra: { tenant: 'acme' } },
    });
    const other = await clientFor(served, {
      authInfo: { token: 'b', clientId: 'b', scopes: [], extra: { tenant: 'globex' } },
    });
    expect(((await acme.callTool({ name: 'echo', arguments: {} })) as CallToolResult).isError).not.toBe(true);
    const refused = (await other.callTool({ name: 'echo', arguments: {} })) as CallToolResult;
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toContain('unknown tenant');
    await Promise.all([acme.close(), other.close()]);
    await served.close();
  });

  it("toolSource is the served tool's own source, never the caller's claim", async () => {
    const sources: (string | undefined)[] = [];
    const own = recording('echo').tool;
    const imported: Tool = {
      schema: { name: 'relay', description: 'relayed', inputSchema: OPEN },
      execute: () => 'relayed',
      source: 'upstream',
    };
    const chain = canonicalChain({
      permissions: {
        check: (r) => {
          sources.push(r.toolSource);
          return { allow: true };
        },
      },
    });
    const served = mcpServe([own, imported], { name: 'governed', version: '1.0.0', chain });
    const client = await clientFor(served);
    await client.callTool({ name: 'echo', arguments: {}, _meta: { toolSource: 'trusted-server' } });
    await client.callTool({ name: 'relay', arguments: {}, _meta: { toolSource: 'trusted-server' } });
    expect(sources).toEqual([undefined, 'upstream']);
    await client.close();
    await served.close();
  });

  it('check-in rides MCP elicitation when the client supports it: the person approves in the client and the tool runs', async () => {
    const { tool, calls } = recording('refund', { checkIn: 'always' });
    const served = mcpServe([tool], {
      name: 'governed',
      version: '1.0.0',
      chain: canonicalChain({ checkInKey: KEY }),
    });
    const asked: string[] = [];
    const client = await clientFor(served, {
      elicit: (message) => {
        asked.push(message);
        return { action: 'accept', content: { decision: 'approve' } };
      },
    });
    const result = (await client.callTool({
      name: 'refund',
      arguments: { text: 'forty euros' },
    })) as CallToolResult;
    expect(result.isError).not.toBe(true);
    expect(textOf(result)).toBe('ran refund with forty euros');
    expect(asked).toHaveLength(1);
    expect(asked[0]).toContain('refund');
    expect(calls).toHaveLength(1);
    expect(calls[0]!.ctx.resumed).toBe(true);
    await client.close();
    await served.close();
  });

  it('a decline in the client is an isError refusal and the tool does not run', async () => {
    const { tool, calls } = recording('refund', { checkIn: 'always' });
    const served = mcpServe([tool], {
      name: 'governed',
      version: '1.0.0',
      chain: canonicalChain({ checkInKey: KEY }),
    });
    const client = await clientFor(served, {
      elicit: () => ({ action: 'accept', content: { decision: 'decline', note: 'not this customer' } }),
    });
    const result = (await client.callTool({ name: 'refund', arguments: { text: 'x' } })) as CallToolResult;
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain('not this customer');
    expect(calls).toHaveLength(0);
    await client.close();
    await served.close();
  });

  it('without elicitation support the client gets a tool error naming the gate', async () => {
    const { tool, calls } = recording('refund', { checkIn: 'always' });
    const served = mcpServe([tool], {
      name: 'governed',
      version: '1.0.0',
      chain: canonicalChain({ checkInKey: KEY }),
    });
    const client = await clientFor(served);
    const result = (await client.callTool({ name: 'refund', arguments: { text: 'x' } })) as CallToolResult;
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain('check-in');
    expect(calls).toHaveLength(0);
    await client.close();
    await served.close();
  });

  it('mcpClient imports from an mcpServe server, and the import is stamped with the client name', async () => {
    const served = mcpServe([recording('echo').tool], {
      name: 'governed',
      version: '1.0.0',
      chain: canonicalChain(),
    });
    const remote = mcpClient({ name: 'governed-remote', transport: await linked(served) });
    const tools = await remote.tools();
    expect(tools.map((t) => [t.schema.name, t.source])).toEqual([['echo', 'governed-remote']]);
    const outcome = await createDispatcher({ tools, chain: canonicalChain() }).dispatch({
      toolName: 'echo',
      args: { text: 'round trip' },
    });
    expect(outcome.content).toBe('ran echo with round trip');
    expect(outcome.toolSource).toBe('governed-remote');
    await remote.close();
    await served.close();
  });
});
