// The gateway's MCP server: one SDK server per session (or the one stdio connection) that, on each
// request, asks the live configuration for the caller's tenant, so a reload reaches open sessions
// for their next call. tools/list shows the tenant's tools; tools/call runs its dispatcher and
// settles a pause through the check-in flow. One log line per call.

import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  ListToolsRequestSchema,
  type CallToolResult,
} from '@modelcontextprotocol/sdk/types.js';
import { refusalReason, type DispatchOutcome, type Identity, type TraceContext } from '@toolgate/core';
import { callToolResult, refusalResult, type McpRequestExtra } from '@toolgate/mcp';
import { refusedResult, settlePaused, type Settled } from './check-in-flow';
import { definitionOf, grantUseRecorder } from './standing-grants';
import type { GatewayLog } from './log';
import { serveTenantResources } from './resources';
import type { Runtime } from './runtime';

export interface ServerHost {
  /** The configuration serving now. */
  current(): Runtime;
  /** Counts a call in flight, so shutdown can wait for it; false when shutting down. */
  begin(): boolean;
  end(): void;
  readonly log: GatewayLog;
  /** Every live server, so a reload can tell each that the tool list changed. */
  readonly servers: Set<Server>;
  readonly version: string;
}

/** Who is calling: the identity the HTTP layer verified, or the fixed stdio identity. */
export type IdentitySource = (extra: McpRequestExtra) => Identity | undefined;

export const fromAuthInfo: IdentitySource = (extra) =>
  (extra.authInfo?.extra as { identity?: Identity } | undefined)?.identity;

const ELICIT_TIMEOUT_MS = 10 * 60_000;

export function gatewayServer(host: ServerHost, identityOf: IdentitySource): Server {
  const server = new Server(
    { name: 'toolgate-gateway', version: host.version },
    {
      capabilities: {
        tools: { listChanged: true },
        resources: { listChanged: true },
        prompts: { listChanged: true },
      },
    },
  );
  serveTenantResources(server, host, identityOf);

  server.setRequestHandler(ListToolsRequestSchema, (_request, extra) => {
    const identity = identityOf(extra);
    const tenant = identity?.tenant === undefined ? undefined : host.current().tenants.get(identity.tenant);
    if (tenant === undefined) return { tools: [] };
    return { tools: tenant.listed(identity).map((tool) => ({ ...tool })) };
  });

  server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
    const started = performance.now();
    const identity = identityOf(extra);
    const toolName = request.params.name;
    const runtime = host.current();
    const tenant = identity?.tenant === undefined ? undefined : runtime.tenants.get(identity.tenant);
    const line = {
      msg: 'call' as const,
      tenant: identity?.tenant,
      principal: identity?.principal,
      tool: typeof toolName === 'string' ? toolName.slice(0, 64) : undefined,
    };
    if (tenant === undefined) {
      host.log({
        ...line,
        level: 'warn',
        kind: 'refused',
        gate: 'gateway',
        code: 'UNKNOWN_TENANT',
        durationMs: ms(started),
      });
      return refusalResult(
        'gateway',
        refusalReason(
          'this caller belongs to no configured tenant',
          'Retrying will not help',
          'Reconnect with credentials for a configured tenant',
        ),
      );
    }
    if (!host.begin()) {
      host.log({
        ...line,
        level: 'warn',
        kind: 'refused',
        gate: 'gateway',
        code: 'SHUTTING_DOWN',
        durationMs: ms(started),
      });
      return refusalResult(
        'gateway',
        refusalReason(
          'the gateway is shutting down',
          'Retrying shortly can help: another instance or the restarted gateway will answer',
        ),
      );
    }
    runtime.hold();
    try {
      const traceContext = traceContextOf(request.params._meta);
      const first = await tenant.dispatcher.dispatch(
        { toolName, args: request.params.arguments ?? {} },
        {
          ...(identity !== undefined ? { identity } : {}),
          signal: extra.signal,
          ...(traceContext !== undefined ? { traceContext } : {}),
        },
      );
      let settled: Settled;
      if (first.kind === 'paused') {
        settled = await settlePaused(first, {
          server,
          dispatcher: tenant.dispatcher,
          store: runtime.state.checkIns,
          identity,
          extra,
          ...(traceContext !== undefined ? { traceContext } : {}),
          holdMs: runtime.holdMs,
          maxPending: runtime.maxPending,
          ...(runtime.state.grants !== undefined
            ? { grants: runtime.state.grants, definitionOf: (asked) => definitionOf(runtime, asked) }
            : {}),
          ...(runtime.audit !== undefined ? { recordGrantUse: grantUseRecorder(runtime.audit) } : {}),
          pollMs: runtime.pollMs,
          elicitTimeoutMs: ELICIT_TIMEOUT_MS,
        });
      } else settled = { kind: 'outcome', outcome: first, via: 'inbox' };
      if (settled.kind === 'refused') {
        host.log({
          ...line,
          upstream: tenant.sourceOf.get(toolName),
          kind: 'refused',
          gate: settled.gate,
          code: settled.code,
          ran: false,
          durationMs: ms(started),
          chainId: first.chainId,
          ...(settled.checkInId !== undefined ? { checkInId: settled.checkInId } : {}),
        });
        return refusedResult(settled);
      }
      const outcome = settled.outcome;
      host.log({
        ...line,
        upstream: tenant.sourceOf.get(toolName),
        ...outcomeFields(outcome),
        ...(first.kind === 'paused' ? { checkIn: settled.via, checkInId: first.checkIn.id } : {}),
        ...(settled.grantId !== undefined ? { grantId: settled.grantId } : {}),
        durationMs: ms(started),
      });
      return resultFor(outcome);
    } finally {
      runtime.release();
      host.end();
    }
  });

  const previous = server.onclose;
  server.onclose = () => {
    host.servers.delete(server);
    previous?.();
  };
  host.servers.add(server);
  return server;
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

/** The MCP result; a refusal also carries its machine code in `_meta`. */
function resultFor(outcome: DispatchOutcome): CallToolResult {
  const result = callToolResult(outcome);
  if (outcome.kind !== 'refused') return result;
  return {
    ...result,
    _meta: {
      'io.toolgate/refusal': { gate: outcome.gate, code: outcome.code, retryable: outcome.retryable },
    },
  };
}

const ms = (since: number) => Math.round((performance.now() - since) * 100) / 100;

// W3C headers are short; anything longer is not a trace context worth carrying.
const MAX_TRACE_HEADER = 512;

function traceContextOf(meta: unknown): TraceContext | undefined {
  if (typeof meta !== 'object' || meta === null) return undefined;
  const { traceparent, tracestate } = meta as Record<string, unknown>;
  if (typeof traceparent !== 'string' || traceparent.length > MAX_TRACE_HEADER) return undefined;
  return typeof tracestate === 'string' && tracestate.length <= MAX_TRACE_HEADER
    ? { traceparent, tracestate }
    : { traceparent };
}
