// core promises to run on any Web-standard runtime, so neither its source nor its bundles may
// reach for Node: no `node:` imports, no `require`, no `Buffer`, no `process`.
import { join } from 'node:path';
import { nodeOnlyUses, scanPackage } from '../../../test-support/portability';

describe('@toolgate/core portability', () => {
  it('uses only Web-standard APIs in its source and built bundles', () => {
    const { files, uses } = scanPackage(join(__dirname, '..'));
    expect(files).toContain('src/index.ts');
    expect(uses).toEqual([]);
  });
});

describe('nodeOnlyUses()', () => {
  it('finds node: imports, bare builtin imports and dynamic imports of builtins', () => {
    const text = [
      "import { randomUUID } from 'node:crypto';",
      "export { readFile } from 'fs/promises';",
      "const os = await import('node:os');",
      "type T = import('node:stream').Readable;",
    ].join('\n');
    expect(nodeOnlyUses('a.ts', text).map((use) => use.what)).toEqual([
      "import of 'node:crypto'",
      "import of 'fs/promises'",
      "dynamic import of 'node:os'",
      "type import of 'node:stream'",
    ]);
  });

  it('finds require, Buffer and process with their line numbers', () => {
    const text = [
      "const a = require('koa-compose');",
      "const b = Buffer.from('x');",
      'const c = process.env.KEY;',
      'const d = globalThis.process;',
    ].join('\n');
    expect(nodeOnlyUses('a.ts', text)).toEqual([
      { file: 'a.ts', line: 1, what: "require('koa-compose')" },
      { file: 'a.ts', line: 2, what: 'Buffer' },
      { file: 'a.ts', line: 3, what: 'process' },
      { file: 'a.ts', line: 4, what: 'process' },
    ]);
  });

  it('ignores comments, strings and property names that only look like Node globals', () => {
    const text = [
      '/** @example createChain([], { checkIns: { key: process.env.KEY! } }) */',
      "// kept in this process's memory; see require('x')",
      "const s = 'process.env and Buffer';",
      'const o = { process: 1, Buffer: 2 };',
      'const p = o.process + o.Buffer;',
      'const q = new ArrayBuffer(8);',
    ].join('\n');
    expect(nodeOnlyUses('a.ts', text)).toEqual([]);
  });

  it('lets a CommonJS bundle require its declared dependencies but not builtins', () => {
    const text = [
      "require('koa-compose');",
      "require('@scope/pkg/sub');",
      "require('node:fs');",
      "require('left-pad');",
    ].join('\n');
    const requirable = new Set(['koa-compose', '@scope/pkg']);
    expect(nodeOnlyUses('index.cjs', text, { requirable }).map((use) => use.what)).toEqual([
      "require('node:fs')",
      "require('left-pad')",
    ]);
  });
});
