// The policy gate: rules a security team writes in CEL, read in order, the first match deciding
// allow, deny or ask. It stands right after validate-args, so rules read validated args, and before
// wants and check-in, so an `ask` is put to a person by the check-in gate with the final args.

import {
  refusalReason,
  shortHash,
  type GateEvent,
  type Identity,
  type Middleware,
  type Tool,
  type ToolMiddlewareContext,
} from '@toolgate/core';
import {
  compileFor,
  decide,
  PolicyBuildError,
  variablesFor,
  visibleFor,
  type ShadowMatch,
  type ToolPolicy,
  type Verdict,
} from './decide';
import {
  assertEffect,
  compileRules,
  PolicyConfigError,
  type PolicyEffect,
  type PolicyRule,
  type Rule,
} from './rules';

export interface PolicyGateOptions {
  /** What decides when no rule matches; default `allow`. */
  readonly default?: PolicyEffect;
  /**
   * How long one decision may take, in ms; past it the call is refused (`POLICY_COST`, fail closed).
   * Checked every few costly rules; each rule's own cost is bounded when the policy is built. Default 100.
   */
  readonly decisionDeadlineMs?: number;
}

const DEFAULT_DECISION_DEADLINE_MS = 100;
const clockMs = (): number => performance.now();

export interface VisibleToolsOptions {
  /** The tools to judge; default every tool this gate has been checked against (by a dispatcher build). */
  readonly tools?: readonly Tool[];
  /** The time rules that read `now` see, in ms since the epoch; default the wall clock. */
  readonly now?: number;
}

/** The policy gate, plus what a server asks of it outside a call. */
export interface PolicyGate extends Middleware {
  /**
   * The tools `identity` may see in a tool list: leaves out each tool some enforced deny rule that
   * reads no args (or the default deny) refuses for this identity whatever the args.
   */
  visibleTools(identity: Identity | undefined, options?: VisibleToolsOptions): Tool[];
  /** The names of the rules that apply to `tool`, in order (scope and schema); throws when one cannot serve it. */
  rulesFor(tool: Tool): string[];
}

const NOTHING_APPLIES = Object.freeze({ why: 'no policy rule applies to this tool' });

const VERBS = { allow: 'allows', ask: 'asks for a person', deny: 'denies' } as const;

/** What a decision files and emits, built once per rule (and for the default), not per call. */
interface Said {
  readonly note: string;
  readonly event: GateEvent;
}

function saidFor(rule: Rule | undefined, effect: PolicyEffect, failed: boolean): Said {
  if (rule === undefined) {
    return {
      note: `no rule matched; the default ${VERBS[effect]}`,
      event: Object.freeze({ type: 'policy.decided', effect, default: true }),
    };
  }
  return {
    note: `rule '${rule.name}' ${VERBS[effect]}${failed ? ' (its condition failed to evaluate: fail closed)' : ''}`,
    event: Object.freeze({
      type: 'policy.decided',
      effect,
      rule: rule.name,
      ...(failed ? { evaluationFailed: true } : {}),
    }),
  };
}

function shadowEvent(shadow: ShadowMatch): GateEvent {
  return {
    type: 'policy.shadow',
    rule: shadow.rule.name,
    effect: shadow.rule.effect,
    ...(shadow.failed ? { evaluationFailed: true } : {}),
  };
}

function withShadows(note: string, shadows: readonly ShadowMatch[]): string {
  const said = shadows.map(
    (s) => `shadow rule '${s.rule.name}' would ${s.rule.effect}${s.failed ? ' (condition failed)' : ''}`,
  );
  return `${note}; ${said.join('; ')}`;
}

function refusal(ctx: ToolMiddlewareContext, verdict: Verdict): string {
  const { rule } = verdict;
  if (rule === undefined) {
    return refusalReason(
      `no policy rule allows '${ctx.toolName}' for this caller`,
      'Retrying will not help',
      'Tell the user this action is not permitted',
    );
  }
  const readsArgs = rule.when?.reads.variables.has('args') === true;
  const what = verdict.failed
    ? `policy rule '${rule.name}' could not be checked for this call of '${ctx.toolName}', so it refuses it`
    : `policy rule '${rule.name}' does not allow '${ctx.toolName}'${readsArgs ? ' with these arguments' : ' for this caller'}`;
  return refusalReason(
    what,
    readsArgs ? 'Retrying with the same arguments will not help' : 'Retrying will not help',
    rule.reason ?? 'Tell the user this action is not permitted',
  );
}

function fingerprintOf(rules: readonly Rule[], fallback: PolicyEffect): string {
  const text = JSON.stringify([
    fallback,
    rules.map((r) => [
      r.name,
      r.effect,
      r.shadow,
      r.tools?.source ?? null,
      r.when?.text ?? null,
      r.reason ?? null,
    ]),
  ]);
  return `${rules.length} rules, default ${fallback}, ${shortHash(text)}`;
}

/**
 * Rules in CEL over `tool`, `args`, `identity` and `now`; the first whose `tools` match and whose `when` holds
 * decides. Each expression is checked against each tool's schema and compiled once, when the dispatcher is
 * built. Place it with `canonicalChain({ policy: policyGate(rules) })` (or `chain.use(...)`): right after
 * validate-args, before wants.
 *
 * @example
 * policyGate([
 *   { name: 'refund-cap', tools: ['issue_refund'], when: 'args.amount > 500.0', effect: 'ask', reason: 'refunds over 500 need a supervisor' },
 *   { name: 'interns-read-only', when: "'intern' in identity.roles && !tool.annotations.readOnlyHint", effect: 'deny' },
 * ])
 */
export function policyGate(rules: readonly PolicyRule[], options: PolicyGateOptions = {}): PolicyGate {
  const compiled = compileRules(rules);
  const fallback =
    options.default === undefined ? 'allow' : assertEffect(options.default, 'policyGate: options.default');
  const deadlineMs = options.decisionDeadlineMs ?? DEFAULT_DECISION_DEADLINE_MS;
  if (!(typeof deadlineMs === 'number' && Number.isFinite(deadlineMs) && deadlineMs > 0))
    throw new PolicyConfigError('policyGate: options.decisionDeadlineMs must be a positive number of ms.');
  const deadline = { ms: deadlineMs, now: clockMs };
  // Compiled once per tool (frozen by the dispatcher, so never stale); an error is kept as the verdict.
  const perTool = new WeakMap<Tool, ToolPolicy | PolicyBuildError>();
  const checked = new Set<Tool>();

  const policyFor = (tool: Tool): ToolPolicy | PolicyBuildError => {
    let policy = perTool.get(tool);
    if (policy === undefined) {
      try {
        policy = compileFor(compiled, tool, fallback);
      } catch (error) {
        policy =
          error instanceof PolicyBuildError
            ? error
            : new PolicyBuildError(`the policy could not be compiled for tool '${tool.schema.name}'`);
      }
      perTool.set(tool, policy);
    }
    return policy;
  };

  // Per rule: what it files when it decides, and when it decides because its condition failed.
  const said = new Map(
    compiled.map((r) => [r, [saidFor(r, r.effect, false), saidFor(r, r.effect, true)] as const]),
  );
  const saidByDefault = saidFor(undefined, fallback, false);

  const decideCall = (ctx: ToolMiddlewareContext, policy: ToolPolicy): void => {
    const verdict = decide(
      policy,
      variablesFor(policy, { args: ctx.args, identity: ctx.identity, now: ctx.now() }),
      deadline,
    );
    if (verdict.timedOut === true) {
      ctx.emit({ type: 'policy.decided', effect: 'deny', rule: verdict.rule!.name, timedOut: true });
      ctx.deny(
        refusalReason(
          `the policy could not decide on this call of '${ctx.toolName}' in time, so it refuses it`,
          'Retrying with smaller arguments may help',
          'Tell the user the action could not be checked',
        ),
        {
          code: 'POLICY_COST',
          detail: `the decision passed its ${deadlineMs} ms deadline before rule '${verdict.rule!.name}' (fail closed)`,
        },
      );
      return;
    }
    const { rule, shadows } = verdict;
    const { note: plain, event } =
      rule === undefined ? saidByDefault : said.get(rule)![verdict.failed ? 1 : 0];
    for (const shadow of shadows) ctx.emit(shadowEvent(shadow));
    ctx.emit(event);
    if (rule !== undefined) ctx.decidedBy(rule.name);
    const note = shadows.length === 0 ? plain : withShadows(plain, shadows);
    if (verdict.effect === 'deny') {
      ctx.deny(refusal(ctx, verdict), { code: 'POLICY_DENIED', detail: note });
    }
    if (verdict.effect === 'ask') {
      ctx.requireCheckIn(
        rule === undefined
          ? 'no policy rule allows this call without a person'
          : `rule '${rule.name}'${rule.reason !== undefined ? `: ${rule.reason}` : ''}`,
      );
    }
    ctx.note(note);
  };

  return {
    name: 'policy',
    after: ['permission', 'capabilities', 'validate-args'],
    before: ['wants', 'limits', 'check-in', 'credentials'],
    fingerprint: fingerprintOf(compiled, fallback),
    checkTool(tool, chain) {
      checked.add(tool);
      const policy = policyFor(tool);
      if (policy instanceof PolicyBuildError) return policy.message;
      if (policy.mayAsk && !chain.canPause) {
        const asker = policy.entries.find((e) => e.rule.effect === 'ask' && !e.rule.shadow)?.rule;
        return `${asker === undefined ? 'the policy default' : `policy rule '${asker.name}'`} asks for a person's approval, but the chain has no check-in key; pass 'checkInKey' to canonicalChain`;
      }
      return undefined;
    },
    passThrough(tool) {
      const policy = policyFor(tool);
      return policy instanceof PolicyBuildError || !policy.idle ? undefined : NOTHING_APPLIES;
    },
    requiresCheckIn(tool) {
      const policy = policyFor(tool);
      return policy instanceof PolicyBuildError || policy.mayAsk;
    },
    run: function policy(ctx, next) {
      const compiledForTool = policyFor(ctx.tool);
      if (compiledForTool instanceof PolicyBuildError) {
        return ctx.deny(
          refusalReason(
            `'${ctx.toolName}' did not run: the policy cannot be applied to it`,
            'Retrying will not help',
            'Tell the user the action is not available',
          ),
          {
            code: compiledForTool.code === 'POLICY_COST' ? 'POLICY_COST' : 'POLICY_DENIED',
            detail: compiledForTool.message,
          },
        );
      }
      if (compiledForTool.idle) {
        ctx.note(NOTHING_APPLIES.why);
        return next();
      }
      decideCall(ctx, compiledForTool);
      return next();
    },
    hides(tool, identity) {
      const policy = policyFor(tool);
      return policy instanceof PolicyBuildError || !visibleFor(policy, identity, Date.now());
    },
    visibleTools(identity, visibleOptions = {}) {
      const now = visibleOptions.now ?? Date.now();
      return [...(visibleOptions.tools ?? checked)].filter((tool) => {
        const policy = policyFor(tool);
        return !(policy instanceof PolicyBuildError) && visibleFor(policy, identity, now);
      });
    },
    rulesFor(tool) {
      const policy = policyFor(tool);
      if (policy instanceof PolicyBuildError) throw policy;
      return policy.entries.map((e) => e.rule.name);
    },
  };
}
