// One policy, compiled for one tool: the rules that apply to it, each expression typed against its
// schema and compiled once; and the first-match decision over them, shared by the gate, list-time
// hiding and the test runner.

import type { Identity, Tool, ToolArgs } from '@toolgate/core';
import { argsTypeOf, identityValueOf, toolEnvironment, toolValueOf, type ArgsType } from './cel';
import { errorPosition, summaryOf, type PolicyEffect, type Rule } from './rules';

type Evaluate = (vars: Record<string, unknown>) => unknown;

interface Entry {
  readonly rule: Rule;
  /** Undefined: the rule has no `when` and matches every call it applies to. */
  readonly evaluate: Evaluate | undefined;
}

/** The policy as it stands for one tool. */
export interface ToolPolicy {
  readonly entries: readonly Entry[];
  readonly fallback: PolicyEffect;
  /** Some enforced rule (or the default) can ask for a person. */
  readonly mayAsk: boolean;
  /** Nothing to evaluate and the default allows: the gate has nothing to decide for this tool. */
  readonly idle: boolean;
  /** Which variables some rule reads, so a call builds only those. */
  readonly readsArgs: boolean;
  readonly readsIdentity: boolean;
  readonly readsNow: boolean;
  readonly toolValue: Readonly<Record<string, unknown>>;
  readonly convert: ArgsType['convert'];
}

/** A rule that cannot serve a tool (undeclared arg, wrong type). The message names rule, tool and field. */
export class PolicyBuildError extends Error {
  override readonly name = 'PolicyBuildError';
  readonly code = 'ERR_POLICY_BUILD';
}

function declared(type: ArgsType): string {
  const names = [...type.fields.keys()];
  return names.length === 0 ? 'it declares no arguments' : `it declares ${names.join(', ')}`;
}

/** The args field a type error is about: one inside its range, else the nearest one before it (`args.a.zip`). */
function fieldAt(
  fields: ReadonlyMap<string, { readonly start: number; readonly end: number }>,
  range: { readonly start: number; readonly end: number },
): string | undefined {
  let before: [string, number] | undefined;
  for (const [field, r] of fields) {
    if (r.start >= range.start && r.end <= range.end) return field;
    if (r.start <= range.start && (before === undefined || r.start > before[1])) before = [field, r.start];
  }
  return before?.[0];
}

/** Compiles `rule` for `tool`; undefined when an unscoped rule does not apply to it. */
function entryFor(
  rule: Rule,
  tool: Tool,
  type: ArgsType,
  env: () => ReturnType<typeof toolEnvironment>,
): Entry | undefined {
  const toolName = tool.schema.name;
  if (rule.tools !== undefined && !rule.tools.test(toolName)) return undefined;
  const when = rule.when;
  if (when === undefined) return { rule, evaluate: undefined };
  const missing = [...when.reads.argsFields.keys()].filter((f) => !type.fields.has(f));
  if (missing.length > 0) {
    // An unscoped rule applies only where the schema has every arg it reads.
    if (rule.tools === undefined) return undefined;
    throw new PolicyBuildError(
      `policy rule '${rule.name}' reads args.${missing[0]}, which tool '${toolName}' does not declare (${declared(type)}). ` +
        `Fix the field name, or leave '${toolName}' out of the rule's tools`,
    );
  }
  const parsed = env().parse(when.text);
  const checked = parsed.check();
  if (!checked.valid) {
    const range = (checked.error as { range?: { start: number; end: number } } | undefined)?.range;
    const field = range === undefined ? undefined : fieldAt(when.reads.argsFields, range);
    const position = errorPosition(checked.error, when.text);
    const where = position === undefined ? '' : ` (column ${position.column})`;
    throw new PolicyBuildError(
      field === undefined
        ? `policy rule '${rule.name}' does not type-check for tool '${toolName}'${where}: ${summaryOf(checked.error)}`
        : `policy rule '${rule.name}' uses args.${field} with the wrong type for tool '${toolName}', whose schema makes it ${type.fields.get(field)}${where}: ${summaryOf(checked.error)}`,
    );
  }
  return { rule, evaluate: when.evaluate };
}

/** The policy for one tool. Throws PolicyBuildError when a rule cannot serve it. */
export function compileFor(rules: readonly Rule[], tool: Tool, fallback: PolicyEffect): ToolPolicy {
  const type = argsTypeOf(tool);
  let env: ReturnType<typeof toolEnvironment> | undefined;
  const envOnce = () => (env ??= toolEnvironment(type));
  const entries: Entry[] = [];
  for (const rule of rules) {
    const entry = entryFor(rule, tool, type, envOnce);
    if (entry !== undefined) entries.push(entry);
  }
  const reads = (v: 'args' | 'identity' | 'now') => entries.some((e) => e.rule.when?.reads.variables.has(v));
  return {
    entries,
    fallback,
    mayAsk: fallback === 'ask' || entries.some((e) => e.rule.effect === 'ask' && !e.rule.shadow),
    idle: entries.length === 0 && fallback === 'allow',
    readsArgs: reads('args'),
    readsIdentity: reads('identity'),
    readsNow: reads('now'),
    toolValue: toolValueOf(tool),
    convert: type.convert,
  };
}

/** One call as the policy sees it. */
export interface PolicyInput {
  readonly args: Readonly<ToolArgs>;
  readonly identity: Identity | undefined;
  /** Milliseconds since the epoch. */
  readonly now: number;
}

/** The CEL variables for a call: only those some rule reads. */
export function variablesFor(policy: ToolPolicy, input: PolicyInput): Record<string, unknown> {
  const vars: Record<string, unknown> = { tool: policy.toolValue };
  if (policy.readsArgs) vars['args'] = policy.convert === undefined ? input.args : policy.convert(input.args);
  if (policy.readsIdentity) vars['identity'] = identityValueOf(input.identity);
  if (policy.readsNow) vars['now'] = new Date(input.now);
  return vars;
}

type Match = 'yes' | 'no' | 'failed';

function matchOf(entry: Entry, vars: Record<string, unknown>): Match {
  if (entry.evaluate === undefined) return 'yes';
  try {
    const value = entry.evaluate(vars);
    if (value === true) return 'yes';
    return value === false ? 'no' : 'failed';
  } catch {
    return 'failed';
  }
}

/** A shadow rule that would have decided the call, had it been enforced. */
export interface ShadowMatch {
  readonly rule: Rule;
  readonly failed: boolean;
}

export interface Verdict {
  readonly effect: PolicyEffect;
  /** Undefined: no rule matched, the default decided. */
  readonly rule: Rule | undefined;
  /** The deciding rule's expression failed to evaluate; deny and ask count that as a match (fail closed). */
  readonly failed: boolean;
  readonly shadows: readonly ShadowMatch[];
}

const NO_SHADOWS: readonly ShadowMatch[] = Object.freeze([]);

/** First match decides. A failing expression matches for deny and ask, and not for allow. */
export function decide(policy: ToolPolicy, vars: Record<string, unknown>): Verdict {
  let shadows: ShadowMatch[] | undefined;
  for (const entry of policy.entries) {
    const match = matchOf(entry, vars);
    const { rule } = entry;
    const matched = match === 'yes' || (match === 'failed' && rule.effect !== 'allow');
    if (!matched) continue;
    if (rule.shadow) {
      (shadows ??= []).push({ rule, failed: match === 'failed' });
      continue;
    }
    return { effect: rule.effect, rule, failed: match === 'failed', shadows: shadows ?? NO_SHADOWS };
  }
  return { effect: policy.fallback, rule: undefined, failed: false, shadows: shadows ?? NO_SHADOWS };
}

/**
 * Whether `identity` could get some call of this tool past the policy: false when an enforced deny that
 * reads no args (or the default deny) refuses it whatever the args.
 */
export function visibleFor(policy: ToolPolicy, identity: Identity | undefined, now: number): boolean {
  const vars = variablesFor(policy, { args: {}, identity, now });
  for (const entry of policy.entries) {
    const { rule } = entry;
    if (rule.shadow) continue;
    if (rule.when?.reads.variables.has('args') === true) {
      // Some args may match it: an allow or ask can let a call through; a deny may or may not apply.
      if (rule.effect !== 'deny') return true;
      continue;
    }
    const match = matchOf(entry, vars);
    const matched = match === 'yes' || (match === 'failed' && rule.effect !== 'allow');
    if (matched) return rule.effect !== 'deny';
  }
  return policy.fallback !== 'deny';
}
