// credentialHeaders: an HTTP upstream's headers built per call from the credential the credentials
// gate resolved for that call's caller. Against a real Streamable HTTP server on a loopback port:
// each call carries its own caller's credential, under concurrency too, and the value reaches the
// upstream and nothing else (the model, the downstream client, events, the ledger, errors).

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult, JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { Credential, DispatchOutcome, Dispatcher } from '@toolgate/core';
import { canonicalChain } from '@toolgate/middleware';
import { mcpClient, mcpServe, serveHttp, type McpClientEvent } from '@toolgate/mcp';
import { z } from 'zod';
import { leaksOf } from '../../../test-support/hardening';
import { CHECK_IN_KEY, identityFrom } from './fixtures/governed';
import { httpUpstream, type HttpUpstream } from './fixtures/http-upstream';
import { recordingEmitter } from './fixtures/recording-emitter';

const SECRETS: Record<string, string> = {
  acme: `sk_live_ACME_${'a1'.repeat(12)}`,
  globex: `sk_live_GLOBEX_${'b2'.repeat(12)}`,
};
const ALL = Object.values(SECRETS);
const ROTATED = `sk_live_ACME_ROTATED_${'c3'.repeat(10)}`;
ALL.push(ROTATED);

type HeaderBuilder = (credential: Credential) => Readonly<Record<string, string>>;
const asApiKey: HeaderBuilder = (credential) => ({ 'x-api-key': String(credential.reveal()) });

interface UpstreamCall {
  readonly tool: string;
  readonly key: string | undefined;
  readonly tenant: unknown;
  readonly metaKeys: string[];
}

/** What the upstream server records and answers: each call's x-api-key, echoed back as the server would. */
function upstreamServer(calls: UpstreamCall[]) {
  return () => {
    const server = new McpServer({ name: 'keyed-upstream', version: '1.0.0' });
    const seen = (
      tool: string,
      extra: { requestInfo?: { headers: Record<string, unknown> }; _meta?: object },
    ) => {
      const header = extra.requestInfo?.headers['x-api-key'];
      const meta = (extra._meta ?? {}) as Record<string, unknown>;
      const key = typeof header === 'string' ? header : undefined;
      calls.push({
        tool,
        key,
        tenant: (meta['io.toolgate/identity'] as { tenant?: unknown } | undefined)?.tenant,
        metaKeys: Object.keys(meta),
      });
      return key ?? '(none)';
    };
    server.registerTool(
      'whoami',
      {
        description: 'Says which key it was called with.',
        inputSchema: { delayMs: z.number().int().max(200) },
      },
      async ({ delayMs }, extra) => {
        const key = seen('whoami', extra);
        await new Promise((resolve) => setTimeout(resolve, delayMs));
        return {
          content: [{ type: 'text', text: `called with ${key}` }],
          structuredContent: { key, header: `x-api-key: ${key}` },
        };
      },
    );
    server.registerTool(
      'reject',
      { description: 'Rejects the key it was called with, quoting it.', inputSchema: {} },
      (_args, extra) => {
        const key = seen('reject', extra);
        return {
          content: [{ type: 'text', text: `invalid api key ${JSON.stringify({ key })}` }],
          isError: true,
        };
      },
    );
    server.registerTool(
      'crash',
      { description: 'Throws, quoting the key.', inputSchema: {} },
      (_args, extra) => {
        throw new Error(`boom with ${seen('crash', extra)}`);
      },
    );
    return server;
  };
}

const tokens: Record<string, AuthInfo> = {
  'token-acme': { token: 'token-acme', clientId: 'alice', scopes: [], extra: { tenant: 'acme' } },
  'token-globex': { token: 'token-globex', clientId: 'gina', scopes: [], extra: { tenant: 'globex' } },
};

function authenticate(request: { headers: Record<string, string | string[] | undefined> }) {
  const header = request.headers['authorization'];
  return tokens[typeof header === 'string' ? header.replace(/^Bearer /, '') : ''];
}

describe('mcpClient credentialHeaders against a Streamable HTTP server', () => {
  const upstreamCalls: UpstreamCall[] = [];
  const events: unknown[] = [];
  const clientEvents: McpClientEvent[] = [];
  const outcomes: DispatchOutcome[] = [];
  const wire: JSONRPCMessage[] = [];
  const resolved: string[] = [];
  let upstream: HttpUpstream;
  let closeAll: () => Promise<void>;
  let clients: Record<'acme' | 'globex', Client>;
  let buildHeaders: HeaderBuilder = asApiKey;

  beforeAll(async () => {
    upstream = await httpUpstream(upstreamServer(upstreamCalls));
    const keyed = mcpClient({
      name: 'keyed',
      url: upstream.url,
      needs: { kind: 'api_key', service: 'keyed' },
      credentialHeaders: (credential) => buildHeaders(credential),
      onEvent: (event) => clientEvents.push(event),
    });
    const served = mcpServe(await keyed.tools(), {
      name: 'gateway',
      version: '1.0.0',
      identityFrom,
      events: recordingEmitter(events),
      chain: canonicalChain({
        checkInKey: CHECK_IN_KEY,
        credentials: {
          resolve: (_need, { identity }) => {
            resolved.push(String(identity?.tenant));
            return { kind: 'api_key', value: SECRETS[String(identity?.tenant)] ?? 'unknown-tenant' };
          },
        },
      }),
      instrument: (dispatcher): Dispatcher => ({
        ...dispatcher,
        async dispatch(call, options) {
          const outcome = await dispatcher.dispatch(call, options);
          outcomes.push(outcome);
          return outcome;
        },
      }),
    });
    const http = await serveHttp(served, { authenticate });
    const connect = async (token: string) => {
      const transport = new StreamableHTTPClientTransport(http.url, {
        requestInit: { headers: { authorization: `Bearer ${token}` } },
      });
      const client = new Client({ name: `client-${token}`, version: '1.0.0' });
      await client.connect(transport);
      // Every message the downstream client receives.
      const receive = transport.onmessage!;
      transport.onmessage = (message: JSONRPCMessage) => {
        wire.push(message);
        receive(message);
      };
      return client;
    };
    clients = { acme: await connect('token-acme'), globex: await connect('token-globex') };
    closeAll = async () => {
      await Promise.all(Object.values(clients).map((client) => client.close()));
      await http.close();
      await served.close();
      await keyed.close();
      await upstream.close();
    };
  });

  afterAll(() => closeAll());
  afterEach(() => {
    buildHeaders = asApiKey;
  });

  const call = (tenant: 'acme' | 'globex', name: string, args: Record<string, unknown> = {}) =>
    clients[tenant].callTool({ name, arguments: args }) as Promise<CallToolResult>;

  it("sends each call its own caller's credential as the header, with no cross-talk under concurrency", async () => {
    upstreamCalls.length = 0;
    const order = Array.from({ length: 24 }, (_, i): 'acme' | 'globex' => (i % 3 === 0 ? 'globex' : 'acme'));
    // Delays that make later calls finish first, so headers built for one call meet others in flight.
    const results = await Promise.all(
      order.map((tenant, i) => call(tenant, 'whoami', { delayMs: ((i * 37) % 11) * 5 })),
    );

    expect(results.every((result) => result.isError !== true)).toBe(true);
    expect(upstreamCalls).toHaveLength(order.length);
    for (const seen of upstreamCalls) expect(seen.key).toBe(SECRETS[String(seen.tenant)]);
    expect(upstreamCalls.filter((seen) => seen.tenant === 'globex')).toHaveLength(8);
    expect(upstreamCalls.filter((seen) => seen.tenant === 'acme')).toHaveLength(16);
    // The marker that carried the header set to the HTTP layer never reaches the server.
    // (The caller's log level rides along too, for a 2026-07-28 upstream.)
    const metaKeys = upstreamCalls.flatMap((seen) => seen.metaKeys);
    expect(new Set(metaKeys.filter((key) => key !== 'io.modelcontextprotocol/logLevel'))).toEqual(
      new Set(['io.toolgate/identity']),
    );
  });

  it('resolves the credential per call, so a rotated secret is sent on the very next call', async () => {
    upstreamCalls.length = 0;
    const before = resolved.length;
    await call('acme', 'whoami', { delayMs: 0 });
    const original = SECRETS['acme']!;
    SECRETS['acme'] = ROTATED;
    try {
      await call('acme', 'whoami', { delayMs: 0 });
    } finally {
      SECRETS['acme'] = original;
    }
    expect(resolved.slice(before)).toEqual(['acme', 'acme']);
    expect(upstreamCalls.map((seen) => seen.key)).toEqual([original, ROTATED]);
  });

  it.each([
    [
      'throws, quoting the key',
      (credential: Credential): Record<string, string> => {
        throw new Error(`no header for ${String(credential.reveal())}`);
      },
    ],
    [
      'builds a value HTTP cannot carry',
      (credential: Credential) => ({
        'x-api-key': `${String(credential.reveal())}\r\nx-injected: 1`,
      }),
    ],
    ['builds a value that is not a string', () => ({ 'x-api-key': 42 }) as never],
  ])('a credentialHeaders that %s fails the call unsent, naming no value', async (_, build) => {
    buildHeaders = build as HeaderBuilder;
    upstreamCalls.length = 0;
    const before = upstream.requests.length;

    const result = await call('acme', 'whoami', { delayMs: 0 });

    expect(result.isError).toBe(true);
    expect(JSON.stringify(result.content)).toMatch(
      /'whoami' was not sent to MCP server 'keyed': credentialHeaders/,
    );
    expect(upstreamCalls).toEqual([]);
    expect(upstream.requests.slice(before).filter((r) => r.headers['x-injected'] !== undefined)).toEqual([]);
    expect(leaksOf(ALL, { result })).toEqual([]);
  });

  it('sends the header only with tools/call, never with initialize, listing or notifications', () => {
    const carrying = upstream.requests.filter((request) => request.headers['x-api-key'] !== undefined);
    expect(carrying.length).toBeGreaterThan(0);
    for (const request of carrying) expect(request.body).toMatchObject({ method: 'tools/call' });
    const methods = upstream.requests
      .filter((request) => request.headers['x-api-key'] === undefined)
      .map((request) => (request.body as { method?: string } | undefined)?.method);
    expect(methods).toContain('initialize');
    expect(methods).toContain('tools/list');
  });

  it('a result that echoes the key reaches the downstream client redacted', async () => {
    const result = await call('globex', 'whoami', { delayMs: 0 });

    expect(result.isError).not.toBe(true);
    expect(result.content).toEqual([{ type: 'text', text: 'called with [redacted]' }]);
    expect(result.structuredContent).toEqual({ key: '[redacted]', header: 'x-api-key: [redacted]' });
  });

  it("an upstream's error result and a thrown error that quote the key reach the client redacted", async () => {
    const rejected = await call('acme', 'reject');
    const crashed = await call('globex', 'crash');

    expect(rejected.isError).toBe(true);
    expect(JSON.stringify(rejected)).toContain('[redacted]');
    expect(crashed.isError).toBe(true);
    expect(leaksOf(ALL, { rejected, crashed })).toEqual([]);
  });

  it('the key appears in no event, ledger row, outcome, client event or downstream message', () => {
    expect(outcomes.length).toBeGreaterThan(24);
    expect(leaksOf(ALL, { events, outcomes, clientEvents, wire })).toEqual([]);
  });
});

describe('mcpClient credentialHeaders configuration', () => {
  it('is refused for a server not reached over HTTP', () => {
    expect(() =>
      mcpClient({
        name: 'local',
        command: ['node', '-e', ''],
        credentialHeaders: () => ({ 'x-api-key': 'k' }),
      }),
    ).toThrow(/'credentialHeaders' needs an HTTP server given by 'url'/);
  });
});
