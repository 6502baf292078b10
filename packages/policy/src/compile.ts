// Rules compiled to plain closures over cel-js's AST, once per tool: no eval, no new Function. What a
// rule reads of `tool` is known when it is compiled for a tool, so those parts fold to constants (a
// rule whose condition folds to false is left out of that tool's policy; literal lists become sets,
// literal patterns matchers). A closure handles the values policies see (strings, booleans, ints as
// BigInt, doubles, lists, plain objects); anything else it throws on, and the expression is then
// evaluated by cel-js itself, so the answer (a value or an error) is always cel-js's.

import type { ASTNode } from '@marcbachmann/cel-js';
import { LINEAR_MATCHES, matcherFor } from './linear-matches';

type Vars = Record<string, unknown>;
type Closure = (vars: Vars) => unknown;

/** A node compiled: a constant known for this tool, or a closure over the call's variables. */
type Compiled =
  { readonly constant: true; readonly value: unknown } | { readonly constant: false; readonly run: Closure };

/** The fast path cannot answer exactly: cel-js decides. */
class Unhandled extends Error {}
const UNHANDLED = new Unhandled('left to cel-js');
const unhandled = (): never => {
  throw UNHANDLED;
};

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
const SURROGATE = /[\uD800-\uDFFF]/;

const constant = (value: unknown): Compiled => ({ constant: true, value });
const dynamic = (run: Closure): Compiled => ({ constant: false, run });
const runOf = (c: Compiled): Closure => {
  if (!c.constant) return c.run;
  const value = c.value;
  return () => value;
};

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' &&
  value !== null &&
  !Array.isArray(value) &&
  !(value instanceof Date) &&
  !(value instanceof Map);

const isNode = (value: unknown): value is ASTNode =>
  typeof value === 'object' && value !== null && 'op' in value && 'args' in value;

/** `node` compiled for a tool whose `tool` value is `toolValue`; undefined when some part is not supported. */
function compileNode(node: ASTNode, toolValue: Readonly<Record<string, unknown>>): Compiled | undefined {
  const sub = (n: unknown) => (isNode(n) ? compileNode(n, toolValue) : undefined);
  // Folds an operation whose operands are constants; keeps it dynamic when folding throws. One and
  // two operands get closures of their own: no array is made per call.
  const fold = (parts: Compiled[], apply: () => unknown): Compiled | undefined => {
    if (!parts.every((p) => p.constant)) return undefined;
    try {
      return constant(apply());
    } catch {
      return undefined; // Left to run per call, where it throws and cel-js answers.
    }
  };
  const value = (c: Compiled) => (c as { value: unknown }).value;
  const lift1 = (a: Compiled, apply: (x: unknown) => unknown): Compiled => {
    const folded = fold([a], () => apply(value(a)));
    if (folded !== undefined) return folded;
    const ar = runOf(a);
    return dynamic((vars) => apply(ar(vars)));
  };
  const lift2 = (a: Compiled, b: Compiled, apply: (x: unknown, y: unknown) => unknown): Compiled => {
    const folded = fold([a, b], () => apply(value(a), value(b)));
    if (folded !== undefined) return folded;
    if (b.constant) {
      const [ar, y] = [runOf(a), value(b)];
      return dynamic((vars) => apply(ar(vars), y));
    }
    const [ar, br] = [runOf(a), runOf(b)];
    return dynamic((vars) => apply(ar(vars), br(vars)));
  };
  const lift = (parts: Compiled[], apply: (values: unknown[]) => unknown): Compiled => {
    const folded = fold(parts, () => apply(parts.map(value)));
    if (folded !== undefined) return folded;
    const runs = parts.map(runOf);
    return dynamic((vars) => apply(runs.map((r) => r(vars))));
  };
  const args = node.args as unknown;
  switch (node.op) {
    case 'value': {
      const v = args;
      return v === null || ['string', 'boolean', 'bigint', 'number'].includes(typeof v)
        ? constant(v)
        : undefined;
    }
    case 'id': {
      const name = args as string;
      if (name === 'tool') return constant(toolValue);
      if (name !== 'args' && name !== 'identity' && name !== 'now') return undefined;
      return dynamic((vars) => {
        const value = vars[name];
        return value === undefined ? unhandled() : value;
      });
    }
    case '.': {
      const [target, field] = args as [ASTNode, string];
      if (typeof field !== 'string') return undefined;
      // `args.f`, `identity.f`: one closure, the commonest read.
      if (target.op === 'id' && (target.args === 'args' || target.args === 'identity')) {
        const root = target.args as string;
        return dynamic((vars) => {
          const obj = vars[root];
          if (typeof obj !== 'object' || obj === null || Array.isArray(obj) || !Object.hasOwn(obj, field))
            return unhandled();
          const value = (obj as Record<string, unknown>)[field];
          return value === undefined ? unhandled() : value;
        });
      }
      const t = sub(target);
      if (t === undefined) return undefined;
      return lift1(t, (obj) => {
        if (!isPlainObject(obj) || !Object.hasOwn(obj, field)) return unhandled();
        const value = obj[field];
        return value === undefined ? unhandled() : value;
      });
    }
    case '[]': {
      const [target, key] = args as [ASTNode, ASTNode];
      const t = sub(target);
      const k = sub(key);
      if (t === undefined || k === undefined) return undefined;
      return lift2(t, k, (obj, index) => {
        if (Array.isArray(obj) && typeof index === 'bigint' && index >= 0n && index < BigInt(obj.length))
          return obj[Number(index)];
        if (isPlainObject(obj) && typeof index === 'string' && Object.hasOwn(obj, index)) {
          const value = obj[index];
          return value === undefined ? unhandled() : value;
        }
        return unhandled();
      });
    }
    case 'list': {
      const items = (args as ASTNode[]).map(sub);
      if (items.some((i) => i === undefined)) return undefined;
      return lift(items as Compiled[], (values) => values);
    }
    case '!_': {
      const a = sub(args);
      if (a === undefined) return undefined;
      return lift1(a, (v) => (typeof v === 'boolean' ? !v : unhandled()));
    }
    case '-_': {
      const a = sub(args);
      if (a === undefined) return undefined;
      return lift1(a, (v) =>
        typeof v === 'number' ? -v : typeof v === 'bigint' && v > INT64_MIN ? -v : unhandled(),
      );
    }
    case '&&':
    case '||':
      return logical(node.op, args as [ASTNode, ASTNode], sub);
    case '?:': {
      const [c, t, f] = (args as ASTNode[]).map(sub);
      if (c === undefined || t === undefined || f === undefined) return undefined;
      if (c.constant) {
        if (c.value === true) return t;
        if (c.value === false) return f;
        return undefined;
      }
      const [cr, tr, fr] = [c.run, runOf(t), runOf(f)];
      return dynamic((vars) => {
        const cond = cr(vars);
        return cond === true ? tr(vars) : cond === false ? fr(vars) : unhandled();
      });
    }
    case '==':
    case '!=': {
      const [a, b] = (args as ASTNode[]).map(sub);
      if (a === undefined || b === undefined) return undefined;
      const negate = node.op === '!=';
      const known = !a.constant && b.constant ? ([a.run, b.value] as const) : undefined;
      if (known !== undefined && ['string', 'boolean', 'bigint'].includes(typeof known[1])) {
        const [run, c] = known;
        const type = typeof c;
        return dynamic((vars) => {
          const x = run(vars);
          if (typeof x !== type) return unhandled();
          return negate ? x !== c : x === c;
        });
      }
      return lift2(a, b, (x, y) => {
        const type = typeof x;
        if (
          type !== typeof y ||
          !(type === 'string' || type === 'boolean' || type === 'bigint' || type === 'number')
        )
          return unhandled();
        return negate ? x !== y : x === y;
      });
    }
    case '<':
    case '<=':
    case '>':
    case '>=': {
      const [a, b] = (args as ASTNode[]).map(sub);
      if (a === undefined || b === undefined) return undefined;
      const op = node.op;
      if (!a.constant && b.constant && (typeof b.value === 'number' || typeof b.value === 'bigint')) {
        const [run, c] = [a.run, b.value as number];
        const type = typeof b.value;
        const compare =
          op === '<'
            ? (x: number) => x < c
            : op === '<='
              ? (x: number) => x <= c
              : op === '>'
                ? (x: number) => x > c
                : (x: number) => x >= c;
        return dynamic((vars) => {
          const x = run(vars);
          return typeof x === type ? compare(x as number) : unhandled();
        });
      }
      return lift2(a, b, (x, y) => {
        // Strings compare by code point in CEL, by UTF-16 unit in JS: cel-js answers those.
        if (!(
          (typeof x === 'number' && typeof y === 'number') ||
          (typeof x === 'bigint' && typeof y === 'bigint')
        ))
          return unhandled();
        const [p, q] = [x, y] as [number, number];
        return op === '<' ? p < q : op === '<=' ? p <= q : op === '>' ? p > q : p >= q;
      });
    }
    case '+':
    case '-':
    case '*': {
      const [a, b] = (args as ASTNode[]).map(sub);
      if (a === undefined || b === undefined) return undefined;
      const op = node.op;
      return lift2(a, b, (x, y) => {
        if (typeof x === 'number' && typeof y === 'number')
          return op === '+' ? x + y : op === '-' ? x - y : x * y;
        if (typeof x === 'bigint' && typeof y === 'bigint') {
          const r = op === '+' ? x + y : op === '-' ? x - y : x * y;
          return r < INT64_MIN || r > INT64_MAX ? unhandled() : r;
        }
        if (op === '+' && typeof x === 'string' && typeof y === 'string') return x + y;
        return unhandled();
      });
    }
    case 'in':
      return membership(args as [ASTNode, ASTNode], sub);
    case 'call': {
      const [name, callArgs] = args as [string, ASTNode[]];
      if (name === 'size' && callArgs.length === 1) return sizeOf(sub(callArgs[0]));
      if (name === 'has' && callArgs.length === 1) return presence(callArgs[0]!, sub);
      return undefined;
    }
    case 'rcall': {
      const [name, target, callArgs] = args as [string, ASTNode, ASTNode[]];
      if (name === 'size' && callArgs.length === 0) return sizeOf(sub(target));
      if (callArgs.length !== 1) return undefined;
      const t = sub(target);
      const a = sub(callArgs[0]);
      if (t === undefined || a === undefined) return undefined;
      if (name === LINEAR_MATCHES || name === 'matches') {
        if (a.constant && typeof a.value === 'string') {
          let matcher: (text: string) => boolean;
          try {
            matcher = matcherFor(a.value);
          } catch {
            return undefined;
          }
          return lift1(t, (s) => (typeof s === 'string' ? matcher(s) : unhandled()));
        }
        return lift2(t, a, (s, p) =>
          typeof s === 'string' && typeof p === 'string' ? matcherFor(p)(s) : unhandled(),
        );
      }
      const method =
        name === 'startsWith'
          ? (s: string, p: string) => s.startsWith(p)
          : name === 'endsWith'
            ? (s: string, p: string) => s.endsWith(p)
            : name === 'contains'
              ? (s: string, p: string) => s.includes(p)
              : undefined;
      if (method === undefined) return undefined;
      if (!t.constant && a.constant && typeof a.value === 'string') {
        const [run, affix] = [t.run, a.value];
        const test =
          name === 'startsWith'
            ? (s: string) => s.startsWith(affix)
            : name === 'endsWith'
              ? (s: string) => s.endsWith(affix)
              : (s: string) => s.includes(affix);
        return dynamic((vars) => {
          const s = run(vars);
          return typeof s === 'string' ? test(s) : unhandled();
        });
      }
      return lift2(t, a, (s, p) =>
        typeof s === 'string' && typeof p === 'string' ? method(s, p) : unhandled(),
      );
    }
    default:
      return undefined;
  }
}

function logical(
  op: '&&' | '||',
  operands: [ASTNode, ASTNode],
  sub: (n: unknown) => Compiled | undefined,
): Compiled | undefined {
  const a = sub(operands[0]);
  const b = sub(operands[1]);
  if (a === undefined || b === undefined) return undefined;
  // The value that decides alone: false for &&, true for ||.
  const decisive = op === '||';
  const boolOrUnhandled = (c: Compiled): Compiled =>
    c.constant
      ? typeof c.value === 'boolean'
        ? c
        : dynamic(unhandled)
      : dynamic((vars) => {
          const v = c.run(vars);
          return typeof v === 'boolean' ? v : unhandled();
        });
  if (a.constant && a.value === decisive) return constant(decisive);
  if (b.constant && b.value === decisive) return constant(decisive);
  if (a.constant && a.value === !decisive) return boolOrUnhandled(b);
  if (b.constant && b.value === !decisive) return boolOrUnhandled(a);
  const [ar, br] = [runOf(a), runOf(b)];
  return dynamic((vars) => {
    const x = ar(vars);
    if (x === decisive) return decisive;
    const y = br(vars);
    if (y === decisive) return decisive;
    if (x === !decisive && y === !decisive) return !decisive;
    return unhandled();
  });
}

function membership(
  [item, container]: [ASTNode, ASTNode],
  sub: (n: unknown) => Compiled | undefined,
): Compiled | undefined {
  const i = sub(item);
  const c = sub(container);
  if (i === undefined || c === undefined) return undefined;
  // A literal list of strings: one set lookup.
  if (c.constant && Array.isArray(c.value) && c.value.every((v) => typeof v === 'string')) {
    const set = new Set(c.value as string[]);
    const ir = runOf(i);
    return dynamic((vars) => {
      const v = ir(vars);
      return typeof v === 'string' ? set.has(v) : unhandled();
    });
  }
  const [ir, cr] = [runOf(i), runOf(c)];
  return dynamic((vars) => {
    const v = ir(vars);
    const list = cr(vars);
    const type = typeof v;
    if (!(type === 'string' || type === 'boolean' || type === 'bigint')) return unhandled();
    if (Array.isArray(list)) {
      for (const element of list) {
        if (typeof element !== type) return unhandled();
        if (element === v) return true;
      }
      return false;
    }
    if (isPlainObject(list) && type === 'string') return Object.hasOwn(list, v as string);
    return unhandled();
  });
}

function sizeOf(target: Compiled | undefined): Compiled | undefined {
  if (target === undefined) return undefined;
  const r = runOf(target);
  return dynamic((vars) => {
    const v = r(vars);
    if (typeof v === 'string') return SURROGATE.test(v) ? unhandled() : BigInt(v.length);
    if (Array.isArray(v)) return BigInt(v.length);
    return unhandled();
  });
}

function presence(node: ASTNode, sub: (n: unknown) => Compiled | undefined): Compiled | undefined {
  if (node.op !== '.') return undefined;
  const [target, field] = node.args as unknown as [ASTNode, string];
  const t = sub(target);
  if (t === undefined || typeof field !== 'string') return undefined;
  const r = runOf(t);
  return dynamic((vars) => {
    const obj = r(vars);
    if (!isPlainObject(obj)) return unhandled();
    return Object.hasOwn(obj, field) && obj[field] !== undefined;
  });
}

/** A rule's condition as this tool's policy runs it. */
export type CompiledCondition =
  | { readonly kind: 'always' | 'never' }
  | {
      readonly kind: 'evaluate';
      /** The answer, cel-js's wherever the closure does not handle a value. */
      readonly evaluate: (vars: Vars) => unknown;
      /** The closure alone (throws where cel-js must answer), and cel-js: for a caller that catches itself. */
      readonly fast: (vars: Vars) => unknown;
      readonly fallback: (vars: Vars) => unknown;
    };

/**
 * Compiles a condition for one tool: `always`/`never` when it folds to true/false for this tool, else
 * a closure that falls back to `celEvaluate` (the same expression in cel-js) for whatever it does
 * not handle, or `celEvaluate` alone when some part of the expression is not supported.
 */
export function compileCondition(
  ast: ASTNode,
  toolValue: Readonly<Record<string, unknown>>,
  celEvaluate: (vars: Vars) => unknown,
): CompiledCondition {
  let compiled: Compiled | undefined;
  try {
    compiled = compileNode(ast, toolValue);
  } catch {
    compiled = undefined;
  }
  const celOnly = {
    kind: 'evaluate',
    evaluate: celEvaluate,
    fast: celEvaluate,
    fallback: celEvaluate,
  } as const;
  if (compiled === undefined) return celOnly;
  if (compiled.constant) {
    if (compiled.value === true) return { kind: 'always' };
    if (compiled.value === false) return { kind: 'never' };
    return celOnly;
  }
  const run = compiled.run;
  return {
    kind: 'evaluate',
    evaluate: (vars) => {
      try {
        return run(vars);
      } catch {
        // A value the closure does not handle, a RE2 failure on a pattern built from args, any
        // other surprise: cel-js decides.
        return celEvaluate(vars);
      }
    },
    fast: run,
    fallback: celEvaluate,
  };
}
