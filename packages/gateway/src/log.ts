// The gateway's operator output: one JSON line per fact (a call, a refused request, a reload), on
// stderr so stdout stays free for the one "listening" line and for stdio MCP. The same facts are
// events on `gateway.events`. Lines carry names, codes and durations, never argument or result values.
// Every line has a `level` and an `event` from LOG_EVENTS.

import { EventEmitter } from 'node:events';
import { redactValue } from '@toolgate/core';
import type { GatewayEventName, GatewayEvents } from './events';

/**
 * Every event the gateway logs: a line's `event` (and, as before, `msg`) is one of these, so an
 * operator can filter and alert on a name that does not change. Add a name here before logging it.
 */
export const LOG_EVENTS = [
  'audit.checkpoint.failed',
  'audit.journal.failed',
  'call',
  'credential.deleted',
  'credential.set',
  'grant.created',
  'grant.revoked',
  'grant.unrecorded',
  'grant.used',
  'http.refused',
  'listen.warning',
  'metrics.token-missing',
  'pin.accepted',
  'pin.changed',
  'pin.pinned',
  'reload',
  'reload.declined',
  'reload.expired',
  'reload.held',
  'reload.listen-unchanged',
  'reload.refused',
  'reload.watch-unavailable',
  'sampling.refused',
  'sampling.relayed',
  'shutdown.done',
  'shutdown.draining',
  'task.runner-lost',
  'tools.refresh-refused',
  'tools.refreshed',
  'upstream.down',
  'upstream.failed',
  'upstream.identity-changed',
  'upstream.instructions-dropped',
  'upstream.restarted',
  'upstream.stderr',
  'upstream.stderr-dropped',
  'upstream.tool-skipped',
] as const satisfies readonly GatewayEventName[];

export type LogEvent = (typeof LOG_EVENTS)[number];

/** Fails to compile while an event of the map in events.ts is missing from LOG_EVENTS. */
export type EveryEventListed = Listed<Exclude<GatewayEventName, LogEvent>>;
type Listed<Missing extends never> = Missing;
export type LogLevel = 'info' | 'warn' | 'error';

export type LogFields = Readonly<Record<string, unknown>> & {
  readonly msg: LogEvent;
  readonly level?: LogLevel;
};

export interface GatewayLog {
  (fields: LogFields): void;
  readonly events: EventEmitter<GatewayEvents>;
}

/**
 * `secrets` answers the values no line may carry (the configuration's interpolated values, resolved
 * credentials): a message built from an upstream's error or a library's text is scrubbed of them.
 */
export function createLog(
  write: ((line: string) => void) | undefined,
  secrets: () => readonly string[] = () => [],
): GatewayLog {
  const events = new EventEmitter<GatewayEvents>();
  // A listener that throws must not reach the call that logged.
  events.on('error', () => undefined);
  const log = ((fields: LogFields) => {
    const raw = {
      time: new Date().toISOString(),
      level: fields.level ?? 'info',
      event: fields.msg,
      ...fields,
    };
    const line = redactValue(raw, secrets()) as typeof raw;
    try {
      write?.(JSON.stringify(line));
    } catch {
      // A closed stderr must not take a call down.
    }
    try {
      (events as EventEmitter).emit(fields.msg, line);
    } catch {
      // as above
    }
  }) as GatewayLog;
  Object.defineProperty(log, 'events', { value: events });
  return log;
}
