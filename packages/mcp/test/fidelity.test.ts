// Fidelity against the official reference servers: the same requests, sent directly and through
// mcpClient → canonical chain → mcpServe, must read the same, field by field (names and URIs carry
// the prefix; imported object schemas are closed).

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { CallToolResult, Tool as McpTool } from '@modelcontextprotocol/sdk/types.js';
import type { PermissionRequest } from '@toolgate/core';
import { canonicalChain } from '@toolgate/middleware';
import { mcpClient, mcpServe, type McpClient, type McpServed } from '@toolgate/mcp';
import { closedSchema } from '../src/imported';
import { referenceServer } from './fixtures/reference';

const PREFIX = 'ev_';
// The capabilities mcpClient declares upstream, so both sides see the same tool list.
const CAPABILITIES = {
  capabilities: { elicitation: { form: {} }, sampling: {}, roots: { listChanged: true } },
};

// What import does to an input schema: objects closed, all the way down.
const closed = (schema: Record<string, unknown>) => closedSchema(schema);

describe.each([
  ['server-everything', [] as string[]],
  ['server-memory', [] as string[]],
  ['server-filesystem', ['DIR'] as string[]],
] as const)('%s directly and through the governing proxy', (server, serverArgs) => {
  let dir: string;
  let direct: Client;
  let proxied: Client;
  let upstream: McpClient;
  let served: McpServed;
  const asked: PermissionRequest[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'toolgate-fidelity-'));
    writeFileSync(join(dir, 'notes.txt'), 'hello from the file\n');
    const [command, ...args] = referenceServer(server, ...serverArgs.map((a) => (a === 'DIR' ? dir : a)));
    const env = { MEMORY_FILE_PATH: join(dir, 'memory.jsonl') };
    direct = new Client({ name: 'direct', version: '1.0.0' }, CAPABILITIES);
    await direct.connect(new StdioClientTransport({ command, args, env, stderr: 'ignore' }));
    upstream = mcpClient({ name: 'ev', command: [command, ...args], env, stderr: 'ignore', prefix: PREFIX });
    const permissions = {
      check: (request: PermissionRequest) => {
        asked.push(request);
        return request.target.endsWith('forbidden')
          ? { allow: false as const, reason: 'that one is off limits' }
          : { allow: true as const };
      },
    };
    served = mcpServe(await upstream.tools(), {
      name: 'proxy',
      version: '1.0.0',
      chain: canonicalChain({ permissions }),
      upstreams: [upstream],
    });
    const [clientEnd, serverEnd] = InMemoryTransport.createLinkedPair();
    await served.connect(serverEnd);
    proxied = new Client({ name: 'proxied', version: '1.0.0' });
    await proxied.connect(clientEnd);
  });

  afterAll(async () => {
    await Promise.all([direct?.close(), proxied?.close(), served?.close(), upstream?.close()]);
    rmSync(dir, { recursive: true, force: true });
  });

  it('lists every tool with its title, description, annotations, outputSchema, execution and _meta; only the name is prefixed', async () => {
    const { tools: sent } = await direct.listTools();
    const { tools: seen } = await proxied.listTools();
    expect(seen.map((t) => t.name)).toEqual(sent.map((t) => `${PREFIX}${t.name}`));
    for (const tool of sent) {
      const through = seen.find((t) => t.name === `${PREFIX}${tool.name}`) as McpTool;
      expect({ ...through, name: tool.name }).toEqual({ ...tool, inputSchema: closed(tool.inputSchema) });
    }
  });

  it('lists resources and templates, reads each listed resource, under the prefix', async () => {
    if (direct.getServerCapabilities()?.resources === undefined) {
      expect((await proxied.listResources()).resources).toEqual([]);
      return;
    }
    const sent = await direct.listResources();
    const seen = await proxied.listResources();
    expect(seen.resources).toEqual(sent.resources.map((r) => ({ ...r, uri: `${PREFIX}${r.uri}` })));
    const templates = await direct.listResourceTemplates();
    expect((await proxied.listResourceTemplates()).resourceTemplates).toEqual(
      templates.resourceTemplates.map((t) => ({ ...t, uriTemplate: `${PREFIX}${t.uriTemplate}` })),
    );
    for (const resource of sent.resources.slice(0, 3)) {
      const read = await direct.readResource({ uri: resource.uri });
      expect(await proxied.readResource({ uri: `${PREFIX}${resource.uri}` })).toEqual({
        ...read,
        contents: read.contents.map((c) => ({ ...c, uri: `${PREFIX}${c.uri}` })),
      });
      expect(asked.at(-1)).toMatchObject({
        capability: 'resource_read',
        target: `${PREFIX}${resource.uri}`,
        toolSource: 'ev',
      });
    }
  });

  it('lists prompts and gets them, under the prefix', async () => {
    const capabilities = direct.getServerCapabilities();
    if (capabilities?.prompts === undefined) {
      expect((await proxied.listPrompts()).prompts).toEqual([]);
      return;
    }
    const sent = await direct.listPrompts();
    expect((await proxied.listPrompts()).prompts).toEqual(
      sent.prompts.map((p) => ({ ...p, name: `${PREFIX}${p.name}` })),
    );
    const simple = sent.prompts.find((p) => (p.arguments ?? []).every((a) => !a.required))!;
    expect(await proxied.getPrompt({ name: `${PREFIX}${simple.name}` })).toEqual(
      await direct.getPrompt({ name: simple.name }),
    );
    expect(asked.at(-1)).toMatchObject({ capability: 'prompt_get', target: `${PREFIX}${simple.name}` });
  });
});

describe('server-everything tool results through the proxy', () => {
  let direct: Client;
  let proxied: Client;
  let upstream: McpClient;
  let served: McpServed;

  beforeAll(async () => {
    const [command, ...args] = referenceServer('server-everything');
    direct = new Client({ name: 'direct', version: '1.0.0' }, CAPABILITIES);
    await direct.connect(new StdioClientTransport({ command, args, stderr: 'ignore' }));
    upstream = mcpClient({ name: 'ev', command: [command, ...args], stderr: 'ignore' });
    served = mcpServe(await upstream.tools(), {
      name: 'proxy',
      version: '1.0.0',
      chain: canonicalChain({
        permissions: {
          check: (request) =>
            request.capability === 'resource_read' && request.target.includes('/2')
              ? { allow: false, reason: 'resource 2 is private' }
              : { allow: true },
        },
      }),
      upstreams: [upstream],
    });
    const [clientEnd, serverEnd] = InMemoryTransport.createLinkedPair();
    await served.connect(serverEnd);
    proxied = new Client({ name: 'proxied', version: '1.0.0' });
    await proxied.connect(clientEnd);
  });

  afterAll(async () => {
    await Promise.all([direct?.close(), proxied?.close(), served?.close(), upstream?.close()]);
  });

  // A dynamic resource carries the time of day it was made (in its text, or its base64 blob): two calls
  // a second apart differ there. Every other byte must match.
  const timeless = (text: string) => text.replace(/\d+:\d+:\d+ [AP]M/, 'TIME');
  const timelessResources = (result: CallToolResult) => ({
    ...result,
    content: result.content.map((block) => {
      if (block.type !== 'resource') return block;
      const { resource } = block;
      return 'blob' in resource
        ? {
            ...block,
            resource: {
              ...resource,
              blob: Buffer.from(timeless(Buffer.from(resource.blob, 'base64').toString('utf8'))).toString(
                'base64',
              ),
            },
          }
        : { ...block, resource: { ...resource, text: timeless(resource.text) } };
    }),
  });

  it.each([
    ['echo', { message: 'approved write\n' }],
    ['get-sum', { a: 2, b: 3 }],
    ['get-tiny-image', {}],
    ['get-annotated-message', { messageType: 'success', includeImage: true }],
    ['get-resource-links', { count: 4 }],
    ['get-resource-reference', { resourceType: 'Text', resourceId: 1 }],
    ['get-resource-reference', { resourceType: 'Blob', resourceId: 2 }],
    ['get-structured-content', { location: 'Chicago' }],
  ])('%s %j: every block as the block it is, structuredContent and isError as sent', async (name, args) => {
    const sent = (await direct.callTool({ name, arguments: args })) as CallToolResult;
    const seen = (await proxied.callTool({ name, arguments: args })) as CallToolResult;
    expect(timelessResources(seen)).toEqual(timelessResources(sent));
  });

  it('refuses a resource the checker denies, with the refusal sentence, and reads an allowed one', async () => {
    await expect(proxied.readResource({ uri: 'demo://resource/dynamic/text/2' })).rejects.toThrow(
      /\[permission refused: reading 'demo:\/\/resource\/dynamic\/text\/2' is not permitted: resource 2 is private\./,
    );
    const read = await proxied.readResource({ uri: 'demo://resource/dynamic/text/1' });
    // The server writes the time of day into this one; the rest must match.
    const timeless = (text: unknown) => String(text).replace(/\d+:\d+:\d+ [AP]M/, 'TIME');
    const sent = await direct.readResource({ uri: 'demo://resource/dynamic/text/1' });
    expect(read.contents.map((c) => ({ ...c, text: timeless('text' in c ? c.text : '') }))).toEqual(
      sent.contents.map((c) => ({ ...c, text: timeless('text' in c ? c.text : '') })),
    );
  });

  it('relays progress of a long-running upstream call to the downstream client', async () => {
    const progress: number[] = [];
    const result = (await proxied.callTool(
      { name: 'trigger-long-running-operation', arguments: { duration: 1, steps: 3 } },
      undefined,
      {
        onprogress: (p) => progress.push(p.progress),
      },
    )) as CallToolResult;
    expect(result.isError).toBeFalsy();
    // The server's last notification may race its own result; the ones before it cannot.
    expect(progress.slice(0, 2)).toEqual([1, 2]);
    expect(progress.every((p, i) => p === i + 1)).toBe(true);
  });
});
