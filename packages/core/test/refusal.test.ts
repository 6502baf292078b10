import { formatCount, Pause, Refusal, refusalReason, sentence, type CheckInRequest } from '@toolgate/core';

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
