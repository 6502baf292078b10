// The policy test runner: cases of (identity, tool, args) and the effect a security team expects,
// decided by the same compiled rules and first-match walk the gate uses.

import type { Identity, JsonSchema, Tool, ToolAnnotations, ToolArgs } from '@toolgate/core';
import { compileFor, decide, PolicyBuildError, variablesFor, type ToolPolicy } from './decide';
import { assertEffect, compileRules, EFFECTS, type PolicyEffect, type PolicyRule } from './rules';

/** A tool as a test case describes it, when no real tool is given. */
export interface PolicyTestTool {
  readonly name: string;
  readonly source?: string;
  readonly capabilities?: readonly string[];
  readonly annotations?: ToolAnnotations;
  /** Default: inferred from the case's args (strings, numbers, booleans; anything else untyped). */
  readonly inputSchema?: JsonSchema;
}

export interface PolicyTestCase {
  /** Names the case in the report. */
  readonly name?: string;
  readonly identity?: Identity;
  /** A tool name (looked up in `options.tools`, else described by the case's args) or a tool description. */
  readonly tool: string | PolicyTestTool;
  readonly args?: Readonly<ToolArgs>;
  readonly expect: PolicyEffect;
  /** The rule expected to decide; `null` when no rule should match (the default decides). */
  readonly rule?: string | null;
  /** The time `now` reads: ISO 8601 text or ms since the epoch; default `options.now`, else the wall clock. */
  readonly now?: string | number;
}

export interface RunPolicyTestsOptions {
  /** The policy's default, as given to `policyGate`; default `allow`. */
  readonly default?: PolicyEffect;
  /** Real tools (their schemas type the rules) that cases name by `tool`. */
  readonly tools?: readonly Tool[];
  readonly now?: number;
}

export interface PolicyTestResult {
  readonly index: number;
  readonly name?: string;
  readonly passed: boolean;
  readonly expected: PolicyEffect;
  /** What the policy decided; absent when the case could not be run (see `problem`). */
  readonly actual?: PolicyEffect;
  /** The deciding rule; absent when the default decided. */
  readonly rule?: string;
  /** Shadow rules that would have decided first. */
  readonly shadows: readonly string[];
  /** One sentence on why the case failed. */
  readonly problem?: string;
}

export interface PolicyTestReport {
  readonly passed: number;
  readonly failed: number;
  readonly results: readonly PolicyTestResult[];
}

function inferredSchema(args: Readonly<ToolArgs> | undefined): JsonSchema {
  const properties: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(args ?? {})) {
    const type =
      typeof value === 'string'
        ? 'string'
        : typeof value === 'number'
          ? 'number'
          : typeof value === 'boolean'
            ? 'boolean'
            : undefined;
    properties[field] = type === undefined ? {} : { type };
  }
  return { type: 'object', properties };
}

function toolOf(spec: PolicyTestTool, args: Readonly<ToolArgs> | undefined): Tool {
  return {
    schema: { name: spec.name, description: '', inputSchema: spec.inputSchema ?? inferredSchema(args) },
    execute: () => undefined,
    ...(spec.source !== undefined ? { source: spec.source } : {}),
    ...(spec.capabilities !== undefined ? { capabilities: spec.capabilities } : {}),
    ...(spec.annotations !== undefined ? { annotations: spec.annotations } : {}),
  } as Tool;
}

function nowOf(value: string | number | undefined, fallback: number): number | undefined {
  if (value === undefined) return fallback;
  const ms = typeof value === 'number' ? value : Date.parse(value);
  return Number.isFinite(ms) ? ms : undefined;
}

const label = (effect: PolicyEffect, rule: string | undefined) =>
  `${effect} by ${rule === undefined ? 'the default' : `rule '${rule}'`}`;

/**
 * Runs each case through the policy and reports which decided as expected. A policy that cannot be
 * built throws (PolicyConfigError); a case whose tool the policy cannot serve fails with the reason.
 *
 * @example
 * const report = runPolicyTests(rules, [
 *   { identity: { roles: ['intern'] }, tool: 'issue_refund', args: { amount: 5 }, expect: 'deny', rule: 'interns-read-only' },
 * ]);
 */
export function runPolicyTests(
  rules: readonly PolicyRule[],
  cases: readonly PolicyTestCase[],
  options: RunPolicyTestsOptions = {},
): PolicyTestReport {
  const compiled = compileRules(rules);
  const fallback =
    options.default === undefined
      ? 'allow'
      : assertEffect(options.default, 'runPolicyTests: options.default');
  if (!Array.isArray(cases)) throw new TypeError('runPolicyTests: cases must be a list.');
  const known = new Map((options.tools ?? []).map((t) => [t.schema.name, t]));
  const perTool = new Map<Tool, ToolPolicy | PolicyBuildError>();
  const clock = options.now ?? Date.now();

  const results = cases.map((c, index): PolicyTestResult => {
    const name = typeof c?.name === 'string' ? { name: c.name } : {};
    const expected = c?.expect;
    const fail = (problem: string): PolicyTestResult => ({
      index,
      ...name,
      passed: false,
      expected: expected as PolicyEffect,
      shadows: [],
      problem,
    });
    if (!EFFECTS.includes(expected)) return fail(`'expect' must be allow, deny or ask.`);
    const spec = c.tool;
    const tool =
      typeof spec === 'string'
        ? (known.get(spec) ?? toolOf({ name: spec }, c.args))
        : typeof spec === 'object' && spec !== null && typeof spec.name === 'string'
          ? toolOf(spec, c.args)
          : undefined;
    if (tool === undefined) return fail(`'tool' must be a tool name or { name, … }.`);
    const now = nowOf(c.now, clock);
    if (now === undefined) return fail(`'now' must be ISO 8601 text or milliseconds since the epoch.`);
    let policy = perTool.get(tool);
    if (policy === undefined) {
      try {
        policy = compileFor(compiled, tool, fallback);
      } catch (error) {
        policy = error instanceof PolicyBuildError ? error : new PolicyBuildError(String(error));
      }
      perTool.set(tool, policy);
    }
    if (policy instanceof PolicyBuildError) return fail(`${policy.message}.`);
    const verdict = decide(policy, variablesFor(policy, { args: c.args ?? {}, identity: c.identity, now }));
    const rule = verdict.rule?.name;
    const shadows = verdict.shadows.map((s) => s.rule.name);
    const ruleOk = c.rule === undefined || (c.rule === null ? rule === undefined : c.rule === rule);
    const passed = verdict.effect === expected && ruleOk;
    const wanted = c.rule === undefined ? expected : label(expected, c.rule ?? undefined);
    return {
      index,
      ...name,
      passed,
      expected,
      actual: verdict.effect,
      ...(rule !== undefined ? { rule } : {}),
      shadows,
      ...(passed ? {} : { problem: `expected ${wanted}, got ${label(verdict.effect, rule)}.` }),
    };
  });
  const passed = results.filter((r) => r.passed).length;
  return { passed, failed: results.length - passed, results };
}
