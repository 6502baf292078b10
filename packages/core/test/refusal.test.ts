import { Type } from 'typebox';
import {
  createChain,
  createDispatcher,
  defineTool,
  formatCount,
  Pause,
  Refusal,
  refusalReason,
  sentence,
  type CheckInRequest,
} from '@toolgate/core';
import { passThrough } from './fixtures';

describe('refusal text', () => {
  it('sentence ends text with a period unless it already ends a sentence', () => {
    expect(sentence(' the call was refused ')).toBe('the call was refused.');
    expect(sentence('Really?')).toBe('Really?');
    expect(sentence('Stop!')).toBe('Stop!');
    expect(sentence('Done.')).toBe('Done.');
  });

  it('refusalReason joins what happened, whether a retry helps and what to do, skipping blanks', () => {
    expect(
      refusalReason(
        `'search' returned 48,210 characters; the ceiling is 8,000`,
        undefined,
        false,
        ' ',
        `Call it again with a smaller 'limit'`,
      ),
    ).toBe(
      `'search' returned 48,210 characters; the ceiling is 8,000. Call it again with a smaller 'limit'.`,
    );
  });

  it('formatCount groups thousands and drops fractions', () => {
    expect(formatCount(48210)).toBe('48,210');
    expect(formatCount(8000)).toBe('8,000');
    expect(formatCount(999)).toBe('999');
    expect(formatCount(1234567.9)).toBe('1,234,567');
  });

  it('a Refusal reads in the one refusal form, with defaults for code and retryable', () => {
    const refusal = new Refusal('permission', `'pay' is not allowed for this user. Retrying will not help.`);
    expect(refusal.message).toBe(
      `[permission refused: 'pay' is not allowed for this user. Retrying will not help.]`,
    );
    expect(refusal.code).toBe('DENIED');
    expect(refusal.retryable).toBe(false);
    expect(refusal.detail).toBeUndefined();
    expect(new Refusal('store', 'down.', { code: 'STORE_DOWN', retryable: true }).retryable).toBe(true);
  });

  it('a Pause names the asker and the tool', () => {
    const pause = new Pause({ asker: 'check-in', toolName: 'pay' } as CheckInRequest);
    expect(pause.message).toBe(`[check-in paused: waiting for a human to approve 'pay'.]`);
  });
});

describe("a tool's own refusal", () => {
  function dispatcherFor(beforeRun: boolean | undefined) {
    let sideEffects = 0;
    const tool = defineTool({
      name: 'import_thing',
      description: 'Refuses on its own, before or after doing its work.',
      inputSchema: Type.Object({}),
      execute: () => {
        if (beforeRun !== true) sideEffects += 1;
        throw new Refusal('mcp', `'import_thing' is not available now. Retrying in a moment may help.`, {
          code: 'UPSTREAM_DOWN',
          retryable: true,
          mentionsRun: beforeRun === true,
          ...(beforeRun === undefined ? {} : { beforeRun }),
        });
      },
    });
    const dispatcher = createDispatcher({ tools: [tool], chain: createChain([passThrough('noop')]) });
    return { dispatcher, sideEffects: () => sideEffects };
  }

  it('says the tool did not run when it refused before doing anything (beforeRun)', async () => {
    const { dispatcher } = dispatcherFor(true);
    const outcome = await dispatcher.dispatch({ toolName: 'import_thing', args: {} });
    expect(outcome).toMatchObject({ kind: 'refused', code: 'UPSTREAM_DOWN', ran: false, retryable: true });
    expect(outcome.content).not.toMatch(/ran, but/);
  });

  it('says the tool ran when its refusal does not claim otherwise', async () => {
    const { dispatcher, sideEffects } = dispatcherFor(undefined);
    const outcome = await dispatcher.dispatch({ toolName: 'import_thing', args: {} });
    expect(sideEffects()).toBe(1);
    expect(outcome).toMatchObject({ kind: 'refused', code: 'UPSTREAM_DOWN', ran: true });
    expect(outcome.content).toMatch(/'import_thing' ran, but 'mcp' withheld its result/);
  });
});
