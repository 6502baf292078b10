import { createChain, createDispatcher, type Middleware, type ResultCeiling } from '@toolgate/core';
import { canonicalChain, resultCeilingGate } from '@toolgate/middleware';
import { eventsOf, expectRefused, expectResult, recordEvents, recordingTool } from './fixtures';

const PAYLOAD = 'PAYLOAD-MARKER;';

function searchTool(result: () => unknown, resultCeiling?: ResultCeiling) {
  return recordingTool({ name: 'search', ...(resultCeiling !== undefined ? { resultCeiling } : {}) }, result);
}

function setup(tool: ReturnType<typeof searchTool>, defaultMaxChars?: number, use?: Middleware) {
  let chain = canonicalChain(defaultMaxChars === undefined ? {} : { defaultMaxChars });
  if (use !== undefined) chain = chain.use(use);
  const dispatcher = createDispatcher({ tools: [tool], chain });
  const events = recordEvents(dispatcher);
  const dispatch = () => dispatcher.dispatch({ toolName: 'search', args: { text: 'refunds' } });
  return { dispatch, events };
}

describe('result-ceiling gate', () => {
  it('measures a string result as it is, not JSON-quoted', async () => {
    const exact = setup(searchTool(() => 'x'.repeat(10), { maxChars: 10 }));
    const over = setup(searchTool(() => 'x'.repeat(11), { maxChars: 10 }));

    const fits = expectResult(await exact.dispatch());
    const refused = expectRefused(await over.dispatch());

    expect(fits.content).toBe('xxxxxxxxxx');
    expect(refused.reason).toContain('returned 11 characters; the ceiling is 10');
  });

  it('measures an object result as its JSON', async () => {
    const value = { hits: ['a', 'b'] };
    const size = JSON.stringify(value).length;
    const exact = setup(searchTool(() => value, { maxChars: size }));
    const over = setup(searchTool(() => value, { maxChars: size - 1 }));

    expect(expectResult(await exact.dispatch()).content).toBe(JSON.stringify(value));
    expect(expectRefused(await over.dispatch()).reason).toContain(`returned ${size} characters`);
  });

  it('refuses an oversized result naming the true size, the ceiling and how to narrow it', async () => {
    const tool = searchTool(() => PAYLOAD.repeat(3214) + 'x'.repeat(48_210 - PAYLOAD.length * 3214), {
      maxChars: 8_000,
      narrowBy: ['limit'],
    });
    const { dispatch, events } = setup(tool);

    const outcome = expectRefused(await dispatch());

    expect(tool.calls).toHaveLength(1);
    expect(outcome).toMatchObject({
      gate: 'result-ceiling',
      code: 'RESULT_TOO_LARGE',
      ran: true,
      retryable: false,
    });
    expect(outcome.content).toBe(
      "[result-ceiling refused: 'search' returned 48,210 characters; the ceiling is 8,000. " +
        "Call it again with a smaller 'limit'.]",
    );
    expect(eventsOf(events, 'result.refused')).toEqual([
      expect.objectContaining({ chars: 48_210, maxChars: 8_000, gate: 'result-ceiling' }),
    ]);
  });

  it('lists every narrowing argument, and says to ask for less when there is none', async () => {
    const many = setup(
      searchTool(() => 'x'.repeat(20), { maxChars: 5, narrowBy: ['limit', 'fields', 'since'] }),
    );
    const none = setup(searchTool(() => 'x'.repeat(20), { maxChars: 5 }));

    expect(expectRefused(await many.dispatch()).reason).toContain(
      "Call it again with a smaller 'limit', 'fields' or 'since'.",
    );
    expect(expectRefused(await none.dispatch()).reason).toContain('Ask for less, or do without this result.');
  });

  it('keeps the oversized payload out of the outcome, the ledger and every event', async () => {
    const tool = searchTool(() => ({ rows: PAYLOAD.repeat(1000) }), { maxChars: 100 });
    const { dispatch, events } = setup(tool);

    const outcome = expectRefused(await dispatch());

    expect(JSON.stringify(outcome)).not.toContain('PAYLOAD-MARKER');
    expect(JSON.stringify(outcome.ledger)).not.toContain('PAYLOAD-MARKER');
    expect(events.length).toBeGreaterThan(5);
    for (const event of events) expect(JSON.stringify(event)).not.toContain('PAYLOAD-MARKER');
    expect(outcome.ledger.at(-1)).toEqual({
      gate: 'result-ceiling',
      outcome: 'deny',
      why: outcome.reason,
      changed: false,
    });
  });

  it("applies the operator's default to tools that declare no ceiling", async () => {
    const { dispatch } = setup(
      searchTool(() => 'x'.repeat(101)),
      100,
    );

    const outcome = expectRefused(await dispatch());

    expect(outcome.reason).toContain('returned 101 characters; the ceiling is 100');
  });

  it("lets a tool's own ceiling win over the operator's default, larger or smaller", async () => {
    const larger = setup(
      searchTool(() => 'x'.repeat(500), { maxChars: 1_000 }),
      100,
    );
    const smaller = setup(
      searchTool(() => 'x'.repeat(50), { maxChars: 10 }),
      100,
    );

    expectResult(await larger.dispatch());
    expect(expectRefused(await smaller.dispatch()).reason).toContain('the ceiling is 10.');
  });

  it('passes any size when there is no ceiling, and says so in the ledger', async () => {
    const { dispatch } = setup(searchTool(() => 'x'.repeat(100_000)));

    const outcome = expectResult(await dispatch());

    expect(outcome.content).toHaveLength(100_000);
    expect(outcome.ledger.find((row) => row.gate === 'result-ceiling')).toEqual({
      gate: 'result-ceiling',
      outcome: 'allow',
      why: 'no ceiling',
      changed: false,
    });
  });

  it("leaves an outer middleware's after-half no result to read after the refusal", async () => {
    const seen: Array<{ ran: boolean; result: unknown; resultText: unknown }> = [];
    const audit: Middleware = {
      name: 'audit',
      async run(ctx, next) {
        try {
          await next();
        } finally {
          seen.push({ ran: ctx.ran, result: ctx.result, resultText: ctx.resultText });
        }
      },
    };
    const { dispatch } = setup(
      searchTool(() => PAYLOAD.repeat(100), { maxChars: 10 }),
      undefined,
      audit,
    );

    expectRefused(await dispatch());

    expect(seen).toEqual([{ ran: true, result: undefined, resultText: undefined }]);
  });

  it('stringifies an object result once per dispatch', async () => {
    const toJSON = jest.fn(() => ({ hits: 3 }));
    const value = { toJSON };
    const { dispatch } = setup(searchTool(() => value, { maxChars: 1_000 }));

    const first = expectResult(await dispatch());
    expect(toJSON).toHaveBeenCalledTimes(1);
    await dispatch();

    expect(toJSON).toHaveBeenCalledTimes(2);
    expect(first.content).toBe('{"hits":3}');
  });

  it('refuses a default ceiling that is not a positive integer at build', () => {
    expect(() => resultCeilingGate({ defaultMaxChars: 0 })).toThrow(
      /defaultMaxChars must be a positive integer/,
    );
    expect(() => canonicalChain({ defaultMaxChars: 2.5 })).toThrow(/defaultMaxChars/);
  });

  it('stands innermost, so a middleware added after it breaks the chain order', () => {
    const late: Middleware = { name: 'late', run: (_ctx, next) => next() };

    expect(() => createChain([resultCeilingGate(), late])).toThrow(/'result-ceiling' must be innermost/);
  });
});
