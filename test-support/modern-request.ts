// One 2026-07-28 request as a tasks-capable client sends it, over plain fetch: the SDK v2 client
// (2.4) rejects `resultType: "task"`, so the task tests speak the wire themselves. For the rest, the
// SDK v2 client the relay tests of both packages connect, and the retry it sends with its answers.

import {
  Client,
  ProtocolError,
  StreamableHTTPClientTransport,
  type ClientCapabilities,
} from '@modelcontextprotocol/client';

export const MODERN = '2026-07-28';
export const WITH_TASKS = { extensions: { 'io.modelcontextprotocol/tasks': {} } };

export type ModernAnswer = {
  result?: Record<string, unknown>;
  error?: { code: number; message: string; data?: unknown };
};

let nextId = 1;

export async function modernRequest(
  at: string | URL,
  token: string,
  method: string,
  params: Record<string, unknown>,
  capabilities: Record<string, unknown> = WITH_TASKS,
): Promise<ModernAnswer> {
  const name = (params['name'] ?? params['taskId']) as string | undefined;
  const response = await fetch(at, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': MODERN,
      'mcp-method': method,
      ...(name !== undefined ? { 'mcp-name': name } : {}),
      authorization: `Bearer ${token}`,
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: nextId++,
      method,
      params: {
        ...params,
        _meta: {
          'io.modelcontextprotocol/protocolVersion': MODERN,
          'io.modelcontextprotocol/clientInfo': { name: 'raw-tasks', version: '1.0.0' },
          'io.modelcontextprotocol/clientCapabilities': capabilities,
        },
      },
    }),
  });
  const text = await response.text();
  const data = text.startsWith('{') ? text : (/^data: (.*)$/m.exec(text)?.[1] ?? '{}');
  return JSON.parse(data) as ModernAnswer;
}

/** What a relay test's client is called and answers. */
export interface ModernClientOptions {
  /** It hands back input-required results instead of answering them. */
  readonly manual?: boolean;
  /** The name it gives an elicitation asking a name (default Alice). */
  readonly name?: string;
  /** The color it gives an elicitation asking a color (default blue). */
  readonly color?: string;
  /** Its clientInfo name (default `client-<token>`). */
  readonly clientName?: string;
}

/**
 * An SDK v2 client on 2026-07-28 at `url` with bearer `token`, answering what it declared: an
 * elicitation asking a color, a context (ctx) or else a name; sampling with 'Paris'; roots with
 * file:///work.
 */
export async function modernClient(
  url: string | URL,
  token: string,
  capabilities: ClientCapabilities,
  options: ModernClientOptions = {},
): Promise<Client> {
  const client = new Client(
    { name: options.clientName ?? `client-${token}`, version: '1.0.0' },
    {
      versionNegotiation: { mode: { pin: MODERN } },
      capabilities,
      ...(options.manual === true ? { inputRequired: { autoFulfill: false } } : {}),
    },
  );
  if (capabilities.elicitation !== undefined)
    client.setRequestHandler('elicitation/create', (request) => {
      const message = String((request.params as { message?: string }).message ?? '');
      return {
        action: 'accept',
        content: /color/i.test(message)
          ? { color: options.color ?? 'blue' }
          : /context/i.test(message)
            ? { context: 'ctx' }
            : { name: options.name ?? 'Alice' },
      };
    });
  if (capabilities.sampling !== undefined)
    client.setRequestHandler('sampling/createMessage', () => ({
      role: 'assistant',
      content: { type: 'text', text: 'Paris' },
      model: 'test-model',
    }));
  if (capabilities.roots !== undefined)
    client.setRequestHandler('roots/list', () => ({ roots: [{ uri: 'file:///work', name: 'work' }] }));
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
    }),
  );
  return client;
}

/** A client's retry of `name`: its answers and the requestState it was given (no arguments unless `args`). */
export function retryTool(
  client: Client,
  name: string,
  inputResponses: Record<string, unknown>,
  requestState: string | undefined,
  args: Record<string, unknown> = {},
) {
  // The SDK types callTool without the retry fields its own driver adds.
  const params = { name, arguments: args, inputResponses, requestState } as Parameters<Client['callTool']>[0];
  return client.callTool(params, { allowInputRequired: true });
}

/** One retry, as a client that hands input-required results back sends it. */
export interface Retry {
  readonly name: string;
  readonly inputResponses: Record<string, unknown>;
  readonly requestState: string | undefined;
  readonly args?: Record<string, unknown>;
  /** Its clientInfo name (default `client-<token>`). */
  readonly clientName?: string;
}

/** Connects a manual client as `token` declaring `capabilities`, sends `retry`, and closes it. */
export async function retryAs(
  url: string | URL,
  token: string,
  capabilities: ClientCapabilities,
  retry: Retry,
) {
  const client = await modernClient(url, token, capabilities, {
    manual: true,
    ...(retry.clientName === undefined ? {} : { clientName: retry.clientName }),
  });
  try {
    return await retryTool(client, retry.name, retry.inputResponses, retry.requestState, retry.args);
  } finally {
    await client.close();
  }
}

/** The ProtocolError `promise` rejects with; a result or any other error fails the test. */
export async function protocolError(promise: Promise<unknown>): Promise<ProtocolError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof ProtocolError) return error;
    throw error;
  }
  throw new Error('expected a protocol error');
}
