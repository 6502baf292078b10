// What a dispatch must not redo: composing the chain, compiling a schema, serializing the result twice.
// Counted with spies over many dispatches, so a regression fails CI; how long a dispatch takes is
// measured in bench/, never asserted here.
import { Ajv } from 'ajv';
import compose from 'koa-compose';
import { createDispatcher, defineTool, type Chain, type Dispatcher, type JsonSchema } from '@toolgate/core';
import { ajvValidator, canonicalChain, inMemoryArtifacts, type SchemaValidator } from '@toolgate/middleware';

jest.mock('koa-compose', () => jest.fn(jest.requireActual<typeof compose>('koa-compose')));

const composeCalls = compose as unknown as jest.Mock;

const DISPATCHES = 1000;

const searchSchema = {
  type: 'object',
  properties: { query: { type: 'string', minLength: 1 }, limit: { type: 'integer', minimum: 1 } },
  required: ['query'],
  additionalProperties: false,
};

let unseen = 0;

/** A schema no earlier test compiled: compiled schemas are shared by the whole process. */
function unseenSchema(): JsonSchema {
  unseen++;
  return {
    type: 'object',
    properties: { query: { type: 'string', description: `unseen ${unseen}` }, url: { type: 'string' } },
  };
}

function searchTool({
  result = () => ({ hits: ['a', 'b'] }),
  schema = searchSchema,
}: { result?: () => unknown; schema?: JsonSchema } = {}) {
  return defineTool({
    name: 'search',
    description: 'Searches the knowledge base.',
    inputSchema: schema,
    resultCeiling: { maxChars: 10_000, narrowBy: ['limit'] },
    execute: async () => result(),
  });
}

function fetchTool(
  schema: JsonSchema = { type: 'object', properties: { url: { type: 'string' } }, required: ['url'] },
) {
  return defineTool({
    name: 'fetch_page',
    description: 'Fetches one page.',
    inputSchema: schema,
    execute: async ({ url }) => `page at ${String(url)}`,
  });
}

async function dispatchMany(
  dispatcher: Dispatcher,
  times: number,
  options: (i: number) => object = () => ({}),
) {
  for (let i = 0; i < times; i++) {
    const call =
      i % 2 === 0
        ? { toolName: 'search', args: { query: `q${i}` } }
        : { toolName: 'fetch_page', args: { url: `/p/${i}` } };
    const outcome = await dispatcher.dispatch(call, options(i));
    expect(outcome.kind).toBe('result');
  }
}

/** The default ajv validator behind a counter of compiles. */
function countingValidator(): { validator: SchemaValidator; compiled: JsonSchema[] } {
  const inner = ajvValidator();
  const compiled: JsonSchema[] = [];
  return {
    compiled,
    validator: {
      compile(schema) {
        compiled.push(schema);
        return inner.compile(schema);
      },
    },
  };
}

beforeEach(() => {
  composeCalls.mockClear();
});

describe('the hot path', () => {
  it('composes one onion per tool plan of a chain, however many calls it serves', async () => {
    const dispatcher = createDispatcher({ tools: [searchTool(), fetchTool()], chain: canonicalChain() });
    await dispatchMany(dispatcher, DISPATCHES);
    // Two plans: 'search' declares a ceiling, so result-ceiling runs for it; 'fetch_page' declares none.
    expect(composeCalls).toHaveBeenCalledTimes(2);
  });

  it('asks each middleware about a tool once per chain, when the plan is built, never per call', async () => {
    const asked: string[] = [];
    const chain = canonicalChain().use({
      name: 'audit',
      passThrough: (tool) => {
        asked.push(tool.schema.name);
        return { why: 'nothing to audit' };
      },
      run: async (_ctx, next) => next(),
    });
    const dispatcher = createDispatcher({ tools: [searchTool(), fetchTool()], chain });
    await dispatchMany(dispatcher, DISPATCHES);
    await dispatchMany(createDispatcher({ tools: [...dispatcher.tools.values()], chain }), 10);
    expect(asked.sort()).toEqual(['fetch_page', 'search']);
  });

  it('shares one composed onion between tools whose gates all decide alike', async () => {
    const lookup = defineTool({
      name: 'search',
      description: 'Looks up.',
      inputSchema: { type: 'object', properties: { query: { type: 'string' } } },
      execute: async () => 'found',
    });
    const dispatcher = createDispatcher({ tools: [lookup, fetchTool()], chain: canonicalChain() });
    await dispatchMany(dispatcher, 100);
    expect(composeCalls).toHaveBeenCalledTimes(1);
  });

  it('composes each per-tenant chain once, with calls round-robin across the tenants', async () => {
    const base = canonicalChain();
    const tenants = ['acme', 'globex', 'initech'];
    const chains = new Map<string, Chain>(
      tenants.map((tenant) => [
        tenant,
        base.use({
          name: 'tenant-policy',
          fingerprint: tenant,
          run: async (ctx, next) => {
            ctx.note(`tenant ${tenant}`);
            await next();
          },
        }),
      ]),
    );
    const dispatcher = createDispatcher({
      tools: [searchTool(), fetchTool()],
      chain: (identity) => chains.get(identity?.tenant ?? '') ?? base,
    });
    await dispatchMany(dispatcher, DISPATCHES, (i) => ({
      identity: { tenant: tenants[i % tenants.length]! },
    }));
    // Per tenant chain, one onion for each of the two tool plans.
    expect(composeCalls).toHaveBeenCalledTimes(tenants.length * 2);
  });

  it('compiles each tool schema once, at dispatcher build, and never while dispatching', async () => {
    const { validator, compiled } = countingValidator();
    const ajvCompiles = jest.spyOn(Ajv.prototype, 'compile');
    try {
      const search = searchTool({ schema: unseenSchema() });
      const fetchPage = fetchTool(unseenSchema());
      const dispatcher = createDispatcher({
        tools: [search, fetchPage],
        chain: canonicalChain({ validator }),
      });
      const atBuild = ajvCompiles.mock.calls.length;
      expect(compiled).toEqual([search.schema.inputSchema, fetchPage.schema.inputSchema]);
      expect(atBuild).toBe(2);
      await dispatchMany(dispatcher, DISPATCHES);
      expect(compiled).toHaveLength(2);
      expect(ajvCompiles).toHaveBeenCalledTimes(atBuild);
    } finally {
      ajvCompiles.mockRestore();
    }
  });

  it('compiles a schema once per process, however many chains and dispatchers are built over it', async () => {
    const schemas = [unseenSchema(), unseenSchema()];
    const ajvCompiles = jest.spyOn(Ajv.prototype, 'compile');
    try {
      for (let i = 0; i < 5; i++) {
        // Fresh tool and schema objects each time: only the schema text repeats.
        const [search, fetchPage] = schemas.map((schema) => structuredClone(schema));
        const dispatcher = createDispatcher({
          tools: [searchTool({ schema: search! }), fetchTool(fetchPage!)],
          chain: canonicalChain(),
        });
        await dispatchMany(dispatcher, 10);
      }
      expect(ajvCompiles).toHaveBeenCalledTimes(2);
    } finally {
      ajvCompiles.mockRestore();
    }
  });

  it('creates no ajv instance for a new chain or dispatcher of a configuration already in use', async () => {
    createDispatcher({ tools: [searchTool(), fetchTool()], chain: canonicalChain() });
    // ajv's constructor adds its keywords, and ajv-formats adds its formats, on every new instance.
    const keywords = jest.spyOn(Ajv.prototype, 'addKeyword');
    const formats = jest.spyOn(Ajv.prototype, 'addFormat');
    try {
      const dispatcher = createDispatcher({
        tools: [searchTool(), fetchTool()],
        chain: canonicalChain({ validator: ajvValidator() }),
      });
      await dispatchMany(dispatcher, 10);
      expect(keywords).not.toHaveBeenCalled();
      expect(formats).not.toHaveBeenCalled();
    } finally {
      keywords.mockRestore();
      formats.mockRestore();
    }
  });

  it('forgets the least recently used compiled schema past its bound, so endless distinct schemas cannot pile up', () => {
    const validator = ajvValidator();
    const first = unseenSchema();
    validator.compile(first);
    for (let i = 0; i < 600; i++) validator.compile(unseenSchema());
    const ajvCompiles = jest.spyOn(Ajv.prototype, 'compile');
    try {
      validator.compile(structuredClone(first));
      expect(ajvCompiles).toHaveBeenCalledTimes(1);
    } finally {
      ajvCompiles.mockRestore();
    }
  });

  it('keeps a schema in use compiled while endless others come and go', () => {
    const validator = ajvValidator();
    const inUse = unseenSchema();
    validator.compile(inUse);
    const ajvCompiles = jest.spyOn(Ajv.prototype, 'compile');
    try {
      for (let i = 1; i <= 700; i++) {
        validator.compile(unseenSchema());
        if (i % 100 === 0) validator.compile(structuredClone(inUse));
      }
      expect(ajvCompiles).toHaveBeenCalledTimes(700);
    } finally {
      ajvCompiles.mockRestore();
    }
  });

  it('serializes a result once per dispatch, with the result ceiling measuring it and every event heard', async () => {
    const toJSON = jest.fn(() => ({ hits: ['refunds', 'returns'] }));
    const dispatcher = createDispatcher({
      tools: [searchTool({ result: () => ({ toJSON }) }), fetchTool()],
      chain: canonicalChain({ defaultMaxChars: 10_000, artifacts: inMemoryArtifacts() }),
    });
    const heard: string[] = [];
    dispatcher.on('gate.decision', (event) => heard.push(event.type));
    dispatcher.on('tool.end', (event) => heard.push(event.type));
    dispatcher.on('dispatch.end', (event) => heard.push(event.type));
    for (let i = 0; i < DISPATCHES; i++) {
      const outcome = await dispatcher.dispatch({ toolName: 'search', args: { query: `q${i}` } });
      expect(outcome.content).toBe('{"hits":["refunds","returns"]}');
    }
    expect(toJSON).toHaveBeenCalledTimes(DISPATCHES);
    expect(heard).toContain('tool.end');
  });

  it('serializes a result once even when the ceiling refuses it', async () => {
    const toJSON = jest.fn(() => ({ text: 'x'.repeat(200) }));
    const tool = defineTool({
      name: 'search',
      description: 'Searches the knowledge base.',
      inputSchema: searchSchema,
      resultCeiling: { maxChars: 100, narrowBy: ['limit'] },
      execute: async () => ({ toJSON }),
    });
    const dispatcher = createDispatcher({ tools: [tool], chain: canonicalChain() });
    for (let i = 0; i < 10; i++) {
      const outcome = await dispatcher.dispatch({ toolName: 'search', args: { query: 'q' } });
      expect(outcome.kind).toBe('refused');
    }
    expect(toJSON).toHaveBeenCalledTimes(10);
  });
});
