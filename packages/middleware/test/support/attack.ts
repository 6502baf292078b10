// Runs one named attack on validate-args in a process of its own and prints, as JSON, what the model
// read, how many times the tool ran, and how long the dispatch took. The CPU-bound tests spawn it so
// that a validator that stalls is killed by a timeout instead of freezing the test runner.
// Usage: node --import tsx attack.ts <ajv|eval-free> <attack>

import { createDispatcher, defineTool, type JsonSchema } from '@toolgate/core';
import { ajvValidator, canonicalChain, evalFreeValidator } from '@toolgate/middleware';

interface Attack {
  readonly schema: JsonSchema;
  readonly args: () => Record<string, unknown>;
}

const list = (schema: JsonSchema): JsonSchema => ({
  type: 'object',
  properties: { items: { type: 'array', uniqueItems: true, items: schema } },
});

export const ATTACKS: Readonly<Record<string, Attack>> = {
  // 38 characters: a backtracking url pattern doubles its time with each 'a'.
  'url-format': {
    schema: { type: 'object', properties: { link: { type: 'string', format: 'url' } } },
    args: () => ({ link: `http://${'a'.repeat(30)}-` }),
  },
  // Every format, against 100,000 characters built to make a backtracking engine retry.
  'every-format': {
    schema: {
      type: 'object',
      properties: Object.fromEntries(
        [
          'email',
          'url',
          'uri',
          'uri-reference',
          'uri-template',
          'hostname',
          'duration',
          'date-time',
          'ipv6',
          'byte',
          'regex',
          'json-pointer',
          'relative-json-pointer',
          'iso-date-time',
          'time',
        ].map((format) => [format, { type: 'string', format }]),
      ),
    },
    args: () => {
      const long = `${'a-a.a:1/'.repeat(12_500)}\u0000`;
      return Object.fromEntries(
        [
          'email',
          'url',
          'uri',
          'uri-reference',
          'uri-template',
          'hostname',
          'duration',
          'date-time',
          'ipv6',
          'byte',
          'regex',
          'json-pointer',
          'relative-json-pointer',
          'iso-date-time',
          'time',
        ].map((format) => [format, format === 'url' ? `http://${long}` : long]),
      );
    },
  },
  // 20,000 distinct small objects (0.23 MB): pairwise comparison is 200 million deep compares.
  'unique-objects': {
    schema: list({ type: 'object' }),
    args: () => ({ items: Array.from({ length: 20_000 }, (_, i) => ({ i })) }),
  },
  // 50,000 distinct strings and then the last one again: a pairwise check compares every pair
  // before it meets the duplicate; it is found, and named.
  'unique-strings': {
    schema: list({ type: 'string' }),
    args: () => ({ items: [...Array.from({ length: 50_000 }, (_, i) => `s${i}`), 's49999'] }),
  },
};

async function main(): Promise<void> {
  const [which, name] = process.argv.slice(2);
  const attack = ATTACKS[name ?? ''];
  if (attack === undefined || (which !== 'ajv' && which !== 'eval-free')) {
    throw new Error(`usage: attack.ts <ajv|eval-free> <${Object.keys(ATTACKS).join('|')}>`);
  }
  let runs = 0;
  const tool = defineTool({
    name: 'refund',
    description: 'Counts its runs.',
    inputSchema: attack.schema,
    execute: () => {
      runs++;
      return 'ran';
    },
  });
  const validator = which === 'ajv' ? ajvValidator() : evalFreeValidator();
  const dispatcher = createDispatcher({ tools: [tool], chain: canonicalChain({ validator }) });
  const args = attack.args();
  const started = performance.now();
  const outcome = await dispatcher.dispatch({ toolName: 'refund', args });
  const ms = performance.now() - started;
  process.stdout.write(JSON.stringify({ ms, kind: outcome.kind, content: outcome.content, runs }));
}

if (process.argv[1]?.endsWith('attack.ts')) await main();
