/**
 * The reference upstream for the MCP conformance runs (scripts/conformance.mjs): an MCP server with
 * the tool, resource and prompt names the official suite's server scenarios call
 * (@modelcontextprotocol/conformance), written on the SDK v2 so one definition serves 2026-07-28
 * (stateless, input-required results) and 2025-11-25 (initialize, sessions) alike.
 *
 *   node --import tsx test-support/conformance/reference-upstream.ts --stdio
 *   node --import tsx test-support/conformance/reference-upstream.ts --http [--port N]
 *
 * Over HTTP it prints `listening <url>` on stdout once it accepts connections; the endpoint is `/mcp`.
 * A dev fixture, not a product: it binds loopback only and keeps every session in memory.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import {
  CLIENT_CAPABILITIES_META_KEY,
  McpServer,
  MissingRequiredClientCapabilityError,
  ResourceTemplate,
  WebStandardStreamableHTTPServerTransport,
  createMcpHandler,
  createRequestStateCodec,
  fromJsonSchema,
  hostHeaderValidationResponse,
  inputRequired,
  inputResponse,
  isLegacyRequest,
  localhostAllowedHostnames,
  type CallToolResult,
  type GetPromptResult,
  type InputRequest,
  type McpRequestContext,
  type ServerContext,
} from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';

// A 1x1 red PNG and a 44-byte silent WAV: the smallest valid payloads of each kind.
const RED_PIXEL_PNG =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==';
const SILENT_WAV = 'UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAIA+AAACABAAZGF0YQAAAAA=';

const noArguments = fromJsonSchema({ type: 'object', properties: {} });

// The suite's json-schema-2020-12 scenario checks these keywords survive tools/list.
const JSON_SCHEMA_2020_12 = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  type: 'object',
  $defs: {
    address: {
      $anchor: 'addressDef',
      type: 'object',
      properties: { street: { type: 'string' }, city: { type: 'string' } },
    },
  },
  properties: {
    name: { type: 'string' },
    address: { $ref: '#/$defs/address' },
    contactMethod: { type: 'string', enum: ['phone', 'email'] },
    phone: { type: 'string' },
    email: { type: 'string' },
  },
  allOf: [{ anyOf: [{ required: ['phone'] }, { required: ['email'] }] }],
  if: { properties: { contactMethod: { const: 'phone' } }, required: ['contactMethod'] },
  then: { required: ['phone'] },
  else: { required: ['email'] },
  additionalProperties: false,
} as const;

const text = (value: string): CallToolResult => ({ content: [{ type: 'text', text: value }] });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

// requestState is sealed per process: a state edited by the client, or minted by another process,
// fails verification and the SDK answers -32602 before any handler runs.
const stateCodec = createRequestStateCodec<{ round: number; name?: string }>({
  key: randomBytes(32),
});

const askName = (message = 'What is your name?'): InputRequest =>
  inputRequired.elicit({
    message,
    requestedSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
  });

/** Hooks the serving layer gives the definitions, so list-changed reaches every listener it has. */
interface ChangeHooks {
  toolsChanged(): void;
  promptsChanged(): void;
}

function defineTools(server: McpServer, changes: ChangeHooks): void {
  server.registerTool(
    'test_simple_text',
    { description: 'Returns simple text', inputSchema: noArguments },
    () => text('This is a simple text response for testing.'),
  );
  server.registerTool(
    'test_image_content',
    { description: 'Returns an image', inputSchema: noArguments },
    () => ({
      content: [{ type: 'image', data: RED_PIXEL_PNG, mimeType: 'image/png' }],
    }),
  );
  server.registerTool(
    'test_audio_content',
    { description: 'Returns audio', inputSchema: noArguments },
    () => ({
      content: [{ type: 'audio', data: SILENT_WAV, mimeType: 'audio/wav' }],
    }),
  );
  server.registerTool(
    'test_embedded_resource',
    { description: 'Returns an embedded resource', inputSchema: noArguments },
    () => ({
      content: [
        {
          type: 'resource',
          resource: {
            uri: 'test://embedded-resource',
            mimeType: 'text/plain',
            text: 'This is an embedded resource content.',
          },
        },
      ],
    }),
  );
  server.registerTool(
    'test_multiple_content_types',
    { description: 'Returns text, an image and a resource', inputSchema: noArguments },
    () => ({
      content: [
        { type: 'text', text: 'Multiple content types test:' },
        { type: 'image', data: RED_PIXEL_PNG, mimeType: 'image/png' },
        {
          type: 'resource',
          resource: {
            uri: 'test://mixed-content-resource',
            mimeType: 'application/json',
            text: JSON.stringify({ test: 'data', value: 123 }),
          },
        },
      ],
    }),
  );
  server.registerTool(
    'test_tool_with_logging',
    { description: 'Logs three messages while it runs', inputSchema: noArguments },
    async (_args, ctx) => {
      await ctx.mcpReq.log('info', 'Tool execution started');
      await sleep(50);
      await ctx.mcpReq.log('info', 'Tool processing data');
      await sleep(50);
      await ctx.mcpReq.log('info', 'Tool execution completed');
      return text('Tool with logging executed successfully');
    },
  );
  server.registerTool(
    'test_error_handling',
    { description: 'Always fails', inputSchema: noArguments },
    (): CallToolResult => ({
      isError: true,
      content: [{ type: 'text', text: 'This tool intentionally returns an error for testing' }],
    }),
  );
  server.registerTool(
    'test_tool_with_progress',
    { description: 'Reports progress 0, 50, 100 of 100', inputSchema: noArguments },
    async (_args, ctx) => {
      const progressToken = ctx.mcpReq._meta?.progressToken;
      for (const progress of [0, 50, 100]) {
        if (progressToken !== undefined) {
          await ctx.mcpReq.notify({
            method: 'notifications/progress',
            params: { progressToken, progress, total: 100 },
          });
        }
        // Also after the last one: without it an SDK v2 client on 2025-11-25 over stdio received
        // only the first two notifications.
        await sleep(50);
      }
      return text('Tool with progress executed successfully');
    },
  );
  server.registerTool(
    'test_sampling',
    {
      description: 'Asks the client to sample a message',
      inputSchema: fromJsonSchema<{ prompt: string }>({
        type: 'object',
        properties: { prompt: { type: 'string' } },
        required: ['prompt'],
      }),
    },
    ({ prompt }, ctx) => {
      const answer = inputResponse(ctx.mcpReq.inputResponses, 'sample');
      if (answer.kind !== 'sampling') {
        return inputRequired({
          inputRequests: {
            sample: inputRequired.createMessage({
              messages: [{ role: 'user', content: { type: 'text', text: prompt } }],
              maxTokens: 100,
            }),
          },
        });
      }
      const content = answer.result.content;
      const reply =
        !Array.isArray(content) && content.type === 'text' ? content.text : JSON.stringify(content);
      return text(`LLM response: ${reply}`);
    },
  );
  server.registerTool(
    'test_elicitation',
    {
      description: 'Asks the user for a username and an email',
      inputSchema: fromJsonSchema<{ message: string }>({
        type: 'object',
        properties: { message: { type: 'string' } },
        required: ['message'],
      }),
    },
    ({ message }, ctx) =>
      elicitOnce(
        ctx,
        message,
        {
          type: 'object',
          properties: {
            username: { type: 'string', description: "User's response" },
            email: { type: 'string', description: "User's email address" },
          },
          required: ['username', 'email'],
        },
        'User response',
      ),
  );
  server.registerTool(
    'test_elicitation_sep1034_defaults',
    { description: 'Elicits with a default for every primitive type', inputSchema: noArguments },
    (_args, ctx) =>
      elicitOnce(
        ctx,
        'Please review and update the form fields with defaults',
        {
          type: 'object',
          properties: {
            name: { type: 'string', description: 'User name', default: 'John Doe' },
            age: { type: 'integer', description: 'User age', default: 30 },
            score: { type: 'number', description: 'User score', default: 95.5 },
            status: {
              type: 'string',
              description: 'User status',
              enum: ['active', 'inactive', 'pending'],
              default: 'active',
            },
            verified: { type: 'boolean', description: 'Verification status', default: true },
          },
          required: [],
        },
        'Elicitation completed',
      ),
  );
  server.registerTool(
    'test_elicitation_sep1330_enums',
    { description: 'Elicits with all five enum variants', inputSchema: noArguments },
    (_args, ctx) =>
      elicitOnce(
        ctx,
        'Please select options from the enum fields',
        {
          type: 'object',
          properties: {
            untitledSingle: {
              type: 'string',
              description: 'Untitled single-select',
              enum: ['option1', 'option2', 'option3'],
            },
            titledSingle: {
              type: 'string',
              description: 'Titled single-select',
              oneOf: [
                { const: 'value1', title: 'First Option' },
                { const: 'value2', title: 'Second Option' },
                { const: 'value3', title: 'Third Option' },
              ],
            },
            legacyEnum: {
              type: 'string',
              description: 'Legacy titled enum',
              enum: ['opt1', 'opt2', 'opt3'],
              enumNames: ['Option One', 'Option Two', 'Option Three'],
            },
            untitledMulti: {
              type: 'array',
              description: 'Untitled multi-select',
              items: { type: 'string', enum: ['option1', 'option2', 'option3'] },
            },
            titledMulti: {
              type: 'array',
              description: 'Titled multi-select',
              items: {
                anyOf: [
                  { const: 'value1', title: 'First Choice' },
                  { const: 'value2', title: 'Second Choice' },
                  { const: 'value3', title: 'Third Choice' },
                ],
              },
            },
          },
          required: [],
        },
        'Elicitation completed',
      ),
  );
  server.registerTool(
    'json_schema_2020_12_tool',
    {
      description: 'Tool with JSON Schema 2020-12 features',
      inputSchema: fromJsonSchema(JSON_SCHEMA_2020_12),
    },
    () => text('ok'),
  );
  defineInputRequiredTools(server);
  // test_missing_capability is refused before dispatch (see refuseUndeclaredSampling); listed here
  // so tools/list names it.
  server.registerTool(
    'test_missing_capability',
    { description: 'Needs the client to declare sampling', inputSchema: noArguments },
    () => text('the client declared sampling'),
  );
  server.registerTool(
    'test_logging_tool',
    { description: 'Logs at info; silent unless the request set a log level', inputSchema: noArguments },
    async (_args, ctx) => {
      await ctx.mcpReq.log('info', 'test_logging_tool ran');
      return text('logged');
    },
  );
  server.registerTool(
    'test_streaming_elicitation',
    { description: 'Asks for a name through an input-required result', inputSchema: noArguments },
    (_args, ctx) => {
      const answer = inputResponse(ctx.mcpReq.inputResponses, 'user_name');
      if (answer.kind !== 'elicit') return inputRequired({ inputRequests: { user_name: askName() } });
      return text('thanks');
    },
  );
  server.registerTool(
    'test_trigger_tool_change',
    { description: 'Announces that the tool list changed', inputSchema: noArguments },
    () => {
      changes.toolsChanged();
      return text('tools/list_changed sent');
    },
  );
  server.registerTool(
    'test_trigger_prompt_change',
    { description: 'Announces that the prompt list changed', inputSchema: noArguments },
    () => {
      changes.promptsChanged();
      return text('prompts/list_changed sent');
    },
  );
}

type ElicitSchema = Parameters<typeof inputRequired.elicit>[0]['requestedSchema'];

/** One elicitation round: ask with `schema`, then report what the user did as `<label>: action=…`. */
function elicitOnce(ctx: ServerContext, message: string, schema: Record<string, unknown>, label: string) {
  const answer = inputResponse(ctx.mcpReq.inputResponses, 'form');
  if (answer.kind !== 'elicit') {
    return inputRequired({
      inputRequests: { form: inputRequired.elicit({ message, requestedSchema: schema as ElicitSchema }) },
    });
  }
  return text(`${label}: action=${answer.action}, content=${JSON.stringify(answer.content ?? {})}`);
}

type DispatchHandler = (request: { params?: { name?: unknown } }, ctx: ServerContext) => Promise<unknown>;

/**
 * McpServer turns anything a tool callback throws into an `isError` result, but a missing client
 * capability must be the protocol error -32021, so the refusal wraps the dispatch entry McpServer's
 * constructor registered for tools/call (the SDK has no public hook before tool dispatch).
 */
function refuseUndeclaredSampling(server: McpServer): void {
  const handlers = (server.server as unknown as { _requestHandlers?: Map<string, DispatchHandler> })
    ._requestHandlers;
  const dispatch = handlers?.get('tools/call');
  if (!handlers || !dispatch)
    throw new Error('reference-upstream: the SDK no longer keeps a tools/call handler to wrap');
  handlers.set('tools/call', (request, ctx) => {
    const needsSampling = request.params?.name === 'test_missing_capability';
    if (needsSampling && ctx.mcpReq.envelope && !clientCapabilities(ctx)?.sampling) {
      throw new MissingRequiredClientCapabilityError({ requiredCapabilities: { sampling: {} } });
    }
    return dispatch(request, ctx);
  });
}

function clientCapabilities(ctx: ServerContext): Record<string, unknown> | undefined {
  const envelope = ctx.mcpReq.envelope as Record<string, unknown> | undefined;
  return envelope?.[CLIENT_CAPABILITIES_META_KEY] as Record<string, unknown> | undefined;
}

function defineInputRequiredTools(server: McpServer): void {
  server.registerTool(
    'test_input_required_result_elicitation',
    { description: 'Asks for a name, then greets', inputSchema: noArguments },
    (_args, ctx) => {
      const answer = inputResponse(ctx.mcpReq.inputResponses, 'user_name');
      const name = answer.kind === 'elicit' ? answer.content?.name : undefined;
      if (typeof name !== 'string') return inputRequired({ inputRequests: { user_name: askName() } });
      return text(`Hello, ${name}!`);
    },
  );
  server.registerTool(
    'test_input_required_result_sampling',
    { description: 'Asks the client to sample an answer', inputSchema: noArguments },
    (_args, ctx) => {
      const answer = inputResponse(ctx.mcpReq.inputResponses, 'capital_question');
      if (answer.kind !== 'sampling') {
        return inputRequired({
          inputRequests: {
            capital_question: inputRequired.createMessage({
              messages: [{ role: 'user', content: { type: 'text', text: 'What is the capital of France?' } }],
              maxTokens: 100,
            }),
          },
        });
      }
      const content = answer.result.content;
      return text(
        `Sampling answer: ${!Array.isArray(content) && content.type === 'text' ? content.text : '?'}`,
      );
    },
  );
  server.registerTool(
    'test_input_required_result_list_roots',
    { description: "Asks for the client's roots", inputSchema: noArguments },
    (_args, ctx) => {
      const answer = inputResponse(ctx.mcpReq.inputResponses, 'client_roots');
      if (answer.kind !== 'roots') {
        return inputRequired({ inputRequests: { client_roots: inputRequired.listRoots() } });
      }
      return text(`Roots: ${answer.roots.map((root) => root.uri).join(', ') || '(none)'}`);
    },
  );
  server.registerTool(
    'test_input_required_result_request_state',
    { description: 'Round-trips a sealed requestState', inputSchema: noArguments },
    async (_args, ctx) => {
      const state = ctx.mcpReq.requestState<{ round: number }>();
      const answer = inputResponse(ctx.mcpReq.inputResponses, 'confirm');
      if (state?.round === 1 && answer.kind === 'elicit') return text('state-ok: confirmed');
      return inputRequired({
        inputRequests: {
          confirm: inputRequired.elicit({
            message: 'Please confirm',
            requestedSchema: { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] },
          }),
        },
        requestState: await stateCodec.mint({ round: 1 }),
      });
    },
  );
  server.registerTool(
    'test_input_required_result_multiple_inputs',
    { description: 'Asks for an elicitation, a sample and the roots at once', inputSchema: noArguments },
    async (_args, ctx) => {
      const responses = ctx.mcpReq.inputResponses;
      const complete =
        ctx.mcpReq.requestState<{ round: number }>()?.round === 1 &&
        inputResponse(responses, 'user_name').kind === 'elicit' &&
        inputResponse(responses, 'greeting').kind === 'sampling' &&
        inputResponse(responses, 'client_roots').kind === 'roots';
      if (complete) return text('All inputs received');
      return inputRequired({
        inputRequests: {
          user_name: askName(),
          greeting: inputRequired.createMessage({
            messages: [{ role: 'user', content: { type: 'text', text: 'Generate a greeting' } }],
            maxTokens: 50,
          }),
          client_roots: inputRequired.listRoots(),
        },
        requestState: await stateCodec.mint({ round: 1 }),
      });
    },
  );
  server.registerTool(
    'test_input_required_result_multi_round',
    { description: 'Asks twice, carrying state between rounds', inputSchema: noArguments },
    async (_args, ctx) => {
      const state = ctx.mcpReq.requestState<{ round: number; name?: string }>();
      const responses = ctx.mcpReq.inputResponses;
      if (state?.round === 2) {
        const color = inputResponse(responses, 'step2');
        if (color.kind === 'elicit' && typeof color.content?.color === 'string') {
          return text(`Done: ${state.name ?? '?'} likes ${color.content.color}`);
        }
      }
      if (state?.round === 1) {
        const name = inputResponse(responses, 'step1');
        if (name.kind === 'elicit' && typeof name.content?.name === 'string') {
          return inputRequired({
            inputRequests: {
              step2: inputRequired.elicit({
                message: 'Step 2: What is your favorite color?',
                requestedSchema: {
                  type: 'object',
                  properties: { color: { type: 'string' } },
                  required: ['color'],
                },
              }),
            },
            requestState: await stateCodec.mint({ round: 2, name: name.content.name }),
          });
        }
      }
      return inputRequired({
        inputRequests: { step1: askName('Step 1: What is your name?') },
        requestState: await stateCodec.mint({ round: 1 }),
      });
    },
  );
  server.registerTool(
    'test_input_required_result_tampered_state',
    { description: 'Rejects a requestState that was edited', inputSchema: noArguments },
    async (_args, ctx) => {
      if (ctx.mcpReq.requestState<{ round: number }>()?.round === 1) return text('state verified');
      return inputRequired({
        inputRequests: { user_name: askName() },
        requestState: await stateCodec.mint({ round: 1 }),
      });
    },
  );
  server.registerTool(
    'test_input_required_result_capabilities',
    { description: 'Asks only for what the client declared', inputSchema: noArguments },
    (_args, ctx) => {
      const declared = clientCapabilities(ctx) ?? {};
      const responses = ctx.mcpReq.inputResponses;
      if (responses && Object.keys(responses).length > 0) return text('inputs received');
      const inputRequests: Record<string, InputRequest> = {};
      if (declared.elicitation) inputRequests.user_name = askName();
      if (declared.sampling) {
        inputRequests.greeting = inputRequired.createMessage({
          messages: [{ role: 'user', content: { type: 'text', text: 'Generate a greeting' } }],
          maxTokens: 50,
        });
      }
      if (declared.roots) inputRequests.client_roots = inputRequired.listRoots();
      if (Object.keys(inputRequests).length === 0) return text('the client declared nothing to ask with');
      return inputRequired({ inputRequests });
    },
  );
}

function defineResources(server: McpServer): void {
  server.registerResource(
    'static-text',
    'test://static-text',
    { description: 'A static text resource', mimeType: 'text/plain' },
    (uri) => ({
      contents: [
        { uri: uri.href, mimeType: 'text/plain', text: 'This is the content of the static text resource.' },
      ],
    }),
  );
  server.registerResource(
    'static-binary',
    'test://static-binary',
    { description: 'A static binary resource', mimeType: 'image/png' },
    (uri) => ({ contents: [{ uri: uri.href, mimeType: 'image/png', blob: RED_PIXEL_PNG }] }),
  );
  server.registerResource(
    'watched-resource',
    'test://watched-resource',
    { description: 'A resource clients subscribe to', mimeType: 'text/plain' },
    (uri) => ({ contents: [{ uri: uri.href, mimeType: 'text/plain', text: 'Watched resource content.' }] }),
  );
  server.registerResource(
    'template-data',
    new ResourceTemplate('test://template/{id}/data', { list: undefined }),
    { description: 'Data for an id', mimeType: 'application/json' },
    (uri, { id }) => ({
      contents: [
        {
          uri: uri.href,
          mimeType: 'application/json',
          text: JSON.stringify({ id: String(id), templateTest: true, data: `Data for ID: ${String(id)}` }),
        },
      ],
    }),
  );
  // Subscriptions are per connection; the fixture only has to acknowledge them.
  const subscribed = new Set<string>();
  server.server.setRequestHandler('resources/subscribe', (request) => {
    subscribed.add(request.params.uri);
    return {};
  });
  server.server.setRequestHandler('resources/unsubscribe', (request) => {
    subscribed.delete(request.params.uri);
    return {};
  });
}

function definePrompts(server: McpServer): void {
  server.registerPrompt('test_simple_prompt', { description: 'A prompt without arguments' }, () => ({
    messages: [{ role: 'user', content: { type: 'text', text: 'This is a simple prompt for testing.' } }],
  }));
  server.registerPrompt(
    'test_prompt_with_arguments',
    {
      description: 'A prompt with two arguments',
      argsSchema: fromJsonSchema<{ arg1: string; arg2: string }>({
        type: 'object',
        properties: {
          arg1: { type: 'string', description: 'First test argument' },
          arg2: { type: 'string', description: 'Second test argument' },
        },
        required: ['arg1', 'arg2'],
      }),
    },
    ({ arg1, arg2 }) => ({
      messages: [
        {
          role: 'user',
          content: { type: 'text', text: `Prompt with arguments: arg1='${arg1}', arg2='${arg2}'` },
        },
      ],
    }),
  );
  server.registerPrompt(
    'test_prompt_with_embedded_resource',
    {
      description: 'A prompt embedding a resource',
      argsSchema: fromJsonSchema<{ resourceUri: string }>({
        type: 'object',
        properties: { resourceUri: { type: 'string', description: 'URI of the resource to embed' } },
        required: ['resourceUri'],
      }),
    },
    ({ resourceUri }): GetPromptResult => ({
      messages: [
        {
          role: 'user',
          content: {
            type: 'resource',
            resource: {
              uri: resourceUri,
              mimeType: 'text/plain',
              text: 'Embedded resource content for testing.',
            },
          },
        },
        { role: 'user', content: { type: 'text', text: 'Please process the embedded resource above.' } },
      ],
    }),
  );
  // Completion for both prompt arguments and the template's id, from fixed lists.
  const suggestions = ['paris', 'park', 'party', 'hello', 'world', '123'];
  server.server.setRequestHandler('completion/complete', (request) => {
    const typed = request.params.argument.value;
    const values = suggestions.filter((value) => value.startsWith(typed));
    return { completion: { values, total: values.length, hasMore: false } };
  });
  server.registerPrompt('test_prompt_with_image', { description: 'A prompt with an image' }, () => ({
    messages: [
      { role: 'user', content: { type: 'image', data: RED_PIXEL_PNG, mimeType: 'image/png' } },
      { role: 'user', content: { type: 'text', text: 'Please analyze the image above.' } },
    ],
  }));
  server.registerPrompt(
    'test_input_required_result_prompt',
    { description: 'A prompt that asks for context first' },
    (ctx): GetPromptResult | ReturnType<typeof inputRequired> => {
      const answer = inputResponse(ctx.mcpReq.inputResponses, 'user_context');
      const context = answer.kind === 'elicit' ? answer.content?.context : undefined;
      if (typeof context !== 'string') {
        return inputRequired({
          inputRequests: {
            user_context: inputRequired.elicit({
              message: 'What context should the prompt use?',
              requestedSchema: {
                type: 'object',
                properties: { context: { type: 'string' } },
                required: ['context'],
              },
            }),
          },
        });
      }
      return { messages: [{ role: 'user', content: { type: 'text', text: `Context: ${context}` } }] };
    },
  );
}

/** One server instance with every definition; the SDK asks for one per request (HTTP) or connection (stdio). */
export function referenceServer(changes: ChangeHooks, _ctx?: McpRequestContext): McpServer {
  const server = new McpServer(
    { name: 'toolgate-conformance-reference', version: '1.0.0' },
    {
      capabilities: {
        tools: { listChanged: true },
        resources: { subscribe: true, listChanged: true },
        prompts: { listChanged: true },
        logging: {},
        completions: {},
      },
      instructions: 'The reference upstream for the MCP conformance suite.',
      requestState: { verify: stateCodec.verify },
    },
  );
  refuseUndeclaredSampling(server);
  defineTools(server, changes);
  defineResources(server);
  definePrompts(server);
  return server;
}

async function serveHttp(port: number): Promise<void> {
  const legacySessions = new Map<string, WebStandardStreamableHTTPServerTransport>();
  const legacyServers = new Set<McpServer>();
  const changes: ChangeHooks = {
    toolsChanged: () => {
      modern.notify.toolsChanged();
      for (const server of legacyServers) server.sendToolListChanged();
    },
    promptsChanged: () => {
      modern.notify.promptsChanged();
      for (const server of legacyServers) server.sendPromptListChanged();
    },
  };
  const modern = createMcpHandler((ctx) => referenceServer(changes, ctx), { legacy: 'reject' });

  // 2025-11-25 traffic keeps sessions (sampling and elicitation answers come back on another POST).
  async function legacy(request: Request): Promise<Response> {
    const sessionId = request.headers.get('mcp-session-id');
    if (sessionId) {
      const transport = legacySessions.get(sessionId);
      if (!transport) {
        return Response.json(
          { jsonrpc: '2.0', id: null, error: { code: -32001, message: 'Session not found' } },
          { status: 404 },
        );
      }
      return transport.handleRequest(request);
    }
    const server = referenceServer(changes);
    const transport: WebStandardStreamableHTTPServerTransport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        legacySessions.set(id, transport);
      },
    });
    transport.onclose = () => {
      if (transport.sessionId) legacySessions.delete(transport.sessionId);
      legacyServers.delete(server);
    };
    legacyServers.add(server);
    await server.connect(transport);
    return transport.handleRequest(request);
  }

  async function handle(request: Request): Promise<Response> {
    if (new URL(request.url).pathname !== '/mcp') return new Response('not found', { status: 404 });
    const refused = hostHeaderValidationResponse(request, localhostAllowedHostnames());
    if (refused) return refused;
    return (await isLegacyRequest(request)) ? legacy(request) : modern.fetch(request);
  }

  const http = createServer((req, res) => {
    void toWebRequest(req, res)
      .then(handle)
      .then((response) => sendWebResponse(response, res))
      .catch((error: unknown) => {
        process.stderr.write(
          `reference-upstream: ${error instanceof Error ? error.message : String(error)}\n`,
        );
        if (!res.headersSent) res.writeHead(500);
        res.end();
      });
  });
  await new Promise<void>((resolve) => http.listen(port, '127.0.0.1', resolve));
  const address = http.address();
  const bound = typeof address === 'object' && address ? address.port : port;
  process.stdout.write(`listening http://127.0.0.1:${bound}/mcp\n`);
  const stop = () => {
    http.closeAllConnections();
    http.close(() => process.exit(0));
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

async function toWebRequest(req: IncomingMessage, res: ServerResponse): Promise<Request> {
  const chunks: Buffer[] = [];
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    for await (const chunk of req) chunks.push(chunk as Buffer);
  }
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (Array.isArray(value)) for (const each of value) headers.append(name, each);
    else if (value !== undefined) headers.set(name, value);
  }
  const abort = new AbortController();
  // The exchange ends when its response closes (a keep-alive socket outlives many of them).
  res.once('close', () => abort.abort());
  return new Request(`http://${req.headers.host ?? 'localhost'}${req.url ?? '/'}`, {
    method: req.method ?? 'GET',
    headers,
    body: chunks.length > 0 ? Buffer.concat(chunks) : null,
    signal: abort.signal,
  });
}

async function sendWebResponse(response: Response, res: ServerResponse): Promise<void> {
  const headers: Record<string, string | string[]> = {};
  response.headers.forEach((value, name) => {
    headers[name] = value;
  });
  res.writeHead(response.status, headers);
  if (!response.body) {
    res.end();
    return;
  }
  res.flushHeaders();
  const reader = response.body.getReader();
  res.once('close', () => void reader.cancel().catch(() => undefined));
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    res.write(value);
  }
  res.end();
}

function main(argv: string[]): void {
  if (argv.includes('--stdio')) {
    let connection: McpServer | undefined;
    serveStdio(() => {
      connection = referenceServer({
        toolsChanged: () => connection?.sendToolListChanged(),
        promptsChanged: () => connection?.sendPromptListChanged(),
      });
      return connection;
    });
    return;
  }
  if (argv.includes('--http')) {
    const at = argv.indexOf('--port');
    const port = at >= 0 ? Number(argv[at + 1]) : 0;
    if (!Number.isInteger(port) || port < 0 || port > 65535) {
      process.stderr.write(
        `reference-upstream: --port needs a number from 0 to 65535, got ${argv[at + 1]}\n`,
      );
      process.exit(2);
    }
    void serveHttp(port);
    return;
  }
  process.stderr.write('usage: reference-upstream.ts --stdio | --http [--port N]\n');
  process.exit(2);
}

main(process.argv.slice(2));
