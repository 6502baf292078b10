// An upstream's input-required answer, relayed through mcpServe to a 2026-07-28 client: the client
// is asked the upstream's questions (only those it declared it can answer) under a requestState of
// ours sealing the upstream's; its retry runs the chain again and reaches the upstream with the
// upstream's own state. A state edited, expired, or echoed by another principal, tenant, tool or with
// other arguments is a protocol error, and nothing runs. The upstream is the conformance reference
// server over stdio; the client is the SDK v2's, over Streamable HTTP.

import type { CallToolResult, ClientCapabilities } from '@modelcontextprotocol/client';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as LegacyTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  ElicitRequestSchema as LegacyElicitRequestSchema,
  ListRootsRequestSchema as LegacyListRootsRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import {
  serveHttp,
  type HttpServing,
  type McpCallReport,
  type McpClient,
  type McpServed,
} from '@toolgate/mcp';
import {
  ask,
  authenticate,
  describeStateRefusals,
  identityFromToken,
  modernClient as connect,
  protocolError,
  referenceUpstream,
  retry as retryWith,
  retryAs,
  serveUpstreams,
  text,
  withClient,
} from './fixtures/proxy';

let imported: McpClient;
let served: McpServed;
let http: HttpServing;
const reports: McpCallReport[] = [];

beforeAll(async () => {
  imported = referenceUpstream();
  served = await serveUpstreams([imported], {
    name: 'relay',
    identityFrom: identityFromToken,
    onCall: (report) => reports.push(report),
  });
  http = await serveHttp(served, { authenticate });
}, 60_000);

afterAll(async () => {
  await http.close();
  await served.close();
  await imported.close();
});

/** A 2026-07-28 client as `who` that answers Alice and blue; manual: it hands back input-required results. */
const modernClient = (who: string, capabilities: ClientCapabilities, options: { manual?: boolean } = {}) =>
  connect(http.url, who, capabilities, options);

const all = { elicitation: { form: {} }, sampling: {}, roots: {} } as const;

describe("an upstream's input-required answer, relayed to a 2026-07-28 client", () => {
  it('lets a client that answers its questions finish the call, over several rounds', async () => {
    await withClient(modernClient('alice', all), async (client) => {
      expect(
        text(await client.callTool({ name: 'ref_test_input_required_result_elicitation', arguments: {} })),
      ).toBe('Hello, Alice!');
      expect(
        text(await client.callTool({ name: 'ref_test_input_required_result_sampling', arguments: {} })),
      ).toBe('Sampling answer: Paris');
      expect(
        text(await client.callTool({ name: 'ref_test_input_required_result_list_roots', arguments: {} })),
      ).toBe('Roots: file:///work');
      expect(
        text(await client.callTool({ name: 'ref_test_input_required_result_multi_round', arguments: {} })),
      ).toBe('Done: Alice likes blue');
      expect(
        text(
          await client.callTool({ name: 'ref_test_input_required_result_multiple_inputs', arguments: {} }),
        ),
      ).toBe('All inputs received');
    });
  }, 30_000);

  it("shows the upstream's questions under a state of ours that hides the upstream's", async () => {
    await withClient(modernClient('alice', all, { manual: true }), async (client) => {
      const asked = await ask(client, 'ref_test_input_required_result_request_state');
      expect(asked.resultType).toBe('input_required');
      expect(Object.keys(asked.inputRequests ?? {})).toEqual(['confirm']);
      expect(asked.inputRequests?.['confirm']?.method).toBe('elicitation/create');
      expect(asked.requestState).toMatch(/^u1\.[A-Za-z0-9_-]+$/);
      expect(reports.at(-1)).toMatchObject({
        toolName: 'ref_test_input_required_result_request_state',
        identity: { tenant: 'acme', principal: 'alice' },
        settled: { kind: 'input-required', asker: 'upstream' },
      });
      const retried = await retryWith(
        client,
        'ref_test_input_required_result_request_state',
        { confirm: { action: 'accept', content: { ok: true } } },
        asked.requestState,
      );
      expect(text(retried)).toBe('state-ok: confirmed');
    });
  }, 30_000);

  it('asks a client only what it declared: a sampling-only client gets only sampling', async () => {
    await withClient(modernClient('alice', { sampling: {} }, { manual: true }), async (client) => {
      const asked = await ask(client, 'ref_test_input_required_result_capabilities');
      expect(Object.values(asked.inputRequests ?? {}).map((request) => request.method)).toEqual([
        'sampling/createMessage',
      ]);
    });
  }, 30_000);

  it('answers -32021 naming sampling when the upstream tool needs it and the client did not declare it', async () => {
    await withClient(modernClient('alice', {}), async (client) => {
      const error = await protocolError(
        client.callTool({ name: 'ref_test_missing_capability', arguments: {} }),
      );
      expect(error.code).toBe(-32021);
      expect((error.data as { requiredCapabilities?: unknown }).requiredCapabilities).toEqual({
        sampling: {},
      });
    });
  }, 30_000);

  it('relays a prompt that asks for input first (prompts/get)', async () => {
    await withClient(modernClient('alice', all), async (client) => {
      const prompt = await client.getPrompt({ name: 'ref_test_input_required_result_prompt' });
      expect(prompt.messages[0]?.content).toEqual({ type: 'text', text: 'Context: ctx' });
    });
  }, 30_000);

  // Refused before the chain: no dispatch, so nothing reached the upstream.
  describeStateRefusals(
    'refuses a state that is not this caller’s for this request, before anything runs',
    {
      url: () => http.url,
      reports,
      capabilities: all,
      tool: 'ref_test_input_required_result_tampered_state',
      otherTool: 'ref_test_input_required_result_elicitation',
      key: 'user_name',
    },
    (first) => {
      it('and opens for the caller it was given to', async () => {
        const done = await retryAs(http.url, 'alice', all, {
          name: 'ref_test_input_required_result_tampered_state',
          inputResponses: { user_name: { action: 'accept', content: { name: 'Alice' } } },
          requestState: first().requestState,
        });
        expect(text(done)).toBe('state verified');
      }, 30_000);
    },
  );
});

describe('the same upstream, asked by a 2025-11-25 client', () => {
  it('relays its questions as the server-to-client requests they replace: elicitation, roots', async () => {
    const client = new LegacyClient(
      { name: 'legacy', version: '1.0.0' },
      { capabilities: { elicitation: {}, roots: {} } },
    );
    const asked: string[] = [];
    client.setRequestHandler(LegacyElicitRequestSchema, (request) => {
      asked.push(request.params.message);
      return { action: 'accept', content: { name: 'Alice' } };
    });
    client.setRequestHandler(LegacyListRootsRequestSchema, () => ({
      roots: [{ uri: 'file:///legacy', name: 'legacy' }],
    }));
    await client.connect(
      new LegacyTransport(http.url, { requestInit: { headers: { authorization: 'Bearer alice' } } }),
    );
    try {
      const greeted = await client.callTool({
        name: 'ref_test_input_required_result_elicitation',
        arguments: {},
      });
      expect(text(greeted)).toBe('Hello, Alice!');
      expect(asked).toEqual(['What is your name?']);
      const roots = (await client.callTool({
        name: 'ref_test_input_required_result_list_roots',
        arguments: {},
      })) as CallToolResult;
      expect(text(roots)).toBe('Roots: file:///legacy');
    } finally {
      await client.close();
    }
  }, 30_000);
});
