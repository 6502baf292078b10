/**
 * The client under test for the conformance suite's client scenarios, run by
 * `conformance client --command "node --import tsx test-support/conformance/gateway-client.ts"`:
 * the suite's scenario server (the URL it appends) becomes the one HTTP upstream of an in-process
 * `toolgate gateway`, and a downstream SDK client drives the gateway, so what the suite records is
 * the gateway acting as an MCP client. The downstream client lists the tools and calls each one the
 * gateway lists, answering elicitation, sampling and roots with fixed values.
 *
 * The suite sets MCP_CONFORMANCE_SCENARIO (which tools take which arguments) and, for a pinned
 * revision, MCP_CONFORMANCE_PROTOCOL_VERSION. With `--direct` before the URL the same downstream
 * client talks to the scenario server itself: the baseline the gateway is compared with.
 */
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { createGateway } from '@toolgate/gateway';

const TOKEN = 'conformance-downstream-token-0123456789';

// Arguments per tool the suite's client scenarios advertise; every other tool gets `{}`. They satisfy
// each tool's inputSchema (the gateway's validate-args gate refuses a call missing a required
// argument, or with null for a boolean, before the upstream hears of it).
const ARGUMENTS: Record<string, Record<string, unknown>> = {
  add_numbers: { a: 5, b: 3 },
  test_custom_headers: {
    region: 'us-west1',
    priority: 5,
    verbose: false,
    debug: true,
    empty_val: '',
    method_val: 'conformance',
    float_val: 1.5,
    non_ascii_val: 'Zürich',
    whitespace_val: ' padded ',
    tab_val: '\tindented',
    query: 'SELECT 1',
  },
  // `verbose` left out: an omitted header argument must not be mirrored.
  test_custom_headers_null: { region: 'us-east1', priority: 1, query: 'SELECT 1' },
  valid_tool: { region: 'us-west1' },
};

type Schema = { properties?: Record<string, { default?: unknown; type?: unknown }>; required?: string[] };

/** An accepted form: every field's default, and a placeholder for a required field without one. */
type FormValue = string | number | boolean | string[];

function acceptWithDefaults(schema: Schema | undefined): Record<string, FormValue> {
  const content: Record<string, FormValue> = {};
  for (const [name, field] of Object.entries(schema?.properties ?? {})) {
    if (field.default !== undefined) content[name] = field.default as FormValue;
    else if (schema?.required?.includes(name))
      content[name] = field.type === 'boolean' ? true : 'conformance';
  }
  return content;
}

async function main(argv: readonly string[]): Promise<void> {
  const direct = argv[0] === '--direct';
  const upstreamUrl = direct ? argv[1] : argv[0];
  if (upstreamUrl === undefined)
    throw new Error('gateway-client: the suite appends the server URL; none was given');
  const gateway = direct
    ? { url: upstreamUrl, close: async () => undefined }
    : await createGateway(
        {
          auth: { tokens: [{ token: TOKEN, identity: { tenant: 'conformance', principal: 'suite' } }] },
          upstreams: { scenario: { url: upstreamUrl } },
          tenants: { conformance: { upstreams: ['scenario'] } },
        },
        { port: 0, host: '127.0.0.1' },
      );
  const modern = process.env.MCP_CONFORMANCE_PROTOCOL_VERSION === '2026-07-28';
  const client = new Client(
    { name: 'toolgate-conformance-downstream', version: '1.0.0' },
    {
      capabilities: { elicitation: { form: {} }, sampling: {}, roots: { listChanged: true } },
      ...(modern ? { versionNegotiation: { mode: 'auto' as const } } : {}),
    },
  );
  client.setRequestHandler('elicitation/create', (request) => ({
    action: 'accept',
    content: acceptWithDefaults((request.params as { requestedSchema?: Schema }).requestedSchema),
  }));
  client.setRequestHandler('sampling/createMessage', () => ({
    role: 'assistant',
    content: { type: 'text', text: 'Paris' },
    model: 'conformance-fixed-answer',
  }));
  client.setRequestHandler('roots/list', () => ({
    roots: [{ uri: 'file:///conformance', name: 'conformance' }],
  }));
  try {
    await client.connect(
      new StreamableHTTPClientTransport(new URL(gateway.url), {
        requestInit: { headers: { authorization: `Bearer ${TOKEN}` } },
      }),
    );
    const { tools } = await client.listTools();
    const focal = tools.find((tool) => tool.name === 'json_schema_2020_12_tool');
    for (const tool of tools) {
      const needsSchema = (tool.inputSchema as Schema).required?.includes('schema') === true;
      const args = needsSchema && focal ? { schema: focal.inputSchema } : (ARGUMENTS[tool.name] ?? {});
      try {
        await client.callTool({ name: tool.name, arguments: args });
      } catch (error) {
        // A refused call is the suite's to judge from what the upstream saw; keep calling the rest.
        process.stderr.write(
          `gateway-client: ${tool.name}: ${error instanceof Error ? error.message : String(error)}\n`,
        );
      }
    }
  } finally {
    await client.close().catch(() => undefined);
    await gateway.close();
  }
}

main(process.argv.slice(2)).then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`gateway-client: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  },
);
