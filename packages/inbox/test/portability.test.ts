// The inbox promises to run wherever Hono does (Node, Bun, Deno, workers), so neither its source
// nor its bundles may reach for Node: no `node:` imports, no `require` of builtins, no `Buffer`,
// no `process`.
import { join } from 'node:path';
import { scanPackage } from '../../../test-support/portability';

describe('@toolgate/inbox portability', () => {
  it('uses only Web-standard APIs in its source and built bundles', () => {
    const { files, uses } = scanPackage(join(__dirname, '..'));
    expect(files).toContain('src/index.ts');
    expect(files).toContain('src/views/values.ts');
    expect(uses).toEqual([]);
  });
});
