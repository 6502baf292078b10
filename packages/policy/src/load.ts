// Loading a policy from YAML or JSON text (or a file): a list of rules, checked as `policyGate` checks
// them, with every error naming the line and column it comes from.

import { isMap, isScalar, isSeq, LineCounter, parseDocument, type Node, type Pair } from 'yaml';
import { compileRules, PolicyConfigError, type PolicyRule } from './rules';

/** A policy file or text that cannot be loaded. `line` and `column` are 1-based. */
export class PolicyLoadError extends Error {
  override readonly name = 'PolicyLoadError';
  readonly code = 'ERR_POLICY_LOAD';
  constructor(
    message: string,
    readonly line: number,
    readonly column: number,
    readonly file?: string,
  ) {
    super(`${file ?? 'policy'}:${line}:${column}: ${message}`);
    this.problem = message.endsWith('.') ? message.slice(0, -1) : message;
  }
  /** What is wrong, without the position (the typed fields carry it) or a closing period. */
  readonly problem: string;
}

export interface LoadPolicyOptions {
  /** Names the source in errors. */
  readonly file?: string;
}

type Position = { line: number; col: number };

function positionOf(node: Node | Pair | undefined, lines: LineCounter): Position {
  const range = (node as { range?: [number, number, number] } | undefined)?.range;
  return range === undefined ? { line: 1, col: 1 } : lines.linePos(range[0]);
}

/** The node of rule `index`'s `field` (its value, or its key for a key that should not be there). */
function fieldNode(doc: Node, index: number | undefined, field: string | undefined): Node | undefined {
  if (!isSeq(doc) || index === undefined) return doc;
  const item = doc.items[index] as Node | undefined;
  if (field === undefined || !isMap(item)) return item;
  const pair = item.items.find((p) => isScalar(p.key) && p.key.value === field);
  if (pair === undefined) return item;
  return (pair.value as Node | null) ?? (pair.key as Node);
}

/** Where a CEL error's column inside a `when` scalar lands in the file, when the scalar is one plain or quoted line. */
function celPosition(node: Node, start: Position, column: number | undefined): Position {
  if (column === undefined || !isScalar(node) || typeof node.value !== 'string' || node.value.includes('\n'))
    return start;
  if (node.type === 'PLAIN') return { line: start.line, col: start.col + column - 1 };
  const range = node.range;
  // Quoted: exact only when the source is the value plus its two quotes (nothing escaped).
  const quoted = node.type === 'QUOTE_DOUBLE' || node.type === 'QUOTE_SINGLE';
  if (quoted && range !== undefined && range !== null && range[1] - range[0] === node.value.length + 2)
    return { line: start.line, col: start.col + column };
  return start;
}

/** Parses and checks policy text; throws PolicyLoadError naming line and column. */
function parsePolicy(text: string, file: string | undefined): PolicyRule[] {
  if (typeof text !== 'string') throw new TypeError('loadPolicy: expected YAML or JSON text, or { file }.');
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, prettyErrors: false, uniqueKeys: true });
  const first = doc.errors[0];
  if (first !== undefined) {
    const at = lines.linePos(first.pos[0]);
    const message = first.message;
    throw new PolicyLoadError(`not valid YAML or JSON: ${message}.`, at.line, at.col, file);
  }
  const root = doc.contents as Node | null;
  if (root === null) return [];
  if (!isSeq(root)) {
    const at = positionOf(root, lines);
    throw new PolicyLoadError('a policy is a list of rules (- name: …, effect: …).', at.line, at.col, file);
  }
  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: 100 });
  } catch {
    throw new PolicyLoadError('the document could not be read (too many aliases?).', 1, 1, file);
  }
  try {
    compileRules(value);
  } catch (error) {
    if (!(error instanceof PolicyConfigError)) throw error;
    const node = fieldNode(root, error.index, error.field);
    const start = positionOf(node, lines);
    const at = error.field === 'when' && node !== undefined ? celPosition(node, start, error.column) : start;
    throw new PolicyLoadError(error.message, at.line, at.col, file);
  }
  return value as PolicyRule[];
}

/**
 * Loads rules from YAML or JSON text (a list of rules), or from a file. Every rule is checked as
 * `policyGate` checks it (fields, globs, CEL syntax and types); errors name the line and column.
 *
 * @example
 * const rules = loadPolicy(`
 * - name: big-refunds-ask
 *   tools: [issue_refund]
 *   when: args.amount > 1000.0
 *   effect: ask
 * `);
 */
export function loadPolicy(text: string, options?: LoadPolicyOptions): PolicyRule[];
export function loadPolicy(source: { readonly file: string | URL }): Promise<PolicyRule[]>;
export function loadPolicy(
  source: string | { readonly file: string | URL },
  options: LoadPolicyOptions = {},
): PolicyRule[] | Promise<PolicyRule[]> {
  if (typeof source === 'string') return parsePolicy(source, options.file);
  if (typeof source !== 'object' || source === null || !('file' in source)) {
    throw new TypeError('loadPolicy: expected YAML or JSON text, or { file }.');
  }
  return readPolicyFile(source.file);
}

type ReadFile = (file: string | URL, encoding: 'utf8') => Promise<string>;

/** Node's (and Bun's, Deno's) fs, found without an import: a worker bundle must not name a node: module. */
function fileReader(): ReadFile | undefined {
  const host: { getBuiltinModule?: (id: string) => unknown } | undefined = Reflect.get(globalThis, 'process');
  const fs = host?.getBuiltinModule?.('node:fs/promises') as { readFile?: ReadFile } | undefined;
  return typeof fs?.readFile === 'function' ? fs.readFile : undefined;
}

async function readPolicyFile(file: string | URL): Promise<PolicyRule[]> {
  const readFile = fileReader();
  if (readFile === undefined) {
    throw new Error(
      'loadPolicy({ file }) is not supported on this runtime (no process.getBuiltinModule); read the file yourself and pass its text.',
    );
  }
  const text = await readFile(file, 'utf8');
  return parsePolicy(text, typeof file === 'string' ? file : file.pathname);
}
