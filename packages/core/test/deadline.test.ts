import { AbortedError, DeadlineError, withDeadline } from '@toolgate/core';

/** Watches a promise so a test can see whether it settled yet without awaiting it. */
function watch<T>(promise: Promise<T>): {
  state: () => 'pending' | 'resolved' | 'rejected';
  error: () => unknown;
} {
  let state: 'pending' | 'resolved' | 'rejected' = 'pending';
  let error: unknown;
  promise.then(
    () => {
      state = 'resolved';
    },
    (e: unknown) => {
      state = 'rejected';
      error = e;
    },
  );
  return { state: () => state, error: () => error };
}

describe('withDeadline', () => {
  beforeEach(() => {
    jest.useFakeTimers();
  });
  afterEach(() => {
    jest.useRealTimers();
  });

  it('returns a synchronous answer without arming a timer', async () => {
    await expect(withDeadline(() => 'now', 1000)).resolves.toBe('now');
    expect(jest.getTimerCount()).toBe(0);
  });

  it('resolves with an answer that arrives in time and clears its timer', async () => {
    let answer!: (value: string) => void;
    const result = withDeadline(() => new Promise<string>((resolve) => (answer = resolve)), 1000);
    await jest.advanceTimersByTimeAsync(999);
    answer('in time');
    await expect(result).resolves.toBe('in time');
    expect(jest.getTimerCount()).toBe(0);
  });

  it('rejects with DeadlineError at the deadline even when the work ignores its signal, and aborts that signal', async () => {
    let signal!: AbortSignal;
    const result = watch(
      withDeadline((s) => {
        signal = s;
        return new Promise<never>(() => undefined);
      }, 1000),
    );
    await jest.advanceTimersByTimeAsync(999);
    expect(result.state()).toBe('pending');
    await jest.advanceTimersByTimeAsync(1);
    expect(result.state()).toBe('rejected');
    expect(result.error()).toBeInstanceOf(DeadlineError);
    expect((result.error() as DeadlineError).ms).toBe(1000);
    expect(signal.aborted).toBe(true);
    expect(signal.reason).toBeInstanceOf(DeadlineError);
  });

  it('rejects with AbortedError when the parent aborts, and aborts the work signal', async () => {
    const parent = new AbortController();
    let signal!: AbortSignal;
    const result = watch(
      withDeadline(
        (s) => {
          signal = s;
          return new Promise<never>(() => undefined);
        },
        1000,
        parent.signal,
      ),
    );
    parent.abort();
    await jest.advanceTimersByTimeAsync(0);
    expect(result.error()).toBeInstanceOf(AbortedError);
    expect(signal.aborted).toBe(true);
    expect(jest.getTimerCount()).toBe(0);
  });

  it('does not start the work when the parent has already aborted', async () => {
    const parent = new AbortController();
    parent.abort();
    const work = jest.fn(() => 'never');
    await expect(withDeadline(work, 1000, parent.signal)).rejects.toBeInstanceOf(AbortedError);
    expect(work).not.toHaveBeenCalled();
  });

  it('passes on the error of work that throws or rejects', async () => {
    await expect(
      withDeadline(() => {
        throw new RangeError('sync');
      }, 1000),
    ).rejects.toThrow(RangeError);
    await expect(withDeadline(() => Promise.reject(new TypeError('async')), 1000)).rejects.toThrow(TypeError);
    expect(jest.getTimerCount()).toBe(0);
  });

  it('stops listening to the parent once settled', async () => {
    const parent = new AbortController();
    let seen: AbortSignal | undefined;
    await withDeadline((signal) => ((seen = signal), Promise.resolve(1)), 1000, parent.signal);
    parent.abort();
    expect(seen?.aborted).toBe(false);
  });

  it('many waits on one parent signal hold one listener on it', async () => {
    const parent = new AbortController();
    const added = jest.spyOn(parent.signal, 'addEventListener');
    const waits = Array.from({ length: 20 }, () =>
      withDeadline(() => new Promise(() => undefined), 1000, parent.signal),
    );
    parent.abort();
    await Promise.all(waits.map((wait) => expect(wait).rejects.toThrow(AbortedError)));
    expect(added).toHaveBeenCalledTimes(1);
  });
});
