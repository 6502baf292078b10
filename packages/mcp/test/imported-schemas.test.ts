// Schemas a remote MCP server wrote are untrusted: a pathological pattern cannot stall the process,
// and a pattern the linear-time engine cannot run skips that one tool, never the whole import.

import { createDispatcher } from '@toolgate/core';
import { canonicalChain } from '@toolgate/middleware';
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
});
