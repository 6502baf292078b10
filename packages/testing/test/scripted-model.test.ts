import { lastToolMessage, scriptedModel, type TranscriptEntry } from '@toolgate/testing';

const none: readonly TranscriptEntry[] = [];

describe('scriptedModel', () => {
  it('plays its steps in order and has no move once they run out', async () => {
    const model = scriptedModel([{ toolName: 'search', args: { q: 'a' } }, { say: 'done' }]);
    expect(model.remaining).toBe(2);
    expect(await model.next(none, [])).toEqual({ toolName: 'search', args: { q: 'a' } });
    expect(await model.next(none, [])).toEqual({ say: 'done' });
    expect(await model.next(none, [])).toBeUndefined();
    expect(model.taken).toBe(2);
    expect(model.remaining).toBe(0);
  });

  it('calls a function step with the transcript, and a string answer is the final text', async () => {
    const seen: unknown[] = [];
    const model = scriptedModel([
      (transcript) => {
        seen.push(transcript);
        return 'all done';
      },
    ]);
    const transcript: TranscriptEntry[] = [{ role: 'user', content: 'hi' }];
    expect(await model.next(transcript, [])).toEqual({ say: 'all done' });
    expect(seen).toEqual([transcript]);
  });

  it('stops when a function step returns undefined', async () => {
    const model = scriptedModel([() => undefined, { say: 'never' }]);
    expect(await model.next(none, [])).toBeUndefined();
  });

  it('refuses a step that is neither a call, a final answer nor a function', () => {
    expect(() => scriptedModel([{ tool: 'search' } as never])).toThrow(
      'step #1 must be { toolName, args? }, { say } or a function',
    );
    expect(() => scriptedModel([{ say: 'x', toolName: 'y' } as never])).toThrow('step #1');
  });

  it('refuses a malformed move returned by a function step', async () => {
    const model = scriptedModel([() => ({ tool: 'x' }) as never]);
    await expect(model.next(none, [])).rejects.toThrow('step #1 must be');
  });
});

describe('lastToolMessage', () => {
  it('is the content of the most recent tool message', () => {
    expect(lastToolMessage([])).toBeUndefined();
    const outcome = { kind: 'result' } as never;
    expect(
      lastToolMessage([
        { role: 'tool', toolCallId: '1', toolName: 't', content: 'first', outcome },
        { role: 'assistant', text: 'thinking' },
        { role: 'tool', toolCallId: '2', toolName: 't', content: 'second', outcome },
        { role: 'assistant', text: 'more' },
      ]),
    ).toBe('second');
  });
});
