import { createDispatcher, type DispatchOutcome } from '@toolgate/core';
import { canonicalChain } from '@toolgate/middleware';
import { mockTool, staticPermissions, toolgateMatchers } from '@toolgate/testing';
import '@toolgate/testing/jest';
import { expect as globalsExpect } from '@jest/globals';

async function outcomes() {
  const search = mockTool({ name: 'search', result: { hits: 3 } });
  const refund = mockTool({ name: 'refund', checkIn: 'always' });
  const dispatcher = createDispatcher({
    tools: [search, refund, mockTool({ name: 'wipe' })],
    chain: canonicalChain({
      permissions: staticPermissions([
        { tool: 'wipe', allow: false, reason: 'wiping is for staff' },
        { allow: true },
      ]),
      checkInKey: 'k'.repeat(32),
    }),
  });
  return {
    search,
    refund,
    result: await dispatcher.dispatch({ toolName: 'search', args: { q: 'x' } }),
    refused: await dispatcher.dispatch({ toolName: 'wipe' }),
    paused: await dispatcher.dispatch({ toolName: 'refund' }),
  };
}

/** The message a failing assertion prints. */
function failure(assertion: () => void): string {
  try {
    assertion();
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error('the assertion passed');
}

describe('toBeRefusedBy', () => {
  it('passes for a refusal by that gate (and code), and fails otherwise', async () => {
    const { refused, result } = await outcomes();
    expect(refused).toBeRefusedBy('permission');
    expect(refused).toBeRefusedBy('permission', 'PERMISSION_DENIED');
    expect(refused).not.toBeRefusedBy('permission', 'CHECKER_FAILED');
    expect(refused).not.toBeRefusedBy('capabilities');
    expect(result).not.toBeRefusedBy('permission');
  });

  it('prints what was expected and the outcome readably when it fails', async () => {
    const { result } = await outcomes();
    const message = failure(() => expect(result).toBeRefusedBy('permission', 'PERMISSION_DENIED'));
    expect(message).toContain('expect(received).toBeRefusedBy("permission", "PERMISSION_DENIED")');
    expect(message).toContain("Expected: refused by 'permission' with code PERMISSION_DENIED");
    expect(message).toContain("Received: result from 'search'; the tool ran");
    expect(message).toContain('model read: {"hits":3}');
    expect(message).toMatch(/ledger:\n\s+1\. permission\s+allow/);
  });

  it('prints the refusal the model read when a .not fails', async () => {
    const { refused } = await outcomes();
    const message = failure(() => expect(refused).not.toBeRefusedBy('permission'));
    expect(message).toContain('expect(received).not.toBeRefusedBy("permission")');
    expect(message).toContain("Expected: not refused by 'permission'");
    expect(message).toContain(
      "model read: [permission refused: 'wipe' is not permitted: wiping is for staff.",
    );
  });

  it('throws for something that is not an outcome, so a .not cannot pass by accident', () => {
    expect(() => expect({ kind: 'refused' }).not.toBeRefusedBy('permission')).toThrow(
      'expected a DispatchOutcome',
    );
    expect(() => expect(undefined).toBeRefusedBy('permission')).toThrow('expected a DispatchOutcome');
  });
});

describe('toHaveRun', () => {
  it('passes for an outcome whose tool ran, and fails for one whose tool did not', async () => {
    const { result, refused, paused } = await outcomes();
    expect(result).toHaveRun();
    expect(refused).not.toHaveRun();
    expect(paused).not.toHaveRun();
    expect(failure(() => expect(refused).toHaveRun())).toContain(
      "Received: refused by 'permission' (PERMISSION_DENIED); the tool did not run",
    );
  });

  it('counts a mock tool’s calls', async () => {
    const { search, refund } = await outcomes();
    expect(search).toHaveRun();
    expect(search).toHaveRun(1);
    expect(refund).not.toHaveRun();
    const message = failure(() => expect(search).toHaveRun(2));
    expect(message).toContain("Expected: 'search' to have run 2 time(s)");
    expect(message).toMatch(/Received: 1 call\(s\)\n\s+1\. call_\w+ \{"q":"x"\}/);
  });

  it('refuses a count for an outcome', async () => {
    const { result } = await outcomes();
    expect(() => expect(result).toHaveRun(1)).toThrow('a count applies to a mock tool');
  });
});

describe('toBePausedForCheckIn', () => {
  it('passes for a paused outcome (asked by that middleware), and fails otherwise', async () => {
    const { paused, result } = await outcomes();
    expect(paused).toBePausedForCheckIn();
    expect(paused).toBePausedForCheckIn('check-in');
    expect(paused).not.toBePausedForCheckIn('tenant-policy');
    expect(result).not.toBePausedForCheckIn();
  });

  it('prints the question and the request when a .not fails', async () => {
    const { paused } = await outcomes();
    const message = failure(() => expect(paused).not.toBePausedForCheckIn());
    expect(message).toMatch(
      /Received: paused by 'check-in' for a human \(request chk_\w+\); the tool did not run/,
    );
    expect(message).toContain("question: Allow 'refund' to run with the arguments shown?");
  });
});

describe('toHaveLedgerRow', () => {
  it('finds a row matching every field given', async () => {
    const { refused, result } = await outcomes();
    expect(refused).toHaveLedgerRow({ gate: 'permission', outcome: 'deny' });
    expect(refused).toHaveLedgerRow({ gate: 'permission', why: /wiping is for staff/ });
    expect(result).toHaveLedgerRow({ gate: 'validate-args', outcome: 'allow', changed: false });
    expect(result).not.toHaveLedgerRow({ gate: 'permission', outcome: 'deny' });
    expect(result).not.toHaveLedgerRow({ gate: 'validate-args', why: 'anything' });
  });

  it('prints the row it looked for and the whole ledger when it fails', async () => {
    const { result } = await outcomes();
    const message = failure(() =>
      expect(result).toHaveLedgerRow({ gate: 'check-in', outcome: 'ask', why: /approve/ }),
    );
    expect(message).toContain("Expected: a ledger row with gate 'check-in', outcome 'ask', why /approve/");
    expect(message).toMatch(/5\. check-in\s+allow\s+no check-in declared/);
  });

  it('refuses an empty expectation', async () => {
    const { result } = await outcomes();
    expect(() => expect(result).toHaveLedgerRow({})).toThrow('describe the row');
  });
});

describe('toolgateMatchers', () => {
  it('are plain functions any expect.extend can take', async () => {
    const { refused } = await outcomes();
    const verdict = toolgateMatchers.toBeRefusedBy.call({ isNot: false }, refused, 'permission');
    expect(verdict.pass).toBe(true);
    expect(toolgateMatchers.toHaveRun.call({}, refused).pass).toBe(false);
  });

  it('are installed on the @jest/globals expect too', async () => {
    const { refused } = await outcomes();
    globalsExpect(refused).toBeRefusedBy('permission');
    globalsExpect(refused as DispatchOutcome).not.toHaveRun();
  });
});
