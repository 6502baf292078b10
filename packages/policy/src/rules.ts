// A policy rule as a security team writes it, and the checks that run when a policy is built: every
// field of every rule, its tool globs, and its CEL expression (syntax, variables, types that do not
// depend on a tool).

import { toolGlob } from './glob';
import type { ASTNode } from '@marcbachmann/cel-js';
import { compileForEvaluation, readsOf, untypedEnvironment, type Reads } from './cel';
import { compileRe2, literalPattern, matchesCalls } from './linear-matches';

export type PolicyEffect = 'allow' | 'deny' | 'ask';
export type PolicyMode = 'enforce' | 'shadow';

export interface PolicyRule {
  /** Names the rule in ledger rows, events, refusals and build errors; unique within a policy. */
  readonly name: string;
  /** Tool-name globs (`*` any run, `?` one character); absent: every tool whose schema has the args it reads. */
  readonly tools?: readonly string[];
  /** A CEL expression over `tool`, `args`, `identity` and `now`; absent: the rule matches every call it applies to. */
  readonly when?: string;
  readonly effect: PolicyEffect;
  /** For the model (deny) or the approver (ask): why, and what to do instead. Never an argument value. */
  readonly reason?: string;
  /** `shadow`: decides nothing, records what it would have done. Default `enforce`. */
  readonly mode?: PolicyMode;
}

/** A policy that cannot be built: names the rule, and the column for a CEL error. */
export class PolicyConfigError extends Error {
  override readonly name = 'PolicyConfigError';
  readonly code = 'ERR_POLICY_CONFIG';
  constructor(
    message: string,
    /** The rule's position in the list. */
    readonly index?: number,
    /** The rule field at fault (`when`, `tools`, …). */
    readonly field?: string,
    /** 1-based column in the rule's `when`, for a CEL error. */
    readonly column?: number,
  ) {
    super(message);
    this.problem = message.endsWith('.') ? message.slice(0, -1) : message;
  }
  /** The message as a clause (no closing period), to be placed in a sentence of the caller's. */
  readonly problem: string;
}

/** A rule, checked and ready to compile per tool. */
export interface Rule {
  readonly index: number;
  readonly name: string;
  readonly effect: PolicyEffect;
  readonly shadow: boolean;
  readonly reason: string | undefined;
  /** Undefined: unscoped. */
  readonly tools: RegExp | undefined;
  readonly when:
    | {
        readonly text: string;
        readonly ast: ASTNode;
        readonly reads: Reads;
        /** Compiled once for evaluation over plain values; typed per tool at build. */
        readonly evaluate: (vars: Record<string, unknown>) => unknown;
      }
    | undefined;
}

const RULE_KEYS = ['name', 'tools', 'when', 'effect', 'reason', 'mode'];
export const EFFECTS: readonly PolicyEffect[] = ['allow', 'deny', 'ask'];
const MODES: readonly PolicyMode[] = ['enforce', 'shadow'];
const GLOB = /^[A-Za-z0-9_*?-]{1,64}$/;
const MAX_WHEN_CHARS = 4096;

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const describe = (value: unknown): string =>
  value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value;

/** 1-based column of `offset` in `text`, counted on its own line. */
export function columnOf(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, Math.max(0, offset));
  const lines = before.split('\n');
  return { line: lines.length, column: lines[lines.length - 1]!.length + 1 };
}

/** Where in `text` a cel-js error points: 1-based line and column within the expression. */
export function errorPosition(error: unknown, text: string): { line: number; column: number } | undefined {
  const range = (error as { range?: { start?: unknown } } | null)?.range;
  return typeof range?.start === 'number' ? columnOf(text, range.start) : undefined;
}

/** cel-js's one-line summary of an error, without the source excerpt it appends. */
export function summaryOf(error: unknown): string {
  const summary = (error as { summary?: unknown } | null)?.summary;
  if (typeof summary === 'string' && summary !== '') return summary;
  const message = error instanceof Error ? error.message : String(error);
  return message.split('\n')[0]!;
}

function at(position: { line: number; column: number } | undefined): string {
  if (position === undefined) return '';
  return position.line > 1
    ? ` at line ${position.line}, column ${position.column}`
    : ` at column ${position.column}`;
}

function compileWhen(text: string, index: number, name: string): NonNullable<Rule['when']> {
  const env = untypedEnvironment();
  let parsed;
  try {
    parsed = env.parse(text);
  } catch (error) {
    const position = errorPosition(error, text);
    throw new PolicyConfigError(
      `policy rule '${name}': its 'when' is not valid CEL${at(position)}: ${summaryOf(error)}.`,
      index,
      'when',
      position?.column,
    );
  }
  const checked = parsed.check();
  if (!checked.valid) {
    const position = errorPosition(checked.error, text);
    throw new PolicyConfigError(
      `policy rule '${name}': its 'when' does not type-check${at(position)}: ${summaryOf(checked.error)}. ` +
        `It may read tool (name, source, capabilities, annotations), args, identity (tenant, principal, conversation, roles) and now.`,
      index,
      'when',
      position?.column,
    );
  }
  if (checked.type !== 'bool' && checked.type !== 'dyn') {
    throw new PolicyConfigError(
      `policy rule '${name}': its 'when' must be a condition (bool), but it is ${checked.type ?? 'untyped'}.`,
      index,
      'when',
    );
  }
  for (const call of matchesCalls(parsed.ast)) {
    const pattern = literalPattern(call);
    if (pattern === undefined) continue;
    try {
      compileRe2(pattern);
    } catch (error) {
      const position = columnOf(text, call.start);
      throw new PolicyConfigError(
        `policy rule '${name}': its 'when' calls matches() with a pattern RE2 cannot run${at(position)}: ${summaryOf(error)}. ` +
          `Patterns run on RE2, in time linear in the input: rewrite it without backreferences or lookarounds.`,
        index,
        'when',
        position.column,
      );
    }
  }
  return { text, ast: parsed.ast, reads: readsOf(parsed.ast), evaluate: compileForEvaluation(text) };
}

/** Checks one rule as written and compiles its tool-independent parts. */
function compileRule(candidate: unknown, index: number): Rule {
  if (!isRecord(candidate)) {
    throw new PolicyConfigError(
      `policy rule #${index + 1} must be an object { name, effect, tools?, when?, reason?, mode? }; got ${describe(candidate)}.`,
      index,
    );
  }
  const rawName = candidate['name'];
  if (typeof rawName !== 'string' || rawName.trim() === '') {
    throw new PolicyConfigError(
      `policy rule #${index + 1} needs a 'name' (a non-empty string).`,
      index,
      'name',
    );
  }
  const name = rawName;
  const fail = (field: string, problem: string): never => {
    throw new PolicyConfigError(`policy rule '${name}': ${problem}`, index, field);
  };
  for (const key of Object.keys(candidate)) {
    if (!RULE_KEYS.includes(key)) fail(key, `unknown key '${key}'; a rule takes ${RULE_KEYS.join(', ')}.`);
  }
  const effect = candidate['effect'];
  if (!EFFECTS.includes(effect as PolicyEffect))
    fail('effect', `'effect' must be allow, deny or ask; got ${describe(effect)}.`);
  const mode = candidate['mode'] ?? 'enforce';
  if (!MODES.includes(mode as PolicyMode)) fail('mode', `'mode' must be enforce or shadow.`);
  const reason = candidate['reason'];
  if (reason !== undefined && (typeof reason !== 'string' || reason.trim() === ''))
    fail('reason', `'reason' must be a non-empty string.`);
  const tools = candidate['tools'];
  if (tools !== undefined) {
    if (!Array.isArray(tools) || tools.length === 0)
      fail('tools', `'tools' must be a non-empty list of tool-name globs like 'billing_*'.`);
    for (const glob of tools as unknown[]) {
      if (typeof glob !== 'string' || !GLOB.test(glob))
        fail('tools', `'tools' entries are tool names or globs of letters, digits, _, -, * and ?.`);
    }
  }
  const when = candidate['when'];
  if (when !== undefined && (typeof when !== 'string' || when.trim() === ''))
    fail('when', `'when' must be a CEL expression (a non-empty string).`);
  if (typeof when === 'string' && when.length > MAX_WHEN_CHARS)
    fail('when', `'when' is longer than ${MAX_WHEN_CHARS} characters; split the rule.`);
  return {
    index,
    name,
    effect: effect as PolicyEffect,
    shadow: mode === 'shadow',
    reason: reason as string | undefined,
    tools: tools === undefined ? undefined : toolGlob(tools as string[]),
    when: when === undefined ? undefined : compileWhen(when as string, index, name),
  };
}

/** Checks a whole policy: every rule, and names unique. */
export function compileRules(rules: unknown): Rule[] {
  if (!Array.isArray(rules)) {
    throw new PolicyConfigError(`a policy is a list of rules; got ${describe(rules)}.`);
  }
  const compiled = rules.map(compileRule);
  const names = new Set<string>();
  for (const rule of compiled) {
    if (names.has(rule.name))
      throw new PolicyConfigError(
        `two policy rules are named '${rule.name}'; names must be unique.`,
        rule.index,
        'name',
      );
    names.add(rule.name);
  }
  return compiled;
}

export function assertEffect(value: unknown, what: string): PolicyEffect {
  if (!EFFECTS.includes(value as PolicyEffect))
    throw new PolicyConfigError(`${what} must be allow, deny or ask; got ${describe(value)}.`);
  return value as PolicyEffect;
}
