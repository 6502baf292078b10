import { Type } from 'typebox';
import {
  assertTool,
  createChain,
  createDispatcher,
  defineTool,
  ToolDefinitionError,
  type Tool,
} from '@toolgate/core';

const base = {
  name: 'lookup',
  description: 'Look a record up',
  inputSchema: Type.Object({ id: Type.String(), limit: Type.Number() }),
  execute: async () => 'ok',
};

/** defineTool with `extra` merged in, typed loosely so the test can pass what the types forbid. */
function define(extra: Record<string, unknown>): Tool {
  return defineTool({ ...base, ...extra } as unknown as Parameters<typeof defineTool>[0]);
}

function refusalOf(build: () => unknown): ToolDefinitionError {
  try {
    build();
  } catch (error) {
    expect(error).toBeInstanceOf(ToolDefinitionError);
    return error as ToolDefinitionError;
  }
  throw new Error('expected a ToolDefinitionError, but the definition was accepted');
}

describe('defineTool', () => {
  it('builds a plain, spreadable tool whose schema holds name, description and inputSchema', () => {
    const tool = defineTool({
      ...base,
      capabilities: ['user_data'],
      resultCeiling: { maxChars: 100, narrowBy: ['limit'] },
    });
    expect(tool.schema).toEqual({
      name: 'lookup',
      description: 'Look a record up',
      inputSchema: base.inputSchema,
    });
    expect(tool.capabilities).toEqual(['user_data']);
    expect(tool.resultCeiling).toEqual({ maxChars: 100, narrowBy: ['limit'] });
    expect({ ...tool }.execute).toBe(base.execute);
    expect('source' in tool).toBe(false);
  });

  it('accepts every valid declaration together', () => {
    const tool = define({
      capabilities: ['external_net', 'payments'],
      checkIn: (args: { limit: number }) => args.limit > 10,
      checkInComponent: { id: 'confirm-payment', props: { currency: 'EUR' } },
      needs: { kind: 'api_key', service: 'billing', scopes: ['read'] },
      resultCeiling: { maxChars: 8000 },
      wants: { id: 'dataset/rows' },
    });
    expect(tool.needs).toEqual({ kind: 'api_key', service: 'billing', scopes: ['read'] });
    expect(tool.wants).toEqual({ id: 'dataset/rows' });
  });

  it.each([
    ['a name with a space', { name: 'look up' }, 'look up'],
    ['an empty name', { name: '' }, ''],
    ['a name over 64 characters', { name: 'x'.repeat(65) }, 'x'.repeat(64)],
  ])('refuses %s, naming the tool and the pattern', (_label, extra, label) => {
    const error = refusalOf(() => define(extra));
    expect(error.message).toContain(`tool '${label}'`);
    expect(error.message).toContain('Rename the tool');
    expect(error.code).toBe('ERR_TOOL_DEFINITION');
  });

  it.each([
    ['zero', 0],
    ['a negative number', -5],
    ['a fraction', 1.5],
    ['a string', '100'],
    ['NaN', Number.NaN],
  ])('refuses resultCeiling.maxChars that is %s', (_label, maxChars) => {
    const error = refusalOf(() => define({ resultCeiling: { maxChars } }));
    expect(error.message).toContain(`tool 'lookup'`);
    expect(error.message).toContain('maxChars');
    expect(error.message).toContain('positive integer');
    expect(error.toolName).toBe('lookup');
  });

  it('refuses an empty narrowBy', () => {
    const error = refusalOf(() => define({ resultCeiling: { maxChars: 10, narrowBy: [] } }));
    expect(error.message).toMatch(/tool 'lookup'.*narrowBy/);
  });

  it('refuses a narrowBy with a blank entry', () => {
    const error = refusalOf(() => define({ resultCeiling: { maxChars: 10, narrowBy: ['limit', '  '] } }));
    expect(error.message).toMatch(/tool 'lookup'.*narrowBy.*blank/);
  });

  it.each([
    ['true', true],
    ['a string other than always', 'sometimes'],
    ['an object', { when: 'always' }],
  ])('refuses checkIn that is %s', (_label, checkIn) => {
    const error = refusalOf(() => define({ checkIn }));
    expect(error.message).toMatch(/tool 'lookup'.*'checkIn' must be 'always' or a function/);
  });

  it('refuses checkInComponent without checkIn', () => {
    const error = refusalOf(() => define({ checkInComponent: { id: 'confirm' } }));
    expect(error.message).toMatch(/tool 'lookup'.*'checkInComponent' is declared without 'checkIn'/);
  });

  it('refuses a checkInComponent without an id', () => {
    const error = refusalOf(() => define({ checkIn: 'always', checkInComponent: { props: {} } }));
    expect(error.message).toMatch(/tool 'lookup'.*non-empty 'id'/);
  });

  it('refuses a wants argument absent from the input schema', () => {
    const error = refusalOf(() => define({ wants: { rows: 'dataset/rows' } }));
    expect(error.message).toMatch(/tool 'lookup'.*'wants\.rows' names an argument absent/);
  });

  it('refuses a wants argument that is not declared type string', () => {
    const error = refusalOf(() => define({ wants: { limit: 'dataset/rows' } }));
    expect(error.message).toMatch(
      /tool 'lookup'.*'wants\.limit' needs 'limit' to be declared type: 'string'/,
    );
  });

  it('refuses a wants entry with a blank kind', () => {
    const error = refusalOf(() => define({ wants: { id: ' ' } }));
    expect(error.message).toMatch(/tool 'lookup'.*'wants\.id' must name an artifact kind/);
  });

  it.each([
    ['without kind', { service: 'billing' }, 'needs.kind'],
    ['with a blank kind', { kind: ' ', service: 'billing' }, 'needs.kind'],
    ['without service', { kind: 'api_key' }, 'needs.service'],
    ['with an empty service', { kind: 'api_key', service: '' }, 'needs.service'],
  ])('refuses needs %s', (_label, needs, field) => {
    const error = refusalOf(() => define({ needs }));
    expect(error.message).toContain(`tool 'lookup'`);
    expect(error.message).toContain(`'${field}' must be a non-empty string`);
  });

  it.each([
    ['camelCase', 'externalNet'],
    ['kebab-case', 'external-net'],
    ['upper case', 'PAYMENTS'],
    ['empty', ''],
  ])('refuses a capability in %s', (_label, capability) => {
    const error = refusalOf(() => define({ capabilities: [capability] }));
    expect(error.message).toMatch(/tool 'lookup'.*is not snake_case/);
  });

  it('refuses a capability listed twice', () => {
    const error = refusalOf(() => define({ capabilities: ['payments', 'user_data', 'payments'] }));
    expect(error.message).toContain(`tool 'lookup': capability 'payments' is listed twice`);
  });

  it('accepts a capability outside the built-in list, since the set is open', () => {
    expect(define({ capabilities: ['ledger_write'] }).capabilities).toEqual(['ledger_write']);
  });

  it('refuses a source passed in, because only MCP clients stamp it', () => {
    const error = refusalOf(() => define({ source: 'github' }));
    expect(error.message).toMatch(/tool 'lookup'.*'source' is set by MCP clients only/);
  });
});

describe('assertTool', () => {
  const returnsOne = (): number => 1;
  const handBuilt = (extra: Record<string, unknown> = {}): Record<string, unknown> => ({
    schema: {
      name: 'remote_search',
      description: 'Search remotely',
      inputSchema: { type: 'object', properties: {} },
    },
    execute: async () => 'found',
    ...extra,
  });

  it('accepts a hand-built tool with a source only when allowSource is given', () => {
    const tool = handBuilt({ source: 'github' });
    expect(() => assertTool(tool)).toThrow(/'source' is set by MCP clients only/);
    expect(() => assertTool(tool, { allowSource: true })).not.toThrow();
  });

  it('refuses an empty source even when sources are allowed', () => {
    expect(() => assertTool(handBuilt({ source: '' }), { allowSource: true })).toThrow(
      /'source' must be a non-empty string/,
    );
  });

  it.each([
    ['that is not an object', 42, /must be an object; got a number/],
    ['missing its schema', { execute: returnsOne }, /'schema' must be an object/],
    [
      'missing a description',
      { schema: { name: 'x', inputSchema: {} }, execute: returnsOne },
      /tool 'x': 'description' must be a string/,
    ],
    [
      'with an inputSchema that is not an object',
      { schema: { name: 'x', description: 'd', inputSchema: 'any' }, execute: returnsOne },
      /tool 'x': 'inputSchema'/,
    ],
    [
      'without execute',
      { schema: { name: 'x', description: 'd', inputSchema: {} } },
      /tool 'x': 'execute' must be a function/,
    ],
  ])('refuses a tool %s', (_label, tool, message) => {
    expect(() => assertTool(tool)).toThrow(message);
  });

  it('runs again in createDispatcher on hand-built tools', () => {
    const bad = { ...handBuilt(), capabilities: ['Payments'] } as unknown as Tool;
    expect(() => createDispatcher({ tools: [bad], chain: createChain([]) })).toThrow(ToolDefinitionError);
    expect(() => createDispatcher({ tools: [bad], chain: createChain([]) })).toThrow(
      /tool 'remote_search'.*not snake_case/,
    );
  });

  it('runs in createDispatcher with sources allowed, so MCP-imported tools are served', () => {
    const imported = handBuilt({ source: 'github' }) as unknown as Tool;
    const dispatcher = createDispatcher({ tools: [imported], chain: createChain([]) });
    expect(dispatcher.tools.get('remote_search')?.source).toBe('github');
  });
});

describe('annotations', () => {
  it('keeps behaviour hints on the tool and freezes them at dispatcher build', () => {
    const tool = define({ annotations: { readOnlyHint: true, title: 'Look up' } });
    expect(tool.annotations).toEqual({ readOnlyHint: true, title: 'Look up' });
    const dispatcher = createDispatcher({ tools: [tool], chain: createChain([]) });
    expect(Object.isFrozen(dispatcher.tools.get('lookup')!.annotations)).toBe(true);
  });

  it.each([
    ['not an object', 'yes', /'annotations' must be an object of hints/],
    [
      'a hint that is not a boolean',
      { destructiveHint: 'true' },
      /'annotations.destructiveHint' must be true or false/,
    ],
    ['a title that is not a string', { title: 7 }, /'annotations.title' must be a string/],
  ])('refuses annotations %s', (_what, annotations, message) => {
    expect(refusalOf(() => define({ annotations })).message).toMatch(message);
  });
});
