// The gateway's operator output: one JSON line per fact (a call, a refused request, a reload), on
// stderr so stdout stays free for the one "listening" line and for stdio MCP. The same facts are
// events on `gateway.events`. Lines carry names, codes and durations, never argument or result values.

import { EventEmitter } from 'node:events';

export type LogFields = Readonly<Record<string, unknown>> & {
  readonly msg: string;
  readonly level?: 'info' | 'warn' | 'error';
};

export interface GatewayLog {
  (fields: LogFields): void;
  readonly events: EventEmitter;
}

export function createLog(write: ((line: string) => void) | undefined): GatewayLog {
  const events = new EventEmitter();
  // A listener that throws must not reach the call that logged.
  events.on('error', () => undefined);
  const log = ((fields: LogFields) => {
    const line = { time: new Date().toISOString(), level: fields.level ?? 'info', ...fields };
    try {
      write?.(JSON.stringify(line));
    } catch {
      // A closed stderr must not take a call down.
    }
    try {
      events.emit(fields.msg, line);
    } catch {
      // as above
    }
  }) as GatewayLog;
  Object.defineProperty(log, 'events', { value: events });
  return log;
}
