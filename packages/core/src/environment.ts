// What a dispatcher lends every call: its clock, and its emitter behind a check that builds no event
// nobody hears.

import { EventEmitter } from 'eventemitter3';
import type { CallEnvironment } from './context';
import type { ToolgateListeners } from './events';

/** The environment of every call of one dispatcher. */
export function callEnvironment(
  emitter: EventEmitter<ToolgateListeners>,
  now: () => number,
): CallEnvironment {
  // eventemitter3 counts the event types that have listeners. When that count is zero, no lookup per
  // event is needed, and a dispatch asks about a dozen events. An emitter that answers listenerCount
  // itself is always asked.
  const countsItself = emitter.listenerCount !== EventEmitter.prototype.listenerCount;
  const counted = emitter as { _eventsCount?: unknown };
  const quiet = () => !countsItself && counted._eventsCount === 0;
  return {
    now,
    quiet,
    wants: (type) => (countsItself || counted._eventsCount !== 0) && emitter.listenerCount(type as never) > 0,
    emit: (type, event) => {
      try {
        (emitter.emit as (type: string, event: unknown) => boolean)(type, event);
      } catch {
        // A listener that throws is the listener's bug; it must not decide, or crash, the call.
      }
    },
  };
}
