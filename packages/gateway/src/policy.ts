// The configuration's policy: global rules (`policy`) and each tenant's own (`tenants.X.policy`),
// inline or from a YAML/JSON file, read into one policy gate per tenant: global rules first, then the
// tenant's, the first match deciding. Every problem — a rule that does not parse, a glob that names no
// tool, a rule typed against a tool that lacks its field, an `ask` with no check-in key — is placed
// at the rule's file, line and column, naming the rule.

import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Tool } from '@toolgate/core';
import {
  loadPolicy,
  policyGate,
  PolicyBuildError,
  PolicyConfigError,
  PolicyLoadError,
  type PolicyEffect,
  type PolicyGate,
  type PolicyRule,
  matchesToolGlob,
} from '@toolgate/policy';
import { isMap, isScalar, isSeq, LineCounter, parseDocument, type Node } from 'yaml';
import type { ConfigIssue, ConfigPath } from './config/errors';
import { policyRules } from './config/check-names';
import type { LoadedConfig } from './config/load';
import type { PolicyConfig } from './config/types';

/** Places an issue at a rule (or one of its fields) where it is written. */
type RuleSite = (field: string | undefined, message: string, fix?: string) => ConfigIssue;

interface Layer {
  readonly rules: readonly PolicyRule[];
  readonly sites: readonly RuleSite[];
  readonly default?: PolicyEffect;
  /** Where `default` is written. */
  readonly at: ConfigPath;
}

/** One tenant's policy: the global rules, then its own. */
export interface TenantPolicy {
  readonly rules: readonly PolicyRule[];
  readonly default: PolicyEffect;
  /** How many of `rules` are global (they come first). */
  readonly globalCount: number;
  /** Where a rule is written, by name. */
  site(name: string): RuleSite | undefined;
  /** Where the default that applies is written. */
  readonly defaultAt: ConfigPath;
  /** Build messages already reported by another tenant (a global rule fails alike in each). */
  readonly reported: Set<string>;
}

/** A tenant's policy gate, built and checked against the tenant's tools. */
export interface BuiltPolicy {
  readonly gate: PolicyGate;
  readonly rules: readonly PolicyRule[];
  readonly default: PolicyEffect;
  readonly globalCount: number;
}

/**
 * Reads the global and per-tenant policies. `toolNamesOf(tenant)` names the tools a tenant serves,
 * for the check that every `tools` glob names one. A tenant with no rules and an `allow` default gets
 * no policy at all (no gate in its chain).
 */
export function resolvePolicies(
  loaded: LoadedConfig,
  toolNamesOf: (tenant: string) => readonly string[],
): { readonly tenants: ReadonlyMap<string, TenantPolicy>; readonly issues: readonly ConfigIssue[] } {
  const issues: ConfigIssue[] = [];
  const { config } = loaded;
  const global = readLayer(config.policy, ['policy'], loaded, issues);
  const tenantNames = Object.keys(config.tenants);
  const reported = new Set<string>();

  // A global glob must name a tool of some tenant; a tenant's, one of its own.
  const everyTool = new Set(tenantNames.flatMap((name) => toolNamesOf(name)));
  if (global !== undefined) danglingGlobs(global, [...everyTool], 'any tenant', issues);

  const tenants = new Map<string, TenantPolicy>();
  for (const name of tenantNames) {
    const own = readLayer(config.tenants[name]!.policy, ['tenants', name, 'policy'], loaded, issues);
    if (own !== undefined) danglingGlobs(own, toolNamesOf(name), `tenant '${name}'`, issues);
    const rules = [...(global?.rules ?? []), ...(own?.rules ?? [])];
    const sites = [...(global?.sites ?? []), ...(own?.sites ?? [])];
    const fallback = own?.default ?? global?.default ?? 'allow';
    if (rules.length === 0 && fallback === 'allow') continue;
    const byName = new Map(rules.map((rule, index) => [rule.name, sites[index]!]));
    tenants.set(name, {
      rules,
      default: fallback,
      globalCount: global?.rules.length ?? 0,
      site: (rule) => byName.get(rule),
      defaultAt: own?.default !== undefined ? own.at : (global?.at ?? ['policy']),
      reported,
    });
  }
  return { tenants, issues };
}

/**
 * The tenant's policy gate, typed against its tools now (a rule reading a field a tool does not
 * declare, or with the wrong type, is an issue at the rule), plus the issues found.
 */
export function buildTenantPolicy(
  policy: TenantPolicy,
  tools: readonly Tool[],
  options: {
    readonly canPause: boolean;
    readonly issue: (path: ConfigPath, message: string, fix?: string) => ConfigIssue;
  },
): { readonly built?: BuiltPolicy; readonly issues: readonly ConfigIssue[]; readonly failed: boolean } {
  const issues: ConfigIssue[] = [];
  let failed = false;
  const report = (issue: ConfigIssue) => {
    failed = true;
    const id = `${issue.file ?? ''}:${issue.line ?? ''}:${issue.message}`;
    if (policy.reported.has(id)) return;
    policy.reported.add(id);
    issues.push(issue);
  };
  let gate: PolicyGate;
  try {
    gate = policyGate(policy.rules, { default: policy.default });
  } catch (error) {
    // Each list was checked on its own; what is left is a problem of the two together.
    const problem = error instanceof PolicyConfigError ? error.problem : (error as Error).message;
    report(options.issue(policy.defaultAt, problem));
    return { issues, failed };
  }
  const asking = new Set<string>();
  for (const tool of tools) {
    let applying: string[];
    try {
      applying = gate.rulesFor(tool);
    } catch (error) {
      const { problem, fix, rule } =
        error instanceof PolicyBuildError
          ? error
          : { problem: (error as Error).message, fix: undefined, rule: undefined };
      const site = rule === undefined ? undefined : policy.site(rule);
      report(site === undefined ? options.issue(policy.defaultAt, problem, fix) : site('when', problem, fix));
      continue;
    }
    for (const name of applying) {
      const rule = policy.rules.find((candidate) => candidate.name === name);
      if (rule?.effect === 'ask' && rule.mode !== 'shadow') asking.add(name);
    }
  }
  if (!options.canPause) {
    for (const name of asking)
      report(
        policy.site(name)!(
          'effect',
          `policy rule '${name}' asks for a person's approval, and no check-in key is configured`,
          'add checkIns: { key: "${env:TOOLGATE_CHECKIN_KEY}" } with at least 32 random bytes',
        ),
      );
    if (policy.default === 'ask' && tools.length > 0)
      report(
        options.issue(
          [...policy.defaultAt, 'default'],
          "the policy's default asks for a person's approval, and no check-in key is configured",
          'add checkIns: { key: "${env:TOOLGATE_CHECKIN_KEY}" } with at least 32 random bytes',
        ),
      );
  }
  if (failed) return { issues, failed };
  return {
    built: { gate, rules: policy.rules, default: policy.default, globalCount: policy.globalCount },
    issues,
    failed,
  };
}

function readLayer(
  policy: PolicyConfig | undefined,
  at: ConfigPath,
  loaded: LoadedConfig,
  issues: ConfigIssue[],
): Layer | undefined {
  if (policy === undefined) return undefined;
  const fallback = Array.isArray(policy) ? undefined : (policy as { default?: PolicyEffect }).default;
  const file = Array.isArray(policy) ? undefined : (policy as { file?: string }).file;
  if (file !== undefined) return readFileLayer(file, at, fallback, loaded, issues);

  const [inline, rulesAt] = policyRules(policy, at);
  const rules = (inline ?? []) as readonly PolicyRule[];
  const sites: RuleSite[] = rules.map(
    (_rule, index) => (field, message, fix) =>
      loaded.issue(field === undefined ? [...rulesAt, index] : [...rulesAt, index, field], message, fix),
  );
  try {
    policyGate(rules);
  } catch (error) {
    if (!(error instanceof PolicyConfigError)) throw error;
    const site = error.index === undefined ? undefined : sites[error.index];
    issues.push(site === undefined ? loaded.issue(rulesAt, error.problem) : site(error.field, error.problem));
    return undefined;
  }
  return { rules, sites, ...(fallback !== undefined ? { default: fallback } : {}), at };
}

function readFileLayer(
  file: string,
  at: ConfigPath,
  fallback: PolicyEffect | undefined,
  loaded: LoadedConfig,
  issues: ConfigIssue[],
): Layer | undefined {
  const path = resolve(loaded.baseDir, file);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    issues.push(
      loaded.issue(
        [...at, 'file'],
        `the policy file cannot be read (${code === 'ENOENT' ? 'it does not exist' : (code ?? 'error')})`,
        'give a path relative to the configuration file',
      ),
    );
    return undefined;
  }
  let rules: PolicyRule[];
  try {
    rules = loadPolicy(text, { file: path });
  } catch (error) {
    if (!(error instanceof PolicyLoadError)) throw error;
    issues.push({
      path: [...at, 'file'],
      file: path,
      line: error.line,
      column: error.column,
      message: error.problem,
    });
    return undefined;
  }
  const lines = new LineCounter();
  const root = parseDocument(text, { lineCounter: lines }).contents as Node | null;
  const sites: RuleSite[] = rules.map((_rule, index) => (field, message, fix) => {
    const node = fieldNode(root, index, field);
    const start = node?.range?.[0];
    const position = start === undefined ? { line: 1, col: 1 } : lines.linePos(start);
    return {
      path: [...at, 'file', index, ...(field !== undefined ? [field] : [])],
      file: path,
      line: position.line,
      column: position.col,
      message,
      ...(fix !== undefined ? { fix } : {}),
    };
  });
  return { rules, sites, ...(fallback !== undefined ? { default: fallback } : {}), at };
}

function fieldNode(root: Node | null, index: number, field: string | undefined): Node | undefined {
  if (!isSeq(root)) return undefined;
  const item = root.items[index] as Node | undefined;
  if (field === undefined || !isMap(item)) return item;
  const pair = item.items.find((candidate) => isScalar(candidate.key) && candidate.key.value === field);
  return (pair?.value as Node | null | undefined) ?? (pair?.key as Node | undefined) ?? item;
}

function danglingGlobs(layer: Layer, names: readonly string[], where: string, issues: ConfigIssue[]): void {
  layer.rules.forEach((rule, index) => {
    for (const glob of rule.tools ?? []) {
      if (names.some((name) => matchesToolGlob(name, glob))) continue;
      issues.push(
        layer.sites[index]!(
          'tools',
          `policy rule '${rule.name}': '${glob}' matches none of the tools of ${where}`,
          `tools here: ${names.join(', ') || '(none)'}`,
        ),
      );
    }
  });
}

/** `toolgate check`'s words for a tenant's policy. */
export function describePolicy(built: BuiltPolicy): string {
  const own = built.rules.length - built.globalCount;
  return `policy: ${built.rules.length} rule(s) (${built.globalCount} global, ${own} own), default ${built.default}`;
}

/** `toolgate check`'s words for the rules that apply to one tool, in the order they are read. */
export function policyFacts(built: BuiltPolicy, tool: Tool): string {
  const names = built.gate.rulesFor(tool);
  return names.length === 0
    ? `rules: none (default ${built.default})`
    : `rules: ${names.join(', ')} (then default ${built.default})`;
}
