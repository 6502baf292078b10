// Consecutive rules that each test one args field the same way are decided together, the field read
// once: a run of string comparisons (`args.f == 'x'`, `'x' == args.f`, `args.f in ['x', 'y']`) by one
// map lookup naming the rules that match, in rule order; a run of `startsWith`/`endsWith`/`contains`
// with literals by a loop over plain string tests; a run of `size(args.f) <op> int` over one length.
// A lone rule of these shapes, or `args.f.matches('literal')`, reads its field from a per-decision memo.
// Only a value of the type the rules expect takes this path (an own string; a list or a string
// without surrogates for size); a missing field or any other value goes rule by rule as before, so
// cel-js still answers (and errors) wherever the compiled closure would have left it to cel-js.

import type { ASTNode } from '@marcbachmann/cel-js';
import { LINEAR_MATCHES, matcherFor } from './linear-matches';

/** What a rule tests of one args field, when its whole condition is one of the shapes above. */
export type FieldTest =
  | { readonly kind: 'equals'; readonly field: string; readonly values: readonly string[] }
  | { readonly kind: 'affix'; readonly field: string; readonly test: (value: string) => boolean }
  | { readonly kind: 'size'; readonly field: string; readonly test: (size: number) => boolean }
  /** `args.f.matches('literal')`: never in a run; its matcher may throw, and cel-js then answers. */
  | { readonly kind: 'matches'; readonly field: string; readonly test: (value: string) => boolean };

const SURROGATE = /[\uD800-\uDFFF]/;

const isNode = (value: unknown): value is ASTNode =>
  typeof value === 'object' && value !== null && 'op' in value && 'args' in value;

/** `args.<field>`: the field's name, else undefined. */
function argsField(node: unknown): string | undefined {
  if (!isNode(node) || node.op !== '.') return undefined;
  const [target, field] = node.args as unknown as [unknown, unknown];
  if (!isNode(target) || target.op !== 'id' || target.args !== 'args') return undefined;
  return typeof field === 'string' ? field : undefined;
}

const stringLiteral = (node: unknown): string | undefined =>
  isNode(node) && node.op === 'value' && typeof node.args === 'string' ? node.args : undefined;

/** `size(args.f)` or `args.f.size()`: the field's name, else undefined. */
function sizedField(node: unknown): string | undefined {
  if (!isNode(node)) return undefined;
  const args = node.args as unknown as unknown[];
  if (node.op === 'call' && args[0] === 'size') {
    const callArgs = args[1] as unknown[];
    return callArgs.length === 1 ? argsField(callArgs[0]) : undefined;
  }
  if (node.op === 'rcall' && args[0] === 'size' && (args[2] as unknown[]).length === 0)
    return argsField(args[1]);
  return undefined;
}

const AFFIX_TESTS = {
  startsWith: (affix: string) => (s: string) => s.startsWith(affix),
  endsWith: (affix: string) => (s: string) => s.endsWith(affix),
  contains: (affix: string) => (s: string) => s.includes(affix),
} as const;

// A number compared with a BigInt compares exactly in JS.
const SIZE_TESTS = {
  '<': (n: bigint) => (size: number) => size < n,
  '<=': (n: bigint) => (size: number) => size <= n,
  '>': (n: bigint) => (size: number) => size > n,
  '>=': (n: bigint) => (size: number) => size >= n,
} as const;

/** The field test a whole condition is, when it is one of the shapes above; else undefined. */
export function fieldTestOf(ast: ASTNode): FieldTest | undefined {
  const args = ast.args as unknown;
  if (ast.op === '==') {
    const [a, b] = args as [unknown, unknown];
    const left = argsField(a);
    const right = stringLiteral(b);
    if (left !== undefined && right !== undefined) return { kind: 'equals', field: left, values: [right] };
    const field = argsField(b);
    const literal = stringLiteral(a);
    if (field !== undefined && literal !== undefined) return { kind: 'equals', field, values: [literal] };
    return undefined;
  }
  if (ast.op === 'in') {
    const [item, container] = args as [unknown, unknown];
    const field = argsField(item);
    if (field === undefined || !isNode(container) || container.op !== 'list') return undefined;
    const values: string[] = [];
    for (const element of container.args as unknown as unknown[]) {
      const literal = stringLiteral(element);
      if (literal === undefined) return undefined;
      values.push(literal);
    }
    return { kind: 'equals', field, values };
  }
  if (ast.op === 'rcall') {
    const [name, target, callArgs] = args as [string, unknown, unknown[]];
    const field = argsField(target);
    const affix = callArgs.length === 1 ? stringLiteral(callArgs[0]) : undefined;
    if (field === undefined || affix === undefined) return undefined;
    if (name === 'matches' || name === LINEAR_MATCHES) {
      try {
        return { kind: 'matches', field, test: matcherFor(affix) };
      } catch {
        return undefined; // A pattern RE2 cannot run: the rule fails its build elsewhere.
      }
    }
    if (!Object.hasOwn(AFFIX_TESTS, name)) return undefined;
    return { kind: 'affix', field, test: AFFIX_TESTS[name as keyof typeof AFFIX_TESTS](affix) };
  }
  if (Object.hasOwn(SIZE_TESTS, ast.op)) {
    const [a, b] = args as [unknown, unknown];
    const field = sizedField(a);
    if (field === undefined || !isNode(b) || b.op !== 'value' || typeof b.args !== 'bigint') return undefined;
    return { kind: 'size', field, test: SIZE_TESTS[ast.op as keyof typeof SIZE_TESTS](b.args) };
  }
  return undefined;
}

/** For each string some rule of a run matches: the positions (in the run) of those rules, ascending. */
export function matchingIndex(
  values: readonly (readonly string[])[],
): ReadonlyMap<string, readonly number[]> {
  const index = new Map<string, number[]>();
  values.forEach((strings, position) => {
    for (const value of new Set(strings)) {
      const positions = index.get(value);
      if (positions === undefined) index.set(value, [position]);
      else positions.push(position);
    }
  });
  return index;
}

/** `vars.args[field]` when it is an own property (else undefined: the caller goes rule by rule). */
function ownFieldOf(vars: Record<string, unknown>, field: string): unknown {
  const obj = vars['args'];
  if (typeof obj !== 'object' || obj === null || Array.isArray(obj) || !Object.hasOwn(obj, field))
    return undefined;
  return (obj as Record<string, unknown>)[field];
}

/** `vars.args[field]` when it is an own property holding a string, else undefined. */
export function stringFieldOf(vars: Record<string, unknown>, field: string): string | undefined {
  const value = ownFieldOf(vars, field);
  return typeof value === 'string' ? value : undefined;
}

/**
 * CEL's `size()` of `vars.args[field]` where the compiled closure computes it (a list, a string
 * without surrogates, whose code points are its UTF-16 units), else -1.
 */
export function sizeOfField(vars: Record<string, unknown>, field: string): number {
  const value = ownFieldOf(vars, field);
  if (Array.isArray(value)) return value.length;
  if (typeof value === 'string' && !SURROGATE.test(value)) return value.length;
  return -1;
}
