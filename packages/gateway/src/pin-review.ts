// Pins held for review, in the inbox: every pinned definition whose served one differs (a tool's
// definition changed: TOOL_DEFINITION_CHANGED; a tool added while serving: the upstream's tool set;
// an upstream's identity) gets an operator check-in that shows the definition diff. Approving it
// there accepts exactly the definition that was shown, as `toolgate pins accept` would; declining it
// leaves the tool held. The check-in's id comes from the change and the ttl window, so several
// gateway processes on one store ask once, and a declined or expired review is asked again a ttl later.

import {
  createSigner,
  DEFAULT_CHECK_IN_TTL_MS,
  digestOf,
  type CheckInRecord,
  type CheckInRequest,
  type PinRecord,
} from '@toolgate/core';
import type { PinDiff } from '@toolgate/inbox';
import { acceptPin, SERVER_IDENTITY } from '@toolgate/mcp';
import { OPERATOR_TENANT } from './held-reload';
import type { GatewayLog } from './log';
import { localPinName } from './pins';
import type { Runtime } from './runtime';

/** The "tool" a pin review's check-in names, as the inbox lists it. */
export const PIN_REVIEW_TOOL = 'gateway.pin';

/** What a pin review shows and binds: which pin, and the served digest it accepts. */
type PinReview = {
  readonly pin: string;
  readonly upstream: string;
  readonly kind: 'tool' | 'server';
  readonly name: string;
  readonly pinnedDigest: string;
  readonly servedDigest: string;
};

const reviewOf = (request: CheckInRequest): PinReview | undefined =>
  request.toolName === PIN_REVIEW_TOOL && request.identity?.tenant === OPERATOR_TENANT
    ? (request.review as unknown as PinReview)
    : undefined;

/** The definition diff an inbox page shows for a pin review's check-in; undefined for any other check-in. */
export async function pinDiffOf(runtime: Runtime, request: CheckInRequest): Promise<PinDiff | undefined> {
  const review = reviewOf(request);
  if (review === undefined) return undefined;
  const record = await runtime.state.pins.get(review.upstream, review.kind, review.name);
  if (record?.changed === undefined || record.changed.digest !== review.servedDigest) return undefined;
  return { before: record.definition, after: record.changed.definition, pinnedAt: record.pinnedAt };
}

function ttlOf(runtime: Runtime): number {
  return runtime.config.checkIns?.ttl ?? DEFAULT_CHECK_IN_TTL_MS;
}

async function askAbout(runtime: Runtime, record: PinRecord, key: string, now: number): Promise<void> {
  const changed = record.changed!;
  const pin = localPinName(runtime.loaded, record);
  const review: PinReview = {
    pin,
    upstream: record.source,
    kind: record.kind === 'server' ? 'server' : 'tool',
    name: record.name,
    pinnedDigest: record.digest,
    servedDigest: changed.digest,
  };
  const ttlMs = ttlOf(runtime);
  const window = Math.floor(now / ttlMs);
  const argsDigest = await digestOf(review);
  const what =
    record.kind !== 'server'
      ? `the changed definition of '${pin}' (calls to it are refused until it is accepted)`
      : record.name === SERVER_IDENTITY
        ? `the changed identity of upstream '${record.source}' (its calls are refused until it is accepted)`
        : `the tools upstream '${record.source}' added (held for review, not listed until accepted)`;
  const unsigned = {
    id: `chk_pin${argsDigest.slice(0, 32)}${window.toString(36)}`,
    asker: 'pins',
    toolName: PIN_REVIEW_TOOL,
    toolCallId: `pin_${argsDigest.slice(0, 16)}`,
    args: review,
    review,
    argsDigest,
    chainId: 'pins',
    question: `Accept ${what}? Its definition diff is below.`,
    identity: { tenant: OPERATOR_TENANT, principal: `upstream ${record.source}` },
    createdAt: new Date(now).toISOString(),
    expiresAt: new Date((window + 1) * ttlMs).toISOString(),
  };
  const request: CheckInRequest = { ...unsigned, signature: await createSigner(key).sign(unsigned) };
  // Another process (or an earlier round in this window) may have asked already: the same id.
  if ((await runtime.state.checkIns.get(request.id)) !== undefined) return;
  await runtime.state.checkIns.put(request).catch(() => undefined);
}

/** Carries out an operator's decision on a pin review, once across processes (the check-in is consumed first). */
async function carryOut(
  runtime: Runtime,
  record: CheckInRecord,
  log: GatewayLog,
  accepted: (upstream: string) => void,
): Promise<void> {
  const review = reviewOf(record.request)!;
  const decision = record.decision!;
  const store = runtime.state.checkIns;
  if (!decision.approved) {
    await store.revoke(record.request.id).catch(() => false);
    return;
  }
  if (!(await store.consume(record.request.id).catch(() => false))) return;
  const pinned = await runtime.state.pins.get(review.upstream, review.kind, review.name);
  // Only the definition the operator was shown: one that changed again since waits for its own review.
  if (pinned?.changed?.digest !== review.servedDigest) return;
  try {
    await runtime.audit?.record({
      kind: 'pin.accepted',
      tool: review.pin,
      source: review.upstream,
      approver: decision.by,
      checkInId: record.request.id,
      args: pinned.changed.definition,
    });
  } catch {
    // An acceptance the audit log cannot hold does not happen.
    return;
  }
  const done = await acceptPin(runtime.state.pins, {
    source: review.upstream,
    name: review.name,
    digest: review.servedDigest,
    kind: review.kind,
  }).catch(() => false);
  if (!done) return;
  log({ msg: 'pin.accepted', upstream: review.upstream, tool: review.pin, digest: review.servedDigest });
  accepted(review.upstream);
}

/**
 * One round: decided reviews carried out, reviews of pins no longer changed (accepted elsewhere, or
 * served as pinned again) withdrawn, and a review asked for each changed pin without one.
 */
export async function syncPinReviews(
  runtime: Runtime,
  log: GatewayLog,
  /** Told after an acceptance, so the gateway imports the upstream's tools again (a tool set accepted lists its new tools). */
  accepted: (upstream: string) => void,
  now = Date.now(),
): Promise<void> {
  const key = runtime.config.checkIns?.key;
  if (key === undefined || runtime.config.inbox?.enabled === false) return;
  const store = runtime.state.checkIns;
  const [changed, pending] = await Promise.all([
    runtime.state.pins.list({ changed: true }),
    store.list({ tenant: OPERATOR_TENANT, toolName: PIN_REVIEW_TOOL, state: 'pending' }),
  ]);
  const servedNow = new Set(
    changed.map((record) => `${record.source}\n${record.kind}\n${record.name}\n${record.changed!.digest}`),
  );
  for (const record of pending) {
    const review = reviewOf(record.request);
    if (review === undefined) continue;
    if (record.decision !== undefined) await carryOut(runtime, record, log, accepted);
    else if (!servedNow.has(`${review.upstream}\n${review.kind}\n${review.name}\n${review.servedDigest}`))
      await store.revoke(record.request.id).catch(() => false);
  }
  for (const record of changed) await askAbout(runtime, record, key, now);
}
