import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { Type } from 'typebox';
import { createDispatcher, defineTool, type Middleware, type Tool } from '@toolgate/core';
import { canonicalChain } from '@toolgate/middleware';
import { mcpClient, mcpServe, McpServeConfigError, serveHttp, type McpServed } from '@toolgate/mcp';
import { call, elicitingClient, newPerson, plainClient, textOf } from './fixtures/conformance';
import {
  artifacts,
  CHECK_IN_KEY,
  governedChain,
  governedServe,
  governedTools,
  identityFrom,
  permissions,
} from './fixtures/governed';
import { alice, bob, linkTo } from './fixtures/in-memory';

const opened: { close(): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((thing) => thing.close()));
});

/** Connects `client` to a fresh server of `served` over an in-memory link carrying `auth`. */
async function connect<C extends Client>(client: C, served: McpServed, auth = alice): Promise<C> {
  await client.connect(await linkTo(served.createServer(), auth));
  opened.push(client, served);
  return client;
}

const recorder = (seen: (string | null)[]): Middleware => ({
  name: 'source-recorder',
  async run(ctx, next) {
    seen.push(ctx.toolSource ?? null);
    await next();
  },
});

describe('mcpServe', () => {
  it('connects like an SDK server: served.connect(transport) serves its tools', async () => {
    const served = governedServe();
    const [clientEnd, serverEnd] = InMemoryTransport.createLinkedPair();
    await served.connect(serverEnd);
    const client = mcpClient({ name: 'direct', transport: clientEnd });
    opened.push(client, served);

    const names = (await client.tools()).map((tool) => tool.schema.name);

    expect(names).toEqual(
      governedServe()
        .dispatcher.schemas()
        .map((schema) => schema.name),
    );
  });

  it('re-serves an imported tool end to end, and each hop sees the source it got the tool from', async () => {
    const upstream = governedServe();
    const imported = mcpClient({ name: 'upstream', transport: await linkTo(upstream.createServer()) });
    const seenMid: (string | null)[] = [];
    const mid = mcpServe(await imported.tools(), {
      name: 'mid',
      version: '1.0.0',
      chain: canonicalChain({ checkInKey: CHECK_IN_KEY }).use(recorder(seenMid)),
    });
    const http = await serveHttp(mid);
    const edge = mcpClient({ name: 'edge', url: http.url });
    opened.push(edge, http, mid, imported, upstream);
    const dispatcher = createDispatcher({ tools: await edge.tools(), chain: canonicalChain() });

    const echoed = await dispatcher.dispatch({ toolName: 'echo', args: { text: 'three hops' } });
    expect(echoed).toMatchObject({
      kind: 'result',
      toolSource: 'edge',
      value: { structuredContent: { echoed: 'three hops' } },
    });
    const provenance = await dispatcher.dispatch({ toolName: 'provenance', args: { toolSource: 'spoofed' } });
    // The upstream server serves its own tool (no source) to a caller without auth info.
    expect(provenance).toMatchObject({
      kind: 'result',
      value: { structuredContent: { principal: 'local-user', tenant: null, toolSource: null } },
    });
    expect(seenMid).toEqual(['upstream', 'upstream']);

    const denied = await dispatcher.dispatch({ toolName: 'delete_account', args: { accountId: 'a-1' } });
    expect(denied).toMatchObject({ kind: 'failed', toolSource: 'edge' });
    expect(denied.content).toMatch(/\[permission refused: 'delete_account' is not permitted/);
  });

  it('answers with a named refusal, and runs nothing, when identityFrom cannot identify the caller', async () => {
    let runs = 0;
    const note = defineTool({
      name: 'note',
      description: 'Takes a note.',
      inputSchema: Type.Object({ text: Type.String() }),
      execute: () => ++runs,
    });
    const served = mcpServe([note], {
      name: 'notes',
      version: '1.0.0',
      chain: canonicalChain(),
      identityFrom: () => {
        throw new Error('token expired at 12:00 for alice');
      },
    });
    const client = await connect(plainClient(), served);
    const result = await call(client, 'note', { text: 'hi' });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toBe(
      `[identity refused: the caller of 'note' could not be identified. Retrying will not help. Reconnect with valid credentials.]`,
    );
    expect(runs).toBe(0);
  });

  it('leaves out of tools/list what a middleware refuses the caller whatever the args (hides), per caller', async () => {
    let runs = 0;
    const tools = ['note', 'wipe'].map((name) =>
      defineTool({
        name,
        description: `Does ${name}.`,
        inputSchema: Type.Object({}),
        execute: () => ++runs,
      }),
    );
    const onlyAliceWipes: Middleware = {
      name: 'only-alice-wipes',
      hides: (tool, identity) => tool.schema.name === 'wipe' && identity?.principal !== 'alice',
      async run(ctx, next) {
        if (ctx.toolName === 'wipe' && ctx.identity?.principal !== 'alice') ctx.deny('only alice may wipe');
        await next();
      },
    };
    const hidingBroken: Middleware = {
      name: 'hiding-broken',
      hides: () => {
        throw new Error('policy store down');
      },
      run: (_ctx, next) => next(),
    };
    const served = mcpServe(tools, {
      name: 'listing',
      version: '1.0.0',
      chain: canonicalChain().use(onlyAliceWipes),
      identityFrom,
    });
    const names = async (client: Client) => (await client.listTools()).tools.map((tool) => tool.name);
    expect(await names(await connect(plainClient(), served, alice))).toEqual(['note', 'wipe']);
    const asBob = await connect(plainClient(), served, bob);
    expect(await names(asBob)).toEqual(['note']);
    // Hidden from the list, still governed when called by name.
    expect((await call(asBob, 'wipe', {})).isError).toBe(true);
    expect(runs).toBe(0);

    const broken = mcpServe(tools, {
      name: 'listing',
      version: '1.0.0',
      chain: canonicalChain().use(hidingBroken),
      identityFrom,
    });
    expect(await names(await connect(plainClient(), broken, alice))).toEqual([]);
  });

  it("resolves artifact refs in the scope of the caller's auth info, and nobody else's", async () => {
    const ref = await artifacts.put(
      { tenant: 'acme', principal: 'alice' },
      { kind: 'dataset/rows', data: [1, 2, 3] },
    );
    const served = governedServe();
    const asAlice = await connect(plainClient(), served, alice);
    const asBob = await connect(plainClient(), governedServe(), bob);
    expect((await call(asAlice, 'read_rows', { rows: ref })).structuredContent).toEqual({ count: 3 });
    const other = await call(asBob, 'read_rows', { rows: ref });
    expect(other.isError).toBe(true);
    expect(textOf(other)).toMatch(/^\[wants refused: /);
  });

  it('asks once per asking middleware in one call, and runs the tool once when all approve', async () => {
    const person = newPerson();
    person.next = { action: 'accept', content: { decision: 'approve' } };
    const largeRefunds: Middleware = {
      name: 'large-refunds',
      async run(ctx, next) {
        if (ctx.toolName === 'refund' && Number(ctx.args['amount']) > 100)
          await ctx.ask('This refund is over 100. Allow it?');
        return next();
      },
    };
    const served = mcpServe(governedTools(), {
      name: 'governed',
      version: '1.0.0',
      chain: governedChain().use(largeRefunds),
      identityFrom,
    });
    const client = await connect(elicitingClient(person), served);
    const result = await call(client, 'refund', { orderId: 'large-1', amount: 500 });
    expect(result.structuredContent).toEqual({ orderId: 'large-1', refunded: 500, runs: 1 });
    expect(person.asked.map((form) => form.message.split('\n')[0])).toEqual([
      'This refund is over 100. Allow it?',
      `Allow 'refund' to run with the arguments shown?`,
    ]);
  });

  it('shows the person the question, the tool, the exact arguments, the evidence and a form to approve or decline', async () => {
    const person = newPerson();
    const chain = canonicalChain({
      permissions,
      artifacts,
      checkInKey: CHECK_IN_KEY,
      evidence: (ctx) => ({ lastRefunds: 2, customer: `customer of ${String(ctx.args['orderId'])}` }),
    });
    const served = mcpServe(governedTools(), { name: 'governed', version: '1.0.0', chain, identityFrom });
    const client = await connect(elicitingClient(person), served);
    await call(client, 'refund', { orderId: 'form-1', amount: 12.5 });
    expect(person.asked).toHaveLength(1);
    const form = person.asked[0]!;
    expect(form.message).toBe(
      [
        `Allow 'refund' to run with the arguments shown?`,
        '',
        `Tool: 'refund'`,
        'Arguments (2), each shown in full: amount, orderId',
        '  amount: 12.5',
        '  orderId: "form-1"',
        `Evidence:\n${JSON.stringify({ customer: 'customer of form-1', lastRefunds: 2 }, null, 2)}`,
      ].join('\n'),
    );
    expect(form.requestedSchema).toEqual({
      type: 'object',
      properties: {
        decision: expect.objectContaining({ type: 'string', enum: ['approve', 'decline'] }),
        note: expect.objectContaining({ type: 'string' }),
      },
      required: ['decision'],
    });
  });

  it('revokes the pending request when the client cannot ask, or its person never answers', async () => {
    const chain = governedChain();
    const served = mcpServe(governedTools(), { name: 'governed', version: '1.0.0', chain, identityFrom });
    const plain = await connect(plainClient(), served);
    const failing = elicitingClient(newPerson());
    failing.setRequestHandler(ElicitRequestSchema, () => {
      throw new Error('the form could not be shown');
    });
    await connect(failing, served);
    await call(plain, 'refund', { orderId: 'never-1', amount: 1 });
    const unanswered = await call(failing, 'refund', { orderId: 'never-2', amount: 1 });
    expect(unanswered.isError).toBe(true);
    expect(textOf(unanswered)).toBe(
      `[check-in refused: no decision on 'refund' came back from the person at the MCP client. Retrying may help once they are there.]`,
    );
    const records = await chain.checkInStore!.list();
    expect(records.map((r) => [r.request.args['orderId'], r.state])).toEqual([
      ['never-1', 'revoked'],
      ['never-2', 'revoked'],
    ]);
    expect((await call(plain, 'refund_runs', { orderId: 'never-2' })).structuredContent).toMatchObject({
      runs: 0,
    });
  });

  it('sends structured content only for plain-object results', async () => {
    const result = (name: string, value: unknown) =>
      defineTool({ name, description: name, inputSchema: Type.Object({}), execute: () => value });
    const served = mcpServe([result('a_string', 'plain words'), result('a_list', [1, 2])], {
      name: 'shapes',
      version: '1.0.0',
      chain: canonicalChain(),
    });
    const client = await connect(plainClient(), served);
    const words = await call(client, 'a_string', {});
    const list = await call(client, 'a_list', {});
    expect([textOf(words), words.structuredContent]).toEqual(['plain words', undefined]);
    expect([textOf(list), list.structuredContent]).toEqual(['[1,2]', undefined]);
  });

  it('closes every connected server on close()', async () => {
    const served = governedServe();
    const clients = [plainClient(), plainClient()];
    const closed = clients.map((client) => new Promise<void>((resolve) => (client.onclose = resolve)));
    for (const client of clients) await client.connect(await linkTo(served.createServer()));
    await served.close();
    await Promise.all(closed);
  });

  it('refuses configuration it cannot honor when built, naming the fix', () => {
    const base = { name: 'governed', version: '1.0.0', chain: governedChain() };
    expect(() => mcpServe(governedTools(), { ...base, checkInKey: 'k'.repeat(32) } as never)).toThrow(
      new McpServeConfigError(
        `mcpServe 'governed': the check-in key belongs to the chain; pass canonicalChain({ checkInKey }) as 'chain'.`,
      ),
    );
    expect(() => mcpServe(governedTools(), { ...base, version: '' })).toThrow(
      /'version' must be a non-empty string/,
    );
    const notAnObject: Tool = {
      schema: { name: 'raw', description: '', inputSchema: { type: 'string' } },
      execute: () => 1,
    };
    expect(() => mcpServe([notAnObject], base)).toThrow(
      /tool 'raw' has an inputSchema that is not type 'object'/,
    );
    // The dispatcher's own build checks run too: a check-in tool under a chain without a key.
    expect(() => mcpServe(governedTools(), { ...base, chain: canonicalChain({ artifacts }) })).toThrow(
      /tool 'refund' cannot be served by gate 'check-in'/,
    );
  });
});
