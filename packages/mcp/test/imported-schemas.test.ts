// Schemas a remote MCP server wrote are untrusted: a pathological pattern cannot stall the process,
// and a pattern the linear-time engine cannot run skips that one tool, never the whole import.

import { createDispatcher } from '@toolgate/core';
import { canonicalChain, evalFreeValidator } from '@toolgate/middleware';
import { sharedValidator } from '../../../test-support/hardening';
import { clientOf, objectSchema, remoteServer } from './fixtures/remote';

describe('schemas an MCP server wrote', () => {
  it('a pathological pattern in an imported tool refuses a megabyte argument without calling the server', async () => {
    const remote = remoteServer([
      [
        {
          name: 'lookup',
          description: 'Looks a code up.',
          inputSchema: objectSchema({ code: { type: 'string', pattern: '^(a+)+$' } }, ['code']),
        },
      ],
    ]);
    const docs = await clientOf(remote, { name: 'docs', validator: sharedValidator });
    const dispatcher = createDispatcher({
      tools: await docs.tools(),
      chain: canonicalChain({ validator: sharedValidator }),
    });

    const outcome = await dispatcher.dispatch({
      toolName: 'lookup',
      args: { code: `${'a'.repeat(1 << 20)}!` },
    });

    expect(outcome.kind === 'refused' && outcome.code).toBe('INVALID_ARGS');
    expect(remote.calls).toEqual([]);
    await docs.close();
  });

  it('an imported tool whose pattern needs backtracking is skipped with a reason naming the pattern', async () => {
    const remote = remoteServer([
      [
        {
          name: 'lookup',
          description: 'Looks a code up.',
          inputSchema: objectSchema({ code: { type: 'string', pattern: '^(?!admin).+$' } }),
        },
        { name: 'other', description: 'Fine.', inputSchema: objectSchema() },
      ],
    ]);
    const docs = await clientOf(remote, { name: 'docs', validator: sharedValidator });

    const tools = await docs.tools();

    expect(tools.map((tool) => tool.schema.name)).toEqual(['other']);
    expect(docs.skipped).toEqual([
      expect.objectContaining({
        toolName: 'lookup',
        reason: expect.stringMatching(/pattern "\^\(\?!admin\)\.\+\$" cannot run on the linear-time engine/),
      }),
    ]);
    await docs.close();
  });

  it('an x-mcp-header annotation (SEP-2243) compiles on both validators; a malformed one skips only its tool', async () => {
    const region = { type: 'string', 'x-mcp-header': 'Region' };
    const remote = remoteServer([
      [
        { name: 'deploy', description: 'Deploys.', inputSchema: objectSchema({ region }, ['region']) },
        {
          name: 'spaced',
          description: 'A header name with a space.',
          inputSchema: objectSchema({ region: { type: 'string', 'x-mcp-header': 'My Region' } }),
        },
        {
          name: 'twice',
          description: 'One header name twice.',
          inputSchema: objectSchema({ a: region, b: { type: 'string', 'x-mcp-header': 'region' } }),
        },
        { name: 'other', description: 'Fine.', inputSchema: objectSchema() },
      ],
    ]);
    for (const validator of [sharedValidator, evalFreeValidator()]) {
      const docs = await clientOf(remote, { name: 'docs', validator });
      const tools = await docs.tools();
      expect(tools.map((tool) => tool.schema.name)).toEqual(['deploy', 'other']);
      expect(docs.skipped.map((skip) => [skip.toolName, skip.reason])).toEqual([
        ['spaced', expect.stringMatching(/malformed header: x-mcp-header at 'region' is not an HTTP token/)],
        ['twice', expect.stringMatching(/malformed header: x-mcp-header 'region' is declared twice/)],
      ]);
      const dispatcher = createDispatcher({ tools, chain: canonicalChain({ validator }) });
      const outcome = await dispatcher.dispatch({ toolName: 'deploy', args: { region: 'eu-west1' } });
      expect(outcome.kind).toBe('result');
      await docs.close();
    }
  });
});
