import {
  createDispatcher,
  DispatcherConfigError,
  type DispatchOutcome,
  type Middleware,
  type PermissionRequest,
} from '@toolgate/core';
import { canonicalChain } from '@toolgate/middleware';
import { mcpClient, type SkippedTool } from '@toolgate/mcp';
import { clientOf, objectSchema, remoteServer, text } from './fixtures/remote';
import { spawnFixture } from './fixtures/spawn';

const searchTool = (name = 'search') => ({
  name,
  description: `Searches (${name}).`,
  inputSchema: objectSchema({ query: { type: 'string' } }, ['query']),
});

function failed(outcome: DispatchOutcome) {
  if (outcome.kind !== 'failed') throw new Error(`expected failed, got ${outcome.kind}: ${outcome.content}`);
  return outcome;
}

describe('mcpClient', () => {
  it('imports every page of the listing, each tool stamped with the client name as its source', async () => {
    const remote = remoteServer([[searchTool('a'), searchTool('b')], [searchTool('c')], [searchTool('d')]]);
    const docs = await clientOf(remote, { name: 'docs' });
    const tools = await docs.tools();
    expect(tools.map((t) => [t.schema.name, t.source])).toEqual([
      ['a', 'docs'],
      ['b', 'docs'],
      ['c', 'docs'],
      ['d', 'docs'],
    ]);
    expect(tools[0]!.schema).toEqual({
      name: 'a',
      description: 'Searches (a).',
      inputSchema: { ...searchTool().inputSchema, additionalProperties: false },
    });
    expect(docs.skipped).toEqual([]);
    await docs.close();
  });

  it('skips a tool with an invalid name, a duplicate name or a schema ajv cannot compile, naming each', async () => {
    const remote = remoteServer([
      [searchTool('search'), searchTool('bad name!')],
      [
        searchTool('search'),
        { name: 'broken', inputSchema: { type: 'object', properties: { a: { type: 'strnig' } } } },
        { name: 'odd', inputSchema: { type: 'object', frobnicate: true } },
        searchTool('kept'),
      ],
    ]);
    const events: SkippedTool[] = [];
    const docs = await clientOf(remote, { name: 'docs', onSkip: (event) => events.push(event) });
    const tools = await docs.tools();
    expect(tools.map((t) => t.schema.name)).toEqual(['search', 'kept']);
    expect(events.map((e) => [e.type, e.source, e.toolName])).toEqual([
      ['mcp.tool.skipped', 'docs', 'bad name!'],
      ['mcp.tool.skipped', 'docs', 'search'],
      ['mcp.tool.skipped', 'docs', 'broken'],
      ['mcp.tool.skipped', 'docs', 'odd'],
    ]);
    expect(events[0]!.reason).toMatch(/local name does not match.*'rename'/);
    expect(events[1]!.reason).toBe(`another tool from this server is already named 'search'`);
    expect(events[2]!.reason).toMatch(/inputSchema does not compile/);
    expect(events[3]!.reason).toMatch(/inputSchema does not compile.*frobnicate/);
    expect(docs.skipped).toEqual(events);
    await docs.close();
  });

  it('forwards a dispatched call as tools/call with the validated args and returns the server result as sent', async () => {
    const remote = remoteServer([[searchTool()]], (_name, args) => ({
      content: [{ type: 'text', text: 'found it' }],
      structuredContent: { hits: [String(args['query'])] },
    }));
    const docs = await clientOf(remote, { name: 'docs' });
    const dispatcher = createDispatcher({ tools: await docs.tools(), chain: canonicalChain() });
    const outcome = await dispatcher.dispatch({ toolName: 'search', args: { query: 'refunds' } });
    expect(outcome).toMatchObject({
      kind: 'result',
      toolSource: 'docs',
      value: { content: [{ type: 'text', text: 'found it' }], structuredContent: { hits: ['refunds'] } },
      content: 'found it',
    });
    expect(remote.calls).toEqual([{ name: 'search', args: { query: 'refunds' } }]);
    const invalid = await dispatcher.dispatch({ toolName: 'search', args: { query: 7 } });
    expect(invalid).toMatchObject({ kind: 'refused', gate: 'validate-args' });
    expect(remote.calls).toHaveLength(1);
    await docs.close();
  });

  it('keeps each text block, and the model reads them joined', async () => {
    const remote = remoteServer([[searchTool()]], () => ({
      content: [
        { type: 'text', text: 'line one' },
        { type: 'text', text: 'line two' },
      ],
    }));
    const docs = await clientOf(remote, { name: 'docs' });
    const dispatcher = createDispatcher({ tools: await docs.tools(), chain: canonicalChain() });
    expect(await dispatcher.dispatch({ toolName: 'search', args: { query: 'x' } })).toMatchObject({
      kind: 'result',
      value: {
        content: [
          { type: 'text', text: 'line one' },
          { type: 'text', text: 'line two' },
        ],
      },
      content: 'line one\nline two',
    });
    await docs.close();
  });

  it("turns a remote isError result into a failed outcome carrying the server's text", async () => {
    const remote = remoteServer([[searchTool()]], () => ({
      ...text('the index is rebuilding'),
      isError: true,
    }));
    const docs = await clientOf(remote, { name: 'docs' });
    const dispatcher = createDispatcher({ tools: await docs.tools(), chain: canonicalChain() });
    const outcome = failed(await dispatcher.dispatch({ toolName: 'search', args: { query: 'x' } }));
    expect(outcome.ran).toBe(true);
    expect(outcome.error).toEqual({ name: 'McpToolError', message: 'the index is rebuilding' });
    expect(outcome.content).toBe(`['search' failed: the index is rebuilding.]`);
    await docs.close();
  });

  it('fails a call the server does not answer within timeoutMs, saying so', async () => {
    const remote = remoteServer(
      [[searchTool()]],
      (_name, _args, signal) =>
        new Promise((resolve) => signal.addEventListener('abort', () => resolve(text('too late')))),
    );
    const docs = await clientOf(remote, { name: 'docs', timeoutMs: 100 });
    const dispatcher = createDispatcher({ tools: await docs.tools(), chain: canonicalChain() });
    const outcome = failed(await dispatcher.dispatch({ toolName: 'search', args: { query: 'x' } }));
    expect(outcome.error).toEqual({
      name: 'McpConnectionError',
      message: `MCP server 'docs' did not answer 'search' within 100 ms`,
    });
    await docs.close();
  });

  it('gives tools local names with prefix and rename, and still calls them by their remote names', async () => {
    const remote = remoteServer([[searchTool('search'), searchTool('fetch'), searchTool('get page')]]);
    const docs = await clientOf(remote, {
      name: 'docs',
      prefix: 'docs_',
      rename: { 'get page': 'docs_page' },
    });
    const tools = await docs.tools();
    expect(tools.map((t) => t.schema.name)).toEqual(['docs_search', 'docs_fetch', 'docs_page']);
    const dispatcher = createDispatcher({ tools, chain: canonicalChain() });
    await dispatcher.dispatch({ toolName: 'docs_page', args: { query: 'x' } });
    await dispatcher.dispatch({ toolName: 'docs_search', args: { query: 'y' } });
    expect(remote.calls.map((c) => c.name)).toEqual(['get page', 'search']);
    await docs.close();
  });

  it('makes the dispatcher refuse two servers serving the same name, until one is given a prefix', async () => {
    const alpha = await clientOf(
      remoteServer([[searchTool()]], () => text('from alpha')),
      { name: 'alpha' },
    );
    const beta = await clientOf(
      remoteServer([[searchTool()]], () => text('from beta')),
      { name: 'beta' },
    );
    const [alphaTools, betaTools] = [await alpha.tools(), await beta.tools()];
    expect(() => createDispatcher({ tools: [...alphaTools, ...betaTools], chain: canonicalChain() })).toThrow(
      new DispatcherConfigError(
        `createDispatcher: two tools are named 'search' (from MCP server 'alpha' and MCP server 'beta'). Rename one, or give the MCP client a prefix, e.g. mcpClient({ name: 'beta', prefix: 'beta_' }).`,
      ),
    );
    const betaPrefixed = await clientOf(
      remoteServer([[searchTool()]], () => text('from beta')),
      {
        name: 'beta',
        prefix: 'beta_',
      },
    );
    const dispatcher = createDispatcher({
      tools: [...alphaTools, ...(await betaPrefixed.tools())],
      chain: canonicalChain(),
    });
    const [a, b] = await Promise.all([
      dispatcher.dispatch({ toolName: 'search', args: { query: 'q' } }),
      dispatcher.dispatch({ toolName: 'beta_search', args: { query: 'q' } }),
    ]);
    expect([a.toolSource, a.content, b.toolSource, b.content]).toEqual([
      'alpha',
      'from alpha',
      'beta',
      'from beta',
    ]);
    await Promise.all([alpha.close(), beta.close(), betaPrefixed.close()]);
  });

  it('lets a policy middleware and the permission checker judge an imported tool by its source', async () => {
    const remote = remoteServer([[searchTool()]]);
    const untrusted = await clientOf(remote, { name: 'untrusted' });
    const seen: PermissionRequest[] = [];
    const trustedSources: Middleware = {
      name: 'trusted-sources',
      async run(ctx, next) {
        if (ctx.toolSource === 'untrusted')
          return ctx.deny(`'${ctx.toolName}' comes from an untrusted MCP server`);
        return next();
      },
    };
    const chain = canonicalChain({ permissions: { check: (req) => (seen.push(req), { allow: true }) } }).use(
      trustedSources,
    );
    const dispatcher = createDispatcher({ tools: await untrusted.tools(), chain });
    const outcome = await dispatcher.dispatch({ toolName: 'search', args: { query: 'x' } });
    expect(outcome).toMatchObject({
      kind: 'refused',
      gate: 'trusted-sources',
      toolSource: 'untrusted',
      ran: false,
    });
    expect(seen.map((req) => req.toolSource)).toEqual(['untrusted']);
    expect(remote.calls).toEqual([]);
    await untrusted.close();
  });

  it('turns a server that dies mid-call into a retryable refusal; given one transport it cannot come back, and later calls are refused too', async () => {
    const dying = mcpClient({
      name: 'dying',
      transport: spawnFixture('dying'),
      backoff: { initialDelayMs: 1, maxAttempts: 1 },
    });
    const tools = await dying.tools();
    expect(tools.map((t) => t.schema.name).sort()).toEqual(['crash', 'greet']);
    const dispatcher = createDispatcher({ tools, chain: canonicalChain() });
    expect(await dispatcher.dispatch({ toolName: 'greet', args: { who: 'ada' } })).toMatchObject({
      kind: 'result',
      content: 'hello, ada',
    });
    const crashed = await dispatcher.dispatch({ toolName: 'crash', args: {} });
    expect(crashed).toMatchObject({
      kind: 'refused',
      gate: 'mcp',
      code: 'MCP_CONNECTION_LOST',
      retryable: true,
    });
    expect(crashed.content).toMatch(
      /^\[mcp refused: the connection to MCP server 'dying' closed before 'crash' answered, so it may or may not have run\. Retrying/,
    );
    const after = await dispatcher.dispatch({ toolName: 'greet', args: { who: 'ada' } });
    expect(after).toMatchObject({ kind: 'refused', code: 'MCP_UNAVAILABLE', retryable: true, ran: false });
    expect(dying.status().state).not.toBe('connected');
    await dying.close();
  });

  it('closes the transport on close(); imported tools then fail and tools() rejects', async () => {
    const remote = remoteServer([[searchTool()]]);
    const closedOnServer = new Promise<void>((resolve) => (remote.server.onclose = resolve));
    const docs = await clientOf(remote, { name: 'docs' });
    const dispatcher = createDispatcher({ tools: await docs.tools(), chain: canonicalChain() });
    await docs.close();
    await closedOnServer;
    const outcome = failed(await dispatcher.dispatch({ toolName: 'search', args: { query: 'x' } }));
    expect(outcome.error.message).toBe(`the connection to MCP server 'docs' is closed`);
    await expect(docs.tools()).rejects.toThrow(`mcpClient 'docs' is closed.`);
    expect(remote.calls).toEqual([]);
  });

  it('rejects tools() with a clear reason when the server cannot be reached', async () => {
    const nowhere = mcpClient({ name: 'nowhere', url: 'http://127.0.0.1:1/mcp' });
    await expect(nowhere.tools()).rejects.toThrow(
      /^mcpClient 'nowhere': could not connect to the MCP server/,
    );
    await nowhere.close();
  });

  it('refuses options it cannot honor when built', () => {
    expect(() => mcpClient({ name: '', url: 'http://127.0.0.1:1/mcp' })).toThrow(
      /'name' must be a non-empty string/,
    );
    expect(() => mcpClient({ name: 'docs' })).toThrow(
      `mcpClient 'docs': give exactly one of 'transport', 'url' or 'command'.`,
    );
    expect(() => mcpClient({ name: 'docs', url: 'http://127.0.0.1:1/mcp', timeoutMs: 0 })).toThrow(
      /'timeoutMs' must be a positive integer/,
    );
  });
});
