// The gateway's operator output: one JSON line per fact (a call, a refused request, a reload), on
// stderr so stdout stays free for the one "listening" line and for stdio MCP. The same facts are
// events on `gateway.events`. Lines carry names, codes and durations, never argument or result values.

import { EventEmitter } from 'node:events';
import { redactValue } from '@toolgate/core';

export type LogFields = Readonly<Record<string, unknown>> & {
  readonly msg: string;
  readonly level?: 'info' | 'warn' | 'error';
};

export interface GatewayLog {
  (fields: LogFields): void;
  readonly events: EventEmitter;
}

/**
 * `secrets` answers the values no line may carry (the configuration's interpolated values, resolved
 * credentials): a message built from an upstream's error or a library's text is scrubbed of them.
 */
export function createLog(
  write: ((line: string) => void) | undefined,
  secrets: () => readonly string[] = () => [],
): GatewayLog {
  const events = new EventEmitter();
  // A listener that throws must not reach the call that logged.
  events.on('error', () => undefined);
  const log = ((fields: LogFields) => {
    const raw = { time: new Date().toISOString(), level: fields.level ?? 'info', ...fields };
    const line = redactValue(raw, secrets()) as typeof raw;
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
