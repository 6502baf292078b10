// The limits gate's rules: checked and normalised once at build, and described in refusals.

import { formatCount } from '@toolgate/core';
import { MAX_LIMIT_WINDOW_MS, MAX_UNITS_PER_MS } from '../limit-store';
import type { BudgetLimit, LimitCall, LimitDimension, RateLimit } from '../limits';

export interface Rule {
  readonly name: string;
  readonly per: readonly LimitDimension[];
  readonly windowMs: number;
  readonly limit: number;
  readonly cost: ((call: LimitCall) => number) | undefined;
  /** The tools the rule counts; every tool when undefined. */
  readonly tools: ReadonlySet<string> | undefined;
}

const RULE_NAME = /^[A-Za-z0-9_.-]{1,64}$/;
const DIMENSIONS: readonly LimitDimension[] = ['tenant', 'principal', 'tool'];

export function compileRule(value: unknown, index: number): Rule {
  const fail = (problem: string): never => {
    throw new TypeError(`limitsGate: limits[${index}] ${problem}.`);
  };
  if (typeof value !== 'object' || value === null) return fail('must be an object');
  const rule = value as Partial<RateLimit & BudgetLimit>;
  if (typeof rule.name !== 'string' || !RULE_NAME.test(rule.name))
    fail(`needs a name of 1-64 letters, digits, '.', '_' or '-'`);
  const per = typeof rule.per === 'string' ? [rule.per] : rule.per;
  if (!Array.isArray(per) || per.length === 0 || per.some((d) => !DIMENSIONS.includes(d)))
    fail(`('${rule.name}') needs 'per': 'tenant', 'principal', 'tool' or an array of them`);
  const windowMs = rule.windowMs as number;
  if (!Number.isInteger(windowMs) || windowMs <= 0)
    fail(`('${rule.name}') needs windowMs, a positive integer of milliseconds`);
  if (windowMs > MAX_LIMIT_WINDOW_MS)
    fail(
      `('${rule.name}') has windowMs ${windowMs}, longer than a store can keep a bucket; the longest window is ${formatCount(MAX_LIMIT_WINDOW_MS)} ms (366 days)`,
    );
  const isRate = rule.calls !== undefined;
  if (isRate === (rule.budget !== undefined))
    fail(`('${rule.name}') needs exactly one of 'calls' or 'budget'`);
  const field = isRate ? 'calls' : 'budget';
  const limit = (isRate ? rule.calls : rule.budget) as number;
  if (typeof limit !== 'number' || !Number.isFinite(limit) || limit <= 0)
    fail(`('${rule.name}') needs '${field}' to be a positive number`);
  // Whole units: a store adds and compares them exactly, and a cost is a whole number too.
  if (!Number.isSafeInteger(limit))
    fail(
      `('${rule.name}') needs '${field}' to be a whole number up to ${formatCount(Number.MAX_SAFE_INTEGER)}; count in a smaller unit (cents, tokens) for fractions`,
    );
  if (limit > windowMs * MAX_UNITS_PER_MS)
    fail(
      `('${rule.name}') has ${formatCount(limit)} per ${formatCount(windowMs)} ms, more than ${MAX_UNITS_PER_MS} per millisecond of window, finer than a store can count; count in a larger unit or use a longer window`,
    );
  if (!isRate && typeof rule.cost !== 'function')
    fail(`('${rule.name}') is a budget, so it needs cost(call) => number`);
  const tools = rule.tools;
  if (
    tools !== undefined &&
    (!Array.isArray(tools) || tools.length === 0 || tools.some((t) => typeof t !== 'string' || t === ''))
  )
    fail(`('${rule.name}') needs 'tools' to be a non-empty array of tool names, or absent for every tool`);
  // Dimensions in a fixed order, so ['tool', 'tenant'] and ['tenant', 'tool'] share buckets.
  const dims = DIMENSIONS.filter((d) => (per as LimitDimension[]).includes(d));
  return {
    name: rule.name!,
    per: dims,
    windowMs: rule.windowMs!,
    limit,
    cost: isRate ? undefined : rule.cost,
    tools: tools === undefined ? undefined : new Set(tools),
  };
}

const UNITS: readonly [number, string][] = [
  [86_400_000, 'day'],
  [3_600_000, 'hour'],
  [60_000, 'minute'],
  [1_000, 'second'],
];

/** 3_600_000 → "hour", 7_200_000 → "2 hours", 1500 → "1,500 ms". */
function windowText(ms: number): string {
  for (const [size, unit] of UNITS) {
    if (ms % size === 0) return ms === size ? unit : `${formatCount(ms / size)} ${unit}s`;
  }
  return `${formatCount(ms)} ms`;
}

/** A wait, rounded up: "800 ms", "4 s", "3 min", "2 h". */
export function waitText(ms: number): string {
  if (ms < 1_000) return `${Math.max(1, Math.ceil(ms))} ms`;
  if (ms < 120_000) return `${Math.ceil(ms / 1_000)} s`;
  if (ms < 7_200_000) return `${Math.ceil(ms / 60_000)} min`;
  return `${Math.ceil(ms / 3_600_000)} h`;
}

export function describeRule(rule: Rule): string {
  const each = `for each ${rule.per.join(' and ')}`;
  return rule.cost === undefined
    ? `the rate limit '${rule.name}' (${formatCount(rule.limit)} ${rule.limit === 1 ? 'call' : 'calls'} per ${windowText(rule.windowMs)} ${each})`
    : `the budget '${rule.name}' (${formatCount(rule.limit)} per ${windowText(rule.windowMs)} ${each})`;
}
