// The false-positive rate on everyday calls: every call of the benign corpus (the reference servers'
// tools, imported, declaring nothing) played with every guard on must run and reach the model as the
// server answered it: nothing refused, redacted, withheld or flagged.

import { contentText, createDispatcher, defineTool, type Tool } from '@toolgate/core';
import { canonicalChain } from '@toolgate/middleware';
import { BENIGN_CALLS } from './benign-calls';
import { VECTORS } from './guard-vectors';

function importedTools(): Tool[] {
  const seen = new Map<string, Tool>();
  for (const call of BENIGN_CALLS) {
    if (seen.has(call.tool)) continue;
    const tool = defineTool({
      name: call.tool,
      description: `${call.tool} of the ${call.server} reference server`,
      inputSchema: { type: 'object' },
      execute: async (args: Record<string, unknown>) =>
        BENIGN_CALLS.find((c) => c.tool === call.tool && JSON.stringify(c.args) === JSON.stringify(args))!
          .result,
    } as never) as Tool;
    seen.set(call.tool, { ...tool, source: call.server });
  }
  return [...seen.values()];
}

describe('the benign corpus: everyday calls to the reference servers with every guard on', () => {
  it('is at least ten times the size of the attack table', () => {
    expect(BENIGN_CALLS.length).toBeGreaterThanOrEqual(10 * VECTORS.length);
  });

  it('flags none of its calls or results', async () => {
    const dispatcher = createDispatcher({
      tools: importedTools(),
      chain: canonicalChain({
        guards: { secrets: {}, crossServer: {}, results: { mode: 'withhold' } },
      }),
    });
    const flagged: string[] = [];
    let n = 0;
    for (const call of BENIGN_CALLS) {
      const outcome = await dispatcher.dispatch(
        { toolName: call.tool, args: call.args },
        { identity: { tenant: 'acme', principal: 'ana', conversation: `c${n++}` } },
      );
      const changed =
        outcome.kind !== 'result' ||
        outcome.content !== contentText(call.result) ||
        outcome.ledger.some((row) => row.gate === 'result-screen' && row.why?.startsWith('flagged') === true);
      if (changed)
        flagged.push(
          `${call.server}.${call.tool} ${JSON.stringify(call.args).slice(0, 80)}: ${outcome.content.slice(0, 160)}`,
        );
    }
    expect(flagged).toEqual([]);
  });
});
