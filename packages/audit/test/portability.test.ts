// The audit log promises to run wherever Web Crypto does (Node 20+, Bun, Deno, workers): no `node:`
// imports, no `require`, no `Buffer`, no `process` in its source or built bundles.
import { join } from 'node:path';
import { scanPackage } from '../../../test-support/portability';

describe('@toolgate/audit portability', () => {
  it('uses only Web-standard APIs in its source and built bundles', () => {
    const { files, uses } = scanPackage(join(__dirname, '..'));
    expect(files).toContain('src/index.ts');
    expect(uses).toEqual([]);
  });
});
