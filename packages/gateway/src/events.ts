// The gateway's events, in one place: each name `gateway.events` emits (the log's `event`) and the
// line it carries. A listener is typed by the name it listens to; a new event is added here first.

import type { LogLevel } from './log';

/** What every line carries. */
export interface EventLineBase<Name extends string> {
  /** ISO 8601. */
  readonly time: string;
  readonly level: LogLevel;
  readonly event: Name;
  /** The same name as `event` (kept for existing log filters). */
  readonly msg: Name;
}

/** An upstream's pinned and served definition digests. */
interface DigestChange {
  readonly upstream: string;
  readonly pinned: string;
  readonly served: string;
}

/** A standing grant as an event carries it: who, which tool, the bounds' shape (never their values). */
export interface GrantFields {
  readonly grantId: string;
  readonly tenant?: string;
  readonly principal?: string;
  readonly tool: string;
  /** Who granted or revoked it. */
  readonly by: string;
  /** Each argument's kind of bound (`equals`, `atMost`, `oneOf`). */
  readonly bounds: Readonly<Record<string, 'equals' | 'atMost' | 'oneOf'>>;
  readonly maxUses?: number;
  readonly expiresAt: string;
}

/** Each event's own fields. Lines carry names, codes and durations, never argument or result values. */
export interface GatewayEventFields {
  readonly 'audit.checkpoint.failed': { readonly error: string };
  /** The audit journal failed; the store takes each window from then on. `error` names the file and what failed. */
  readonly 'audit.journal.failed': { readonly error: string };
  readonly call: {
    readonly tenant?: string;
    readonly principal?: string;
    readonly tool: string;
    readonly upstream?: string;
    /** `ok`, `refused`, `failed`, … (the dispatch outcome's kind). */
    readonly kind: string;
    readonly gate?: string;
    readonly code?: string;
    readonly rule?: string;
    readonly error?: string;
    readonly ran?: boolean;
    readonly chainId?: string;
    readonly checkIn?: string;
    readonly checkInId?: string;
    readonly grantId?: string;
    readonly durationMs: number;
  };
  /** An operator stored or replaced a principal's credential (its value is never in a line). */
  readonly 'credential.set': {
    readonly credential: string;
    readonly tenant: string;
    readonly principal: string;
    readonly by?: string;
  };
  readonly 'credential.deleted': {
    readonly credential: string;
    readonly tenant: string;
    readonly principal: string;
    readonly by?: string;
    readonly found: boolean;
  };
  readonly 'grant.created': GrantFields & { readonly fromCheckIn: string };
  readonly 'grant.revoked': GrantFields;
  readonly 'grant.used': GrantFields & { readonly checkInId: string };
  /**
   * The audit log could not record a grant's change (`error`: the failure's class): a creation is
   * then not made; a revocation stands, unrecorded.
   */
  readonly 'grant.unrecorded': GrantFields & {
    readonly change: 'created' | 'revoked';
    readonly error: string;
  };
  readonly 'http.refused': {
    readonly status: number;
    readonly why: string;
    readonly method?: string;
    readonly path: string;
  };
  readonly 'listen.warning': { readonly code: string; readonly message: string };
  readonly 'metrics.token-missing': { readonly why: string };
  readonly 'pin.accepted': { readonly upstream: string; readonly tool: string; readonly digest: string };
  readonly 'pin.changed': DigestChange & { readonly tool: string; readonly voided?: unknown };
  readonly 'pin.pinned': { readonly upstream: string; readonly tool: string; readonly digest: string };
  readonly 'sampling.refused': {
    readonly upstream: string;
    readonly code: string;
    readonly tool?: string;
    readonly tenant?: string;
    readonly principal?: string;
  };
  readonly 'sampling.relayed': {
    readonly upstream: string;
    readonly tool?: string;
    readonly tenant?: string;
    readonly principal?: string;
  };
  readonly reload: {
    readonly tenants: readonly string[];
    readonly upstreams: readonly string[];
    /** How the reload weakens security, when it does. */
    readonly weakens?: readonly string[];
    /** The operator who approved a weakening reload in the inbox, and its check-in. */
    readonly approvedBy?: string;
    readonly checkInId?: string;
  };
  /** A weakening reload waits for an operator in the inbox; the old configuration keeps serving. */
  readonly 'reload.held': { readonly checkInId: string; readonly weakens: readonly string[] };
  readonly 'reload.declined': {
    readonly checkInId: string;
    readonly by: string;
    readonly weakens: readonly string[];
  };
  readonly 'reload.expired': { readonly checkInId: string; readonly weakens: readonly string[] };
  readonly 'reload.listen-unchanged': { readonly why: string };
  readonly 'reload.refused': { readonly issues?: unknown; readonly error: string };
  readonly 'reload.watch-unavailable': Record<never, never>;
  readonly 'shutdown.done': Record<never, never>;
  /** `inFlight`: calls and POST responses still in flight. */
  readonly 'shutdown.draining': { readonly inFlight: number };
  /**
   * Tasks of one owner that a process stopped renewing (it crashed or froze) were ended `failed`
   * (TASK_RUNNER_LOST) by this process, which read them: how many, never their arguments.
   */
  readonly 'task.runner-lost': {
    readonly tenant?: string;
    readonly principal?: string;
    readonly tasks: number;
  };
  readonly 'tools.refresh-refused': { readonly error: string };
  readonly 'tools.refreshed': Record<never, never>;
  readonly 'upstream.down': { readonly upstream: string; readonly why: string };
  readonly 'upstream.failed': { readonly upstream: string; readonly why: string };
  readonly 'upstream.identity-changed': DigestChange;
  readonly 'upstream.instructions-dropped': { readonly upstream: string; readonly why: string };
  readonly 'upstream.restarted': { readonly upstream: string; readonly restarts: number };
  readonly 'upstream.stderr': { readonly upstream: string; readonly line: string };
  readonly 'upstream.stderr-dropped': { readonly upstream: string; readonly lines: number };
  readonly 'upstream.tool-skipped': {
    readonly upstream: string;
    readonly tool: string;
    readonly why: string;
  };
}

export type GatewayEventName = keyof GatewayEventFields;

/** The line an event carries: the common fields and its own. */
export type GatewayEventLine<Name extends GatewayEventName> = EventLineBase<Name> & GatewayEventFields[Name];

/** The map `gateway.events` is typed by (`error` is where a throwing listener's error goes, ignored). */
export type GatewayEvents = { [Name in GatewayEventName]: [line: GatewayEventLine<Name>] } & {
  error: [error: unknown];
};
