// The policy gate promises to run on any Web-standard runtime (workerd included): its source and its
// ESM bundle reach for no Node API. The CommonJS bundle carries cel-js (ESM only upstream), whose
// bytes helpers use Buffer behind a `typeof Buffer !== 'undefined'` check: those are the only uses.
import { join } from 'node:path';
import { scanPackage } from '../../../test-support/portability';

describe('@toolgate/policy portability', () => {
  it('uses only Web-standard APIs in its source and ESM bundle; the CommonJS bundle only guarded Buffer', () => {
    const { files, uses } = scanPackage(join(__dirname, '..'));
    expect(files).toContain('src/index.ts');
    expect(uses.filter((use) => use.file !== 'dist/index.cjs')).toEqual([]);
    expect(new Set(uses.filter((use) => use.file === 'dist/index.cjs').map((use) => use.what))).toEqual(
      new Set(uses.some((use) => use.file === 'dist/index.cjs') ? ['Buffer'] : []),
    );
  });
});
