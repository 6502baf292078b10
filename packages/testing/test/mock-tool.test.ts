import { assertTool, checkInApproved, createDispatcher, ToolDefinitionError } from '@toolgate/core';
import { canonicalChain } from '@toolgate/middleware';
import { inMemoryArtifacts, mockTool, staticCredentials } from '@toolgate/testing';
import { Type } from 'typebox';

describe('mockTool', () => {
  it('is a valid Tool with an open object schema by default', () => {
    const tool = mockTool({ name: 'search' });
    expect(() => assertTool(tool)).not.toThrow();
    expect(tool.schema).toEqual({
      name: 'search',
      description: "mock tool 'search'",
      inputSchema: { type: 'object', additionalProperties: true },
    });
    expect(tool.source).toBeUndefined();
    expect('source' in tool).toBe(false);
  });

  it('records the args and context facts of each call, in order', async () => {
    const tool = mockTool({ name: 'search', result: ['doc-1'] });
    const dispatcher = createDispatcher({ tools: [tool], chain: canonicalChain() });
    const identity = { tenant: 'acme', principal: 'ana' };
    const first = await dispatcher.dispatch(
      { toolName: 'search', args: { query: 'refunds' }, toolCallId: 'c1' },
      { identity },
    );
    await dispatcher.dispatch({ toolName: 'search', args: '{"query":"returns"}', toolCallId: 'c2' });
    expect(first).toMatchObject({ kind: 'result', value: ['doc-1'], content: '["doc-1"]' });
    expect(tool.callCount).toBe(2);
    expect(tool.calls[0]).toMatchObject({
      args: { query: 'refunds' },
      toolCallId: 'c1',
      identity,
      resumed: false,
      chainId: first.chainId,
    });
    expect(tool.lastCall).toMatchObject({ args: { query: 'returns' }, toolCallId: 'c2' });
    expect(tool.lastCall).not.toHaveProperty('identity');
  });

  it('returns "ok" when given neither result nor execute', async () => {
    const dispatcher = createDispatcher({ tools: [mockTool({ name: 'ping' })], chain: canonicalChain() });
    expect(await dispatcher.dispatch({ toolName: 'ping' })).toMatchObject({ kind: 'result', content: 'ok' });
  });

  it('runs execute for the result, and a throw becomes a failed outcome', async () => {
    let n = 0;
    const counter = mockTool({ name: 'counter', execute: () => ++n });
    const broken = mockTool({
      name: 'broken',
      execute: () => {
        throw new Error('upstream 503');
      },
    });
    const dispatcher = createDispatcher({ tools: [counter, broken], chain: canonicalChain() });
    await dispatcher.dispatch({ toolName: 'counter' });
    expect(await dispatcher.dispatch({ toolName: 'counter' })).toMatchObject({ kind: 'result', value: 2 });
    expect(await dispatcher.dispatch({ toolName: 'broken' })).toMatchObject({
      kind: 'failed',
      error: { message: 'upstream 503' },
    });
    expect(broken.callCount).toBe(1);
  });

  it('records the credential the gate provided, readable only through reveal()', async () => {
    const tool = mockTool({ name: 'charge', needs: { kind: 'api_key', service: 'billing' } });
    const dispatcher = createDispatcher({
      tools: [tool],
      chain: canonicalChain({ credentials: staticCredentials({ billing: 'sk_live_1' }) }),
    });
    await dispatcher.dispatch({ toolName: 'charge' });
    const credential = tool.lastCall?.credential;
    expect(credential?.reveal()).toBe('sk_live_1');
    expect(JSON.stringify(tool.calls)).not.toContain('sk_live_1');
  });

  it('declares each wanted arg a required string, and records the resolved data and its metadata', async () => {
    const store = inMemoryArtifacts();
    const tool = mockTool({ name: 'summarize', wants: { rows: 'dataset/rows' } });
    expect(tool.schema.inputSchema).toMatchObject({
      properties: { rows: { type: 'string' } },
      required: ['rows'],
    });
    const ref = await store.put({}, { kind: 'dataset/rows', data: [1, 2] });
    const dispatcher = createDispatcher({ tools: [tool], chain: canonicalChain({ artifacts: store }) });
    await dispatcher.dispatch({ toolName: 'summarize', args: { rows: ref } });
    expect(tool.lastCall?.args).toEqual({ rows: [1, 2] });
    expect(tool.lastCall?.wanted?.['rows']).toMatchObject({ ref, kind: 'dataset/rows' });
  });

  it('records the human decision on a resumed call', async () => {
    const tool = mockTool({ name: 'refund', checkIn: 'always' });
    const dispatcher = createDispatcher({
      tools: [tool],
      chain: canonicalChain({ checkInKey: 'k'.repeat(32) }),
    });
    const paused = await dispatcher.dispatch({ toolName: 'refund', args: { amount: 5 } });
    if (paused.kind !== 'paused') throw new Error('expected a pause');
    expect(tool.callCount).toBe(0);
    await dispatcher.resume(paused.checkIn, checkInApproved({ by: 'ana', note: 'fine' }));
    expect(tool.lastCall).toMatchObject({
      resumed: true,
      checkIn: { approved: true, by: 'ana', note: 'fine' },
    });
  });

  it('simulates an MCP-sourced tool with source', async () => {
    const tool = mockTool({ name: 'crm_lookup', source: 'crm-server' });
    expect(() => assertTool(tool)).toThrow(ToolDefinitionError);
    expect(() => assertTool(tool, { allowSource: true })).not.toThrow();
    const dispatcher = createDispatcher({ tools: [tool], chain: canonicalChain() });
    expect(await dispatcher.dispatch({ toolName: 'crm_lookup' })).toMatchObject({
      kind: 'result',
      toolSource: 'crm-server',
    });
    expect(tool.lastCall?.toolSource).toBe('crm-server');
  });

  it('takes a TypeBox schema and the other declarations', () => {
    const tool = mockTool({
      name: 'search',
      inputSchema: Type.Object({ query: Type.String(), limit: Type.Integer() }),
      capabilities: ['external_net'],
      resultCeiling: { maxChars: 100, narrowBy: ['limit'] },
    });
    expect(tool.capabilities).toEqual(['external_net']);
    expect(tool.resultCeiling).toEqual({ maxChars: 100, narrowBy: ['limit'] });
    expect(tool.schema.inputSchema).toMatchObject({ required: ['query', 'limit'] });
  });

  it('refuses a declaration the library cannot honor, like defineTool', () => {
    expect(() => mockTool({ name: 'bad name' })).toThrow(ToolDefinitionError);
    expect(() => mockTool({ name: 'x', capabilities: ['ExternalNet'] })).toThrow('not snake_case');
    expect(() => mockTool({ name: 'x', result: 1, execute: () => 2 })).toThrow(
      "either 'result' or 'execute'",
    );
  });

  it('reset forgets recorded calls', async () => {
    const tool = mockTool({ name: 'ping' });
    await createDispatcher({ tools: [tool], chain: canonicalChain() }).dispatch({ toolName: 'ping' });
    tool.reset();
    expect(tool.callCount).toBe(0);
    expect(tool.lastCall).toBeUndefined();
  });
});
