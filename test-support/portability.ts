// Finds Node-only constructs in a package that promises to run on any Web-standard runtime.
// It walks the TypeScript syntax tree rather than matching text, so comments such as a JSDoc
// `process.env` example or "this process's memory" do not count as uses.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { join, relative } from 'node:path';
import ts from 'typescript';

/** One Node-only construct, located well enough to fix it. */
export interface NodeOnlyUse {
  readonly file: string;
  readonly line: number;
  readonly what: string;
}

export interface ScanOptions {
  /** Packages a CommonJS bundle may `require`: its own dependencies, which the bundler leaves external. */
  readonly requirable?: ReadonlySet<string>;
}

const NODE_GLOBALS = new Set(['Buffer', 'process', 'NodeJS', '__dirname', '__filename']);
const BUILTINS = new Set(builtinModules);

function isNodeBuiltin(specifier: string): boolean {
  return specifier.startsWith('node:') || BUILTINS.has(specifier.split('/')[0] ?? specifier);
}

function packageNameOf(specifier: string): string {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : (parts[0] ?? specifier);
}

function scriptKindOf(fileName: string): ts.ScriptKind {
  return /\.(c|m)?js$/.test(fileName) ? ts.ScriptKind.JS : ts.ScriptKind.TS;
}

// `x.process` and `{ Buffer: 1 }` name properties, not the Node globals.
function isPropertyName(node: ts.Identifier): boolean {
  const parent = node.parent;
  if (ts.isPropertyAccessExpression(parent) && parent.name === node) {
    return !(ts.isIdentifier(parent.expression) && parent.expression.text === 'globalThis');
  }
  return (
    (ts.isPropertyAssignment(parent) ||
      ts.isPropertySignature(parent) ||
      ts.isPropertyDeclaration(parent) ||
      ts.isMethodDeclaration(parent) ||
      ts.isMethodSignature(parent)) &&
    parent.name === node
  );
}

/** Node-only constructs in one source or bundle file. */
export function nodeOnlyUses(fileName: string, text: string, options: ScanOptions = {}): NodeOnlyUse[] {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true, scriptKindOf(fileName));
  const uses: NodeOnlyUse[] = [];
  const report = (node: ts.Node, what: string): void => {
    const line = source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
    uses.push({ file: fileName, line, what });
  };
  const checkSpecifier = (node: ts.Node, specifier: ts.Node | undefined, how: string): void => {
    if (specifier !== undefined && ts.isStringLiteralLike(specifier) && isNodeBuiltin(specifier.text)) {
      report(node, `${how} of '${specifier.text}'`);
    }
  };

  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) {
      checkSpecifier(node, node.moduleSpecifier, 'import');
    } else if (ts.isImportTypeNode(node)) {
      const argument = node.argument;
      if (ts.isLiteralTypeNode(argument)) checkSpecifier(node, argument.literal, 'type import');
    } else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) {
      report(node, 'import = require()');
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      checkSpecifier(node, node.arguments[0], 'dynamic import');
    } else if (ts.isIdentifier(node) && node.text === 'require' && !isPropertyName(node)) {
      const call = node.parent;
      const argument = ts.isCallExpression(call) && call.expression === node ? call.arguments[0] : undefined;
      const specifier =
        argument !== undefined && ts.isStringLiteralLike(argument) ? argument.text : undefined;
      const allowed =
        specifier !== undefined &&
        !isNodeBuiltin(specifier) &&
        options.requirable?.has(packageNameOf(specifier)) === true;
      if (!allowed) report(node, specifier === undefined ? 'require' : `require('${specifier}')`);
    } else if (ts.isIdentifier(node) && NODE_GLOBALS.has(node.text) && !isPropertyName(node)) {
      report(node, node.text);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return uses;
}

function filesUnder(directory: string, pattern: RegExp): string[] {
  if (!existsSync(directory)) return [];
  return readdirSync(directory, { recursive: true, encoding: 'utf8' })
    .filter((name) => pattern.test(name))
    .map((name) => join(directory, name))
    .sort();
}

/** The files scanned in a package and the Node-only constructs found in them. */
export function scanPackage(packageDir: string): { files: string[]; uses: NodeOnlyUse[] } {
  const manifest = JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8')) as {
    dependencies?: Record<string, string>;
    peerDependencies?: Record<string, string>;
  };
  const requirable = new Set([
    ...Object.keys(manifest.dependencies ?? {}),
    ...Object.keys(manifest.peerDependencies ?? {}),
  ]);
  // dist exists only after a build; CI builds before testing, so the shipped bundles are checked there.
  const files = [
    ...filesUnder(join(packageDir, 'src'), /\.ts$/),
    ...filesUnder(join(packageDir, 'dist'), /\.(js|cjs|mjs|d\.ts|d\.cts|d\.mts)$/),
  ];
  const uses = files.flatMap((file) => {
    const options = file.endsWith('.cjs') ? { requirable } : {};
    return nodeOnlyUses(relative(packageDir, file), readFileSync(file, 'utf8'), options);
  });
  return { files: files.map((file) => relative(packageDir, file)), uses };
}
