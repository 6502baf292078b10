// A paused call whose client asked for a task (GATEWAY.md §6 item 2): the task is handed out at once
// in `input_required`, pointing at the check-in as the input-required answer does (a URL elicitation to
// its inbox page, or a form showing every argument, for 2026-07-28 clients; the inbox URL in the status
// message for 2025-11-25 ones), while the person decides in the inbox or answers the form through
// tasks/update. Then `working`, and the call is carried out once through the signed, single-use resume:
// `completed` with the tool's result, or `failed` with the decline's reason. Cancelling the task
// withdraws its check-in. Identical pending calls still share one check-in; standing grants still apply.

import { setTimeout as delay } from 'node:timers/promises';
import {
  carryOutDecision,
  type CheckInRecord,
  type CheckInRequest,
  type CheckInStore,
  type DispatchOutcome,
  type PausedOutcome,
} from '@toolgate/core';
import { CLIENT_CAPABILITIES_META_KEY, type ClientCapabilities } from '@modelcontextprotocol/server';
import { approvalForm, isModernRequest, type McpTaskControl } from '@toolgate/mcp';
import {
  APPROVAL_INPUT,
  decideFromForm,
  overLimit,
  pending,
  pollCheckIn,
  recorded,
  share,
  type CheckInFlowOptions,
  type Settled,
  type Via,
} from './check-in-flow';
import { useStandingGrant } from './standing-grants';

// Each round answers a different middleware's ask in the same call; more than this is a loop.
const MAX_ROUNDS = 8;

export async function settlePausedAsTask(
  first: PausedOutcome,
  options: CheckInFlowOptions,
  task: McpTaskControl,
): Promise<Settled> {
  const { dispatcher } = options;
  const store = options.store;
  const resumeOptions = {
    signal: task.signal,
    ...(options.traceContext !== undefined ? { traceContext: options.traceContext } : {}),
  };
  let outcome: DispatchOutcome = first;
  let via: Via = 'inbox';
  let grantId: string | undefined;
  for (let round = 0; outcome.kind === 'paused' && round < MAX_ROUNDS; round++) {
    const request: CheckInRequest = outcome.checkIn;
    const standing = await useStandingGrant(options.grants, request, options.definitionOf?.(request));
    if (standing !== undefined && (await recorded(standing.grant, request, options))) {
      via = 'standing-grant';
      grantId = standing.grant.id;
      task.working('A standing grant covers this call; it runs now.');
      outcome = await dispatcher.resume(request, standing.decision, resumeOptions);
      continue;
    }
    if (store === undefined) return pending(request, 'this gateway keeps no check-ins to decide');
    const shared = await share(request, options);
    if (shared.kind === 'limit') return overLimit(request, shared.maxPending);
    const waitOn = shared.request;
    const asking = askFor(waitOn, options);
    task.inputRequired(asking.inputRequests, asking.message, waitOn.id);
    let answeredAtClient = false;
    task.onUpdate(async (responses) => {
      const answer = responses[APPROVAL_INPUT];
      // Only a form answer decides; a URL answer says the page was opened, the inbox decides.
      if (asking.mode !== 'form' || typeof answer !== 'object' || answer === null) return;
      if (await decideFromForm(store, waitOn.id, answer, options)) answeredAtClient = true;
    });
    const decided = await waitForDecision(waitOn, store, task.signal, options.pollMs);
    if (task.signal.aborted) {
      await store.revoke(waitOn.id).catch(() => false);
      return {
        kind: 'refused',
        gate: waitOn.asker,
        code: 'CHECKIN_WITHDRAWN',
        retryable: false,
        checkInId: waitOn.id,
        text: `[${waitOn.asker} refused: '${waitOn.toolName}' was withdrawn: its task was cancelled before anyone decided.]`,
      };
    }
    if (decided === undefined) return pending(waitOn, 'the check-in ended without a decision');
    via = answeredAtClient ? 'elicitation' : 'inbox';
    task.working(decided.decision?.approved === true ? 'Approved; the call runs now.' : 'Declined.');
    outcome = await carryOutDecision(dispatcher, decided, { checkIns: store, ...resumeOptions });
  }
  if (outcome.kind === 'paused')
    return {
      kind: 'refused',
      gate: outcome.checkIn.asker,
      code: 'CHECKIN_LOOP',
      retryable: false,
      text: `[${outcome.checkIn.asker} refused: '${outcome.toolName}' asked for approval too many times in one call.]`,
    };
  return { kind: 'outcome', outcome, via, ...(grantId !== undefined ? { grantId } : {}) };
}

interface Asking {
  readonly mode: 'url' | 'form' | 'inbox';
  readonly inputRequests: Readonly<Record<string, unknown>>;
  readonly message: string;
}

/** What the task shows while it waits: the inbox page, a form with every argument, or the inbox's address. */
function askFor(request: CheckInRequest, options: CheckInFlowOptions): Asking {
  const page =
    options.inboxUrl !== undefined
      ? `${options.inboxUrl}/check-ins/${encodeURIComponent(request.id)}`
      : undefined;
  const message = `'${request.toolName}' needs a person's approval (check-in ${request.id})${page !== undefined ? `: ${page}` : ''}.`;
  const { extra } = options;
  if (!isModernRequest(extra)) return { mode: 'inbox', inputRequests: {}, message };
  const declared = extra.mcpReq.envelope?.[
    CLIENT_CAPABILITIES_META_KEY as keyof typeof extra.mcpReq.envelope
  ] as ClientCapabilities | undefined;
  const elicitation = declared?.elicitation;
  if (elicitation?.url !== undefined && page !== undefined)
    return {
      mode: 'url',
      inputRequests: {
        [APPROVAL_INPUT]: {
          method: 'elicitation/create',
          params: {
            mode: 'url',
            message: `'${request.toolName}' needs a person's approval: open the inbox to see every argument and decide.`,
            url: page,
            elicitationId: request.id,
          },
        },
      },
      message,
    };
  if (elicitation !== undefined && (elicitation.form !== undefined || elicitation.url === undefined)) {
    const { form } = approvalForm(request);
    if (form !== undefined)
      return {
        mode: 'form',
        inputRequests: { [APPROVAL_INPUT]: { method: 'elicitation/create', params: form } },
        message,
      };
  }
  return { mode: 'inbox', inputRequests: {}, message };
}

/** Reads the check-in until it is decided, ends, expires or the task is cancelled. */
async function waitForDecision(
  request: CheckInRequest,
  store: CheckInStore,
  signal: AbortSignal,
  pollMs: number,
): Promise<CheckInRecord | undefined> {
  const expiresAt = Date.parse(request.expiresAt);
  while (!signal.aborted && Date.now() < expiresAt) {
    const polled = await pollCheckIn(store, request.id);
    if (polled.kind === 'over') return polled.record;
    // An abort ends the wait early; the loop's condition then ends the poll.
    await delay(Math.min(pollMs, Math.max(0, expiresAt - Date.now())), undefined, { signal }).catch(
      () => undefined,
    );
  }
  return undefined;
}
