import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import {
  layeringViolations,
  readImportGraph,
  type ImportGraph,
  type PackageNode,
  type SourceFile,
} from './layering';

const repositoryRoot = resolve(__dirname, '..');

function pkg(name: string, declared: string[], sources: SourceFile[], tests: SourceFile[] = []): PackageNode {
  return { name, dir: `packages/${name.replace('@toolgate/', '')}`, declared, sources, tests };
}

const kinds = (graph: ImportGraph): string[] =>
  layeringViolations(graph).map((v) => `${v.kind} ${v.file} ${v.specifier}`);

describe('the layering of the repository', () => {
  it('holds: no package imports up, no node: in portable packages, no gate imports a gate', () => {
    const violations = layeringViolations(readImportGraph(repositoryRoot));
    expect(violations).toEqual([]);
  });

  it('reads every package and the gates it defines', () => {
    const graph = readImportGraph(repositoryRoot);
    const names = graph.packages.map((p) => p.name);
    expect(names).toEqual(
      expect.arrayContaining(['@toolgate/core', '@toolgate/gateway', '@toolgate/policy']),
    );
    const middleware = graph.packages.find((p) => p.name === '@toolgate/middleware');
    const gates = middleware?.sources.flatMap((file) => (file.gate === undefined ? [] : [file.gate])) ?? [];
    expect(gates).toEqual(expect.arrayContaining(['check-in', 'egress-guard', 'validate-args']));
    expect(gates).not.toContain('canonical-chain');
  });
});

describe('layeringViolations', () => {
  it('accepts an import down a floor that package.json declares', () => {
    const graph = {
      packages: [
        pkg(
          '@toolgate/policy',
          ['@toolgate/core'],
          [{ path: 'packages/policy/src/a.ts', imports: ['@toolgate/core'] }],
        ),
      ],
    };
    expect(kinds(graph)).toEqual([]);
  });

  it('refuses an import up a floor, in the manifest and in the source', () => {
    const graph = {
      packages: [
        pkg(
          '@toolgate/core',
          ['@toolgate/middleware'],
          [{ path: 'packages/core/src/a.ts', imports: ['@toolgate/middleware'] }],
        ),
      ],
    };
    expect(kinds(graph)).toEqual([
      'declared-upward packages/core/package.json @toolgate/middleware',
      'import-upward packages/core/src/a.ts @toolgate/middleware',
    ]);
  });

  it('refuses anything that imports the gateway, by name or by subpath', () => {
    const graph = {
      packages: [
        pkg('@toolgate/mcp', [], [{ path: 'packages/mcp/src/a.ts', imports: ['@toolgate/gateway/config'] }]),
      ],
    };
    expect(kinds(graph)).toEqual(['import-upward packages/mcp/src/a.ts @toolgate/gateway/config']);
  });

  it('refuses an allowed import package.json does not declare', () => {
    const graph = {
      packages: [
        pkg('@toolgate/inbox', [], [{ path: 'packages/inbox/src/a.ts', imports: ['@toolgate/core'] }]),
      ],
    };
    expect(kinds(graph)).toEqual(['import-undeclared packages/inbox/src/a.ts @toolgate/core']);
  });

  it('refuses node: and bare builtins in a portable package but not in the gateway', () => {
    const graph = {
      packages: [
        pkg(
          '@toolgate/middleware',
          [],
          [{ path: 'packages/middleware/src/a.ts', imports: ['node:crypto', 'fs'] }],
        ),
        pkg(
          '@toolgate/gateway',
          [],
          [{ path: 'packages/gateway/src/a.ts', imports: ['node:child_process'] }],
        ),
      ],
    };
    expect(kinds(graph)).toEqual([
      'node-in-portable packages/middleware/src/a.ts node:crypto',
      'node-in-portable packages/middleware/src/a.ts fs',
    ]);
  });

  it('refuses a gate that imports another gate, not one that imports a helper', () => {
    const graph = {
      packages: [
        pkg(
          '@toolgate/middleware',
          [],
          [
            {
              path: 'packages/middleware/src/limits.ts',
              gate: 'limits',
              imports: ['./permission', './limit-store'],
            },
            {
              path: 'packages/middleware/src/permission.ts',
              gate: 'permission',
              imports: ['./internal/consult.js'],
            },
            { path: 'packages/middleware/src/limit-store.ts', imports: [] },
            { path: 'packages/middleware/src/internal/consult.ts', imports: [] },
            // The composer is no gate: it may import every gate.
            { path: 'packages/middleware/src/canonical-chain.ts', imports: ['./limits', './permission'] },
          ],
        ),
      ],
    };
    expect(kinds(graph)).toEqual(['gate-imports-gate packages/middleware/src/limits.ts ./permission']);
  });

  it('refuses a relative import into another package, from src or from tests into another test folder', () => {
    const graph = {
      packages: [
        pkg(
          '@toolgate/audit',
          [],
          [{ path: 'packages/audit/src/a.ts', imports: ['../../core/src/canonical'] }],
          [
            {
              path: 'packages/audit/test/a.test.ts',
              imports: ['../../core/test/hardening/support', './fixtures'],
            },
            { path: 'packages/audit/test/deep/b.test.ts', imports: ['../../../../test-support/secrets'] },
          ],
        ),
      ],
    };
    expect(kinds(graph)).toEqual([
      'import-outside-package packages/audit/src/a.ts ../../core/src/canonical',
      'test-imports-other-test packages/audit/test/a.test.ts ../../core/test/hardening/support',
    ]);
  });

  it("refuses a file outside the packages that reaches into a package's test folder", () => {
    const graph = {
      packages: [],
      others: [
        {
          path: 'portability/suite.ts',
          imports: ['../packages/middleware/test/schema-cases', '../test-support/x'],
        },
      ],
    };
    expect(kinds(graph)).toEqual([
      'test-imports-other-test portability/suite.ts ../packages/middleware/test/schema-cases',
    ]);
  });

  it('refuses a package the layering does not know, so a new package gets a floor', () => {
    const graph = { packages: [pkg('@toolgate/newcomer', [], [])] };
    expect(kinds(graph)).toEqual(['unknown-package packages/newcomer/package.json @toolgate/newcomer']);
  });
});

describe('readImportGraph on a workspace built on disk', () => {
  let root: string;

  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'toolgate-layering-'));
  });

  afterEach(() => {
    rmSync(root, { recursive: true, force: true });
  });

  function write(path: string, text: string): void {
    const full = join(root, path);
    mkdirSync(dirname(full), { recursive: true });
    writeFileSync(full, text);
  }

  it('finds the bad edges a violating fixture holds, and ignores imports written in comments', () => {
    write('packages/core/package.json', JSON.stringify({ name: '@toolgate/core', dependencies: {} }));
    write(
      'packages/core/src/index.ts',
      [
        "// import { createGateway } from '@toolgate/gateway' is only prose here",
        "import { randomUUID } from 'node:crypto';",
        "export const load = () => import('@toolgate/middleware');",
        'export const id = randomUUID;',
      ].join('\n'),
    );
    write(
      'packages/middleware/package.json',
      JSON.stringify({ name: '@toolgate/middleware', dependencies: { '@toolgate/core': 'workspace:*' } }),
    );
    write('packages/middleware/src/permission.ts', "export const gate = { name: 'permission' };\n");
    write(
      'packages/middleware/src/limits.ts',
      "export { gate as inner } from './permission';\nexport const gate = { name: 'limits' };\n",
    );
    write('packages/middleware/test/shared.test.ts', "import '../../core/test/support';\n");
    expect(kinds(readImportGraph(root))).toEqual([
      'node-in-portable packages/core/src/index.ts node:crypto',
      'import-upward packages/core/src/index.ts @toolgate/middleware',
      'gate-imports-gate packages/middleware/src/limits.ts ./permission',
      'test-imports-other-test packages/middleware/test/shared.test.ts ../../core/test/support',
    ]);
  });
});
