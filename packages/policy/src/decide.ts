// One policy, compiled for one tool: the rules that apply to it, each expression typed against its
// schema and compiled once; and the first-match decision over them, shared by the gate, list-time
// hiding and the test runner.

import type { Identity, Tool, ToolArgs } from '@toolgate/core';
import { argsTypeOf, identityValueOf, toolEnvironment, toolValueOf, type ArgsType } from './cel';
import { compileCondition } from './compile';
import { estimateCost, MAX_RULE_COST } from './cost';
import { fieldTestOf, matchingIndex, sizeOfField, stringFieldOf, type FieldTest } from './field-runs';
import { errorPosition, summaryOf, type PolicyEffect, type Rule } from './rules';

type Evaluate = (vars: Record<string, unknown>) => unknown;

interface Entry {
  readonly rule: Rule;
  /** Undefined: the rule has no `when` and matches every call it applies to. */
  readonly evaluate: Evaluate | undefined;
  /** What answers when `evaluate` throws (cel-js, for a value the compiled closure does not handle). */
  readonly fallback: Evaluate | undefined;
  /** The most steps the rule may take on this tool's args, as estimated at build. */
  readonly cost: number;
  /** Its condition is false for every call of this tool (it tests only the tool): never evaluated. */
  readonly never: boolean;
  /** Its condition is one simple test of one args field (`==`, `in`, `startsWith`, `size() >`…): it may join a run. */
  readonly fieldTest: FieldTest | undefined;
}

/** Consecutive active rules testing one args field the same way, the field read once. */
type FieldRun = { readonly field: string; readonly entries: readonly Entry[] } & (
  | {
      readonly kind: 'equals';
      /** For a string value of the field: the positions in `entries` of the rules it matches, ascending. */
      readonly matching: ReadonlyMap<string, readonly number[]>;
    }
  | {
      readonly kind: 'affix';
      readonly read: 'string';
      readonly tests: readonly ((value: string) => boolean)[];
    }
  | { readonly kind: 'size'; readonly read: 'size'; readonly tests: readonly ((size: number) => boolean)[] }
);

/** A step of a decision without a deadline to watch: one rule, or a run of rules on one field. */
type Step =
  | {
      readonly entry: Entry;
      readonly run?: undefined;
      /** A rule with a field test alone: the memo slot its field's value is read into, once per decision. */
      readonly slot?: number;
      readonly test?: (value: never) => boolean;
    }
  | { readonly run: FieldRun };

/** What a decision reads into a memo slot: an args field as a string, or its size. */
interface Slot {
  readonly field: string;
  readonly read: 'string' | 'size';
}

/** A lone rule's test of its field's value; a test that throws (a matcher) leaves the answer to `matchOf`. */
function testOf(
  test: (value: never) => boolean,
  value: unknown,
  entry: Entry,
  vars: Record<string, unknown>,
): Match {
  try {
    return test(value as never) ? 'yes' : 'no';
  } catch {
    return matchOf(entry, vars);
  }
}

/** A slot whose field is missing or not of the type its rules expect: they go rule by rule. */
const BY_RULE = Symbol('by rule');

const readSlot = (slot: Slot, vars: Record<string, unknown>): unknown => {
  if (slot.read === 'string') return stringFieldOf(vars, slot.field) ?? BY_RULE;
  const size = sizeOfField(vars, slot.field);
  return size >= 0 ? size : BY_RULE;
};

/** The policy as it stands for one tool. */
export interface ToolPolicy {
  /** The rules that apply to the tool, in order (what `rulesFor` lists). */
  readonly entries: readonly Entry[];
  /** Those a call evaluates: the entries less those whose condition is false for this tool. */
  readonly active: readonly Entry[];
  /** `active` with runs of rules testing one field grouped (what a decision walks when it watches no clock). */
  readonly steps: readonly Step[];
  /** The fields the lone field tests of `steps` read, each once per decision. */
  readonly slots: readonly Slot[];
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
  /** The rules may cost enough together that a decision watches its deadline between them. */
  readonly watchesClock: boolean;
}

/** Estimated steps between two looks at the clock: cheap rules never look. */
const STEPS_BETWEEN_CLOCK_CHECKS = 10_000;
/**
 * A policy whose rules together may take fewer steps never reads the clock: a decision that short
 * cannot stall the loop, and a wall-clock deadline would only refuse calls on a machine that
 * paused the process (a busy host, a GC).
 */
const STEPS_BEFORE_WATCHING_THE_CLOCK = 100_000;
/** Rules between two looks, unless the steps since the last one reach a rule's whole budget. */
const RULES_BETWEEN_CLOCK_CHECKS = 8;

/** A rule that cannot serve a tool (undeclared arg, wrong type). The message names rule, tool and field. */
export class PolicyBuildError extends Error {
  override readonly name = 'PolicyBuildError';
  /** `ERR_POLICY_BUILD`, or `POLICY_COST` for a rule whose cost the schema does not bound. */
  readonly code: 'ERR_POLICY_BUILD' | 'POLICY_COST';
  /** What is wrong, as one clause (no fix, no closing period). */
  readonly problem: string;
  /** How to fix it, when there is one thing to do (lower-case, no closing period). */
  readonly fix?: string;
  /** The rule at fault, when one is. */
  readonly rule?: string;
  constructor(
    problem: string,
    code: 'ERR_POLICY_BUILD' | 'POLICY_COST' = 'ERR_POLICY_BUILD',
    facts: { readonly fix?: string; readonly rule?: string } = {},
  ) {
    super(
      facts.fix === undefined
        ? problem
        : `${problem}. ${facts.fix.charAt(0).toUpperCase()}${facts.fix.slice(1)}`,
    );
    this.code = code;
    this.problem = problem;
    if (facts.fix !== undefined) this.fix = facts.fix;
    if (facts.rule !== undefined) this.rule = facts.rule;
  }
}

/** Refuses a rule whose cost on this tool's args grows faster than the args, or passes the limit. */
function checkCost(rule: Rule, tool: Tool, ast: Parameters<typeof estimateCost>[0]): number {
  const estimate = estimateCost(ast, tool.schema.inputSchema);
  const toolName = tool.schema.name;
  if (estimate.degree >= 2) {
    throw new PolicyBuildError(
      `POLICY_COST: policy rule '${rule.name}' has no cost bound for tool '${toolName}': it walks an argument inside a walk of an argument, ` +
        `so its cost grows with the square of the input`,
      'POLICY_COST',
      {
        rule: rule.name,
        fix: "bound the list in the tool's schema (maxItems, maxLength) or rewrite the rule to walk it once",
      },
    );
  }
  if (estimate.steps > MAX_RULE_COST) {
    throw new PolicyBuildError(
      `POLICY_COST: policy rule '${rule.name}' may take about ${Math.round(estimate.steps).toLocaleString('en')} steps on the largest args tool '${toolName}' allows, ` +
        `over the limit of ${MAX_RULE_COST.toLocaleString('en')}`,
      'POLICY_COST',
      { rule: rule.name, fix: "lower maxItems/maxLength in the tool's schema or simplify the rule" },
    );
  }
  return estimate.steps;
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
  toolValue: Readonly<Record<string, unknown>>,
): Entry | undefined {
  const toolName = tool.schema.name;
  if (rule.tools !== undefined && !rule.tools.test(toolName)) return undefined;
  const when = rule.when;
  if (when === undefined)
    return { rule, evaluate: undefined, fallback: undefined, cost: 0, never: false, fieldTest: undefined };
  const missing = [...when.reads.argsFields.keys()].filter((f) => !type.fields.has(f));
  if (missing.length > 0) {
    // An unscoped rule applies only where the schema has every arg it reads.
    if (rule.tools === undefined) return undefined;
    throw new PolicyBuildError(
      `policy rule '${rule.name}' reads args.${missing[0]}, which tool '${toolName}' does not declare (${declared(type)})`,
      'ERR_POLICY_BUILD',
      { rule: rule.name, fix: `fix the field name, or leave '${toolName}' out of the rule's tools` },
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
      'ERR_POLICY_BUILD',
      { rule: rule.name },
    );
  }
  const cost = checkCost(rule, tool, when.ast);
  const condition = compileCondition(when.ast, toolValue, when.evaluate);
  return {
    rule,
    evaluate: condition.kind === 'evaluate' ? condition.fast : undefined,
    fallback: condition.kind === 'evaluate' ? condition.fallback : undefined,
    cost,
    never: condition.kind === 'never',
    // Only a condition the closure compiles takes the run's path: its answers on strings are exact.
    fieldTest:
      condition.kind === 'evaluate' && condition.fast !== when.evaluate ? fieldTestOf(when.ast) : undefined,
  };
}

const sameRun = (a: FieldTest | undefined, b: FieldTest | undefined) =>
  a !== undefined && b !== undefined && a.kind !== 'matches' && a.kind === b.kind && a.field === b.field;

/** Groups consecutive entries that test the same args field the same way; a run needs two. */
function stepsOf(active: readonly Entry[]): { steps: Step[]; slots: Slot[] } {
  const steps: Step[] = [];
  const slots: Slot[] = [];
  const slotOf = (field: string, read: Slot['read']): number => {
    const found = slots.findIndex((s) => s.field === field && s.read === read);
    return found >= 0 ? found : slots.push({ field, read }) - 1;
  };
  for (let i = 0; i < active.length;) {
    const first = active[i]!.fieldTest;
    let end = i + 1;
    while (end < active.length && sameRun(first, active[end]!.fieldTest)) end += 1;
    if (end - i < 2) {
      const entry = active[i]!;
      if (first === undefined) steps.push({ entry });
      else if (first.kind === 'equals') {
        const values = new Set(first.values);
        steps.push({ entry, slot: slotOf(first.field, 'string'), test: (s: string) => values.has(s) });
      } else
        steps.push({
          entry,
          slot: slotOf(first.field, first.kind === 'size' ? 'size' : 'string'),
          test: first.test,
        });
      i += 1;
      continue;
    }
    const entries = active.slice(i, end);
    const tests = entries.map((e) => e.fieldTest!);
    const field = first!.field;
    steps.push({
      run:
        first!.kind === 'equals'
          ? {
              kind: 'equals',
              field,
              entries,
              matching: matchingIndex(tests.map((t) => (t as FieldTest & { kind: 'equals' }).values)),
            }
          : first!.kind === 'affix'
            ? {
                kind: 'affix',
                read: 'string',
                field,
                entries,
                tests: tests.map((t) => (t as FieldTest & { kind: 'affix' }).test),
              }
            : {
                kind: 'size',
                read: 'size',
                field,
                entries,
                tests: tests.map((t) => (t as FieldTest & { kind: 'size' }).test),
              },
    });
    i = end;
  }
  return { steps, slots };
}

/** The policy for one tool. Throws PolicyBuildError when a rule cannot serve it. */
export function compileFor(rules: readonly Rule[], tool: Tool, fallback: PolicyEffect): ToolPolicy {
  const type = argsTypeOf(tool);
  let env: ReturnType<typeof toolEnvironment> | undefined;
  const envOnce = () => (env ??= toolEnvironment(type));
  const toolValue = toolValueOf(tool);
  const entries: Entry[] = [];
  for (const rule of rules) {
    const entry = entryFor(rule, tool, type, envOnce, toolValue);
    if (entry !== undefined) entries.push(entry);
  }
  const active = entries.filter((e) => !e.never);
  const reads = (v: 'args' | 'identity' | 'now') => entries.some((e) => e.rule.when?.reads.variables.has(v));
  return {
    entries,
    active,
    ...stepsOf(active),
    fallback,
    mayAsk: fallback === 'ask' || entries.some((e) => e.rule.effect === 'ask' && !e.rule.shadow),
    idle: entries.length === 0 && fallback === 'allow',
    readsArgs: reads('args'),
    readsIdentity: reads('identity'),
    readsNow: reads('now'),
    toolValue,
    convert: type.convert,
    watchesClock: active.reduce((sum, e) => sum + e.cost, 0) > STEPS_BEFORE_WATCHING_THE_CLOCK,
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
  let value: unknown;
  try {
    value = entry.evaluate(vars);
  } catch {
    // The compiled closure met a value it does not handle: cel-js answers, its error failing the rule.
    try {
      value = entry.fallback!(vars);
    } catch {
      return 'failed';
    }
  }
  if (value === true) return 'yes';
  return value === false ? 'no' : 'failed';
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
  /** The decision passed its deadline before `rule` was evaluated: refused, fail closed. */
  readonly timedOut?: true;
}

const NO_SHADOWS: readonly ShadowMatch[] = Object.freeze([]);

/** Whether a rule's match decides the call: it matched, or it failed and is a deny or an ask (fail closed). */
function matchDecides(match: Match, rule: Rule): boolean {
  return match === 'yes' || (match === 'failed' && rule.effect !== 'allow');
}

/** How long one decision may take, and the clock it reads (ms). */
export interface DecisionDeadline {
  readonly ms: number;
  readonly now: () => number;
}

/**
 * First match decides. A failing expression matches for deny and ask, and not for allow. With a
 * deadline, a decision whose rules are costly looks at the clock between rules and, past it, denies
 * (fail closed); no single rule can run long, its cost being bounded at build.
 */
export function decide(
  policy: ToolPolicy,
  vars: Record<string, unknown>,
  deadline?: DecisionDeadline,
): Verdict {
  const clock = policy.watchesClock ? deadline : undefined;
  if (clock === undefined) return decideBySteps(policy, vars);
  let shadows: ShadowMatch[] | undefined;
  const startedAt = clock.now();
  let stepsSinceCheck = 0;
  let rulesSinceCheck = 0;
  for (const entry of policy.active) {
    stepsSinceCheck += entry.cost;
    rulesSinceCheck += 1;
    // Estimates assume the largest input; reading the clock before every rule would cost more
    // than most rules do, so it is read every few rules, or before a run that may be long.
    if (
      (stepsSinceCheck >= STEPS_BETWEEN_CLOCK_CHECKS && rulesSinceCheck >= RULES_BETWEEN_CLOCK_CHECKS) ||
      stepsSinceCheck >= MAX_RULE_COST
    ) {
      stepsSinceCheck = 0;
      rulesSinceCheck = 0;
      if (clock.now() - startedAt > clock.ms) {
        const { rule } = entry;
        return { effect: 'deny', rule, failed: true, shadows: shadows ?? NO_SHADOWS, timedOut: true };
      }
    }
    const match = matchOf(entry, vars);
    const { rule } = entry;
    if (!matchDecides(match, rule)) continue;
    if (rule.shadow) {
      (shadows ??= []).push({ rule, failed: match === 'failed' });
      continue;
    }
    return { effect: rule.effect, rule, failed: match === 'failed', shadows: shadows ?? NO_SHADOWS };
  }
  return { effect: policy.fallback, rule: undefined, failed: false, shadows: shadows ?? NO_SHADOWS };
}

/**
 * `decide` without a deadline to watch: the same first match over `policy.steps`, where a run of rules
 * on one field holding a value of the type they expect is decided on that value read once (equality
 * by one lookup naming the rules that match), and otherwise rule by rule.
 */
function decideBySteps(policy: ToolPolicy, vars: Record<string, unknown>): Verdict {
  let shadows: ShadowMatch[] | undefined;
  const memo: unknown[] | undefined = policy.slots.length > 0 ? new Array(policy.slots.length) : undefined;
  for (const step of policy.steps) {
    if (step.run === undefined) {
      const { entry, slot } = step;
      let match: Match;
      if (slot === undefined) match = matchOf(entry, vars);
      else {
        let value = memo![slot];
        if (value === undefined) value = memo![slot] = readSlot(policy.slots[slot]!, vars);
        match = value === BY_RULE ? matchOf(entry, vars) : testOf(step.test!, value, entry, vars);
      }
      const { rule } = entry;
      if (!matchDecides(match, rule)) continue;
      if (rule.shadow) {
        (shadows ??= []).push({ rule, failed: match === 'failed' });
        continue;
      }
      return { effect: rule.effect, rule, failed: match === 'failed', shadows: shadows ?? NO_SHADOWS };
    }
    const { run } = step;
    if (run.kind === 'equals') {
      const value = stringFieldOf(vars, run.field);
      if (value !== undefined) {
        const positions = run.matching.get(value);
        if (positions === undefined) continue;
        for (const position of positions) {
          const { rule } = run.entries[position]!;
          if (!rule.shadow)
            return { effect: rule.effect, rule, failed: false, shadows: shadows ?? NO_SHADOWS };
          (shadows ??= []).push({ rule, failed: false });
        }
        continue;
      }
    } else {
      const value = readSlot(run, vars);
      if (value !== BY_RULE) {
        const tests = run.tests as readonly ((value: unknown) => boolean)[];
        for (let position = 0; position < tests.length; position++) {
          if (!tests[position]!(value)) continue;
          const { rule } = run.entries[position]!;
          if (!rule.shadow)
            return { effect: rule.effect, rule, failed: false, shadows: shadows ?? NO_SHADOWS };
          (shadows ??= []).push({ rule, failed: false });
        }
        continue;
      }
    }
    // The field is missing or of another type: rule by rule, where cel-js answers what the closures do not.
    for (const entry of run.entries) {
      const match = matchOf(entry, vars);
      const { rule } = entry;
      if (!matchDecides(match, rule)) continue;
      if (rule.shadow) {
        (shadows ??= []).push({ rule, failed: match === 'failed' });
        continue;
      }
      return { effect: rule.effect, rule, failed: match === 'failed', shadows: shadows ?? NO_SHADOWS };
    }
  }
  return { effect: policy.fallback, rule: undefined, failed: false, shadows: shadows ?? NO_SHADOWS };
}

/**
 * Whether `identity` could get some call of this tool past the policy: false when an enforced deny that
 * reads no args (or the default deny) refuses it whatever the args.
 */
export function visibleFor(policy: ToolPolicy, identity: Identity | undefined, now: number): boolean {
  const vars = variablesFor(policy, { args: {}, identity, now });
  for (const entry of policy.active) {
    const { rule } = entry;
    if (rule.shadow) continue;
    if (rule.when?.reads.variables.has('args') === true) {
      // Some args may match it: an allow or ask can let a call through; a deny may or may not apply.
      if (rule.effect !== 'deny') return true;
      continue;
    }
    const match = matchOf(entry, vars);
    if (matchDecides(match, rule)) return rule.effect !== 'deny';
  }
  return policy.fallback !== 'deny';
}
