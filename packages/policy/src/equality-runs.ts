// Consecutive rules that each compare one args field with string literals (`args.f == 'x'`,
// `'x' == args.f`, `args.f in ['x', 'y']`) are decided together: the field is read once and one map
// lookup names the rules of the run that match, in rule order. Only a string value takes this path;
// a missing field or a value of another type goes rule by rule as before, so cel-js still answers
// (and errors) wherever the compiled closure would have left it to cel-js.

import type { ASTNode } from '@marcbachmann/cel-js';

/** What an equality rule tests: the args field and the strings for which it holds. */
export interface StringTest {
  readonly field: string;
  readonly values: readonly string[];
}

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

/** The string test a whole condition is, when it is one of the three shapes; else undefined. */
export function stringTestOf(ast: ASTNode): StringTest | undefined {
  const args = ast.args as unknown;
  if (ast.op === '==') {
    const [a, b] = args as [unknown, unknown];
    const left = argsField(a);
    const right = stringLiteral(b);
    if (left !== undefined && right !== undefined) return { field: left, values: [right] };
    const field = argsField(b);
    const literal = stringLiteral(a);
    if (field !== undefined && literal !== undefined) return { field, values: [literal] };
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
    return { field, values };
  }
  return undefined;
}

/** For each string some rule of a run matches: the positions (in the run) of those rules, ascending. */
export function matchingIndex(tests: readonly StringTest[]): ReadonlyMap<string, readonly number[]> {
  const index = new Map<string, number[]>();
  tests.forEach((test, position) => {
    for (const value of new Set(test.values)) {
      const positions = index.get(value);
      if (positions === undefined) index.set(value, [position]);
      else positions.push(position);
    }
  });
  return index;
}

/**
 * `vars.args[field]` when it is an own property holding a string, else undefined (the caller then
 * evaluates each rule of the run on its own).
 */
export function stringFieldOf(vars: Record<string, unknown>, field: string): string | undefined {
  const obj = vars['args'];
  if (typeof obj !== 'object' || obj === null || Array.isArray(obj) || !Object.hasOwn(obj, field))
    return undefined;
  const value = (obj as Record<string, unknown>)[field];
  return typeof value === 'string' ? value : undefined;
}
