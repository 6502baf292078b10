// CEL's `matches()` on RE2, in time linear in the input. cel-js runs it on the runtime's backtracking
// RegExp and lets no overload replace a built-in one, so each compiled expression's `matches` calls
// are pointed at a function of our own with the same signature and RE2's semantics (a partial match,
// as CEL specifies). A literal pattern RE2 cannot run fails when the rule compiles; a pattern built
// from args at a call fails that evaluation, which the policy treats as any rule error (fail closed).

import type { ASTNode } from '@marcbachmann/cel-js';
import { RE2JS } from 're2js';
import { simpleMatcher } from './simple-regex';

/** The name `matches` calls are evaluated under. */
export const LINEAR_MATCHES = '__toolgate_linear_matches';
export const LINEAR_MATCHES_SIGNATURE = `string.${LINEAR_MATCHES}(string): bool`;

// Patterns built from args could be many; the compiled ones kept are bounded.
const MAX_CACHED = 256;
const cache = new Map<string, RE2JS>();

/** Compiles `pattern` on RE2; throws with RE2's reason, never the text matched against. */
export function compileRe2(pattern: string): RE2JS {
  const hit = cache.get(pattern);
  if (hit !== undefined) return hit;
  const compiled = RE2JS.compile(pattern);
  if (cache.size >= MAX_CACHED) cache.delete(cache.keys().next().value!);
  cache.set(pattern, compiled);
  return compiled;
}

const matchers = new Map<string, (text: string) => boolean>();

/**
 * `text.matches(pattern)` as a function, built once per pattern: the simple-pattern matcher where it
 * runs the pattern exactly (far cheaper per call than RE2JS), RE2 otherwise. Throws for a pattern RE2
 * cannot run, as RE2 decides.
 */
export function matcherFor(pattern: string): (text: string) => boolean {
  const hit = matchers.get(pattern);
  if (hit !== undefined) return hit;
  let engine: RE2JS;
  try {
    engine = compileRe2(pattern);
  } catch {
    // The pattern may come from an argument: the message names neither it nor the text.
    throw new Error('matches(): the pattern is not a regular expression RE2 can run');
  }
  const matcher = simpleMatcher(pattern) ?? ((text: string) => engine.matcher(text).find());
  if (matchers.size >= MAX_CACHED) matchers.delete(matchers.keys().next().value!);
  matchers.set(pattern, matcher);
  return matcher;
}

/** `text.matches(pattern)`: whether RE2 finds the pattern anywhere in the text. */
export function linearMatches(text: string, pattern: string): boolean {
  return matcherFor(pattern)(text);
}

const isNode = (value: unknown): value is ASTNode =>
  typeof value === 'object' && value !== null && 'op' in value && 'args' in value;

/** Every `x.matches(p)` call in the expression, in source order. */
export function matchesCalls(ast: ASTNode): ASTNode[] {
  const found: ASTNode[] = [];
  const visit = (value: unknown): void => {
    if (Array.isArray(value)) return value.forEach(visit);
    if (!isNode(value)) return;
    const args = value.args as unknown;
    if (value.op === 'rcall' && Array.isArray(args) && args[0] === 'matches') found.push(value);
    if (Array.isArray(args)) args.forEach(visit);
  };
  visit(ast);
  return found;
}

/** The literal pattern of a `matches` call, when it is a string literal. */
export function literalPattern(call: ASTNode): string | undefined {
  const [, , callArgs] = call.args as unknown as [string, ASTNode, ASTNode[]];
  const pattern = callArgs?.[0];
  return pattern?.op === 'value' && typeof pattern.args === 'string' ? pattern.args : undefined;
}

/** Points every `matches` call of a parsed expression at the RE2 function, in place. */
export function useLinearMatches(ast: ASTNode): void {
  for (const call of matchesCalls(ast)) (call.args as unknown as unknown[])[0] = LINEAR_MATCHES;
}
