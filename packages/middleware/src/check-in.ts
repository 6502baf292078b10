// The check-in gate: pause for a human when the tool's `checkIn` trips. It stands after every
// transform, so the human approves the exact args that will run.

import {
  canonicalJson,
  DeadlineError,
  mayRequireCheckIn,
  refusalReason,
  scopeOf,
  withDeadline,
  type ArtifactStore,
  type Middleware,
  type Next,
  type Tool,
  type ToolMiddlewareContext,
} from '@toolgate/core';
import { isStoredArtifact } from './internal/artifact-answers';
import { assertDeadline } from './internal/consult';

export interface CheckInGateOptions {
  /** Builds the evidence pack shown to the human, sync or async. Must return JSON-serializable data without secrets. */
  readonly evidence?: (ctx: ToolMiddlewareContext) => unknown;
  /** Where a `checkInComponent.propsRef` is resolved at raise time. */
  readonly artifacts?: ArtifactStore;
  /** How long a `checkIn` predicate and the artifact store may each take; default 5000 ms. */
  readonly deadlineMs?: number;
}

const NO_CHECK_IN = Object.freeze({ why: 'no check-in declared' });
const CANNOT_APPROVE = 'Tell the user the action cannot be approved right now';

function questionFor(ctx: ToolMiddlewareContext): string {
  const from = ctx.toolSource === undefined ? '' : ` (from MCP server '${ctx.toolSource}')`;
  const why = ctx.checkInsRequired.map((r) => ` ${r.gate}: ${r.why}`).join('');
  return `Allow '${ctx.toolName}'${from} to run with the arguments shown?${why}`;
}

/**
 * Trips on `checkIn: 'always'` or unless the predicate returns false; a predicate that throws or
 * misses `deadlineMs` trips too, and emits `checkin.predicate-failed`.
 */
export function checkInGate(options: CheckInGateOptions = {}): Middleware {
  const { evidence, artifacts } = options;
  const deadlineMs = assertDeadline('checkInGate', options.deadlineMs);
  if (evidence !== undefined && typeof evidence !== 'function')
    throw new TypeError('checkInGate: evidence must be a function (ctx) => data.');
  const consider = async (
    rule: NonNullable<Tool['checkIn']>,
    ctx: ToolMiddlewareContext,
    next: Next,
  ): Promise<void> => {
    let trips = true;
    if (rule !== 'always') {
      try {
        // Only an explicit `false` skips the human; a predicate that throws, misses the gate's deadline
        // or answers anything else (a forgotten return, a truthy object) cannot decide, so it asks:
        // fail closed.
        trips = (await withDeadline(() => rule(ctx.args, ctx), deadlineMs, ctx.signal)) !== false;
      } catch (error) {
        ctx.emit({
          type: 'checkin.predicate-failed',
          failure: error instanceof DeadlineError ? 'timeout' : 'threw',
        });
        trips = true;
      }
    }
    if (!trips) {
      ctx.note('check-in not needed for these args');
      return next();
    }
    const component = ctx.tool.checkInComponent;
    if (component?.propsRef !== undefined && artifacts !== undefined) {
      let props;
      try {
        props = await withDeadline(
          () => artifacts.get(scopeOf(ctx.identity), component.propsRef!),
          deadlineMs,
          ctx.signal,
        );
        if (props !== undefined && !isStoredArtifact(props, component.propsRef))
          throw new TypeError('the store answered get with something else');
      } catch {
        return ctx.deny(
          refusalReason(
            `'${ctx.toolName}' needs a person's approval, but the approval screen's data could not be read`,
            'Retrying later may help',
          ),
          {
            code: 'ARTIFACT_STORE_FAILED',
            retryable: true,
          },
        );
      }
      if (props === undefined) {
        return ctx.deny(
          refusalReason(
            `'${ctx.toolName}' needs a person's approval, but the approval screen's data is missing in this scope`,
            'Retrying will not help',
            CANNOT_APPROVE,
          ),
          {
            code: 'CHECKIN_COMPONENT_MISSING',
            detail: `checkInComponent '${component.id}' propsRef did not resolve`,
          },
        );
      }
    }
    let pack: unknown;
    try {
      if (evidence !== undefined) pack = await withDeadline(() => evidence(ctx), deadlineMs, ctx.signal);
      // The request carries the pack as JSON; one that has no JSON form fails here, by name.
      if (pack !== undefined) canonicalJson(pack);
    } catch {
      return ctx.deny(
        refusalReason(
          `'${ctx.toolName}' needs a person's approval, but the evidence for it could not be assembled`,
          'Retrying will not help',
          CANNOT_APPROVE,
        ),
        {
          code: 'CHECKIN_EVIDENCE_FAILED',
        },
      );
    }
    await ctx.ask(questionFor(ctx), pack, component === undefined ? {} : { component });
    return next();
  };
  return {
    name: 'check-in',
    after: ['validate-args', 'wants'],
    fingerprint: evidence === undefined ? 'no evidence' : 'evidence',
    checkTool(tool, chain) {
      if (tool.checkIn !== undefined && !chain.canPause) {
        return `it declares checkIn but the chain has no check-in key; pass 'checkInKey' to canonicalChain`;
      }
      if (tool.checkInComponent?.propsRef !== undefined && artifacts === undefined) {
        return `its checkInComponent has a propsRef but the chain has no artifact store; pass 'artifacts' to canonicalChain`;
      }
      return undefined;
    },
    // Planned out only when nothing may require a check-in (ctx.requireCheckIn) on this tool's calls.
    passThrough: (tool, chain) =>
      tool.checkIn === undefined && !mayRequireCheckIn(tool, chain) ? NO_CHECK_IN : undefined,
    // A tool that declares no check-in passes without an async frame.
    run: function checkIn(ctx, next) {
      // An earlier middleware required a person (a policy's `ask`): ask whatever the tool declares.
      if (ctx.checkInsRequired.length > 0) return consider('always', ctx, next);
      const rule = ctx.tool.checkIn;
      if (rule === undefined) {
        ctx.note('no check-in declared');
        return next();
      }
      return consider(rule, ctx, next);
    },
  };
}
