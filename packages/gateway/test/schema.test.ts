// The configuration schema has one source (src/config/schema.ts): the shipped JSON is written from
// it, and every pattern or choice of forms carries the words its failure is reported with.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { configSchema } from '../src/config/schema';

const shipped = join(__dirname, '..', 'schema', 'toolgate.schema.json');

/** Every node of the schema with its JSON pointer. */
function* nodes(node: unknown, pointer = ''): Generator<[string, Record<string, unknown>]> {
  if (Array.isArray(node)) {
    for (const [index, item] of node.entries()) yield* nodes(item, `${pointer}/${index}`);
    return;
  }
  if (typeof node !== 'object' || node === null) return;
  yield [pointer, node as Record<string, unknown>];
  for (const [key, value] of Object.entries(node)) yield* nodes(value, `${pointer}/${key}`);
}

describe('the configuration schema', () => {
  it('ships as JSON exactly as src/config/schema.ts defines it (run `pnpm --filter @toolgate/gateway schema` after a change)', () => {
    expect(JSON.parse(readFileSync(shipped, 'utf8'))).toEqual(configSchema);
  });

  it('gives every pattern and every choice of forms its own error words, outside any choice', () => {
    const wordless = [...nodes(configSchema)]
      .filter(([pointer, node]) => ('pattern' in node || 'oneOf' in node) && !pointer.includes('/oneOf/'))
      .filter(([, node]) => {
        const words = node['errorMessage'] as { message?: unknown; fix?: unknown } | undefined;
        return typeof words?.message !== 'string' || typeof words.fix !== 'string';
      })
      .map(([pointer]) => pointer);
    expect(wordless).toEqual([]);
  });

  it('marks each unit the loader resolves with a unit it knows', () => {
    const units = [...nodes(configSchema)].flatMap(([, node]) => ('unit' in node ? [node['unit']] : []));
    expect(new Set(units)).toEqual(new Set(['milliseconds', 'bytes', 'stateStore', 'limitsStore']));
  });
});
