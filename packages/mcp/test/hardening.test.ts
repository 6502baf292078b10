// Fault injection on the MCP transport: an imported tool's calls travel over an in-memory SDK
// transport that, at random calls, throws on send, never answers, answers garbage, answers a
// protocol error, answers slowly, or has the server side close mid-call. Every dispatch resolves —
// failed, naming the server, when the transport failed — nothing rejects unhandled, the transport's
// own error text never reaches the model, and the dispatcher keeps serving other tools.

import fc from 'fast-check';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { createDispatcher, defineTool, type DispatchOutcome } from '@toolgate/core';
import { canonicalChain } from '@toolgate/middleware';
import { mcpClient } from '@toolgate/mcp';
import {
  fcOptions,
  flush,
  PROPERTY_TIMEOUT_MS,
  settles,
  sharedValidator,
} from '../../../test-support/hardening';
import { objectSchema, remoteServer, text } from './fixtures/remote';

type TransportFault = 'ok' | 'slow' | 'send-throws' | 'drop' | 'garbage' | 'error-reply' | 'close';

const TIMEOUT_MS = 25;
const SECRET = 'transport-secret-9f8e7d6c5b4a';

const fault: fc.Arbitrary<TransportFault> = fc.oneof(
  { arbitrary: fc.constant('ok' as const), weight: 4 },
  {
    arbitrary: fc.constantFrom(
      'slow' as const,
      'send-throws' as const,
      'drop' as const,
      'garbage' as const,
      'error-reply' as const,
      'close' as const,
    ),
    weight: 3,
  },
);

const isCall = (
  message: JSONRPCMessage,
): message is JSONRPCMessage & { id: string | number; method: 'tools/call' } =>
  'method' in message && message.method === 'tools/call' && 'id' in message;

/** A linked pair whose client end and server end misbehave on the n-th tools/call as `faults` say. */
function faultyLink(faults: readonly TransportFault[]) {
  const [clientEnd, serverEnd] = InMemoryTransport.createLinkedPair();
  const byId = new Map<string | number, TransportFault>();
  let calls = 0;
  const clientSend = clientEnd.send.bind(clientEnd);
  clientEnd.send = async (message, options) => {
    if (isCall(message)) {
      const planned = faults[calls++] ?? 'ok';
      byId.set(message.id, planned);
      if (planned === 'send-throws') throw new Error(`socket hang up while sending to ${SECRET}`);
    }
    return clientSend(message, options);
  };
  const serverSend = serverEnd.send.bind(serverEnd);
  serverEnd.send = async (message, options) => {
    const id = 'id' in message && !('method' in message) ? message.id : undefined;
    const planned = id === undefined ? undefined : byId.get(id);
    switch (planned) {
      case 'slow':
        await flush(2);
        return serverSend(message, options);
      case 'drop':
        return;
      case 'garbage':
        return serverSend(
          {
            jsonrpc: '2.0',
            id: (message as { id: string | number }).id,
            result: { content: 'not a list', isError: 'maybe' },
          } as JSONRPCMessage,
          options,
        );
      case 'error-reply':
        return serverSend(
          {
            jsonrpc: '2.0',
            id: (message as { id: string | number }).id,
            error: { code: -32603, message: 'the remote failed' },
          },
          options,
        );
      case 'close':
        return serverEnd.close();
      default:
        return serverSend(message, options);
    }
  };
  return { clientEnd, serverEnd };
}

describe('MCP transport faults', () => {
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => unhandled.push(reason);
  beforeAll(() => process.on('unhandledRejection', onUnhandled));
  afterAll(() => {
    process.off('unhandledRejection', onUnhandled);
  });

  it(
    'a transport that throws, drops, garbles, errors or closes mid-call gives a failed outcome or a retryable refusal naming the server, and other tools keep working',
    async () => {
      await fc.assert(
        fc.asyncProperty(fc.array(fault, { minLength: 1, maxLength: 4 }), async (faults) => {
          const remote = remoteServer(
            [
              [
                {
                  name: 'search',
                  description: 'Searches.',
                  inputSchema: objectSchema({ query: { type: 'string' } }, ['query']),
                },
              ],
            ],
            () => text('found it'),
          );
          const { clientEnd, serverEnd } = faultyLink(faults);
          await remote.server.connect(serverEnd);
          const docs = mcpClient({
            name: 'docs',
            transport: clientEnd,
            timeoutMs: TIMEOUT_MS,
            validator: sharedValidator,
          });
          const local = defineTool({
            name: 'local',
            description: 'our own',
            inputSchema: {},
            execute: () => 'local ran',
          });
          const dispatcher = createDispatcher({
            tools: [local, ...(await docs.tools())],
            chain: canonicalChain({ validator: sharedValidator }),
          });
          let closed = false;
          for (const planned of faults) {
            const outcome: DispatchOutcome = await settles(
              dispatcher.dispatch({ toolName: 'search', args: { query: 'refunds' } }),
              'an MCP call',
            );
            expect(outcome.content).not.toContain(SECRET);
            const healthy = !closed && (planned === 'ok' || planned === 'slow');
            // A healthy call on a busy machine may still miss the client's deadline: then it is that timeout, by name.
            const timedOut =
              outcome.kind === 'failed' &&
              outcome.error.message === `MCP server 'docs' did not answer 'search' within ${TIMEOUT_MS} ms`;
            if (healthy && !timedOut) {
              expect(outcome).toMatchObject({ kind: 'result', content: 'found it', toolSource: 'docs' });
            } else {
              // A lost connection is a retryable refusal; anything else a failure naming the server.
              // A call never sent (the connection already closed) says it did not run; one that was sent may have.
              expect(outcome).toMatchObject({ toolSource: 'docs' });
              if (outcome.kind === 'refused') {
                expect(outcome).toMatchObject({ gate: 'mcp', retryable: true });
                expect(['MCP_CONNECTION_LOST', 'MCP_UNAVAILABLE']).toContain(outcome.code);
                expect(outcome.ran).toBe(outcome.code === 'MCP_CONNECTION_LOST');
                expect(outcome.content).toContain(`MCP server 'docs'`);
              } else {
                expect(outcome).toMatchObject({ kind: 'failed', ran: true });
                if (outcome.kind === 'failed') {
                  expect(outcome.error.name).toBe('McpConnectionError');
                  expect(outcome.error.message).toContain(`MCP server 'docs'`);
                }
              }
            }
            closed ||= planned === 'close';
            // Whatever happened to the connection, our own tools are served normally.
            expect(await dispatcher.dispatch({ toolName: 'local', args: {} })).toMatchObject({
              kind: 'result',
              content: 'local ran',
            });
          }
          await docs.close();
        }),
        fcOptions(10),
      );
      expect(unhandled).toEqual([]);
    },
    PROPERTY_TIMEOUT_MS,
  );
});
