// The limits gate: rates (calls per window) and budgets (declared cost per window), per tenant,
// principal or tool. It takes from the store only for a call about to go on, and gives back what a
// call took when a later gate refuses or pauses it; a call whose tool started keeps its charge.

import {
  DeadlineError,
  formatCount,
  refusalReason,
  withDeadline,
  type Middleware,
  type Next,
  type Tool,
  type ToolArgs,
  type ToolMiddlewareContext,
} from '@toolgate/core';
import { inMemoryLimits } from './in-memory-limits';
import { assertDeadline } from './internal/consult';
import { compileRule, describeRule, waitText, type Rule } from './internal/limit-rules';
import { isLimitAnswer, type LimitCharge, type LimitStore } from './limit-store';

/** Whose bucket a limit is kept in; several dimensions make one bucket per combination. */
export type LimitDimension = 'tenant' | 'principal' | 'tool';

/** What a budget's cost function sees: the call as it will run (validated, refs resolved). */
export interface LimitCall {
  readonly toolName: string;
  readonly tool: Tool;
  readonly args: Readonly<ToolArgs>;
}

interface LimitRuleBase {
  /** Names the limit in refusals, events and store keys: letters, digits, `.`, `_`, `-`; unique per gate. */
  readonly name: string;
  /** One bucket per tenant, principal or tool, or per combination. A call lacking a value shares the "none" bucket. */
  readonly per: LimitDimension | readonly LimitDimension[];
  /**
   * The window, in milliseconds (at most 366 days); the bucket refills at `limit / windowMs`, and a
   * limit may hold at most 20 units per millisecond of window.
   */
  readonly windowMs: number;
  /** Only calls of these tools count against the limit; every tool when absent. */
  readonly tools?: readonly string[];
}

/** A rate: at most `calls` calls per window. */
export interface RateLimit extends LimitRuleBase {
  readonly calls: number;
}

/**
 * A budget: at most `budget` units per window (a whole number: count cents or tokens, not fractions),
 * each call costing what `cost` says (0 passes freely).
 */
export interface BudgetLimit extends LimitRuleBase {
  readonly budget: number;
  /** The units this call costs: a whole number of zero or more (a fraction fails closed). Runs on the args that will run. */
  readonly cost: (call: LimitCall) => number;
}

export type LimitRule = RateLimit | BudgetLimit;

export interface LimitsGateOptions {
  readonly limits: readonly LimitRule[];
  /** Where buckets live; in-memory by default (one process). */
  readonly store?: LimitStore;
  /** How long each store call may take; default 5000 ms. */
  readonly deadlineMs?: number;
  /**
   * Let calls through when the store fails or is late, instead of refusing them. Every call that
   * passes this way says so in its ledger row and emits `limits.failed-open`.
   */
  readonly failOpen?: boolean;
}

/** The bucket's identity values, never args: JSON keeps an absent value (null) apart from any string. */
function bucketKey(rule: Rule, ctx: ToolMiddlewareContext): string {
  const value = (d: LimitDimension) => (d === 'tool' ? ctx.toolName : (ctx.identity?.[d] ?? null));
  return JSON.stringify(rule.per.map(value));
}

type Failure = 'threw' | 'timeout' | 'malformed' | 'aborted';

function failureOf(error: unknown, signal: AbortSignal): Failure {
  if (error instanceof DeadlineError) return 'timeout';
  return signal.aborted ? 'aborted' : 'threw';
}

/**
 * Rates and budgets per tenant, principal or tool, kept in a LimitStore. In `canonicalChain` it
 * stands after validate-args and wants and before check-in, so a budget is judged on the args that
 * will run and no person is asked to approve a call the budget would refuse.
 *
 * @example
 * limitsGate({
 *   store: redisLimits({ url: process.env.REDIS_URL }),
 *   limits: [
 *     { name: 'tenant-calls', per: 'tenant', calls: 1_000, windowMs: 60_000 },
 *     { name: 'tenant-spend', per: 'tenant', budget: 500, windowMs: 86_400_000, cost: ({ toolName }) => PRICES[toolName] ?? 0 },
 *   ],
 * })
 */
export function limitsGate(options: LimitsGateOptions): Middleware {
  if (typeof options !== 'object' || options === null || !Array.isArray(options.limits)) {
    throw new TypeError('limitsGate: options.limits must be an array of rates and budgets.');
  }
  const rules = options.limits.map(compileRule);
  const names = new Set<string>();
  for (const rule of rules) {
    if (names.has(rule.name)) throw new TypeError(`limitsGate: two limits are named '${rule.name}'.`);
    names.add(rule.name);
  }
  const store = options.store ?? inMemoryLimits();
  if (typeof store?.consume !== 'function' || typeof store.refund !== 'function') {
    throw new TypeError(
      'limitsGate: store must be a LimitStore with consume(charges, now) and refund(charges, now).',
    );
  }
  const deadlineMs = assertDeadline('limitsGate', options.deadlineMs);
  const failOpen = options.failOpen === true;

  const storeFailed = (ctx: ToolMiddlewareContext, failure: Failure, next: Next): Promise<void> => {
    if (failOpen && failure !== 'aborted') {
      ctx.emit({ type: 'limits.failed-open', failure });
      ctx.note(`limits store ${failure}; failed open, the call was not counted`);
      return next();
    }
    ctx.emit({ type: 'limits.store-failed', operation: 'consume', failure });
    return ctx.deny(
      refusalReason(
        `'${ctx.toolName}' did not run: the store that keeps its rate and budget limits is unavailable`,
        'Retrying later may help',
      ),
      { code: 'LIMITS_STORE_FAILED', retryable: true, detail: `limits store ${failure}` },
    );
  };

  const refuse = (ctx: ToolMiddlewareContext, rule: Rule, amount: number, retryAfterMs: number): never => {
    const budget = rule.cost !== undefined;
    const at = new Date(ctx.now() + retryAfterMs).toISOString();
    ctx.emit({ type: 'limits.refused', limit: rule.name, amount, retryAfterMs });
    return ctx.deny(
      refusalReason(
        budget
          ? `'${ctx.toolName}' did not run: it costs ${formatCount(amount)}, more than is left of ${describeRule(rule)}`
          : `'${ctx.toolName}' did not run: ${describeRule(rule)} is used up`,
        `Waiting helps: it has room again in ${waitText(retryAfterMs)}, at ${at}`,
        'Call it again then, or do something else meanwhile',
      ),
      {
        code: budget ? 'BUDGET_EXCEEDED' : 'RATE_LIMITED',
        retryable: true,
        detail: `limit '${rule.name}': retry after ${Math.ceil(retryAfterMs)} ms (${at})`,
      },
    );
  };

  const charge = async (
    ctx: ToolMiddlewareContext,
    charges: LimitCharge[],
    applied: Rule[],
    next: Next,
  ): Promise<void> => {
    let answer: unknown;
    try {
      answer = await withDeadline(() => store.consume(charges, ctx.now()), deadlineMs, ctx.signal);
      if (!isLimitAnswer(answer, charges.length)) throw new TypeError('malformed');
    } catch (error) {
      const failure =
        error instanceof TypeError && error.message === 'malformed'
          ? 'malformed'
          : failureOf(error, ctx.signal);
      return storeFailed(ctx, failure, next);
    }
    if (!answer.allowed)
      return refuse(ctx, applied[answer.index]!, charges[answer.index]!.amount, answer.retryAfterMs);
    const counted = charges.map((c, i) =>
      applied[i]!.cost === undefined ? `1 call on '${c.rule}'` : `${formatCount(c.amount)} from '${c.rule}'`,
    );
    ctx.note(`took ${counted.join(', ')}`);
    try {
      await next();
    } finally {
      // A call that never reached its tool (a later refusal, a pause, an abort) gives back what it took.
      if (!ctx.ran) await giveBack(ctx, charges);
    }
  };

  const giveBack = async (ctx: ToolMiddlewareContext, charges: LimitCharge[]): Promise<void> => {
    try {
      await withDeadline(() => store.refund(charges, ctx.now()), deadlineMs);
    } catch (error) {
      // The call's outcome is already decided; a lost refund only leaves the bucket fuller.
      ctx.emit({ type: 'limits.store-failed', operation: 'refund', failure: failureOf(error, ctx.signal) });
    }
  };

  return {
    name: 'limits',
    after: ['permission', 'capabilities', 'validate-args', 'wants'],
    before: ['check-in', 'credentials'],
    fingerprint: [
      ...rules.map(
        (r) =>
          `${r.name} ${r.cost === undefined ? 'calls' : 'budget'} ${r.limit}/${r.windowMs}ms per ${r.per.join('+')}${r.tools === undefined ? '' : ` on ${[...r.tools].join(',')}`}`,
      ),
      ...(failOpen ? ['fail open'] : []),
    ].join('; '),
    run: function limits(ctx, next) {
      const charges: LimitCharge[] = [];
      const applied: Rule[] = [];
      for (const rule of rules) {
        if (rule.tools !== undefined && !rule.tools.has(ctx.toolName)) continue;
        let amount = 1;
        if (rule.cost !== undefined) {
          try {
            amount = rule.cost({ toolName: ctx.toolName, tool: ctx.tool, args: ctx.args });
          } catch {
            amount = Number.NaN;
          }
          if (typeof amount !== 'number' || !Number.isSafeInteger(amount) || amount < 0) {
            return ctx.deny(
              refusalReason(
                `'${ctx.toolName}' did not run: its cost under the budget '${rule.name}' could not be worked out`,
                'Retrying will not help',
              ),
              {
                code: 'LIMITS_COST_FAILED',
                detail: `budget '${rule.name}': cost() threw or was not a whole number of zero or more`,
              },
            );
          }
          if (amount === 0) continue;
          if (amount > rule.limit) {
            ctx.emit({ type: 'limits.refused', limit: rule.name, amount });
            return ctx.deny(
              refusalReason(
                `'${ctx.toolName}' did not run: it costs ${formatCount(amount)}, more than the whole of ${describeRule(rule)}`,
                'Waiting will not help',
                'Do it in smaller parts',
              ),
              { code: 'BUDGET_TOO_SMALL' },
            );
          }
        }
        charges.push({
          rule: rule.name,
          key: bucketKey(rule, ctx),
          amount,
          limit: rule.limit,
          windowMs: rule.windowMs,
        });
        applied.push(rule);
      }
      if (charges.length === 0) {
        ctx.note('no limit applies');
        return next();
      }
      return charge(ctx, charges, applied, next);
    },
  };
}
