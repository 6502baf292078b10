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

describe('result-ceiling gate on content blocks from an MCP server', () => {
  // A tool stamped with a source, as mcpClient imports it, answering with MCP content blocks.
  const image = (bytes: number) => ({
    type: 'image',
    mimeType: 'image/png',
    data: btoa('p'.repeat(bytes)),
  });
  function sourced(
    result: unknown,
    resultCeiling: ResultCeiling,
    defaults: { defaultMaxBytes?: number } = {},
  ) {
    const tool = {
      schema: { name: 'shot', description: 'a screenshot', inputSchema: { type: 'object' } },
      source: 'browser',
      resultCeiling,
      execute: () => result,
    };
    return createDispatcher({ tools: [tool], chain: canonicalChain(defaults) });
  }

  it('counts decoded bytes of binary blocks against maxBytes, never base64 length against maxChars', async () => {
    const result = { content: [{ type: 'text', text: 'caption' }, image(4_000)] };
    const fits = sourced(result, { maxChars: 10, maxBytes: 4_000 });
    const over = sourced(result, { maxChars: 10, maxBytes: 3_999 });

    const ok = expectResult(await fits.dispatch({ toolName: 'shot', args: {} }));
    const refused = expectRefused(await over.dispatch({ toolName: 'shot', args: {} }));

    expect(ok.value).toEqual(result);
    expect(ok.content).toBe('caption\n[image: image/png, 4000 bytes]');
    expect(refused.code).toBe('RESULT_TOO_LARGE');
    expect(refused.reason).toContain(
      'returned 4,000 bytes of images, audio or files; the ceiling is 3,999 bytes',
    );
    expect(refused.content).not.toContain(btoa('pppp'));
  });

  it('counts characters of text blocks and embedded text resources against maxChars', async () => {
    const result = {
      content: [
        { type: 'text', text: 'x'.repeat(6) },
        { type: 'resource', resource: { uri: 'file:///a', text: 'y'.repeat(5) } },
      ],
    };
    expectResult(await sourced(result, { maxChars: 11 }).dispatch({ toolName: 'shot', args: {} }));
    const refused = expectRefused(
      await sourced(result, { maxChars: 10 }).dispatch({ toolName: 'shot', args: {} }),
    );
    expect(refused.reason).toContain('returned 11 characters; the ceiling is 10');
  });

  it("applies the operator's default on bytes to a tool that declares only characters", async () => {
    const result = { content: [image(100)] };
    const dispatcher = sourced(result, { maxChars: 100 }, { defaultMaxBytes: 99 });
    const refused = expectRefused(await dispatcher.dispatch({ toolName: 'shot', args: {} }));
    expect(refused.reason).toContain('returned 100 bytes');
  });

  it('measures a tool of our own that returns the same shape as JSON, as the model reads it', async () => {
    const tool = recordingTool({ name: 'search', resultCeiling: { maxChars: 20 } }, () => ({
      content: [{ type: 'text', text: 'short' }],
    }));
    const { dispatch } = setup(tool);
    expect(expectRefused(await dispatch()).reason).toContain('characters; the ceiling is 20');
  });
});
