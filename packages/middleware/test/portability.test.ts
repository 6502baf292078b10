// The gates run wherever core runs, so they share its rule: Web-standard APIs only, no Node.
import { join } from 'node:path';
import { scanPackage } from '../../../test-support/portability';

describe('@toolgate/middleware portability', () => {
  it('uses only Web-standard APIs in its source and built bundles', () => {
    const { files, uses } = scanPackage(join(__dirname, '..'));
    expect(files).toContain('src/index.ts');
    expect(uses).toEqual([]);
  });
});
