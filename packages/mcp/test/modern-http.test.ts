// The 2026-07-28 path over Node HTTP: a body with the envelope claim goes to the modern handler
// without the SDK's legacy predicate, and that shortcut never routes what the predicate calls legacy;
// each request is its own exchange, so two callers interleaved, a call that throws and a client that
// leaves mid-call never reach another request.

import type { IncomingMessage } from 'node:http';
import type { AuthInfo } from '@modelcontextprotocol/server';
import { isLegacyRequest } from '@modelcontextprotocol/server';
import { Type } from 'typebox';
import { defineTool } from '@toolgate/core';
import { serveHttp, type HttpServing, type McpServed } from '@toolgate/mcp';
import { claimsModernEnvelope } from '../src/modern-http';
import { governedServe, governedTools } from './fixtures/governed';

const MODERN = '2026-07-28';
const CLAIM = 'io.modelcontextprotocol/protocolVersion';

function envelope(): Record<string, unknown> {
  return {
    [CLAIM]: MODERN,
    'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1.0.0' },
    'io.modelcontextprotocol/clientCapabilities': {},
  };
}

describe('claimsModernEnvelope: a shortcut past isLegacyRequest', () => {
  // Every shape a client (or an attacker) can post, crossed: the predicate may say "modern" only where
  // the SDK's own routing would never serve the body as 2025-11-25 traffic.
  const methods = ['tools/call', 'initialize', 'notifications/initialized', 'server/discover', 5, undefined];
  const ids = [1, 'a', null, undefined, {}];
  const versions = ['2.0', '1.0', undefined];
  const metas = [
    undefined,
    null,
    [],
    {},
    { [CLAIM]: MODERN },
    { [CLAIM]: '2025-11-25' },
    { [CLAIM]: 5 },
    { [CLAIM]: null },
    envelope(),
  ];
  const paramsOf = (meta: unknown): unknown[] => [
    undefined,
    [],
    null,
    { _meta: meta },
    { name: 'echo', _meta: meta },
  ];
  const extras: Record<string, unknown>[] = [{}, { result: {} }, { error: { code: -32000, message: 'x' } }];
  const headerSets: Record<string, string>[] = [
    {},
    { 'mcp-protocol-version': MODERN },
    { 'mcp-protocol-version': '2025-11-25' },
    { 'mcp-method': 'initialize' },
  ];

  function bodies(): unknown[] {
    const out: unknown[] = [];
    for (const method of methods)
      for (const id of ids)
        for (const jsonrpc of versions)
          for (const meta of metas)
            for (const params of paramsOf(meta))
              for (const extra of extras) {
                const body: Record<string, unknown> = { ...extra };
                if (jsonrpc !== undefined) body['jsonrpc'] = jsonrpc;
                if (id !== undefined) body['id'] = id;
                if (method !== undefined) body['method'] = method;
                if (params !== undefined) body['params'] = params;
                out.push(body);
              }
    // Batches, and values that are not objects at all.
    out.push(
      [{ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { _meta: envelope() } }],
      [],
      null,
      7,
      'x',
    );
    // A claim smuggled under a key JSON.parse keeps as an own property.
    out.push(
      JSON.parse(
        `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"__proto__":{"${CLAIM}":"${MODERN}"}}}}`,
      ),
    );
    return out;
  }

  it('claims nothing the SDK would serve as 2025-11-25 traffic, whatever the headers', async () => {
    let claimed = 0;
    const wrong: string[] = [];
    for (const body of bodies()) {
      if (!claimsModernEnvelope(body)) continue;
      claimed += 1;
      for (const headers of headerSets) {
        const request = new Request('http://127.0.0.1/mcp', {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...headers },
          body: JSON.stringify(body),
        });
        if (await isLegacyRequest(request, body))
          wrong.push(`${JSON.stringify(body)} ${JSON.stringify(headers)}`);
      }
    }
    expect(wrong).toEqual([]);
    // Not vacuous: the shortcut applies to a good share of the shapes.
    expect(claimed).toBeGreaterThan(500);
  });

  it('takes an SDK client request, and leaves initialize, responses and claim-less bodies to the SDK', () => {
    const call = {
      jsonrpc: '2.0',
      id: 3,
      method: 'tools/call',
      params: { name: 'echo', arguments: {}, _meta: envelope() },
    };
    expect(claimsModernEnvelope(call)).toBe(true);
    expect(claimsModernEnvelope({ ...call, method: 'initialize' })).toBe(false);
    expect(claimsModernEnvelope({ ...call, result: {} })).toBe(false);
    expect(claimsModernEnvelope({ ...call, params: { name: 'echo' } })).toBe(false);
    expect(claimsModernEnvelope([call])).toBe(false);
    // A claim nested under an own `__proto__` key (JSON.parse keeps it as data) is no claim.
    const nested = JSON.parse(
      `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"__proto__":{"${CLAIM}":"${MODERN}"}}}}`,
    ) as unknown;
    expect(claimsModernEnvelope(nested)).toBe(false);
  });
});

describe('each 2026-07-28 request is its own exchange', () => {
  let served: McpServed;
  let http: HttpServing;
  const released = new Map<string, () => void>();
  const waiting = new Map<string, Promise<void>>();
  let aborted: string[] = [];

  // A call that waits for the test to let it go, so requests interleave as the test orders them.
  const gate = (key: string): Promise<void> => {
    let open!: () => void;
    const opened = new Promise<void>((resolve) => (open = resolve));
    released.set(key, open);
    waiting.set(key, opened);
    return opened;
  };

  beforeAll(async () => {
    const tools = [
      ...governedTools(),
      defineTool({
        name: 'who_after',
        description: 'Waits for its key to be released, then reports who called.',
        inputSchema: Type.Object({ key: Type.String() }),
        execute: async ({ key }, ctx) => {
          await (waiting.get(key) ?? gate(key));
          return { key, principal: ctx.identity?.principal ?? null, tenant: ctx.identity?.tenant ?? null };
        },
      }),
      defineTool({
        name: 'boom',
        description: 'Fails with an internal message.',
        inputSchema: Type.Object({ secret: Type.String() }),
        execute: ({ secret }) => {
          throw new Error(`internal failure near ${secret}`);
        },
      }),
      defineTool({
        name: 'until_aborted',
        description: 'Runs until the call is aborted.',
        inputSchema: Type.Object({ key: Type.String() }),
        execute: async ({ key }, ctx) => {
          released.get(`${key}:started`)?.();
          await new Promise<void>((resolve) => {
            if (ctx.signal.aborted) resolve();
            ctx.signal.addEventListener('abort', () => resolve(), { once: true });
          });
          aborted.push(key);
          return { key };
        },
      }),
    ];
    served = governedServe({}, tools);
    http = await serveHttp(served, {
      authenticate: (request: IncomingMessage): AuthInfo | undefined => {
        const match = /^Bearer (alice|mallory)$/.exec(request.headers.authorization ?? '');
        if (match === null) return undefined;
        return { token: match[1]!, clientId: match[1]!, scopes: [], extra: { tenant: `${match[1]}-co` } };
      },
    });
  });

  afterAll(async () => {
    await http.close();
    await served.close();
  });

  beforeEach(() => {
    aborted = [];
  });

  async function call(
    who: string,
    name: string,
    args: Record<string, unknown>,
    id: number | string,
    signal?: AbortSignal,
  ): Promise<{ status: number; json: { result?: Record<string, unknown>; error?: unknown } }> {
    const response = await fetch(http.url, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${who}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': MODERN,
        'mcp-method': 'tools/call',
        'mcp-name': name,
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id,
        method: 'tools/call',
        params: { name, arguments: args, _meta: envelope() },
      }),
      ...(signal !== undefined ? { signal } : {}),
    });
    const text = await response.text();
    const data = text.startsWith('{') ? text : (/^data: (.*)$/m.exec(text)?.[1] ?? '{}');
    return { status: response.status, json: JSON.parse(data) };
  }

  const structured = (json: { result?: Record<string, unknown> }) => json.result?.['structuredContent'];

  it('two principals interleaved, with the same JSON-RPC ids, each get their own identity and answer', async () => {
    const keys = Array.from({ length: 12 }, (_, index) => `k${index}`);
    for (const key of keys) gate(key);
    // The same request id for both principals: an answer routed by id alone would cross over.
    const calls = keys.map((key, index) =>
      call(index % 2 === 0 ? 'alice' : 'mallory', 'who_after', { key }, 7),
    );
    // Release in an order unrelated to the order sent.
    for (const key of [...keys].reverse()) released.get(key)!();
    const answers = await Promise.all(calls);
    answers.forEach((answer, index) => {
      const who = index % 2 === 0 ? 'alice' : 'mallory';
      expect(answer.status).toBe(200);
      expect(structured(answer.json)).toEqual({ key: keys[index], principal: who, tenant: `${who}-co` });
    });
  });

  it('a call that throws answers its own caller only: nothing of it reaches the request beside it, and the next is served', async () => {
    gate('after-boom');
    const after = call('alice', 'who_after', { key: 'after-boom' }, 1);
    const failed = await call('mallory', 'boom', { secret: 'hunter2-token' }, 1);
    released.get('after-boom')!();
    expect(failed.status).toBe(200);
    expect(failed.json.result?.['isError']).toBe(true);
    const answered = await after;
    expect(structured(answered.json)).toEqual({ key: 'after-boom', principal: 'alice', tenant: 'alice-co' });
    expect(JSON.stringify(answered.json)).not.toContain('hunter2-token');
    const next = await call('mallory', 'echo', { text: 'still here' }, 2);
    expect(structured(next.json)).toEqual({ echoed: 'still here' });
  });

  it('a client that leaves mid-call aborts its own call, and only its own', async () => {
    const started = gate('leaver:started');
    gate('stayer');
    const staying = call('alice', 'who_after', { key: 'stayer' }, 9);
    const leave = new AbortController();
    const leaving = call('mallory', 'until_aborted', { key: 'leaver' }, 9, leave.signal).catch(
      (error: unknown) => error,
    );
    await started;
    leave.abort();
    await leaving;
    for (let tries = 0; tries < 200 && !aborted.includes('leaver'); tries++)
      await new Promise((resolve) => setTimeout(resolve, 10));
    expect(aborted).toEqual(['leaver']);
    released.get('stayer')!();
    const stayed = await staying;
    expect(structured(stayed.json)).toEqual({ key: 'stayer', principal: 'alice', tenant: 'alice-co' });
  });

  it('refuses a request without credentials before any exchange, claim or not', async () => {
    const response = await fetch(http.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'mcp-protocol-version': MODERN },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'echo', arguments: { text: 'x' }, _meta: envelope() },
      }),
    });
    expect(response.status).toBe(401);
  });

  it('still answers a claimed body sent as another media type with 415, and runs nothing', async () => {
    gate('never');
    const response = await fetch(http.url, {
      method: 'POST',
      headers: {
        authorization: 'Bearer alice',
        'content-type': 'text/plain',
        'mcp-protocol-version': MODERN,
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'who_after', arguments: { key: 'never' }, _meta: envelope() },
      }),
    });
    expect(response.status).toBe(415);
    released.get('never')!();
  });
});
