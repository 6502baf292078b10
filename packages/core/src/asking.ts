// How `ctx.ask` pauses a call for a human, and how a resumed run answers the same ask: the signed
// request, the single-use consume, the receipts of approvals earlier in the same call.

import type { PauseService } from './chain';
import type { CheckInApproval, CheckInDecision, CheckInReceipt, CheckInRequest } from './check-in';
import { canonicalJson, digestOf } from './canonical';
import type { CallContext } from './context';
import { withDeadline } from './deadline';
import { newId } from './ids';
import type { AskOptions } from './middleware-context';
import { Pause, Refusal, refusalReason } from './refusal';
import type { ToolArgs } from './tool';

/** The answer to `asker`'s question: an approval from the resumed run, or a pause (thrown). */
export async function askHuman(
  ctx: CallContext,
  asker: string,
  question: string,
  evidence: unknown,
  options: AskOptions,
  service: PauseService,
): Promise<CheckInApproval> {
  const review = ctx.reviewArgs();
  const argsDigest = await digestOf(review);
  const answer =
    ctx.resume === undefined ? undefined : await answerFromResume(ctx, asker, argsDigest, service);
  if (answer !== undefined) return answer;
  return pause(ctx, { asker, question, evidence, options, review, argsDigest }, service);
}

/** The resumed request answers its own asker once; an earlier approval's receipt answers a repeat ask. */
async function answerFromResume(
  ctx: CallContext,
  asker: string,
  argsDigest: string,
  service: PauseService,
): Promise<CheckInApproval | undefined> {
  const resume = ctx.resume!;
  if (resume.request.asker === asker && !resume.answered) {
    resume.answered = true;
    return answerRequest(ctx, resume.request, resume.decision, argsDigest, service);
  }
  const earlier = ctx.takeEarlierReceipt(asker, argsDigest);
  if (earlier === undefined) return undefined;
  const approval: CheckInApproval =
    earlier.note === undefined
      ? { approved: true, by: earlier.by }
      : { approved: true, by: earlier.by, note: earlier.note };
  ctx.recordApproval(approval, asker, earlier, `approved earlier by ${earlier.by}`);
  return approval;
}

async function answerRequest(
  ctx: CallContext,
  request: CheckInRequest,
  decision: CheckInDecision,
  argsDigest: string,
  service: PauseService,
): Promise<CheckInApproval> {
  if (!decision.approved) {
    await withDeadline(() => service.store.consume(request.id), service.deadlineMs, ctx.signal).catch(
      () => false,
    );
    resolved(ctx, request, false, decision.by);
    return ctx.deny(
      refusalReason(
        `'${ctx.toolName}' was declined by ${decision.by}: ${decision.reason}`,
        'Do not call it again with the same arguments',
      ),
      { code: 'CHECKIN_DECLINED' },
    );
  }
  // An approval with changes covers the person's args, not the ones asked.
  const approvedDigest = decision.args === undefined ? request.argsDigest : await digestOf(decision.args);
  if (argsDigest !== approvedDigest) {
    resolved(ctx, request, false, undefined, 'args changed since approval');
    return ctx.deny(
      refusalReason(
        `the arguments of '${ctx.toolName}' changed after a person approved them, so the approval does not cover this call`,
        'Ask for a new approval',
      ),
      { code: 'CHECKIN_MISMATCH' },
    );
  }
  const receipt = await receiptFor(ctx, request, decision, approvedDigest, service);
  await consumeOnce(ctx, request, receipt, service);
  ctx.recordApproval(decision, request.asker, receipt, approvalWhy(decision));
  resolved(ctx, request, true, decision.by);
  return decision;
}

const approvalWhy = (decision: CheckInApproval): string =>
  decision.args === undefined ? `approved by ${decision.by}` : `approved with changes by ${decision.by}`;

/**
 * A resumed approval with changes whose asker did not ask again: the changed call no longer needs
 * it (policy judged the narrower args). The approval is still spent, exactly once, before the tool
 * runs, so the decision cannot run twice; its args must be exactly the ones approved.
 */
export async function spendUnaskedChange(ctx: CallContext, service: PauseService): Promise<void> {
  const resume = ctx.resume!;
  const { request, decision } = resume;
  resume.answered = true;
  if (!decision.approved || decision.args === undefined) return;
  const approvedDigest = await digestOf(decision.args);
  if ((await digestOf(ctx.reviewArgs())) !== approvedDigest) {
    resolved(ctx, request, false, undefined, 'args changed since approval');
    throw ctx.refuse(
      new Refusal(
        request.asker,
        refusalReason(
          `the arguments of '${ctx.toolName}' changed after a person approved them, so the approval does not cover this call`,
          'Ask for a new approval',
        ),
        { code: 'CHECKIN_MISMATCH' },
      ),
    );
  }
  const receipt = await receiptFor(ctx, request, decision, approvedDigest, service);
  await consumeOnce(ctx, request, receipt, service, request.asker);
  ctx.recordUnaskedApproval(
    decision,
    request.asker,
    receipt,
    `${approvalWhy(decision)}; the changed call did not need to ask`,
  );
  resolved(ctx, request, true, decision.by);
}

/**
 * Consumes the request in the store, exactly once; anything else refuses, in the running middleware's
 * name or, from the executor, in `gate`'s.
 */
async function consumeOnce(
  ctx: CallContext,
  request: CheckInRequest,
  receipt: CheckInReceipt,
  service: PauseService,
  gate?: string,
): Promise<void> {
  const refuse = (reason: string, detail: { code: string; retryable?: boolean }): never => {
    if (gate === undefined) return ctx.deny(reason, detail);
    throw ctx.refuse(new Refusal(gate, reason, detail));
  };
  let consumed: boolean;
  try {
    const answer: unknown = await withDeadline(
      () => service.store.consume(request.id, receipt),
      service.deadlineMs,
      ctx.signal,
    );
    // Only a boolean is an answer: a truthy oddity must not count as a consumed approval.
    if (typeof answer !== 'boolean') throw new TypeError('consume did not answer a boolean');
    consumed = answer;
  } catch {
    resolved(ctx, request, false, undefined, 'store failed');
    return refuse(
      refusalReason(
        `the approval for '${ctx.toolName}' could not be checked because the check-in store is unavailable`,
        'Retrying later may help',
      ),
      { code: 'CHECKIN_STORE_FAILED', retryable: true },
    );
  }
  if (!consumed) {
    resolved(ctx, request, false, undefined, 'not pending');
    return refuse(
      refusalReason(
        `this approval for '${ctx.toolName}' was already used, revoked or has expired`,
        'An approval is good for one run only',
        'Ask for a new approval',
      ),
      { code: 'CHECKIN_NOT_PENDING' },
    );
  }
}

async function receiptFor(
  ctx: CallContext,
  request: CheckInRequest,
  decision: CheckInApproval,
  approvedDigest: string,
  service: PauseService,
): Promise<CheckInReceipt> {
  const unsigned = {
    requestId: request.id,
    asker: request.asker,
    by: decision.by,
    ...(decision.note !== undefined ? { note: decision.note } : {}),
    approvedAt: new Date(ctx.now()).toISOString(),
    argsDigest: approvedDigest,
    ...(approvedDigest !== request.argsDigest ? { askedArgsDigest: request.argsDigest } : {}),
    chainIdRaised: request.chainId,
    chainIdRun: ctx.chainId,
  };
  return { ...unsigned, signature: await service.signer.sign(unsigned) };
}

function resolved(
  ctx: CallContext,
  request: CheckInRequest,
  approved: boolean,
  by: string | undefined,
  failure?: string,
): void {
  ctx.publish('checkin.resolved', () => ({
    requestId: request.id,
    asker: request.asker,
    approved,
    ...(by !== undefined ? { by } : {}),
    ...(failure !== undefined ? { failure } : {}),
  }));
}

interface Question {
  readonly asker: string;
  readonly question: string;
  readonly evidence: unknown;
  readonly options: AskOptions;
  /** The args as the human reviews them, and their digest. */
  readonly review: Readonly<ToolArgs>;
  readonly argsDigest: string;
}

/** Signs and stores a request for `q`, then pauses the call (throws the Pause). */
async function pause(ctx: CallContext, q: Question, service: PauseService): Promise<never> {
  const createdAt = ctx.now();
  const receipts = ctx.receipts.length > 0 ? [...ctx.receipts] : undefined;
  const unsigned = {
    id: newId('chk'),
    asker: q.asker,
    toolName: ctx.toolName,
    ...(ctx.toolSource !== undefined ? { toolSource: ctx.toolSource } : {}),
    toolCallId: ctx.toolCallId,
    args: ctx.dispatchedArgs,
    review: q.review,
    argsDigest: q.argsDigest,
    chainId: ctx.chainId,
    question: q.question,
    ...(q.evidence !== undefined ? { evidence: JSON.parse(canonicalJson(q.evidence)) as unknown } : {}),
    ...(q.options.component !== undefined ? { component: q.options.component } : {}),
    ...(ctx.identity !== undefined ? { identity: ctx.identity } : {}),
    ...(receipts !== undefined ? { receipts } : {}),
    createdAt: new Date(createdAt).toISOString(),
    expiresAt: new Date(createdAt + service.ttlMs).toISOString(),
  };
  const request: CheckInRequest = { ...unsigned, signature: await service.signer.sign(unsigned) };
  try {
    await withDeadline(() => service.store.put(request), service.deadlineMs, ctx.signal);
  } catch {
    return ctx.deny(
      refusalReason(
        `'${ctx.toolName}' needs a human's approval, but the check-in store is unavailable`,
        'Retrying later may help',
      ),
      { code: 'CHECKIN_STORE_FAILED', retryable: true },
    );
  }
  throw ctx.recordPause(new Pause(request), q.asker, q.question);
}
