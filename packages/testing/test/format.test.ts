import { createDispatcher } from '@toolgate/core';
import { canonicalChain } from '@toolgate/middleware';
import { formatOutcome, isDispatchOutcome, mockTool } from '@toolgate/testing';

describe('formatOutcome', () => {
  it('shows the kind, whether the tool ran, what the model read and the ledger', async () => {
    const tool = mockTool({
      name: 'lookup',
      source: 'crm',
      execute: () => {
        throw new TypeError('bad gateway');
      },
    });
    const outcome = await createDispatcher({ tools: [tool], chain: canonicalChain() }).dispatch({
      toolName: 'lookup',
      toolCallId: 'c-1',
    });
    expect(formatOutcome(outcome)).toBe(
      [
        'failed with TypeError; the tool ran',
        `  tool: 'lookup' from 'crm', call c-1, ${outcome.chainId}`,
        "  model read: ['lookup' failed: bad gateway.]",
        '  ledger:',
        '    1. permission      allow      no checker',
        '    2. capabilities    allow      no checker',
        '    3. validate-args   allow',
        '    4. wants           allow      no wanted args',
        '    5. check-in        allow      no check-in declared',
        '    6. credentials     allow      no credential needed',
        '    7. result-ceiling  allow      no ceiling',
      ].join('\n'),
    );
  });

  it('clips a long model text', async () => {
    const tool = mockTool({ name: 'dump', result: 'y'.repeat(1000) });
    const text = formatOutcome(
      await createDispatcher({ tools: [tool], chain: canonicalChain() }).dispatch({ toolName: 'dump' }),
    );
    expect(text).toContain(`model read: ${'y'.repeat(299)}…`);
    expect(text).not.toContain('y'.repeat(301));
  });

  it('says so when given something else', () => {
    expect(formatOutcome({ kind: 'weird' } as never)).toBe('not a DispatchOutcome: {"kind":"weird"}');
    expect(isDispatchOutcome({ kind: 'result', ledger: [], content: '' })).toBe(true);
    expect(isDispatchOutcome({ kind: 'result' })).toBe(false);
  });
});
