// The executor at the centre of the onion, and how whatever ended a run is recorded on its context.

import { whenAborted } from './abort';
import { spendUnaskedChange } from './asking';
import { contentText, isContentResult } from './content';
import { CallContext, resultTextOf, ToolFailure } from './context';
import { redact, redactValue } from './redact';
import { Pause, Refusal, refusalReason } from './refusal';

const MAX_ERROR_CHARS = 1000;

function failedMessage(error: unknown): { name: string; message: string } {
  try {
    if (error instanceof Error)
      return { name: String(error.name || 'Error'), message: String(error.message) };
  } catch {
    // A getter or trap on the error threw: the call still failed, the error just says less.
    return { name: 'Error', message: 'the tool threw an error that could not be read' };
  }
  return {
    name: 'Error',
    message: typeof error === 'string' ? error : `a non-Error value (${typeof error}) was thrown`,
  };
}

/** Whether a tool threw a Refusal; a thrown proxy whose traps throw is not one. */
function refusalFrom(error: unknown): boolean {
  try {
    return error instanceof Refusal;
  } catch {
    return false;
  }
}

function serializationProblem(error: unknown): string {
  const message = error instanceof Error ? error.message : '';
  if (/bigint/i.test(message)) return 'it contains a BigInt';
  if (/circular|cycle/i.test(message)) return 'it contains a cycle';
  if (/function|symbol|no JSON form/i.test(message)) return 'it is not a JSON value';
  return 'serializing it threw';
}

/**
 * The executor's turn, after the last middleware's: that middleware's downstream settles when it ends.
 * Not async itself: the executor chains reactions onto the tool's promise, where an async frame would
 * cost a promise more (and, under an async hook, another for its await). A throw still rejects.
 */
export function executeTurn(ctx: CallContext): Promise<void> {
  let position: number;
  try {
    position = ctx.beginTurn();
  } catch (error) {
    return Promise.reject(error);
  }
  let running: Promise<void>;
  // An approval to spend or to check waits on digests first: the rare path keeps its async frame.
  if (needsApprovalWork(ctx)) running = executeApproved(ctx);
  else {
    try {
      running = execute(ctx);
    } catch (error) {
      running = Promise.reject(error);
    }
  }
  // The turn ends one reaction after the result is recorded, as it did when execute was async: a gate
  // that did not await next() resolves first and is caught by the GATE_UNAWAITED law.
  return running.then(
    reactions.turnEnded.bind(undefined, ctx, position),
    reactions.turnFailed.bind(undefined, ctx, position),
  );
}

// Reactions bound per call rather than closures made per call: see `reactions` in run.ts.
const reactions = {
  turnEnded(ctx: CallContext, position: number): void {
    ctx.endTurn(position);
  },
  turnFailed(ctx: CallContext, position: number, error: unknown): never {
    ctx.endTurn(position);
    throw error;
  },
  toolAnswered(ctx: CallContext, started: number | undefined, value: unknown): void {
    recordValue(ctx, value, started);
  },
  toolRejected(ctx: CallContext, started: number | undefined, error: unknown): never {
    throw toolThrew(ctx, error, started);
  },
};

function needsApprovalWork(ctx: CallContext): boolean {
  const { resume } = ctx;
  if (resume !== undefined && !resume.answered && resume.decision.approved) return true;
  return ctx.hasApproval();
}

/** The terminal step after an approval's async checks. */
async function executeApproved(ctx: CallContext): Promise<void> {
  // An approval with changes whose asker no longer asked is spent here, once, before the tool runs.
  if (ctx.resume !== undefined && !ctx.resume.answered && ctx.resume.decision.approved) {
    const service = ctx.pauseService();
    if (ctx.resume.decision.args !== undefined && service !== undefined && ctx.stopped === undefined)
      await spendUnaskedChange(ctx, service);
  }
  // An approval covers the args the person saw; a change made after it must not ride on it.
  const approval = ctx.approvalCheck();
  if (approval !== undefined) await approval;
  await execute(ctx);
}

/**
 * The terminal step: the only place a result is ever set. Throws synchronously for what stops the call
 * before the tool runs; otherwise settles when the tool's result (or failure) is recorded.
 */
function execute(ctx: CallContext): Promise<void> {
  if (ctx.stopped !== undefined) throw ctx.stopped;
  if (ctx.closed) throw new Refusal('dispatch', 'the call was already answered', { code: 'CLOSED' });
  if (ctx.resume !== undefined && !ctx.resume.answered) {
    const { asker } = ctx.resume.request;
    throw ctx.refuse(
      new Refusal(
        asker,
        refusalReason(
          `the approval for '${ctx.toolName}' was never checked because '${asker}' did not ask again in this run`,
          'Ask for a new approval',
        ),
        {
          code: 'CHECKIN_NOT_REACHED',
        },
      ),
    );
  }
  const required = ctx.unansweredRequirement;
  if (required !== undefined) {
    // A middleware required a person's approval and nothing asked for it (no check-in gate, or one
    // that does not honor requirements): the call must not run unapproved.
    throw ctx.refuse(
      new Refusal(
        required.gate,
        refusalReason(
          `'${ctx.toolName}' needs a person's approval, but nothing in this deployment asked for it`,
          'Retrying will not help',
          'Tell the user the action needs approval',
        ),
        {
          code: 'CHECKIN_NOT_ASKED',
          detail: `'${required.gate}' required a check-in; no middleware after it asked`,
        },
      ),
    );
  }
  if (ctx.signal.aborted)
    throw ctx.refuse(
      new Refusal('dispatch', refusalReason(`the call to '${ctx.toolName}' was cancelled before it ran`), {
        code: 'ABORTED',
      }),
    );
  ctx.markRan();
  // Timed only when someone may hear tool.end; a listener added while the tool runs reads 0.
  const started = ctx.timerStart();
  ctx.publish('tool.start', () => ({}));
  let running: unknown;
  try {
    running = ctx.tool.execute(ctx.args as never, ctx);
  } catch (error) {
    running = Promise.reject(error);
  }
  // Settles in the microtask an `await` of the tool's answer would resume in.
  return Promise.resolve(running).then(
    reactions.toolAnswered.bind(undefined, ctx, started),
    reactions.toolRejected.bind(undefined, ctx, started),
  );
}

const sinceStart = (ctx: CallContext, started: number | undefined): number =>
  started === undefined ? 0 : ctx.now() - started;

/** What the tool threw, recorded: a refusal of its own, or a failure with its message redacted. */
function toolThrew(ctx: CallContext, error: unknown, started: number | undefined): unknown {
  // A tool may refuse for a reason of its own (an MCP server that is down, a definition that
  // changed): the model reads a refusal it can act on, not a failure.
  if (refusalFrom(error)) {
    if ((error as Refusal).beforeRun) ctx.markNotRun();
    return ctx.refuse(error as Refusal);
  }
  const { name, message } = failedMessage(error);
  const secrets = ctx.credential?.secrets() ?? [];
  const clean = redact(message, secrets).slice(0, MAX_ERROR_CHARS);
  ctx.publish('tool.error', () => ({
    errorName: redact(name, secrets).slice(0, 100),
    durationMs: sinceStart(ctx, started),
  }));
  return ctx.recordFailure(redact(name, secrets).slice(0, 100), clean);
}

/** The tool's value, redacted and turned into the text the model reads. */
function recordValue(ctx: CallContext, returned: unknown, started: number | undefined): void {
  let value = returned;
  // An upstream that echoes the request's credential back must not hand it to the model, nor to
  // whoever reads the outcome: content, structuredContent and `value` all come from this one value.
  const secrets = ctx.credential?.secrets();
  if (secrets !== undefined) value = redactValue(value, secrets);
  let text: string;
  try {
    // An MCP tool's blocks read as their text; anything else as JSON.
    text = ctx.toolSource !== undefined && isContentResult(value) ? contentText(value) : resultTextOf(value);
  } catch (error) {
    ctx.publish('tool.error', () => ({
      errorName: 'UnserializableResult',
      durationMs: sinceStart(ctx, started),
    }));
    throw ctx.recordFailure(
      'UnserializableResult',
      `'${ctx.toolName}' returned a result that cannot be sent to the model: ${serializationProblem(error)}`,
    );
  }
  // A toJSON the walk could not see through may still have written a secret into the text.
  if (secrets !== undefined) text = redact(text, secrets);
  ctx.recordResult(value, text);
  ctx.publish('tool.end', () => ({ chars: text.length, durationMs: sinceStart(ctx, started) }));
}

export function raceAbort(running: Promise<void>, signal: AbortSignal): Promise<void> {
  if (signal.aborted) {
    running.catch(() => undefined);
    return Promise.reject(new AbortSignalled());
  }
  return new Promise<void>((resolve, reject) => {
    const stopWaiting = whenAborted(signal, () => reject(new AbortSignalled()));
    running.then(
      () => {
        stopWaiting();
        resolve();
      },
      (error: unknown) => {
        stopWaiting();
        reject(error);
      },
    );
  });
}

class AbortSignalled extends Error {
  override readonly name = 'AbortSignalled';
}

/** Records what ended the run, when the onion itself did not already record it. */
export function absorb(ctx: CallContext, error: unknown, signal: AbortSignal | undefined): void {
  if (error !== undefined && (error === ctx.stopped || error === ctx.failure)) return;
  if (
    error instanceof AbortSignalled ||
    (signal?.aborted && !(error instanceof Refusal) && !(error instanceof Pause))
  ) {
    ctx.closed = true;
    if (ctx.ran) {
      if (ctx.failure !== undefined) return;
      if (!ctx.hasResult) {
        ctx.recordFailure('AbortError', `the call to '${ctx.toolName}' was cancelled while it ran`);
        return;
      }
      // An after-half was still judging the result: withhold it rather than skip that judgment.
      ctx.refuse(
        new Refusal(
          ctx.speaker,
          refusalReason(`the call to '${ctx.toolName}' was cancelled before its result was checked`),
          { code: 'ABORTED' },
        ),
      );
      return;
    }
    ctx.refuse(
      new Refusal(ctx.speaker, refusalReason(`the call to '${ctx.toolName}' was cancelled before it ran`), {
        code: 'ABORTED',
      }),
    );
    return;
  }
  if (error instanceof ToolFailure) return;
  if (ctx.stopped === undefined) {
    ctx.refuse(
      new Refusal(
        'dispatch',
        refusalReason(`'${ctx.toolName}' was stopped by an internal error`, 'Retrying will not help'),
        { code: 'INTERNAL', detail: error instanceof Error ? error.name : typeof error },
      ),
    );
  }
}
