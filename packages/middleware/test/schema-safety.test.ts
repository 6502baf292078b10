// What both schema validators guarantee against a hostile or careless schema (a remote MCP server
// writes the schemas of the tools it serves) and hostile args: keywords beside $ref are enforced,
// nothing runs in more than linear time, and the two validators judge alike, word for word. Each
// test reads what the model reads and counts the tool's runs. CPU-bound attacks run in a child
// process (test/support/attack.ts), killed if they stall; the bound is far above a linear run's cost
// and far below a stalled one's. Figures are printed by `pnpm bench:security`, not asserted here.

import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { createDispatcher, defineTool, type JsonSchema } from '@toolgate/core';
import { ajvValidator, canonicalChain, evalFreeValidator, type SchemaValidator } from '@toolgate/middleware';

const VALIDATORS: ReadonlyArray<readonly [string, () => SchemaValidator]> = [
  ['ajv', () => ajvValidator()],
  ['eval-free', () => evalFreeValidator()],
];

function probe(validator: SchemaValidator, inputSchema: JsonSchema) {
  let runs = 0;
  const tool = defineTool({
    name: 'refund',
    description: 'Refunds an order.',
    inputSchema,
    execute: () => {
      runs++;
      return 'refunded';
    },
  });
  const dispatcher = createDispatcher({ tools: [tool], chain: canonicalChain({ validator }) });
  return {
    async call(args: Record<string, unknown>) {
      const before = runs;
      const outcome = await dispatcher.dispatch({ toolName: 'refund', args });
      return { kind: outcome.kind, content: outcome.content, ran: runs - before };
    },
  };
}

const refusal = (problems: string) =>
  `[validate-args refused: the arguments for 'refund' do not match its schema: ${problems}. Fix these and call it again.]`;

describe.each(VALIDATORS)('%s validator', (_, make) => {
  describe('keywords beside $ref are enforced (a draft-07 schema without $schema, as MCP servers send)', () => {
    const usd = { type: 'number', minimum: 0 };

    it('maximum beside $ref refuses 1e9 and the refund does not run', async () => {
      const tool = probe(make(), {
        type: 'object',
        $defs: { usd },
        properties: { amount: { $ref: '#/$defs/usd', maximum: 100 } },
        required: ['amount'],
      });

      expect(await tool.call({ amount: 1e9 })).toEqual({
        kind: 'refused',
        content: refusal("'amount' must be <= 100"),
        ran: 0,
      });
      expect(await tool.call({ amount: 40 })).toMatchObject({ kind: 'result', ran: 1 });
    });

    it('enum, required and additionalProperties: false beside $ref are enforced too', async () => {
      const withMode = probe(make(), {
        type: 'object',
        definitions: {
          mode: { type: 'string' },
          order: { type: 'object', properties: { id: { type: 'string' } } },
        },
        properties: {
          mode: { $ref: '#/definitions/mode', enum: ['card'] },
          // additionalProperties sees only the properties beside it, as the standard says.
          order: {
            $ref: '#/definitions/order',
            required: ['id'],
            properties: { id: true },
            additionalProperties: false,
          },
        },
      });

      expect(await withMode.call({ mode: 'wire', order: { to: 'attacker-iban' } })).toEqual({
        kind: 'refused',
        content: refusal(
          "'mode' must be one of \"card\"; 'order.id' is required; 'order.to' is not an accepted argument",
        ),
        ran: 0,
      });
      expect(await withMode.call({ mode: 'card', order: { id: 'A1' } })).toMatchObject({
        kind: 'result',
        ran: 1,
      });
    });
  });

  describe('no pattern escapes the linear-time engine', () => {
    it.each([
      ['under title', { title: { type: 'string', pattern: '^(a+)+$' } }, '#/title'],
      ['in an enum value', { enum: [{ type: 'string', pattern: '^(a+)+$' }] }, '#/enum/0'],
      ['in a default', { default: { type: 'string', pattern: '^(a+)+$' } }, '#/default'],
    ])(
      'a pattern hidden %s and reached by $ref fails at dispatcher build, naming the tool',
      (_, hiding, ref) => {
        const tool = defineTool({
          name: 'hidden',
          description: 'hides a pattern',
          inputSchema: { type: 'object', ...hiding, properties: { s: { $ref: ref } } } as JsonSchema,
          execute: () => 'ran',
        });

        expect(() =>
          createDispatcher({ tools: [tool], chain: canonicalChain({ validator: make() }) }),
        ).toThrow(/hidden.*(not a subschema|must be string)/s);
      },
    );

    it('a pattern that needs backtracking fails at build even where nothing uses it', () => {
      const tool = defineTool({
        name: 'unused',
        description: 'an unused lookahead',
        inputSchema: {
          type: 'object',
          patternProperties: { '^(?=x)': {} },
          $defs: { never: { type: 'string', pattern: '(?<=a)b' } },
        },
        execute: () => 'ran',
      });

      expect(() => createDispatcher({ tools: [tool], chain: canonicalChain({ validator: make() }) })).toThrow(
        /unused.*cannot run on the linear-time engine/s,
      );
    });

    it('a $dynamicRef naming no dynamic anchor is refused at build rather than left unchecked', () => {
      const tool = defineTool({
        name: 'dynamic',
        description: 'dynamic refs',
        inputSchema: {
          $schema: 'https://json-schema.org/draft/2020-12/schema',
          type: 'object',
          properties: { s: { $dynamicRef: '#meta' } },
        },
        execute: () => 'ran',
      });

      expect(() => createDispatcher({ tools: [tool], chain: canonicalChain({ validator: make() }) })).toThrow(
        /"\$dynamicRef" at "#\/properties\/s" names no "\$dynamicAnchor" of the root/,
      );
    });
  });

  describe('multipleOf is decimal-exact', () => {
    const money = { type: 'object', properties: { price: { type: 'number', multipleOf: 0.01 } } };

    it.each([19.99, 0.07, 4.35, 1e9, 0])('%p is a multiple of 0.01: the tool runs', async (price) => {
      expect(await probe(make(), money).call({ price })).toMatchObject({ kind: 'result', ran: 1 });
    });

    it('19.991 is not, and the refusal says so', async () => {
      expect(await probe(make(), money).call({ price: 19.991 })).toEqual({
        kind: 'refused',
        content: refusal("'price' must be multiple of 0.01"),
        ran: 0,
      });
    });
  });

  describe('formats mean the same in both validators', () => {
    const formats = (format: string) => ({ type: 'object', properties: { v: { type: 'string', format } } });

    it.each([
      ['ipv4', '01.02.03.004', false],
      ['ipv4', '1.2.3.4', true],
      ['email', 'ops@example.com', true],
      ['email', '"quoted"@example.com', false],
      ['email', 'a@[1.2.3.4]', false],
      ['url', 'https://10.0.0.1/admin', false],
      ['url', 'https://8.8.8.8:8080/p?q', true],
      ['duration', 'P', false],
      ['duration', 'PT1H', true],
      ['hostname', `${'a'.repeat(63)}.example.com`, true],
    ])('%s %p: runs %p', async (format, value, runs) => {
      const outcome = await probe(make(), formats(format)).call({ v: value });

      expect(outcome.ran).toBe(runs ? 1 : 0);
      if (!runs) expect(outcome.content).toBe(refusal(`'v' must match format "${format}"`));
    });
  });

  describe('a malformed schema fails at build, as under ajv', () => {
    it.each([
      { title: 5 },
      { properties: { s: { type: 'string', minLength: -1 } } },
      { properties: { s: { type: 'strin' } } },
      { required: ['a', 'a'] },
      { if: { required: ['a'] } },
      { properties: { s: { enum: [] } } },
      { properties: { s: { multipleOf: 0 } } },
      { properties: { s: { format: 'e-mail' } } },
      { $defs: { unused: { minLenght: 2 } } },
      { properties: { s: { $ref: '#/$defs/missing' } } },
      { properties: { s: { $ref: '#/$defs/loop' } }, $defs: { loop: { $ref: '#/$defs/loop' } } },
    ])('%j', (bad) => {
      const tool = defineTool({
        name: 'malformed',
        description: 'malformed',
        inputSchema: { type: 'object', ...bad } as JsonSchema,
        execute: () => 'ran',
      });

      expect(() => createDispatcher({ tools: [tool], chain: canonicalChain({ validator: make() }) })).toThrow(
        /malformed/,
      );
    });
  });
});

describe('the two validators refuse in the same words', () => {
  it.each([
    [
      'a duplicate item',
      { type: 'object', properties: { ids: { type: 'array', uniqueItems: true } } },
      { ids: ['a', { b: 1 }, { b: 1 }] },
    ],
    [
      'a duplicate among typed items',
      {
        type: 'object',
        properties: { ids: { type: 'array', items: { type: 'string' }, uniqueItems: true } },
      },
      { ids: [1, 'x', 1] },
    ],
    [
      'a value off the decimal grid',
      { type: 'object', properties: { p: { multipleOf: 0.1, maximum: 1 } } },
      { p: 2.05 },
    ],
    [
      'a nullable list',
      { type: 'object', properties: { p: { type: ['string'], nullable: true } } },
      { p: 3 },
    ],
  ])('%s', async (_, schema, args) => {
    const viaAjv = await probe(ajvValidator(), schema).call(args);
    const viaInterpreter = await probe(evalFreeValidator(), schema).call(args);

    expect(viaAjv.kind).toBe('refused');
    expect(viaInterpreter).toEqual(viaAjv);
  });
});

// ---------------------------------------------------------------------------------------------
// CPU-bound attacks, each in a child process.

const ATTACK = join(__dirname, 'support', 'attack.ts');
const ROOT = join(__dirname, '..', '..', '..');
// A linear run of these takes well under a second (plus the child's start); a backtracking format
// takes a minute on the 38-character url, quadratic uniqueness 12 to 40 seconds.
const FAR_BELOW_STALLED_MS = 8_000;
const CHILD_LIMIT_MS = 40_000;

interface Attacked {
  readonly ms: number;
  readonly kind: string;
  readonly content: string;
  readonly runs: number;
}

function attack(validator: string, name: string): Attacked {
  const child = spawnSync(process.execPath, ['--import', 'tsx', ATTACK, validator, name], {
    cwd: ROOT,
    encoding: 'utf8',
    timeout: CHILD_LIMIT_MS,
    maxBuffer: 16 * 2 ** 20,
  });
  if (child.signal !== null)
    throw new Error(`the ${name} attack on ${validator} was still running after ${CHILD_LIMIT_MS} ms`);
  if (child.status !== 0) throw new Error(`the attack process failed: ${child.stderr}`);
  return JSON.parse(child.stdout) as Attacked;
}

describe.each(['ajv', 'eval-free'])('%s under CPU-bound attack', (validator) => {
  it(
    "format 'url' on a 38-character argument is judged at once and refused",
    () => {
      const outcome = attack(validator, 'url-format');

      expect(outcome).toMatchObject({
        kind: 'refused',
        runs: 0,
        content: refusal(`'link' must match format "url"`),
      });
      expect(outcome.ms).toBeLessThan(FAR_BELOW_STALLED_MS);
    },
    CHILD_LIMIT_MS + 5_000,
  );

  it(
    'every format, on 100,000 characters built to make a backtracking engine retry, is judged at once',
    () => {
      const outcome = attack(validator, 'every-format');

      expect(outcome).toMatchObject({ kind: 'refused', runs: 0 });
      expect(outcome.ms).toBeLessThan(FAR_BELOW_STALLED_MS);
    },
    CHILD_LIMIT_MS + 5_000,
  );

  it(
    'uniqueItems over 20,000 distinct objects answers at once and the tool runs',
    () => {
      const outcome = attack(validator, 'unique-objects');

      expect(outcome).toMatchObject({ kind: 'result', runs: 1 });
      expect(outcome.ms).toBeLessThan(FAR_BELOW_STALLED_MS);
    },
    CHILD_LIMIT_MS + 5_000,
  );

  it(
    'uniqueItems over 50,000 distinct strings and one repeat finds the repeat and names it',
    () => {
      const outcome = attack(validator, 'unique-strings');

      expect(outcome).toMatchObject({
        kind: 'refused',
        runs: 0,
        content: refusal("'items' must NOT have duplicate items (items ## 49999 and 50000 are identical)"),
      });
      expect(outcome.ms).toBeLessThan(FAR_BELOW_STALLED_MS);
    },
    CHILD_LIMIT_MS + 5_000,
  );
});
