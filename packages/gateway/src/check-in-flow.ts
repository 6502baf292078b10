// A paused call, answered through the gateway (GATEWAY.md §6), first that applies:
//   1. an earlier approval given after its hold ran out: a grant, used once, for the identical call;
//      or a standing grant whose bounds cover the call (it still runs the whole chain);
//   2. the client supports elicitation and the form can show every argument: the person approves there;
//   3. otherwise the request is held up to `checkIns.hold` while an approver decides in the inbox;
//      an identical call already waiting is waited on instead (one check-in per pending call);
//   4. nobody decided: CHECKIN_PENDING, retryable. A later decision becomes the grant of step 1.
// A 2026-07-28 client that declares elicitation is answered input-required instead of held: a URL
// elicitation to the check-in's inbox page, or a form showing every argument, with a signed
// `requestState`; its retry carries out the decision on that check-in, or asks again (settleRetry).
// A decision is carried out through the signed, single-use resume: approve with changes runs the
// approver's args through the whole chain again, so a person can narrow a call, never widen it.

import { setTimeout as delay } from 'node:timers/promises';
import {
  carryOutDecision,
  checkInApproved,
  decisionOf,
  refusalReason,
  shareCheckIn,
  type CheckInDecision,
  type CheckInRecord,
  type CheckInRequest,
  type CheckInStore,
  type Dispatcher,
  type DispatchOutcome,
  type Identity,
  type PausedOutcome,
  type SharedCheckIn,
  type StandingGrant,
  type StandingGrantStore,
  type TraceContext,
} from '@toolgate/core';
import {
  CLIENT_CAPABILITIES_META_KEY,
  type ClientCapabilities,
  type InputRequiredResult,
} from '@modelcontextprotocol/server';
import {
  approvalForm,
  askPerson,
  canElicitForm,
  formDecision,
  isModernRequest,
  type McpRequestExtra,
  type McpSettled,
} from '@toolgate/mcp';
import { mintState, type RequestStateClaims, type StateMode } from './request-state';
import { useStandingGrant } from './standing-grants';
import type { Server } from '@modelcontextprotocol/server';

/** How a person's answer reached the call: a single-use grant, a standing grant, the client, the inbox. */
type McpOutcome = Extract<McpSettled, { kind: 'outcome' }>;

export type Via = NonNullable<McpOutcome['via']>;

/** How a paused call ended, for the log line and the client: mcpServe's settled form, always saying how. */
export type Settled = Exclude<McpSettled, McpOutcome> | (McpOutcome & { readonly via: Via });

export interface CheckInFlowOptions {
  readonly server: Server;
  readonly dispatcher: Dispatcher;
  readonly store: CheckInStore | undefined;
  readonly identity: Identity | undefined;
  readonly extra: McpRequestExtra;
  readonly traceContext?: TraceContext;
  /** How long a request waits for an approver in the inbox. */
  readonly holdMs: number;
  /** How often the store is read while holding. */
  readonly pollMs: number;
  /** How long a person at the client may take. */
  readonly elicitTimeoutMs: number;
  /** Standing grants, and the definition digest of the asked tool as served now (a changed one voids them). */
  readonly grants?: StandingGrantStore;
  readonly definitionOf?: (request: CheckInRequest) => string | undefined;
  /** Appends the audit record of a standing grant's use (`grant.used`); a rejection means the grant is not used. */
  readonly recordGrantUse?: (grant: StandingGrant, request: CheckInRequest) => Promise<void>;
  /** Pending check-ins one principal may keep waiting (`checkIns.maxPending`); default core's. */
  readonly maxPending?: number;
  /** Signs the `requestState` of input-required answers; without it, 2026-07-28 calls are held. */
  readonly checkInKey?: string;
  /** Where the inbox is served, as the client reaches it (`{publicUrl}/inbox`). */
  readonly inboxUrl?: string;
  /** The verified state a 2026-07-28 retry echoed (see request-state.ts). */
  readonly retry?: RequestStateClaims;
}

// Each round answers a different middleware's ask in the same call; more than this is a loop.
const MAX_ROUNDS = 8;

export async function settlePaused(first: PausedOutcome, options: CheckInFlowOptions): Promise<Settled> {
  const { dispatcher, extra } = options;
  const resumeOptions = {
    signal: extra.mcpReq.signal,
    ...(options.traceContext !== undefined ? { traceContext: options.traceContext } : {}),
  };
  let outcome: DispatchOutcome = first;
  let via: Via = 'inbox';
  let grantId: string | undefined;
  if (options.retry !== undefined) {
    const retried = await settleRetry(first, options.retry, options);
    if ('kind' in retried) return retried;
    outcome = retried.outcome;
    via = retried.via;
  }
  for (let round = 0; outcome.kind === 'paused' && round < MAX_ROUNDS; round++) {
    const request: CheckInRequest = outcome.checkIn;
    const granted = await useGrant(request, options);
    if (granted !== undefined) {
      via = 'grant';
      outcome = await dispatcher.resume(request, granted, resumeOptions);
      continue;
    }
    const standing = await useStandingGrant(options.grants, request, options.definitionOf?.(request));
    if (standing !== undefined && (await recorded(standing.grant, request, options))) {
      via = 'standing-grant';
      grantId = standing.grant.id;
      outcome = await dispatcher.resume(request, standing.decision, resumeOptions);
      continue;
    }
    const shared = await share(request, options);
    if (shared.kind === 'limit') return overLimit(request, shared.maxPending);
    const waitOn = shared.request;
    const asked = askAtClient(waitOn, options);
    if (asked !== undefined) return asked;
    // A form too long to show every argument in full is not shown: the inbox shows them all.
    // A 2026-07-28 request cannot carry a question to the person at the client: the inbox decides.
    if (!isModernRequest(extra) && canElicitForm(options.server) && approvalForm(waitOn).form !== undefined) {
      let decision: CheckInDecision;
      try {
        decision = await askPerson(options.server, waitOn, options.identity?.principal ?? 'mcp-client', {
          relatedRequestId: extra.mcpReq.id,
          signal: extra.mcpReq.signal,
          timeoutMs: options.elicitTimeoutMs,
        });
      } catch {
        return pending(waitOn, 'no decision came back from the person at the MCP client');
      }
      via = 'elicitation';
      outcome = await dispatcher.resume(waitOn, decision, resumeOptions);
      continue;
    }
    const decided = await hold(waitOn, options);
    if (decided === undefined) return pending(waitOn, 'nobody has decided yet');
    via = 'inbox';
    outcome = await carryOutDecision(dispatcher, decided, { checkIns: options.store!, ...resumeOptions });
  }
  if (outcome.kind === 'paused') {
    return {
      kind: 'refused',
      gate: outcome.checkIn.asker,
      code: 'CHECKIN_LOOP',
      retryable: false,
      text: `[${outcome.checkIn.asker} refused: ${refusalReason(`'${outcome.toolName}' asked for approval too many times in one call`, 'Retrying will not help')}]`,
    };
  }
  return { kind: 'outcome', outcome, via, ...(grantId !== undefined ? { grantId } : {}) };
}

/**
 * Records a standing grant's use before the call runs on it. A use that cannot be recorded is not
 * acted on (the count it took is lost): the call asks a person instead.
 */
export async function recorded(
  grant: StandingGrant,
  request: CheckInRequest,
  options: CheckInFlowOptions,
): Promise<boolean> {
  if (options.recordGrantUse === undefined) return true;
  try {
    await options.recordGrantUse(grant, request);
    return true;
  } catch {
    return false;
  }
}

/**
 * The check-in this call waits on: its own, or an identical older one it shares (its own revoked, so
 * the inbox shows one row). A store that fails leaves the call on its own check-in: one more row,
 * never a call that runs without a person.
 */
export async function share(request: CheckInRequest, options: CheckInFlowOptions): Promise<SharedCheckIn> {
  if (options.store === undefined) return { kind: 'own', request };
  try {
    return await shareCheckIn(
      options.store,
      request,
      options.maxPending !== undefined ? { maxPending: options.maxPending } : {},
    );
  } catch {
    return { kind: 'own', request };
  }
}

export function overLimit(request: CheckInRequest, maxPending: number): Settled {
  return {
    kind: 'refused',
    gate: request.asker,
    code: 'CHECKIN_LIMIT',
    retryable: true,
    text: `[${request.asker} refused: ${refusalReason(
      `'${request.toolName}' needs a person's approval, and this caller already has ${maxPending} calls waiting for one`,
      'Calling again after some of them are decided can help',
      'Tell the user approvals are waiting, and do not retry these calls now',
    )}]`,
  };
}

export function pending(request: CheckInRequest, what: string): Settled {
  return {
    kind: 'refused',
    gate: request.asker,
    code: 'CHECKIN_PENDING',
    retryable: true,
    checkInId: request.id,
    text: `[${request.asker} refused: ${refusalReason(
      `'${request.toolName}' awaits a person's approval (check-in ${request.id}); ${what}`,
      'Calling again later with exactly the same arguments can help: once approved, that call runs once',
      'Tell the user the action awaits approval, and do not change its arguments',
    )}]`,
  };
}

/** The key of the approval question in an input-required answer and its retry's `inputResponses`. */
export const APPROVAL_INPUT = 'approval';

/** How this 2026-07-28 client can be asked: URL elicitation first, else a form; undefined when not at all. */
function askingMode(options: CheckInFlowOptions): StateMode | undefined {
  const { extra } = options;
  if (!isModernRequest(extra) || options.checkInKey === undefined) return undefined;
  const declared = extra.mcpReq.envelope?.[
    CLIENT_CAPABILITIES_META_KEY as keyof typeof extra.mcpReq.envelope
  ] as ClientCapabilities | undefined;
  const elicitation = declared?.elicitation;
  if (elicitation === undefined) return undefined;
  if (elicitation.url !== undefined && options.inboxUrl !== undefined) return 'url';
  // An empty elicitation capability means form mode.
  return elicitation.form !== undefined || elicitation.url === undefined ? 'form' : undefined;
}

/**
 * The input-required answer asking about `request`: its inbox page for a client that opens URLs, else
 * a form showing every argument (none when they are too long to show: the call is held for the inbox).
 */
function askAtClient(request: CheckInRequest, options: CheckInFlowOptions): Settled | undefined {
  const mode = askingMode(options);
  if (mode === undefined) return undefined;
  let result: InputRequiredResult;
  if (mode === 'url') {
    result = {
      resultType: 'input_required',
      inputRequests: {
        [APPROVAL_INPUT]: {
          method: 'elicitation/create',
          params: {
            mode: 'url',
            message: `'${request.toolName}' needs a person's approval: open the inbox to see every argument and decide, then come back.`,
            url: `${options.inboxUrl}/check-ins/${encodeURIComponent(request.id)}`,
          },
        } as never,
      },
      requestState: mintState(options.checkInKey!, request, 'url'),
    };
  } else {
    const { form } = approvalForm(request);
    if (form === undefined) return undefined;
    result = {
      resultType: 'input_required',
      inputRequests: { [APPROVAL_INPUT]: { method: 'elicitation/create', params: form } as never },
      requestState: mintState(options.checkInKey!, request, 'form'),
    };
  }
  return { kind: 'input-required', checkInId: request.id, result };
}

/** The call a state was minted for is this call: same caller, tool, asker's chain and arguments. */
function sameCall(state: RequestStateClaims, request: CheckInRequest): boolean {
  return (
    state.tenant === (request.identity?.tenant ?? null) &&
    state.principal === (request.identity?.principal ?? null) &&
    state.tool === request.toolName &&
    state.chainId === request.chainId &&
    state.argsDigest === request.argsDigest
  );
}

function stateInvalid(request: CheckInRequest): Settled {
  return {
    kind: 'refused',
    gate: request.asker,
    code: 'CHECKIN_STATE_INVALID',
    retryable: false,
    text: `[${request.asker} refused: ${refusalReason(
      `the requestState sent with '${request.toolName}' is not one this gateway gave this caller for this call, or it was used already or expired`,
      'Retrying with it will not help',
      'Call the tool again without a requestState to ask for approval anew',
    )}]`,
  };
}

const revokeQuietly = async (store: CheckInStore, id: string): Promise<void> => {
  await store.revoke(id).catch(() => false);
};

/**
 * A 2026-07-28 retry with a verified state. The chain paused this retry with a check-in of its own;
 * the state names the check-in the person was asked about, so that one decides: carried out once
 * when decided (in the inbox, or by the form answer this retry carries), asked again while not.
 */
async function settleRetry(
  first: PausedOutcome,
  state: RequestStateClaims,
  options: CheckInFlowOptions,
): Promise<Settled | { readonly outcome: DispatchOutcome; readonly via: Via }> {
  const store = options.store;
  const own = first.checkIn;
  if (store === undefined) return stateInvalid(own);
  if (own.id !== state.checkInId) await revokeQuietly(store, own.id);
  if (!sameCall(state, own)) return stateInvalid(own);
  let record: CheckInRecord | undefined;
  try {
    record = await store.get(state.checkInId);
  } catch {
    return pending(own, 'the check-in store could not be read');
  }
  if (
    record === undefined ||
    record.state !== 'pending' ||
    Date.parse(record.request.expiresAt) <= Date.now() ||
    !sameCall(state, record.request)
  )
    return stateInvalid(own);
  const asked = record.request;
  // A URL-mode answer only says the person opened the page: the decision is the inbox's.
  const answer = options.extra.mcpReq.inputResponses?.[APPROVAL_INPUT];
  let via: Via = 'inbox';
  if (
    record.decision === undefined &&
    state.mode === 'form' &&
    typeof answer === 'object' &&
    answer !== null
  ) {
    await decideFromForm(store, asked.id, answer, options);
    record = await store.get(asked.id).catch(() => undefined);
    via = 'elicitation';
    if (record === undefined) return pending(asked, 'the check-in store could not be read');
  }
  if (record.decision === undefined) {
    if (
      state.mode === 'url' &&
      typeof answer === 'object' &&
      answer !== null &&
      (answer as { action?: unknown }).action !== 'accept'
    )
      return pending(asked, 'the inbox page was not opened');
    return askAtClient(asked, options) ?? pending(asked, 'nobody has decided yet');
  }
  const outcome = await carryOutDecision(options.dispatcher, record, {
    checkIns: store,
    signal: options.extra.mcpReq.signal,
    ...(options.traceContext !== undefined ? { traceContext: options.traceContext } : {}),
  });
  return { outcome, via };
}

/**
 * A decision given on an earlier, identical request after its hold ran out: same tenant, principal,
 * tool, asker, chain and args digest. Consuming the earlier request is the single-use point, so two
 * retries racing through two gateway processes run the call once. An approval with changes runs the
 * approver's args; a decline is told to the model once, with its reason.
 */
async function useGrant(
  request: CheckInRequest,
  options: CheckInFlowOptions,
): Promise<CheckInDecision | undefined> {
  const store = options.store;
  if (store === undefined) return undefined;
  const tenant = request.identity?.tenant;
  let candidates: CheckInRecord[];
  try {
    candidates = await store.list({
      state: 'pending',
      decided: true,
      argsDigest: request.argsDigest,
      toolName: request.toolName,
      ...(tenant !== undefined ? { tenant } : {}),
    });
  } catch {
    return undefined;
  }
  const now = Date.now();
  for (const record of candidates) {
    const earlier = record.request;
    if (earlier.id === request.id) continue;
    if (
      earlier.identity?.tenant !== request.identity?.tenant ||
      earlier.identity?.principal !== request.identity?.principal ||
      earlier.asker !== request.asker ||
      earlier.chainId !== request.chainId ||
      earlier.argsDigest !== request.argsDigest ||
      Date.parse(earlier.expiresAt) <= now
    )
      continue;
    const recorded = record.decision;
    if (recorded === undefined) continue;
    let won = false;
    try {
      won = await store.consume(earlier.id);
    } catch {
      won = false;
    }
    if (!won) continue;
    if (!recorded.approved) return decisionOf(recorded);
    return checkInApproved({
      by: recorded.by,
      note: recorded.note ?? `grant from check-in ${earlier.id}`,
      ...(recorded.args !== undefined ? { args: recorded.args } : {}),
    });
  }
  return undefined;
}

/**
 * The longest a request is held when its client declares no timeout: the MCP TypeScript and Python
 * SDKs give up on a request after 60 s by default, and the answer needs time to reach the client.
 */
export const SAFE_HOLD_MS = 50_000;
/** A client that declares its timeout gets the answer this long before it would give up. */
export const HOLD_MARGIN_MS = 2_000;
/** Where a client declares how long it waits for this request: `params._meta`, milliseconds. */
export const CLIENT_TIMEOUT_META = 'io.toolgate/timeoutMs';

/**
 * How long this request may be held: `checkIns.hold`, never longer than its client waits. A client
 * that declares its timeout in `_meta` is answered `HOLD_MARGIN_MS` before it; else `SAFE_HOLD_MS`.
 */
export function holdFor(extra: McpRequestExtra, holdMs: number): number {
  const declared = extra.mcpReq._meta?.[CLIENT_TIMEOUT_META];
  const clientWaits =
    typeof declared === 'number' && Number.isFinite(declared) && declared > 0
      ? Math.max(0, declared - HOLD_MARGIN_MS)
      : SAFE_HOLD_MS;
  return Math.min(holdMs, clientWaits);
}

/** Records what a person answered in the approval form as the check-in's decision; false if not taken. */
export async function decideFromForm(
  store: CheckInStore,
  id: string,
  answer: object,
  options: CheckInFlowOptions,
): Promise<boolean> {
  const decision = formDecision(
    answer as { action?: unknown; content?: Record<string, unknown> },
    options.identity?.principal ?? 'mcp-client',
  );
  const decidedAt = new Date().toISOString();
  return store
    .decide(
      id,
      decision.approved
        ? {
            approved: true,
            by: decision.by,
            ...(decision.note !== undefined ? { note: decision.note } : {}),
            decidedAt,
          }
        : { approved: false, by: decision.by, reason: decision.reason, decidedAt },
    )
    .catch(() => false);
}

/** One read of a held check-in: `over` once it is decided (with its record) or ended undecided. */
export type CheckInPoll =
  { readonly kind: 'waiting' } | { readonly kind: 'over'; readonly record?: CheckInRecord };

/** Reads the check-in once; a store that cannot answer right now counts as still waiting. */
export async function pollCheckIn(store: CheckInStore, id: string): Promise<CheckInPoll> {
  let record: CheckInRecord | undefined;
  try {
    record = await store.get(id);
  } catch {
    record = undefined;
  }
  if (record?.decision !== undefined) return { kind: 'over', record };
  if (record !== undefined && record.state !== 'pending') return { kind: 'over' };
  return { kind: 'waiting' };
}

/** Waits for an approver's decision on `request`, sending progress when the client asked for it. */
async function hold(
  request: CheckInRequest,
  options: CheckInFlowOptions,
): Promise<CheckInRecord | undefined> {
  const store = options.store;
  const { extra } = options;
  const holdMs = holdFor(extra, options.holdMs);
  if (store === undefined || holdMs <= 0) return undefined;
  const progressToken = extra.mcpReq._meta?.progressToken;
  const started = Date.now();
  let progress = 0;
  while (!extra.mcpReq.signal.aborted) {
    const polled = await pollCheckIn(store, request.id);
    if (polled.kind === 'over') return polled.record;
    const elapsed = Date.now() - started;
    if (elapsed >= holdMs) return undefined;
    if (progressToken !== undefined) {
      progress += 1;
      await extra.mcpReq
        .notify({
          method: 'notifications/progress',
          params: {
            progressToken,
            progress,
            message: `'${request.toolName}' awaits approval in the inbox (check-in ${request.id})`,
          },
        })
        .catch(() => undefined);
    }
    await delay(Math.min(options.pollMs, holdMs - elapsed), undefined, { signal: extra.mcpReq.signal }).catch(
      () => undefined,
    );
  }
  return undefined;
}
