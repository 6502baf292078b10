// What a rule can cost, bounded when the policy is built, from the tool's input schema: how many
// steps evaluating its `when` may take, as a polynomial in the size of an input the schema leaves
// unbounded (a list with no `maxItems`, a string with no `maxLength`). A rule that walks an
// unbounded input once is linear in the request (which the transport bounds); one that walks it
// inside a walk of it (`args.to.exists(a, args.to.filter(b, b == a).size() > 1)`) grows with its
// square and is refused, as is one whose bounded cost exceeds the limit.

import type { ASTNode } from '@marcbachmann/cel-js';
import type { JsonSchema } from '@toolgate/core';
import { LINEAR_MATCHES } from './linear-matches';

/** Steps a rule may take on the largest input its tool's schema allows. */
export const MAX_RULE_COST = 1_000_000;
/** The size an unbounded input is counted at, for a rule linear in it. */
export const NOMINAL_UNBOUNDED_SIZE = 10_000;

/** c[0] + c[1]·N + c[2]·N² …, N the size of an unbounded input. */
type Poly = number[];

const constant = (c: number): Poly => [c];
const UNBOUNDED: Poly = [0, 1];

function add(...polys: Poly[]): Poly {
  const out: Poly = [];
  for (const p of polys) p.forEach((c, i) => (out[i] = (out[i] ?? 0) + c));
  return out;
}

function mul(a: Poly, b: Poly): Poly {
  const out: Poly = [];
  a.forEach((x, i) => b.forEach((y, j) => (out[i + j] = (out[i + j] ?? 0) + x * y)));
  return out;
}

/** An upper bound of both. */
function max(a: Poly, b: Poly): Poly {
  const out: Poly = [];
  for (let i = 0; i < Math.max(a.length, b.length); i++) out[i] = Math.max(a[i] ?? 0, b[i] ?? 0);
  return out;
}

function degree(p: Poly): number {
  for (let i = p.length - 1; i > 0; i--) if ((p[i] ?? 0) > 0) return i;
  return 0;
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const isNode = (value: unknown): value is ASTNode => isRecord(value) && 'op' in value && 'args' in value;

/** The size counted for what the gateway itself hands a rule (`identity`, `tool`): not the caller's to grow. */
const TRUSTED_SIZE = 64;

/** The variable a select or index chain starts from. */
function rootOf(node: ASTNode): string | undefined {
  let at: ASTNode = node;
  while (at.op === '.' || at.op === '.?' || at.op === '[]' || at.op === '[?]')
    at = (at.args as unknown as [ASTNode])[0];
  return at.op === 'id' ? (at.args as string) : undefined;
}

const MACROS = new Set(['all', 'exists', 'exists_one', 'filter', 'map']);
/** Methods whose cost grows with the string (or list) they run on. */
const LINEAR_METHODS = new Set([
  'contains',
  'matches',
  LINEAR_MATCHES,
  'indexOf',
  'lastIndexOf',
  'lowerAscii',
  'upperAscii',
  'replace',
  'split',
  'substring',
  'trim',
  'join',
]);

/**
 * A name bound by a comprehension: the schema of what it stands for, and whether its size counts as 1
 * (the elements of one list together are no larger than the input, so a walk that is linear in each
 * element costs the number of elements plus, once, the size of all of them).
 */
type Scope = ReadonlyMap<string, { readonly schema: JsonSchema | undefined; readonly unit: boolean }>;

/** The estimate for one expression against one tool's input schema. */
export interface CostEstimate {
  /** Steps when every unbounded input is NOMINAL_UNBOUNDED_SIZE long. */
  readonly steps: number;
  /** 0: bounded by the schema; 1: linear in an unbounded input; 2 or more: grows faster than the input. */
  readonly degree: number;
}

/** Estimates `ast`'s cost for args of `inputSchema`. */
export function estimateCost(ast: ASTNode, inputSchema: JsonSchema): CostEstimate {
  const shapeOf = (node: ASTNode, scope: Scope): JsonSchema | undefined => {
    switch (node.op) {
      case 'id':
        if (node.args === 'args') return inputSchema;
        return scope.get(node.args as string)?.schema;
      case '.':
      case '.?': {
        const [target, field] = node.args as unknown as [ASTNode, string];
        const props = (shapeOf(target, scope) as Record<string, unknown> | undefined)?.['properties'];
        return isRecord(props) ? (props[field] as JsonSchema | undefined) : undefined;
      }
      case '[]':
      case '[?]': {
        const [target] = node.args as unknown as [ASTNode];
        const items = (shapeOf(target, scope) as Record<string, unknown> | undefined)?.['items'];
        return isRecord(items) ? items : undefined;
      }
      default:
        return undefined;
    }
  };

  /** How many elements (or characters) the value of `node` may have. */
  const sizeOf = (node: ASTNode, scope: Scope): Poly => {
    if (node.op === 'value') return constant(typeof node.args === 'string' ? node.args.length : 1);
    if (node.op === 'id' && scope.get(node.args as string)?.unit === true) return constant(1);
    const root = rootOf(node);
    if (root === 'identity' || root === 'tool') return constant(TRUSTED_SIZE);
    if (node.op === 'list' || node.op === 'map') return constant((node.args as unknown[]).length);
    if (node.op === 'rcall') {
      const [name, target] = node.args as unknown as [string, ASTNode];
      if (name === 'filter' || name === 'map') return sizeOf(target, scope);
    }
    if (node.op === '+') {
      const [a, b] = node.args as unknown as [ASTNode, ASTNode];
      return add(sizeOf(a, scope), sizeOf(b, scope));
    }
    const schema = shapeOf(node, scope) as Record<string, unknown> | undefined;
    const bound = schema?.['maxItems'] ?? schema?.['maxLength'] ?? schema?.['maxProperties'];
    if (typeof bound === 'number' && Number.isFinite(bound) && bound >= 0) return constant(bound);
    // Numbers and booleans have no size worth counting.
    const type = schema?.['type'];
    if (type === 'number' || type === 'integer' || type === 'boolean') return constant(1);
    return UNBOUNDED;
  };

  const costOf = (node: unknown, scope: Scope): Poly => {
    if (Array.isArray(node)) return add(constant(0), ...node.map((n) => costOf(n, scope)));
    if (!isNode(node)) return constant(0);
    const args = node.args as unknown;
    switch (node.op) {
      case 'value':
      case 'id':
        return constant(1);
      case '?:': {
        const [c, t, f] = args as [ASTNode, ASTNode, ASTNode];
        return add(costOf(c, scope), max(costOf(t, scope), costOf(f, scope)));
      }
      case 'in': {
        const [item, list] = args as [ASTNode, ASTNode];
        return add(costOf(item, scope), costOf(list, scope), sizeOf(list, scope));
      }
      case 'call': {
        const [, callArgs] = args as [string, ASTNode[]];
        return add(constant(1), costOf(callArgs, scope));
      }
      case 'rcall': {
        const [name, target, callArgs] = args as [string, ASTNode, ASTNode[]];
        if (MACROS.has(name) && callArgs[0]?.op === 'id') {
          const variable = callArgs[0].args as string;
          const items = (shapeOf(target, scope) as Record<string, unknown> | undefined)?.['items'];
          const schema = isRecord(items) ? items : undefined;
          const body = callArgs.slice(1);
          // Σ body(eᵢ) ≤ n·body(1) + body(all elements together), for a body that grows with eᵢ.
          const perElement = costOf(body, new Map(scope).set(variable, { schema, unit: true }));
          const together = costOf(body, new Map(scope).set(variable, { schema, unit: false }));
          return add(
            costOf(target, scope),
            mul(sizeOf(target, scope), add(constant(1), perElement)),
            together,
          );
        }
        // A prefix or suffix test costs the length of what it looks for, not of the string.
        const linear = LINEAR_METHODS.has(name)
          ? sizeOf(target, scope)
          : (name === 'startsWith' || name === 'endsWith') && callArgs[0] !== undefined
            ? sizeOf(callArgs[0], scope)
            : constant(0);
        return add(constant(1), costOf(target, scope), costOf(callArgs, scope), linear);
      }
      default:
        return add(constant(1), costOf(args, scope));
    }
  };

  const cost = costOf(ast, new Map());
  const steps = cost.reduce((sum, c, i) => sum + c * NOMINAL_UNBOUNDED_SIZE ** i, 0);
  return { steps, degree: degree(cost) };
}
