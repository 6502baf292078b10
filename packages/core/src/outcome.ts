// Outcome assembly: how a finished run, or a call refused before any chain ran, becomes the
// DispatchOutcome the caller reads. Objects are built key by key in one fixed order, not by spread.

import type { CallContext } from './context';
import type { CallEnvironment } from './context';
import type { DispatchOutcome, LedgerRow, RefusedOutcome } from './outcomes';
import { Pause, Refusal, refusalReason, sentence } from './refusal';

type Base = Pick<DispatchOutcome, 'toolName' | 'toolSource' | 'toolCallId' | 'chainId' | 'ran' | 'ledger'>;

/** The fields every outcome of `ctx` starts with, `kind` first; toolSource absent for our own tools. */
function started<K extends DispatchOutcome['kind']>(kind: K, ctx: CallContext): { kind: K } & Base {
  // A copy of the ledger: a chain abandoned on abort may still file rows, and a returned outcome never changes.
  const ledger = ctx.ledger.slice();
  return ctx.toolSource === undefined
    ? { kind, toolName: ctx.toolName, toolCallId: ctx.toolCallId, chainId: ctx.chainId, ran: ctx.ran, ledger }
    : {
        kind,
        toolName: ctx.toolName,
        toolSource: ctx.toolSource,
        toolCallId: ctx.toolCallId,
        chainId: ctx.chainId,
        ran: ctx.ran,
        ledger,
      };
}

export function outcomeOf(ctx: CallContext): DispatchOutcome {
  const stopped = ctx.stopped;
  if (stopped instanceof Pause) {
    const paused = started('paused', ctx) as Record<string, unknown>;
    paused['checkIn'] = stopped.request;
    paused['content'] = stopped.message;
    return paused as unknown as DispatchOutcome;
  }
  if (stopped instanceof Refusal)
    return refused(ctx, stopped.gate, stopped.code, stopped.reason, stopped.retryable, stopped.message);
  if (ctx.failure !== undefined && ctx.error !== undefined) {
    const failed = started('failed', ctx) as Record<string, unknown>;
    failed['error'] = ctx.error;
    failed['content'] = `['${ctx.toolName}' failed: ${sentence(ctx.error.message || ctx.error.name)}]`;
    return failed as unknown as DispatchOutcome;
  }
  if (ctx.ran && ctx.hasResult) {
    // One literal, not keys added to a started outcome: a literal's hidden class lives with this code,
    // while one reached by adding keys dies in a full GC and takes this function's optimized code with it.
    const { toolName, toolSource, toolCallId, chainId } = ctx;
    const ledger = ctx.ledger.slice();
    const value = ctx.result;
    const content = ctx.resultText ?? '';
    const result: Record<string, unknown> =
      toolSource === undefined
        ? { kind: 'result', toolName, toolCallId, chainId, ran: true, ledger, value, content }
        : { kind: 'result', toolName, toolSource, toolCallId, chainId, ran: true, ledger, value, content };
    if (ctx.receipts.length > 0) result['receipts'] = [...ctx.receipts];
    return result as unknown as DispatchOutcome;
  }
  const reason = refusalReason(
    `'${ctx.toolName}' did not run because the chain ended without reaching it`,
    'Retrying will not help',
  );
  return refused(ctx, 'dispatch', 'NOT_RUN', reason, false, `[dispatch refused: ${reason}]`);
}

function refused(
  ctx: CallContext,
  gate: string,
  code: string,
  reason: string,
  retryable: boolean,
  content: string,
): DispatchOutcome {
  const outcome = started('refused', ctx) as Record<string, unknown>;
  outcome['gate'] = gate;
  outcome['code'] = code;
  outcome['reason'] = reason;
  outcome['retryable'] = retryable;
  outcome['content'] = content;
  return outcome as unknown as DispatchOutcome;
}

/** Who a call refused before any chain ran was for. */
export interface EarlyCall {
  readonly toolName: string;
  readonly toolCallId: string;
  readonly chainId: string;
  readonly toolSource?: string | undefined;
  readonly resumed?: boolean;
}

/**
 * A call the dispatcher refuses before any chain runs (unknown tool, bad args, no usable policy, a
 * resume that fails verification). It still starts and ends like every other in the event stream.
 */
export function refusedBeforeChain(
  env: CallEnvironment,
  call: EarlyCall,
  code: string,
  reason: string,
  gate = 'dispatch',
): RefusedOutcome {
  const { toolName, toolCallId, chainId, toolSource, resumed = false } = call;
  const row: LedgerRow = { gate, outcome: 'deny', why: reason, changed: false };
  const base = { toolName, toolCallId, ...(toolSource !== undefined ? { toolSource } : {}), chainId };
  const now = env.now;
  if (env.wants('dispatch.start'))
    env.emit('dispatch.start', { type: 'dispatch.start', ...base, resumed, at: now() });
  if (env.wants('gate.decision'))
    env.emit('gate.decision', { type: 'gate.decision', ...base, ...row, code, at: now() });
  if (env.wants('dispatch.end'))
    env.emit('dispatch.end', {
      type: 'dispatch.end',
      ...base,
      kind: 'refused',
      ran: false,
      gate,
      code,
      durationMs: 0,
      at: now(),
    });
  return {
    kind: 'refused',
    ...base,
    ran: false,
    gate,
    code,
    reason,
    retryable: false,
    content: `[${gate} refused: ${reason}]`,
    ledger: [row],
  };
}
