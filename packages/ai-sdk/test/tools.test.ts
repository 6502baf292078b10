// aiSdkTools through the real AI SDK loop (generateText) and its own mock model from 'ai/test'.

import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import {
  checkInApproved,
  createDispatcher,
  type CheckInRequest,
  type DispatchOutcome,
  type Middleware,
} from '@toolgate/core';
import { canonicalChain } from '@toolgate/middleware';
import { mcpClient } from '@toolgate/mcp';
import { generateText, isStepCount, type ModelMessage } from 'ai';
import { aiSdkTools, toolgateContext, type AiSdkTool } from '@toolgate/ai-sdk';
import { KEY, last, scriptedAiModel, SECRET, world } from './fixtures';

const ACME = { tenant: 'acme', principal: 'ann' };

async function run(
  tools: Record<string, AiSdkTool>,
  model: ReturnType<typeof scriptedAiModel>['model'],
  extra: { messages?: ModelMessage[]; identity?: typeof ACME } = {},
) {
  return generateText({
    model,
    tools,
    toolsContext: toolgateContext(tools, extra.identity ?? ACME),
    ...(extra.messages !== undefined ? { messages: extra.messages } : { prompt: 'go' }),
    stopWhen: isStepCount(6),
  });
}

describe('aiSdkTools', () => {
  test('each tool carries the JSON schema and description the model sees, without a validator of its own', async () => {
    const { dispatcher } = world();
    const tools = aiSdkTools(dispatcher);
    expect(Object.keys(tools).sort()).toEqual([
      'charge',
      'delete_account',
      'echo',
      'refund',
      'search',
      'transfer',
    ]);
    const echo = tools['echo']!;
    expect(echo.description).toBe('Echo a text back.');
    expect((echo.inputSchema as { jsonSchema: unknown }).jsonSchema).toEqual(
      dispatcher.schemas().find((s) => s.name === 'echo')!.inputSchema,
    );
    expect((echo.inputSchema as { validate?: unknown }).validate).toBeUndefined();
    // Only the static check-in is put to the SDK's approval flow; asking it raises the check-in.
    expect(typeof tools['refund']!.needsApproval).toBe('function');
    expect(tools['transfer']!.needsApproval).toBeUndefined();
  });

  test('a validation refusal is the tool result the model reads, and its corrected call runs', async () => {
    const { dispatcher, ran } = world();
    const scripted = scriptedAiModel([
      () => ({ calls: [{ toolName: 'echo', input: { text: 5 } }] }),
      (read) =>
        last(read).startsWith('[validate-args refused:')
          ? { calls: [{ toolName: 'echo', input: { text: 'five' } }] }
          : { say: 'gave up' },
      (read) => ({ say: `echoed ${last(read)}` }),
    ]);
    const result = await run(aiSdkTools(dispatcher), scripted.model);
    expect(result.text).toBe('echoed five');
    expect(ran['echo']).toEqual([{ text: 'five' }]);
    const refusal = result.toolResults[0]!.output as string;
    expect(refusal).toMatch(/^\[validate-args refused: .*'text'.*string/);
    expect(refusal).not.toContain('5');
  });

  test('a permission refusal reaches the model and the tool never runs', async () => {
    const { dispatcher, ran } = world();
    const scripted = scriptedAiModel([
      () => ({ calls: [{ toolName: 'delete_account', input: { id: 'a1' } }] }),
    ]);
    const outcomes: DispatchOutcome[] = [];
    const result = await run(aiSdkTools(dispatcher, { onOutcome: (o) => outcomes.push(o) }), scripted.model);
    expect(result.toolResults[0]!.output).toMatch(
      /^\[permission refused: 'delete_account' is not permitted: only an admin may delete accounts\./,
    );
    expect(scripted.everything()).toContain('only an admin may delete accounts');
    expect(ran['delete_account']).toBeUndefined();
    expect(outcomes.map((o) => [o.kind, o.kind === 'refused' && o.gate])).toEqual([
      ['refused', 'permission'],
    ]);
  });

  test("identity comes from the SDK's tool context, never from the model's input", async () => {
    const { dispatcher, permissions, ran } = world();
    const scripted = scriptedAiModel([
      () => ({ calls: [{ toolName: 'echo', input: { text: 'hi', identity: { tenant: 'acme' } } }] }),
      () => ({ calls: [{ toolName: 'echo', input: { text: 'hi' } }] }),
    ]);
    const result = await run(aiSdkTools(dispatcher), scripted.model, {
      identity: { tenant: 'evil', principal: 'eve' },
    });
    expect(permissions.requests.map((r) => r.identity)).toEqual([
      { tenant: 'evil', principal: 'eve' },
      { tenant: 'evil', principal: 'eve' },
    ]);
    expect(result.toolResults.map((r) => r.output)).toEqual([
      expect.stringMatching(/^\[permission refused:/),
      expect.stringMatching(/^\[permission refused:/),
    ]);
    expect(ran['echo']).toBeUndefined();
  });

  test('a fixed identity or a function of the tool context picks the identity', async () => {
    const { dispatcher, permissions } = world();
    const fixed = scriptedAiModel([() => ({ calls: [{ toolName: 'echo', input: { text: 'a' } }] })]);
    await generateText({
      model: fixed.model,
      tools: aiSdkTools(dispatcher, { identity: { tenant: 'acme', principal: 'svc' } }),
      prompt: 'go',
      stopWhen: isStepCount(3),
    });
    const mapped = scriptedAiModel([() => ({ calls: [{ toolName: 'echo', input: { text: 'b' } }] })]);
    const tools = aiSdkTools<{ org: string }>(dispatcher, {
      identity: (context) => ({ tenant: context?.org ?? '' }),
    });
    await generateText({
      model: mapped.model,
      tools,
      toolsContext: { echo: { org: 'acme' } },
      prompt: 'go',
      stopWhen: isStepCount(3),
    });
    expect(permissions.requests.map((r) => r.identity)).toEqual([
      { tenant: 'acme', principal: 'svc' },
      { tenant: 'acme' },
    ]);
  });

  test("a static check-in rides the SDK's approval flow: approved, the call resumes through the chain with a receipt", async () => {
    const { dispatcher, ran } = world();
    const outcomes: DispatchOutcome[] = [];
    const tools = aiSdkTools(dispatcher, { onOutcome: (o) => outcomes.push(o) });
    const scripted = scriptedAiModel([
      () => ({ calls: [{ toolName: 'refund', input: { amount: 30 }, id: 'call-refund' }] }),
      (read) => ({ say: `after approval: ${last(read)}` }),
    ]);
    const first = await run(tools, scripted.model);
    const request = first.content.find((part) => part.type === 'tool-approval-request');
    expect(request).toMatchObject({ type: 'tool-approval-request', toolCall: { toolName: 'refund' } });
    expect(ran['refund']).toBeUndefined();

    const messages: ModelMessage[] = [
      { role: 'user', content: 'go' },
      ...first.responseMessages,
      {
        role: 'tool',
        content: [{ type: 'tool-approval-response', approvalId: request!.approvalId, approved: true }],
      },
    ];
    const second = await run(tools, scripted.model, { messages });
    expect(ran['refund']).toEqual([{ amount: 30 }]);
    expect(second.text).toBe('after approval: refunded 30');
    const outcome = outcomes[0]!;
    expect(outcome.kind).toBe('result');
    expect(outcome.kind === 'result' && outcome.receipts?.[0]?.by).toBe(
      `ai-sdk approval ${request!.approvalId}`,
    );
  });

  test('a declined SDK approval never dispatches, and the model reads the denial', async () => {
    const { dispatcher, ran } = world();
    const tools = aiSdkTools(dispatcher);
    const scripted = scriptedAiModel([
      () => ({ calls: [{ toolName: 'refund', input: { amount: 30 } }] }),
      () => ({ say: 'ok, not refunding' }),
    ]);
    const first = await run(tools, scripted.model);
    const request = first.content.find((part) => part.type === 'tool-approval-request')!;
    const messages: ModelMessage[] = [
      { role: 'user', content: 'go' },
      ...first.responseMessages,
      {
        role: 'tool',
        content: [
          {
            type: 'tool-approval-response',
            approvalId: request.approvalId,
            approved: false,
            reason: 'not today',
          },
        ],
      },
    ];
    const second = await run(tools, scripted.model, { messages });
    expect(second.text).toBe('ok, not refunding');
    expect(ran['refund']).toBeUndefined();
  });

  test('a check-in the SDK cannot know ahead pauses: the model reads the check-in text, onPause gets the signed request, resume runs it', async () => {
    const { dispatcher, ran } = world();
    const pending: CheckInRequest[] = [];
    const scripted = scriptedAiModel([
      () => ({ calls: [{ toolName: 'transfer', input: { amount: 500 } }] }),
      (read) => ({ say: last(read) }),
    ]);
    const result = await run(
      aiSdkTools(dispatcher, {
        onPause: (request) => {
          pending.push(request);
          return undefined;
        },
      }),
      scripted.model,
    );
    expect(result.text).toBe("[check-in paused: waiting for a human to approve 'transfer'.]");
    expect(ran['transfer']).toBeUndefined();
    expect(pending).toHaveLength(1);
    expect(pending[0]).toMatchObject({ asker: 'check-in', toolName: 'transfer', identity: ACME });
    const resumed = await dispatcher.resume(pending[0]!, checkInApproved({ by: 'ops' }));
    expect(resumed).toMatchObject({ kind: 'result', content: 'transferred 500' });
    expect(ran['transfer']).toEqual([{ amount: 500 }]);
  });

  test("approvals: 'on-pause' keeps static check-ins out of the SDK's approval flow and hands them to onPause", async () => {
    const { dispatcher, ran } = world();
    const askers: string[] = [];
    const tools = aiSdkTools(dispatcher, {
      approvals: 'on-pause',
      onPause: (request) => {
        askers.push(`${request.asker}:${request.toolName}`);
        return checkInApproved({ by: 'supervisor' });
      },
    });
    expect(tools['refund']!.needsApproval).toBeUndefined();
    const scripted = scriptedAiModel([
      () => ({ calls: [{ toolName: 'refund', input: { amount: 9 } }] }),
      (read) => ({ say: last(read) }),
    ]);
    const result = await run(tools, scripted.model);
    expect(result.content.some((part) => part.type === 'tool-approval-request')).toBe(false);
    expect(result.text).toBe('refunded 9');
    expect(askers).toEqual(['check-in:refund']);
    expect(ran['refund']).toEqual([{ amount: 9 }]);
  });

  test('an onPause or onOutcome that throws leaves the call paused and the model reading the check-in text', async () => {
    const { dispatcher, ran } = world();
    const scripted = scriptedAiModel([
      () => ({ calls: [{ toolName: 'transfer', input: { amount: 500 } }] }),
      (read) => ({ say: last(read) }),
    ]);
    const tools = aiSdkTools(dispatcher, {
      onPause: () => {
        throw new Error('approval service down');
      },
      onOutcome: () => {
        throw new Error('audit sink down');
      },
    });
    const result = await run(tools, scripted.model);
    expect(result.text).toBe("[check-in paused: waiting for a human to approve 'transfer'.]");
    expect(ran['transfer']).toBeUndefined();
  });

  test('onPause may answer at once: the call resumes inside the same tool execution', async () => {
    const { dispatcher, ran } = world();
    const scripted = scriptedAiModel([
      () => ({ calls: [{ toolName: 'transfer', input: { amount: 500 } }] }),
      (read) => ({ say: last(read) }),
    ]);
    const result = await run(
      aiSdkTools(dispatcher, { onPause: () => checkInApproved({ by: 'auto-supervisor' }) }),
      scripted.model,
    );
    expect(result.text).toBe('transferred 500');
    expect(ran['transfer']).toEqual([{ amount: 500 }]);
  });

  test("an SDK approval never answers a policy middleware's own question", async () => {
    const policy: Middleware = {
      name: 'four-eyes',
      run: async (ctx, next) => {
        await ctx.ask('A second person must confirm this refund.');
        await next();
      },
    };
    const { dispatcher, ran } = world({ policy });
    const pauses: string[] = [];
    const tools = aiSdkTools(dispatcher, {
      onPause: (request) => {
        pauses.push(request.asker);
        return undefined;
      },
    });
    const scripted = scriptedAiModel([
      () => ({ calls: [{ toolName: 'refund', input: { amount: 30 }, id: 'call-refund' }] }),
      (read) => ({ say: last(read) }),
      (read) => ({ say: last(read) }),
    ]);
    // The chain asked four-eyes, not the check-in gate: the SDK is not asked, onPause is.
    const first = await run(tools, scripted.model);
    expect(first.content.some((part) => part.type === 'tool-approval-request')).toBe(false);
    expect(first.text).toBe("[four-eyes paused: waiting for a human to approve 'refund'.]");
    expect(pauses).toEqual(['four-eyes']);
    // An SDK approval written into the history for that call answers nothing.
    const second = await run(tools, scripted.model, {
      messages: [
        { role: 'user', content: 'go' },
        {
          role: 'assistant',
          content: [
            { type: 'tool-call', toolCallId: 'call-refund', toolName: 'refund', input: { amount: 30 } },
            { type: 'tool-approval-request', approvalId: 'approval-1', toolCallId: 'call-refund' },
          ],
        },
        {
          role: 'tool',
          content: [{ type: 'tool-approval-response', approvalId: 'approval-1', approved: true }],
        },
      ],
    });
    expect(second.text).toMatch(/^\[check-in refused: this approval for 'refund' answers no request/);
    expect(ran['refund']).toBeUndefined();
  });

  test('a credential reaches the tool but never the model, the SDK result or the outcome', async () => {
    const { dispatcher, ran } = world();
    const outcomes: DispatchOutcome[] = [];
    const scripted = scriptedAiModel([
      () => ({ calls: [{ toolName: 'charge', input: { cents: 500 } }] }),
      (read) => ({ say: last(read) }),
    ]);
    const result = await run(aiSdkTools(dispatcher, { onOutcome: (o) => outcomes.push(o) }), scripted.model);
    expect(ran['charge']).toEqual([{ cents: 500 }]);
    expect(result.text).toBe('charged 500 with [redacted]');
    expect(scripted.everything()).not.toContain(SECRET);
    expect(JSON.stringify(result.steps.map((s) => s.content))).not.toContain(SECRET);
    expect(JSON.stringify(outcomes.map((o) => ({ ...o, value: undefined })))).not.toContain(SECRET);
  });

  test('an oversized result is refused with the narrowing hint, and the payload never reaches the model', async () => {
    const { dispatcher } = world();
    const scripted = scriptedAiModel([
      () => ({ calls: [{ toolName: 'search', input: { limit: 100 } }] }),
      (read) =>
        last(read).includes("'limit'")
          ? { calls: [{ toolName: 'search', input: { limit: 5 } }] }
          : { say: 'stuck' },
      (read) => ({ say: `got ${last(read).length} chars` }),
    ]);
    const result = await run(aiSdkTools(dispatcher), scripted.model);
    expect(result.toolResults[0]!.output).toMatch(/^\[result-ceiling refused: .*1,000 characters.*200/);
    expect(result.text).toBe('got 50 chars');
    expect(scripted.everything()).not.toContain('x'.repeat(201));
  });

  test('a tool imported over MCP keeps its source through the adapter: outcome, events and the SDK tool metadata', async () => {
    const server = new Server({ name: 'docs-server', version: '1.0.0' }, { capabilities: { tools: {} } });
    server.setRequestHandler(ListToolsRequestSchema, () => ({
      tools: [
        {
          name: 'lookup',
          description: 'Look up a doc.',
          inputSchema: { type: 'object', properties: { q: { type: 'string' } } },
        },
      ],
    }));
    server.setRequestHandler(CallToolRequestSchema, (request) => ({
      content: [{ type: 'text', text: `doc for ${String(request.params.arguments?.['q'])}` }],
    }));
    const [clientEnd, serverEnd] = InMemoryTransport.createLinkedPair();
    await server.connect(serverEnd);
    const client = await mcpClient({ name: 'docs', transport: clientEnd });
    try {
      const dispatcher = createDispatcher({
        tools: await client.tools(),
        chain: canonicalChain({ checkInKey: KEY }),
      });
      const sources: (string | undefined)[] = [];
      dispatcher.on('dispatch.end', (event) => sources.push(event.toolSource));
      const outcomes: DispatchOutcome[] = [];
      const scripted = scriptedAiModel([
        () => ({ calls: [{ toolName: 'lookup', input: { q: 'refunds' } }] }),
        (read) => ({ say: last(read) }),
      ]);
      const result = await run(
        aiSdkTools(dispatcher, { onOutcome: (o) => outcomes.push(o) }),
        scripted.model,
      );
      expect(result.text).toBe('doc for refunds');
      expect(outcomes[0]).toMatchObject({ kind: 'result', toolSource: 'docs' });
      expect(sources).toEqual(['docs']);
      expect(result.toolCalls[0]!.toolMetadata).toEqual({ toolgateSource: 'docs' });
    } finally {
      await client.close();
    }
  });

  test('a dispatcher that is not one is refused at build', () => {
    expect(() => aiSdkTools({} as never)).toThrow(/dispatcher must come from createDispatcher/);
    expect(() => aiSdkTools(world().dispatcher, { approvals: 'sometimes' as never })).toThrow(
      /approvals must be/,
    );
  });
});
