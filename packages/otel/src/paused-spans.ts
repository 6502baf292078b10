// Which span paused each check-in, so the resume's span can link to it. The signed request cannot
// carry it (altering the request breaks its signature), so the wrapper remembers it, boundedly.

import type { SpanContext } from '@opentelemetry/api';

export const DEFAULT_PAUSED_SPANS = 10_000;

export interface PausedSpans {
  remember(checkInId: string, span: SpanContext): void;
  recall(checkInId: string): SpanContext | undefined;
}

/** Keeps the newest `limit` entries; the oldest is forgotten first. */
export function pausedSpans(limit: number): PausedSpans {
  const spans = new Map<string, SpanContext>();
  return {
    remember(checkInId, span) {
      if (limit === 0) return;
      spans.delete(checkInId);
      spans.set(checkInId, span);
      if (spans.size > limit) spans.delete(spans.keys().next().value as string);
    },
    recall: (checkInId) => spans.get(checkInId),
  };
}
