import { Client } from '@modelcontextprotocol/client';
import type { JSONRPCMessage, Transport } from '@modelcontextprotocol/client';
import { UpstreamClient } from '../src/upstream-client';

// An upstream that answers by hand, so a test can hand the client any result, valid or not.
function scriptedUpstream(answer: (params: Record<string, unknown>) => unknown): Transport {
  const transport: Transport = {
    start: async () => undefined,
    close: async () => transport.onclose?.(),
    send: async (message: JSONRPCMessage) => {
      if (!('method' in message) || !('id' in message)) return;
      const result =
        message.method === 'initialize'
          ? {
              protocolVersion: '2025-11-25',
              capabilities: { tools: {} },
              serverInfo: { name: 'scripted', version: '1.0.0' },
            }
          : answer((message.params ?? {}) as Record<string, unknown>);
      queueMicrotask(() =>
        transport.onmessage?.({ jsonrpc: '2.0', id: message.id, result } as JSONRPCMessage),
      );
    },
  };
  return transport;
}

async function connected(Kind: typeof Client, answer: (params: Record<string, unknown>) => unknown) {
  const client = new Kind({ name: 'test', version: '1.0.0' }, { versionNegotiation: { mode: 'legacy' } });
  await client.connect(scriptedUpstream(answer));
  return client;
}

const settled = (promise: Promise<unknown>) =>
  promise.then(
    (value) => ({ value }),
    (error: unknown) => ({
      error: error instanceof Error ? `${error.name}: ${error.message}` : String(error),
    }),
  );

const valid: Record<string, unknown> = {
  text: { content: [{ type: 'text', text: 'hi' }] },
  'error result': { content: [{ type: 'text', text: 'no' }], isError: true },
  structured: { content: [], structuredContent: { a: 1 } },
  'no content (the SDK defaults it)': {},
};
// What a broken or hostile upstream could answer a tools/call with.
const invalid: Record<string, unknown> = {
  'content not a list': { content: 'hi' },
  'unknown block type': { content: [{ type: 'shell', command: 'rm -rf /' }] },
  'isError not a boolean': { content: [], isError: 'yes' },
  'text block without text': { content: [{ type: 'text' }] },
  'nested junk': { content: [{ type: 'image', data: 5, mimeType: { toString: 1 } }] },
};
const answers = { ...valid, ...invalid };

describe('UpstreamClient', () => {
  it.each(Object.keys(answers))(
    'answers a tools/call result (%s) exactly as the SDK client does',
    async (which) => {
      const answer = () => answers[which];
      const sdk = await connected(Client, answer);
      const ours = await connected(UpstreamClient, answer);
      const call = (client: Client) => settled(client.callTool({ name: 'echo', arguments: { text: 'x' } }));
      const expected = await call(sdk);
      expect('error' in expected).toBe(which in invalid);
      // Twice: the second call uses the validator the first one kept.
      expect(await call(ours)).toEqual(expected);
      expect(await call(ours)).toEqual(expected);
      await Promise.all([sdk.close(), ours.close()]);
    },
  );

  it('probes the era for its tools/call result validator once, not on every call', async () => {
    const probes = async (Kind: typeof Client): Promise<number> => {
      const client = await connected(Kind, () => answers['text']);
      const codec = (
        client as unknown as { _wireCodec(): { validateResult(m: string, raw: unknown): unknown } }
      )._wireCodec();
      const spy = jest.spyOn(codec, 'validateResult');
      try {
        for (let i = 0; i < 5; i += 1) await client.callTool({ name: 'echo', arguments: {} });
        return spy.mock.calls.filter(([, raw]) => raw === undefined).length;
      } finally {
        spy.mockRestore();
        await client.close();
      }
    };
    // The SDK's own client pays the probe per call; if it ever stops, this cache can go.
    expect(await probes(Client)).toBe(5);
    expect(await probes(UpstreamClient)).toBeLessThanOrEqual(1);
  });

  it('leaves a request with its own schema and other methods to the SDK', async () => {
    const client = await connected(UpstreamClient, () => ({ tools: [] }));
    await expect(client.listTools()).resolves.toEqual({ tools: [] });
    const schema = {
      '~standard': {
        version: 1 as const,
        vendor: 'test',
        validate: () => ({ issues: [{ message: 'refused by the caller' }] }),
      },
    };
    await expect(client.request({ method: 'tools/call', params: { name: 'echo' } }, schema)).rejects.toThrow(
      /refused by the caller/,
    );
    await client.close();
  });
});
