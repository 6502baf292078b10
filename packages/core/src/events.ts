// Typed events. They carry facts (names, counts, sizes, decisions), never arg values, results or secrets.

import type { LedgerRow, OutcomeKind } from './outcomes';

/** Fields every event carries. */
export interface EventBase {
  readonly toolName: string;
  readonly toolCallId: string;
  readonly toolSource?: string;
  readonly chainId: string;
  readonly tenant?: string;
  /** Milliseconds since the epoch, from the dispatcher's clock. */
  readonly at: number;
}

export interface ToolgateEventMap {
  'dispatch.start': EventBase & { readonly resumed: boolean };
  'dispatch.end': EventBase & {
    readonly kind: OutcomeKind;
    readonly ran: boolean;
    readonly gate?: string;
    readonly code?: string;
    readonly durationMs: number;
  };
  'gate.decision': EventBase & LedgerRow & { readonly code?: string; readonly detail?: string };
  'permission.checked': EventBase & {
    readonly allowed: boolean;
    readonly checker: 'configured' | 'none';
    readonly failure?: string;
  };
  'capability.checked': EventBase & {
    readonly capability: string;
    readonly allowed: boolean;
    readonly failure?: string;
  };
  'checkin.requested': EventBase & {
    readonly requestId: string;
    readonly asker: string;
    readonly expiresAt: string;
  };
  'checkin.resolved': EventBase & {
    readonly requestId: string;
    readonly asker: string;
    readonly approved: boolean;
    readonly by?: string;
    readonly failure?: string;
  };
  'credential.resolved': EventBase & { readonly kind: string; readonly service: string };
  'credential.failed': EventBase & {
    readonly kind: string;
    readonly service: string;
    readonly failure: string;
  };
  'artifacts.resolved': EventBase & { readonly refs: readonly { arg: string; ref: string; kind: string }[] };
  'artifacts.refused': EventBase & {
    readonly arg: string;
    readonly wantedKind: string;
    readonly ref?: string;
    readonly failure: string;
  };
  'result.refused': EventBase & {
    readonly chars: number;
    readonly maxChars?: number;
    /** Decoded bytes of binary blocks, when the ceiling on bytes refused the result. */
    readonly bytes?: number;
    readonly maxBytes?: number;
  };
  'tool.start': EventBase;
  'tool.end': EventBase & { readonly chars: number; readonly durationMs: number };
  'tool.error': EventBase & { readonly errorName: string; readonly durationMs: number };
  /** A per-tenant chain failed its build-time checks; calls under it are refused. */
  'chain.rejected': EventBase & { readonly problem: string };
}

export type ToolgateEventType = keyof ToolgateEventMap;

/** Events only the core emits; a middleware cannot emit these. */
type CoreOnlyEventType =
  | 'dispatch.start'
  | 'dispatch.end'
  | 'gate.decision'
  | 'tool.start'
  | 'tool.end'
  | 'tool.error'
  | 'chain.rejected';

type GateEventType = Exclude<ToolgateEventType, CoreOnlyEventType>;

/** An event a middleware emits through `ctx.emit`: one of the gate events, or its own `type`. */
export type GateEvent =
  | { [K in GateEventType]: { readonly type: K } & Omit<ToolgateEventMap[K], keyof EventBase> }[GateEventType]
  | { readonly type: `${string}.${string}`; readonly [fact: string]: unknown };

/** Every event type the core and the built-in gates emit, in the order a call meets them. */
export const EVENT_TYPES: readonly ToolgateEventType[] = Object.freeze([
  'dispatch.start',
  'gate.decision',
  'permission.checked',
  'capability.checked',
  'artifacts.resolved',
  'artifacts.refused',
  'checkin.requested',
  'checkin.resolved',
  'credential.resolved',
  'credential.failed',
  'tool.start',
  'tool.end',
  'tool.error',
  'result.refused',
  'dispatch.end',
  'chain.rejected',
] satisfies ToolgateEventType[]);

/** Listener signatures for eventemitter3's typed emitter. */
export type ToolgateListeners = {
  [K in ToolgateEventType]: (event: ToolgateEventMap[K] & { readonly type: K }) => void;
} & {
  [custom: `${string}.${string}`]: (
    event: EventBase & { readonly type: string; readonly gate?: string },
  ) => void;
};
