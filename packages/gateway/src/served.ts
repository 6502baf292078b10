// What the gateway adds to @toolgate/mcp's one serving path: who is calling (the identity the HTTP
// layer verified, or the fixed stdio one), which tenant's tools, chain and upstreams serve them (read
// from the live configuration on each request, so a reload reaches open sessions), admission while
// shutting down, the check-in flow for a pause, and one log line per call.

import type { AuthInfo } from '@modelcontextprotocol/server';
import {
  refusalReason,
  SpentNonces,
  type DispatchOutcome,
  type Identity,
  type SpentStateStore,
  type TaskRecordStore,
} from '@toolgate/core';
import {
  mcpServe,
  type McpCallReport,
  type McpPausedCall,
  type McpServed,
  type McpServeOptions,
  type McpServeRefusal,
  type McpServeScope,
  type McpUpstream,
} from '@toolgate/mcp';
import { settlePaused, type CheckInFlowOptions } from './check-in-flow';
import { settlePausedAsTask } from './tasks';
import { readState, type RequestStateClaims } from './request-state';
import type { GatewayLog, LogFields } from './log';
import type { Runtime } from './runtime';
import type { TenantRuntime } from './tenant';
import { definitionOf, grantUseRecorder } from './standing-grants';

export interface ServingHost {
  /** The configuration serving now. */
  current(): Runtime;
  /**
   * Counts a call in flight, so shutdown can wait for it; false when shutting down, unless the call
   * `continues` work already in flight (a retry that answers a parked upstream call).
   */
  begin(continues?: boolean): boolean;
  end(): void;
  readonly log: GatewayLog;
  readonly version: string;
  /** The inbox as clients reach it (`{publicUrl}/inbox`), for URL elicitations; none over stdio. */
  inboxUrl?(): string | undefined;
}

const ELICIT_TIMEOUT_MS = 10 * 60_000;

/** The identity the HTTP layer verified and put in the auth info. */
export const identityFromAuthInfo = (authInfo: AuthInfo | undefined): Identity | undefined =>
  (authInfo?.extra as { identity?: Identity } | undefined)?.identity;

/** The upstreams a caller's tenant sees, in the order its configuration lists them. */
export function tenantUpstreams(runtime: Runtime, identity: Identity | undefined): McpUpstream[] {
  const tenant = identity?.tenant === undefined ? undefined : runtime.config.tenants[identity.tenant];
  if (tenant === undefined) return [];
  return tenant.upstreams.flatMap((name) => {
    const upstream = runtime.upstreams.get(name);
    return upstream === undefined ? [] : [upstream.client];
  });
}

/** The gateway's MCP serving: `mcpServe` with each request scoped to the caller's tenant. */
export function gatewayServed(
  host: ServingHost,
  identityFrom: (authInfo: AuthInfo | undefined) => Identity | undefined,
): McpServed {
  const spent = new SpentNonces();
  // An upstream's relayed requestState is sealed under the check-in key when there is one, so every
  // gateway process behind a load balancer opens it; else under a key of this process only.
  const sealKey = host.current().config.checkIns?.key;
  // A tenant's scope is the same for every call under one runtime generation (its upstreams follow
  // the caller's tenant only): built on its first call.
  const scopes = new WeakMap<Runtime, Map<TenantRuntime, McpServeScope>>();
  const scopeOf = (
    runtime: Runtime,
    tenant: TenantRuntime,
    identity: Identity | undefined,
  ): McpServeScope => {
    let built = scopes.get(runtime);
    if (built === undefined) scopes.set(runtime, (built = new Map()));
    let scope = built.get(tenant);
    if (scope === undefined) {
      const release = () => runtime.release();
      scope = {
        dispatcher: tenant.dispatcher,
        chain: tenant.chain,
        listed: (who) => tenant.listed(who),
        upstreams: tenantUpstreams(runtime, identity),
        sourceOf: (toolName) => tenant.sourceOf.get(toolName),
        hold: () => {
          runtime.hold();
          return release;
        },
      };
      built.set(tenant, scope);
    }
    return scope;
  };
  // Listen settings: read once, as a reload applies them only after a restart.
  const listen = host.current().config.listen;
  const options: McpServeOptions = {
    name: 'toolgate-gateway',
    version: host.version,
    identityFrom,
    ...(listen?.parkedCallWait !== undefined ? { parkedCallMs: listen.parkedCallWait } : {}),
    ...(listen?.maxParkedCalls !== undefined ? { maxParkedCalls: listen.maxParkedCalls } : {}),
    ...(sealKey !== undefined ? { requestStateKey: sealKey } : {}),
    checkInTimeoutMs: ELICIT_TIMEOUT_MS,
    // In `stores.state`, so behind a balancer any process answers tasks/get, tasks/update and tasks/cancel.
    tasks: { store: liveTaskRecords(() => host.current().state.tasks, host.log) },
    scope: (identity): McpServeScope | McpServeRefusal => {
      const runtime = host.current();
      const tenant = identity?.tenant === undefined ? undefined : runtime.tenants.get(identity.tenant);
      if (tenant === undefined)
        return {
          refused: {
            gate: 'gateway',
            code: 'UNKNOWN_TENANT',
            retryable: false,
            reason: refusalReason(
              'this caller belongs to no configured tenant',
              'Retrying will not help',
              'Reconnect with credentials for a configured tenant',
            ),
          },
        };
      return scopeOf(runtime, tenant, identity);
    },
    admit: ({ continuesParkedCall }) => {
      if (!host.begin(continuesParkedCall))
        return {
          refused: {
            gate: 'gateway',
            code: 'SHUTTING_DOWN',
            retryable: true,
            reason: refusalReason(
              'the gateway is shutting down',
              'Retrying shortly can help: another instance or the restarted gateway will answer',
            ),
          },
        };
      return () => host.end();
    },
    readRequestState: async (token, call) => {
      const runtime = host.current();
      const key = runtime.config.checkIns?.key;
      const read =
        key === undefined
          ? ({ ok: false, problem: 'signature' } as const)
          : readState(key, token, call, spent);
      // Why (read.problem) is not told: the refusal is the same for a forged, spent or foreign state.
      if (read.ok && (await spentInStore(runtime.state.spentStates, read.state)))
        return { state: read.state };
      return {
        refused: {
          gate: 'gateway',
          code: 'CHECKIN_STATE_INVALID',
          retryable: false,
          reason: refusalReason(
            `the requestState sent with '${call.toolName}' is not one this gateway gave this caller for this call, or it was used already or expired`,
            'Retrying with it will not help',
            'Call the tool again without a requestState to ask for approval anew',
          ),
        },
      };
    },
    settlePaused: (first, call) => settlePaused(first, flowOptions(call)),
    settlePausedTask: (first, call, task) => settlePausedAsTask(first, flowOptions(call), task),
    onCall: (report) => host.log(callLine(report)),
  };
  function flowOptions(call: McpPausedCall): CheckInFlowOptions {
    const runtime = host.current();
    const inboxUrl = host.inboxUrl?.();
    return {
      server: call.server,
      dispatcher: call.dispatcher,
      store: runtime.state.checkIns,
      identity: call.identity,
      extra: call.extra,
      ...(call.traceContext !== undefined ? { traceContext: call.traceContext } : {}),
      holdMs: runtime.holdMs,
      maxPending: runtime.maxPending,
      grants: runtime.state.grants,
      definitionOf: (asked) => definitionOf(runtime, asked),
      recordGrantUse: grantUseRecorder(runtime.audit, host.log),
      pollMs: runtime.pollMs,
      elicitTimeoutMs: call.checkInTimeoutMs,
      ...(runtime.config.checkIns?.key !== undefined ? { checkInKey: runtime.config.checkIns.key } : {}),
      ...(inboxUrl !== undefined ? { inboxUrl } : {}),
      ...(call.requestState !== undefined ? { retry: call.requestState as RequestStateClaims } : {}),
    };
  }
  return mcpServe([], options);
}

/**
 * Spends a state in the shared store too, so a state replayed to another gateway process on the same
 * store is refused there. A store that cannot answer refuses the state (fail closed).
 */
async function spentInStore(store: SpentStateStore, state: RequestStateClaims): Promise<boolean> {
  try {
    return await store.spend(state.nonce, state.expiresAt);
  } catch {
    return false;
  }
}

/** The `call` log line: names, codes and timings, never an argument value. */
function callLine(report: McpCallReport): LogFields {
  const { identity, settled, first } = report;
  if (settled.kind === 'input-required')
    return {
      msg: 'call' as const,
      tenant: identity?.tenant,
      principal: identity?.principal,
      tool: report.toolName.slice(0, 64),
      ...(report.upstream !== undefined ? { upstream: report.upstream } : {}),
      kind: 'input-required',
      // An upstream that asked ran the tool as far as its question.
      ran: settled.asker === 'upstream',
      ...(settled.asker !== undefined ? { asker: settled.asker } : {}),
      ...(first !== undefined ? { chainId: first.chainId } : {}),
      ...(settled.checkInId !== undefined ? { checkInId: settled.checkInId } : {}),
      durationMs: report.durationMs,
    };
  const line = {
    msg: 'call' as const,
    tenant: identity?.tenant,
    principal: identity?.principal,
    tool: report.toolName.slice(0, 64),
    ...(report.upstream !== undefined ? { upstream: report.upstream } : {}),
  };
  if (settled.kind === 'refused')
    return {
      ...line,
      ...(first === undefined ? { level: 'warn' as const } : {}),
      kind: 'refused',
      gate: settled.gate,
      code: settled.code,
      ...(first !== undefined ? { ran: false, chainId: first.chainId } : {}),
      durationMs: report.durationMs,
      ...(settled.checkInId !== undefined ? { checkInId: settled.checkInId } : {}),
    };
  return {
    ...line,
    ...outcomeFields(settled.outcome),
    ...(first?.kind === 'paused' ? { checkIn: settled.via ?? 'inbox', checkInId: first.checkIn.id } : {}),
    ...(settled.grantId !== undefined ? { grantId: settled.grantId } : {}),
    durationMs: report.durationMs,
  };
}

function outcomeFields(outcome: DispatchOutcome): Record<string, unknown> {
  const rule = ruleOf(outcome);
  return {
    kind: outcome.kind,
    ...(outcome.kind === 'refused' ? { gate: outcome.gate, code: outcome.code } : {}),
    ...(outcome.kind === 'failed' ? { error: outcome.error.name } : {}),
    ...(rule !== undefined ? { rule } : {}),
    ran: outcome.ran,
    chainId: outcome.chainId,
    ...(outcome.kind === 'result' && outcome.receipts !== undefined
      ? { approvedBy: outcome.receipts.map((receipt) => receipt.by) }
      : {}),
  };
}

/** The policy rule that decided, as the policy gate names it on its ledger row. */
function ruleOf(outcome: DispatchOutcome): string | undefined {
  const row =
    outcome.ledger.find((entry) => entry.gate === 'policy' && entry.outcome !== 'allow') ??
    outcome.ledger.find((entry) => entry.gate === 'policy');
  return row?.rule;
}

/** The task store of the configuration serving now (a reload may move `stores.state`). */
function liveTaskRecords(current: () => TaskRecordStore, log: GatewayLog): TaskRecordStore {
  return {
    create: (record) => current().create(record),
    get: (id) => current().get(id),
    update: (id, change) => current().update(id, change),
    respond: (id, responses) => current().respond(id, responses),
    takeResponses: (id) => current().takeResponses(id),
    list: (owner) => current().list(owner),
    countLive: (owner) => current().countLive(owner),
    sweep: (owner, keep, now) => current().sweep(owner, keep, now),
    // A store without a lease renews nothing and ends nothing, as if these were absent.
    renew: async (ids, atMs) => current().renew?.(ids, atMs),
    endStale: async (owner, renewedBeforeMs, ending) => {
      const ended = (await current().endStale?.(owner, renewedBeforeMs, ending)) ?? 0;
      // Another process died or froze with calls in flight: the operator hears of it here.
      if (ended > 0)
        log({
          msg: 'task.runner-lost',
          level: 'warn',
          ...(owner.tenant !== null ? { tenant: owner.tenant } : {}),
          ...(owner.principal !== null ? { principal: owner.principal } : {}),
          tasks: ended,
        });
      return ended;
    },
  };
}
