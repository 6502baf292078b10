// What the inbox's operator status page shows, gathered from the live generation: upstreams and
// their state, pinned tools whose served definition changed (with both definitions), the last
// reloads (heard on the log's events), and the audit log's head.

import type { EventEmitter } from 'node:events';
import type { OperatorStatus } from '@toolgate/inbox';
import type { Runtime } from './runtime';

const RELOADS_KEPT = 20;
const PINS_SHOWN = 50;

export interface ReloadHistory {
  /** Newest first. */
  recent(): OperatorStatus['reloads'];
}

/** Keeps the last reloads (applied and refused) the gateway logged. */
export function reloadHistory(events: EventEmitter): ReloadHistory {
  const kept: OperatorStatus['reloads'][number][] = [];
  const keep = (entry: OperatorStatus['reloads'][number]) => {
    kept.unshift(entry);
    kept.length = Math.min(kept.length, RELOADS_KEPT);
  };
  events.on('reload', (line: { time?: unknown }) => keep({ at: timeOf(line.time), ok: true }));
  events.on('reload.refused', (line: { time?: unknown; issues?: unknown; error?: unknown }) =>
    keep({
      at: timeOf(line.time),
      ok: false,
      ...(typeof line.issues === 'number' ? { issues: line.issues } : {}),
      ...(typeof line.error === 'string' ? { error: line.error.slice(0, 2000) } : {}),
    }),
  );
  // A weakening reload waiting for an operator, and how it ended unapplied, in the same list.
  const unapplied = (why: string) => (line: { time?: unknown; weakens?: unknown; checkInId?: unknown }) =>
    keep({
      at: timeOf(line.time),
      ok: false,
      ...(Array.isArray(line.weakens) ? { issues: line.weakens.length } : {}),
      error:
        `${why} (check-in ${String(line.checkInId)}): ${Array.isArray(line.weakens) ? line.weakens.join('; ') : ''}`.slice(
          0,
          2000,
        ),
    });
  events.on('reload.held', unapplied('weakens security; waits for an operator in the inbox'));
  events.on('reload.declined', unapplied('weakens security; declined in the inbox'));
  events.on('reload.expired', unapplied('weakens security; nobody decided in time'));
  return { recent: () => [...kept] };
}

const timeOf = (time: unknown) => (typeof time === 'string' ? time : new Date().toISOString());

export async function operatorStatus(runtime: Runtime, reloads: ReloadHistory): Promise<OperatorStatus> {
  const upstreams = [...runtime.upstreams.values()].map((upstream) => {
    const status = upstream.status();
    return {
      name: upstream.name,
      state: status.state,
      tools: status.tools,
      restarts: status.restarts,
      ...(status.error !== undefined ? { error: status.error } : {}),
    };
  });
  const changed = await runtime.state.pins.list({ kind: 'tool', changed: true });
  const pins = changed.slice(0, PINS_SHOWN).flatMap((record) =>
    record.changed === undefined
      ? []
      : [
          {
            upstream: record.source,
            tool: `${runtime.config.upstreams[record.source]?.prefix ?? ''}${record.name}`,
            seenAt: record.changed.seenAt,
            diff: { before: record.definition, after: record.changed.definition, pinnedAt: record.pinnedAt },
          },
        ],
  );
  const audit = runtime.audit;
  let auditStatus: OperatorStatus['audit'];
  if (audit !== undefined) {
    try {
      const head = await audit.head();
      const last = audit.lastCheckpoint();
      auditStatus = {
        kind: audit.kind,
        ...(head !== undefined ? { head } : {}),
        ...(audit.checkpoints
          ? {
              checkpoint: {
                configured: true as const,
                ...(last !== undefined ? { seq: last.seq, at: last.at } : {}),
              },
            }
          : {}),
        pending: audit.log.pending,
        reachable: true,
      };
    } catch {
      auditStatus = { kind: audit.kind, pending: audit.log.pending, reachable: false };
    }
  }
  return {
    upstreams,
    pins,
    reloads: reloads.recent(),
    ...(auditStatus !== undefined ? { audit: auditStatus } : {}),
  };
}
