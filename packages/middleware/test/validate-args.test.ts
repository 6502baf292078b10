import {
  createChain,
  createDispatcher,
  DispatcherConfigError,
  type JsonSchema,
  type Middleware,
} from '@toolgate/core';
import { ajvValidator, canonicalChain, validateArgsGate, type SchemaValidator } from '@toolgate/middleware';
import { eventsOf, expectRefused, expectResult, recordEvents, recordingTool } from './fixtures';

/** The default ajv validator behind a counter, so a test can see every compile. */
function countingValidator(inner: SchemaValidator = ajvValidator()) {
  const compiled: JsonSchema[] = [];
  const validator: SchemaValidator = {
    compile(schema) {
      compiled.push(schema);
      return inner.compile(schema);
    },
  };
  return { validator, compiled };
}

const ORDER_SCHEMA = {
  type: 'object',
  properties: {
    sku: { type: 'string' },
    count: { type: 'integer' },
    shipping: {
      type: 'object',
      properties: { speed: { type: 'string', enum: ['standard', 'express'] }, insured: { type: 'boolean' } },
      required: ['speed'],
      additionalProperties: false,
    },
    gift: { type: 'boolean', default: false },
  },
  required: ['sku', 'count'],
  additionalProperties: false,
};

function orderTool() {
  return recordingTool({ name: 'place_order', inputSchema: ORDER_SCHEMA });
}

function setup(chainOptions: Parameters<typeof canonicalChain>[0] = {}, tool = orderTool()) {
  const dispatcher = createDispatcher({ tools: [tool], chain: canonicalChain(chainOptions) });
  const events = recordEvents(dispatcher);
  const dispatch = (args: unknown) => dispatcher.dispatch({ toolName: tool.schema.name, args });
  return { dispatcher, dispatch, events, tool };
}

describe('validate-args gate', () => {
  it('cuts a made-up property name in the refusal instead of repeating it whole', async () => {
    const { dispatch, tool } = setup();
    const madeUp = 'k'.repeat(100_000);

    const outcome = expectRefused(await dispatch({ sku: 'a', count: 1, [madeUp]: true }));

    expect(outcome.gate).toBe('validate-args');
    expect(outcome.content).toContain('is not an accepted argument');
    expect(outcome.content.length).toBeLessThan(400);
    expect(tool.calls).toHaveLength(0);
  });

  it('compiles each tool schema once, at dispatcher build, however many calls follow', async () => {
    const { validator, compiled } = countingValidator();
    const other = recordingTool({
      name: 'other',
      inputSchema: { type: 'object', properties: { q: { type: 'string' } } },
    });
    const order = orderTool();
    const dispatcher = createDispatcher({ tools: [order, other], chain: canonicalChain({ validator }) });

    expect(compiled).toEqual([ORDER_SCHEMA, other.schema.inputSchema]);

    for (let i = 0; i < 100; i++) {
      await dispatcher.dispatch({ toolName: 'place_order', args: { sku: 'A-1', count: i } });
      await dispatcher.dispatch({ toolName: 'other', args: { q: String(i) } });
    }

    expect(compiled).toHaveLength(2);
    expect(order.calls).toHaveLength(100);
    expect(other.calls).toHaveLength(100);
  });

  it('lets valid args through unchanged and files an allow row', async () => {
    const { dispatch, tool } = setup();

    const outcome = expectResult(await dispatch({ sku: 'A-1', count: 2, gift: true }));

    expect(tool.calls[0]?.args).toEqual({ sku: 'A-1', count: 2, gift: true });
    expect(outcome.ledger.find((row) => row.gate === 'validate-args')).toEqual({
      gate: 'validate-args',
      outcome: 'allow',
      changed: false,
    });
  });

  it('names the path and expected type, never the supplied value', async () => {
    const { dispatch, tool, events } = setup();

    const outcome = expectRefused(await dispatch({ sku: 'A-1', count: 'DISTINCTIVE-VALUE-4417' }));

    expect(tool.calls).toHaveLength(0);
    expect(outcome).toMatchObject({
      gate: 'validate-args',
      code: 'INVALID_ARGS',
      retryable: false,
      ran: false,
    });
    expect(outcome.content).toBe(
      "[validate-args refused: the arguments for 'place_order' do not match its schema: 'count' must be integer. " +
        'Fix these and call it again.]',
    );
    expect(JSON.stringify({ outcome, events })).not.toContain('DISTINCTIVE-VALUE-4417');
  });

  it('names nested paths, missing required args and arguments the schema does not accept', async () => {
    const { dispatch } = setup();

    const outcome = expectRefused(await dispatch({ count: 1, shipping: { insured: 'yes' }, coupon: 'FREE' }));

    expect(outcome.reason).toContain("'sku' is required");
    expect(outcome.reason).toContain("'coupon' is not an accepted argument");
    expect(outcome.reason).toContain("'shipping.speed' is required");
    expect(outcome.reason).toContain("'shipping.insured' must be boolean");
    expect(outcome.content).not.toContain('FREE');
  });

  it('lists at most five problems and says how many more there are', async () => {
    const properties = Object.fromEntries(
      Array.from({ length: 8 }, (_, i) => [`field${i}`, { type: 'number' }]),
    );
    const tool = recordingTool({ name: 'wide', inputSchema: { type: 'object', properties } });
    const { dispatch } = setup({}, tool);

    const outcome = expectRefused(
      await dispatch(Object.fromEntries(Object.keys(properties).map((k) => [k, 'x']))),
    );

    expect(outcome.reason.match(/must be number/g)).toHaveLength(5);
    expect(outcome.reason).toContain("'field4' must be number; and 3 more.");
    expect(outcome.reason).not.toContain("'field5'");
  });

  it('applies schema defaults, hands them to the tool and records them as a transform', async () => {
    const { dispatch, tool } = setup();
    const args = { sku: 'A-1', count: 2 };

    const outcome = expectResult(await dispatch(args));

    expect(tool.calls[0]?.args).toEqual({ sku: 'A-1', count: 2, gift: false });
    expect(args).toEqual({ sku: 'A-1', count: 2 });
    expect(outcome.ledger.find((row) => row.gate === 'validate-args')).toEqual({
      gate: 'validate-args',
      outcome: 'transform',
      why: 'applied schema defaults',
      changed: true,
    });
  });

  it('judges the args a transforming policy middleware set, not the ones the model sent', async () => {
    let replacement: Record<string, unknown> = {};
    const rewrite: Middleware = {
      name: 'sku-rewrite',
      transformsArgs: true,
      async run(ctx, next) {
        ctx.setArgs(replacement, 'mapped legacy sku');
        await next();
      },
    };
    const tool = orderTool();
    const dispatcher = createDispatcher({ tools: [tool], chain: canonicalChain().use(rewrite) });
    const dispatch = () => dispatcher.dispatch({ toolName: 'place_order', args: { sku: 'A-1', count: 1 } });

    replacement = { sku: 'A-1', count: 'one' };
    const refused = expectRefused(await dispatch());
    replacement = { sku: 'LEGACY-A-1', count: 1 };
    expectResult(await dispatch());

    expect(refused.gate).toBe('validate-args');
    expect(refused.reason).toContain("'count' must be integer");
    expect(tool.calls.map((call) => call.args)).toEqual([{ sku: 'LEGACY-A-1', count: 1, gift: false }]);
  });

  it('refuses a tool with an unknown schema keyword at dispatcher build, naming the tool', () => {
    const tool = recordingTool({
      name: 'typo_tool',
      inputSchema: { type: 'object', properties: { q: { type: 'string', maxLenght: 3 } } },
    });

    const build = () => createDispatcher({ tools: [tool], chain: canonicalChain() });

    expect(build).toThrow(DispatcherConfigError);
    expect(build).toThrow(
      /tool 'typo_tool' cannot be served by gate 'validate-args'.*unknown keyword: "maxLenght"/,
    );
  });

  it('refuses a tool with an invalid schema at dispatcher build, naming the tool', () => {
    const tool = recordingTool({
      name: 'broken_tool',
      inputSchema: { type: 'object', properties: { q: { type: 7 } } },
    });

    expect(() => createDispatcher({ tools: [tool], chain: canonicalChain() })).toThrow(
      /tool 'broken_tool' cannot be served by gate 'validate-args': its inputSchema is not a valid JSON Schema/,
    );
  });

  it('uses a custom SchemaValidator plugged in through canonicalChain', async () => {
    const seen: unknown[] = [];
    const validator: SchemaValidator = {
      compile: () => (args) => {
        seen.push(args);
        return args['sku'] === 'ok'
          ? { valid: true }
          : { valid: false, problems: [{ path: 'sku', expected: 'must be an SKU our warehouse stocks' }] };
      },
    };
    const { dispatch, tool } = setup({ validator });

    const refused = expectRefused(await dispatch({ sku: 'A-1', count: 1 }));
    expectResult(await dispatch({ sku: 'ok' }));

    expect(refused.reason).toContain("'sku' must be an SKU our warehouse stocks");
    expect(seen).toEqual([{ sku: 'A-1', count: 1 }, { sku: 'ok' }]);
    expect(tool.calls).toHaveLength(1);
  });

  it('folds a custom validator into the chain id, so an audit can tell the policies apart', () => {
    const custom: SchemaValidator = { compile: () => () => ({ valid: true }) };

    expect(canonicalChain({ validator: custom }).id).not.toBe(canonicalChain().id);
    expect(canonicalChain().id).toBe(canonicalChain().id);
  });

  it('refuses a validator without a compile method at build', () => {
    expect(() => validateArgsGate({ validator: {} as SchemaValidator })).toThrow(/compile\(schema\) method/);
  });

  it('honors maxProblems when built on its own', async () => {
    const tool = recordingTool({
      name: 'pair',
      inputSchema: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } } },
    });
    const dispatcher = createDispatcher({
      tools: [tool],
      chain: createChain([validateArgsGate({ maxProblems: 1 })]),
    });

    const outcome = expectRefused(await dispatcher.dispatch({ toolName: 'pair', args: { a: 'x', b: 'y' } }));

    expect(outcome.reason).toContain("'a' must be number; and 1 more.");
  });

  it('files a gate.decision event carrying only the count of problems as detail', async () => {
    const { dispatch, events } = setup();

    await dispatch({ sku: 1, count: 'x' });

    expect(eventsOf(events, 'gate.decision').find((e) => e['gate'] === 'validate-args')).toMatchObject({
      outcome: 'deny',
      code: 'INVALID_ARGS',
      detail: '2 schema problem(s)',
    });
  });
});
