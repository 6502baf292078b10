import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { dirname, join, relative, resolve, sep } from 'node:path';
import ts from 'typescript';

/**
 * The house rules of STYLE.md and DESIGN.md/GATEWAY.md §1 as data, and a checker over an import graph.
 * Reading the repository into a graph and judging the graph are separate so a test can feed a bad edge.
 */

/** Which workspace packages each package may import; a package missing here is itself a violation. */
export const allowedImports: Readonly<Record<string, readonly string[]>> = {
  '@toolgate/core': [],
  '@toolgate/middleware': ['@toolgate/core'],
  '@toolgate/policy': ['@toolgate/core'],
  '@toolgate/inbox': ['@toolgate/core'],
  '@toolgate/audit': ['@toolgate/core'],
  '@toolgate/otel': ['@toolgate/core'],
  '@toolgate/providers': ['@toolgate/core'],
  '@toolgate/ai-sdk': ['@toolgate/core', '@toolgate/middleware'],
  '@toolgate/langchain': ['@toolgate/core', '@toolgate/middleware'],
  '@toolgate/openai-agents': ['@toolgate/core', '@toolgate/middleware'],
  '@toolgate/mcp': ['@toolgate/core', '@toolgate/middleware'],
  '@toolgate/testing': ['@toolgate/core', '@toolgate/middleware'],
  '@toolgate/store-sqlite': ['@toolgate/core', '@toolgate/middleware'],
  '@toolgate/store-postgres': ['@toolgate/core', '@toolgate/middleware'],
  '@toolgate/store-redis': ['@toolgate/core', '@toolgate/middleware'],
  // The top floor: everything below it, and nothing imports it (no other entry lists it).
  '@toolgate/gateway': [
    '@toolgate/core',
    '@toolgate/middleware',
    '@toolgate/policy',
    '@toolgate/inbox',
    '@toolgate/audit',
    '@toolgate/otel',
    '@toolgate/mcp',
    '@toolgate/store-sqlite',
    '@toolgate/store-postgres',
    '@toolgate/store-redis',
  ],
};

/** Packages that run on Node, Bun, Deno and edge workers alike: Web-standard APIs only. */
export const portablePackages: readonly string[] = [
  '@toolgate/core',
  '@toolgate/middleware',
  '@toolgate/policy',
  '@toolgate/inbox',
];

export interface SourceFile {
  /** Path relative to the repository root, with forward slashes. */
  readonly path: string;
  /** Every module specifier the file imports, re-exports, requires or imports dynamically. */
  readonly imports: readonly string[];
  /** The middleware name the file defines (`name: 'check-in'` in check-in.ts); absent for non-gates. */
  readonly gate?: string;
}

export interface PackageNode {
  readonly name: string;
  /** The package folder relative to the repository root (`packages/core`). */
  readonly dir: string;
  /** Workspace packages named in dependencies, peerDependencies or optionalDependencies. */
  readonly declared: readonly string[];
  readonly sources: readonly SourceFile[];
  readonly tests: readonly SourceFile[];
}

export interface ImportGraph {
  readonly packages: readonly PackageNode[];
  /** Files outside the packages (examples, bench, portability, test-support): they may import no package's test folder. */
  readonly others?: readonly SourceFile[];
}

export type ViolationKind =
  | 'unknown-package'
  | 'declared-upward'
  | 'import-upward'
  | 'import-undeclared'
  | 'import-outside-package'
  | 'node-in-portable'
  | 'gate-imports-gate'
  | 'test-imports-other-test';

export interface Violation {
  readonly kind: ViolationKind;
  readonly file: string;
  readonly specifier: string;
  readonly fix: string;
}

const nodeBuiltins = new Set(builtinModules);

/** `@toolgate/core/jest` → `@toolgate/core`; anything not in the workspace scope → undefined. */
function workspacePackage(specifier: string): string | undefined {
  const match = /^(@toolgate\/[a-z0-9-]+)(\/|$)/.exec(specifier);
  return match?.[1];
}

function isNodeBuiltin(specifier: string): boolean {
  return specifier.startsWith('node:') || nodeBuiltins.has(specifier.split('/')[0] ?? specifier);
}

const posix = (path: string): string => path.split(sep).join('/');

/** Resolve a relative specifier against the importing file, both repository-relative. */
function resolveRelative(from: string, specifier: string): string {
  return posix(join(dirname(from), specifier)).replace(/\.(js|ts)$/, '');
}

function checkSource(pkg: PackageNode, file: SourceFile, gates: Set<string>, out: Violation[]): void {
  const allowed = allowedImports[pkg.name] ?? [];
  for (const specifier of file.imports) {
    const target = workspacePackage(specifier);
    if (target !== undefined && target !== pkg.name) {
      if (!allowed.includes(target)) {
        out.push({
          kind: 'import-upward',
          file: file.path,
          specifier,
          fix: `${pkg.name} may import only ${allowed.join(', ') || 'no workspace package'}; move the shared code down a floor`,
        });
      } else if (!pkg.declared.includes(target)) {
        out.push({
          kind: 'import-undeclared',
          file: file.path,
          specifier,
          fix: `declare ${target} in ${pkg.dir}/package.json dependencies`,
        });
      }
    }
    if (specifier.startsWith('.')) {
      const resolved = resolveRelative(file.path, specifier);
      if (!resolved.startsWith(`${pkg.dir}/`)) {
        out.push({
          kind: 'import-outside-package',
          file: file.path,
          specifier,
          fix: 'import another package by its name, never by a relative path into its folder',
        });
      } else if (file.gate !== undefined && gates.has(resolved)) {
        out.push({
          kind: 'gate-imports-gate',
          file: file.path,
          specifier,
          fix: 'gates are independent: move the shared helper to internal/ (or core) and import it from both',
        });
      }
    }
    if (portablePackages.includes(pkg.name) && isNodeBuiltin(specifier)) {
      out.push({
        kind: 'node-in-portable',
        file: file.path,
        specifier,
        fix: `${pkg.name} is portable: use a Web-standard API (globalThis.crypto, TextEncoder, URL) instead`,
      });
    }
  }
}

function checkTest(pkg: PackageNode | undefined, file: SourceFile, out: Violation[]): void {
  for (const specifier of file.imports) {
    if (!specifier.startsWith('.')) continue;
    const resolved = resolveRelative(file.path, specifier);
    const other = /^packages\/([a-z0-9-]+)\/test\//.exec(resolved);
    if (other !== null && `packages/${other[1]}` !== pkg?.dir) {
      out.push({
        kind: 'test-imports-other-test',
        file: file.path,
        specifier,
        fix: 'move the shared helper to test-support/ (or @toolgate/testing) and import it from there',
      });
    }
  }
}

/** Every way the graph breaks the house rules; empty when the layering holds. */
export function layeringViolations(graph: ImportGraph): Violation[] {
  const out: Violation[] = [];
  for (const pkg of graph.packages) {
    const allowed = allowedImports[pkg.name];
    if (allowed === undefined) {
      out.push({
        kind: 'unknown-package',
        file: `${pkg.dir}/package.json`,
        specifier: pkg.name,
        fix: 'add the package to allowedImports in test-support/layering.ts with the floors it may import',
      });
    }
    for (const dependency of pkg.declared) {
      if (dependency !== pkg.name && !(allowed ?? []).includes(dependency)) {
        out.push({
          kind: 'declared-upward',
          file: `${pkg.dir}/package.json`,
          specifier: dependency,
          fix: `${pkg.name} may depend only on ${(allowed ?? []).join(', ') || 'no workspace package'}`,
        });
      }
    }
    const gates = new Set(
      pkg.sources.filter((file) => file.gate !== undefined).map((file) => file.path.replace(/\.ts$/, '')),
    );
    for (const file of pkg.sources) checkSource(pkg, file, gates, out);
    for (const file of pkg.tests) checkTest(pkg, file, out);
  }
  for (const file of graph.others ?? []) checkTest(undefined, file, out);
  return out;
}

function typescriptFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .sort()
    .flatMap((entry) => {
      const path = join(dir, entry);
      if (statSync(path).isDirectory()) return entry === 'node_modules' ? [] : typescriptFiles(path);
      return /\.(ts|tsx|mts|cts)$/.test(entry) && !entry.endsWith('.d.ts') ? [path] : [];
    });
}

/** A gate defines a middleware named after its file (STYLE.md: names match their file). */
function gateName(path: string, text: string): string | undefined {
  const base = path.replace(/^.*\//, '').replace(/\.tsx?$/, '');
  return text.includes(`name: '${base}'`) ? base : undefined;
}

function readSource(root: string, path: string): SourceFile {
  const text = readFileSync(path, 'utf8');
  // TypeScript's own pre-processor: comments and strings that merely look like imports are not read.
  const info = ts.preProcessFile(text, true, true);
  const imports = info.importedFiles.map((entry) => entry.fileName);
  const repoPath = posix(relative(root, path));
  const gate = gateName(repoPath, text);
  return gate === undefined ? { path: repoPath, imports } : { path: repoPath, imports, gate };
}

interface PackageJson {
  readonly name: string;
  readonly dependencies?: Record<string, string>;
  readonly peerDependencies?: Record<string, string>;
  readonly optionalDependencies?: Record<string, string>;
}

/** The workspace's import graph: every package under `packages/`, its declared deps, src and test imports. */
export function readImportGraph(root: string): ImportGraph {
  const packagesDir = resolve(root, 'packages');
  const packages = readdirSync(packagesDir)
    .sort()
    .filter((entry) => existsSync(join(packagesDir, entry, 'package.json')))
    .map((entry): PackageNode => {
      const dir = join(packagesDir, entry);
      const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as PackageJson;
      const declared = Object.keys({
        ...manifest.dependencies,
        ...manifest.peerDependencies,
        ...manifest.optionalDependencies,
      }).filter((name) => workspacePackage(name) !== undefined);
      return {
        name: manifest.name,
        dir: posix(relative(root, dir)),
        declared,
        sources: typescriptFiles(join(dir, 'src')).map((path) => readSource(root, path)),
        tests: typescriptFiles(join(dir, 'test')).map((path) => readSource(root, path)),
      };
    });
  const others = ['examples', 'bench', 'portability', 'test-support'].flatMap((folder) =>
    typescriptFiles(join(root, folder)).map((path) => readSource(root, path)),
  );
  return { packages, others };
}
