// Check-in: the signed request a paused call returns, the human's decision, the receipt an approval
// leaves, and the store that makes each request single-use.

import type { Identity } from './identity';

/** Which registered screen component collects the human's decision. */
export interface CheckInComponent {
  readonly id: string;
  readonly props?: Readonly<Record<string, unknown>>;
  readonly propsRef?: string;
}

/** A signed approval of an earlier question in the same call. */
export interface CheckInReceipt {
  readonly requestId: string;
  readonly asker: string;
  readonly by: string;
  readonly note?: string;
  readonly approvedAt: string;
  readonly argsDigest: string;
  /** The chain the request was raised under and the chain the approved run ran under. */
  readonly chainIdRaised: string;
  readonly chainIdRun: string;
  readonly signature: string;
}

/** What `dispatch` returns in a `paused` outcome. JSON-serializable; `signature` covers every other field. */
export interface CheckInRequest {
  readonly id: string;
  /** The name of the middleware that asked. */
  readonly asker: string;
  readonly toolName: string;
  readonly toolSource?: string;
  readonly toolCallId: string;
  /** The call's args as dispatched, so a resume replays the same call. */
  readonly args: Readonly<Record<string, unknown>>;
  /** The final args as they reached the asker (resolved artifacts shown by ref): what the human approves. */
  readonly review: Readonly<Record<string, unknown>>;
  /** SHA-256 hex of the canonical JSON of `review`. */
  readonly argsDigest: string;
  readonly chainId: string;
  readonly question: string;
  readonly evidence?: unknown;
  readonly component?: CheckInComponent;
  readonly identity?: Identity;
  readonly receipts?: readonly CheckInReceipt[];
  readonly createdAt: string;
  readonly expiresAt: string;
  readonly signature: string;
}

export interface CheckInApproval {
  readonly approved: true;
  readonly by: string;
  readonly note?: string;
}

export interface CheckInRefusal {
  readonly approved: false;
  readonly by: string;
  readonly reason: string;
}

/** A human's answer to a check-in. Build it with `checkInApproved` or `checkInDeclined`. */
export type CheckInDecision = CheckInApproval | CheckInRefusal;

function requireText(fn: string, field: string, value: unknown): string {
  if (typeof value !== 'string' || value.trim() === '') {
    throw new TypeError(
      `${fn}: '${field}' must be a non-empty string; got ${typeof value}. Say who decided.`,
    );
  }
  return value;
}

/** An approval by `by`, with an optional note for the audit trail. */
export function checkInApproved(input: { by: string; note?: string }): CheckInApproval {
  const by = requireText('checkInApproved', 'by', input?.by);
  return input.note === undefined ? { approved: true, by } : { approved: true, by, note: String(input.note) };
}

/** A refusal by `by`; the model reads `reason`. */
export function checkInDeclined(input: { by: string; reason: string }): CheckInRefusal {
  const by = requireText('checkInDeclined', 'by', input?.by);
  const reason = requireText('checkInDeclined', 'reason', input?.reason);
  return { approved: false, by, reason };
}

export type CheckInState = 'pending' | 'consumed' | 'revoked';

export interface CheckInRecord {
  readonly request: CheckInRequest;
  readonly state: CheckInState;
  readonly receipt?: CheckInReceipt;
}

export interface CheckInFilter {
  readonly tenant?: string;
  readonly toolName?: string;
  readonly state?: CheckInState;
  readonly limit?: number;
}

/**
 * Where pending check-ins live. `consume` answers true exactly once per pending, unexpired id;
 * a store shared by several processes must keep that promise across them.
 */
export interface CheckInStore {
  put(request: CheckInRequest): Promise<void>;
  get(id: string): Promise<CheckInRecord | undefined>;
  consume(id: string, receipt?: CheckInReceipt): Promise<boolean>;
  list(filter?: CheckInFilter): Promise<CheckInRecord[]>;
  revoke(id: string): Promise<boolean>;
}

export interface InMemoryCheckInsOptions {
  /** Milliseconds since the epoch; injectable for deterministic tests. */
  readonly now?: () => number;
}

/** A `CheckInStore` in this process's memory: lost on restart. Use `@toolgate/store-sqlite` for durability. */
export function inMemoryCheckIns(options: InMemoryCheckInsOptions = {}): CheckInStore {
  const now = options.now ?? Date.now;
  const records = new Map<string, CheckInRecord>();
  const expired = (request: CheckInRequest) => Date.parse(request.expiresAt) <= now();
  // Copies through JSON so callers can never mutate what the store holds.
  const copy = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;
  return {
    async put(request) {
      if (records.has(request.id))
        throw new Error(`inMemoryCheckIns: request '${request.id}' is already stored`);
      records.set(request.id, { request: copy(request), state: 'pending' });
    },
    async get(id) {
      const record = records.get(id);
      return record === undefined ? undefined : copy(record);
    },
    async consume(id, receipt) {
      const record = records.get(id);
      if (record === undefined || record.state !== 'pending' || expired(record.request)) return false;
      records.set(
        id,
        receipt === undefined
          ? { ...record, state: 'consumed' }
          : { ...record, state: 'consumed', receipt: copy(receipt) },
      );
      return true;
    },
    async list(filter = {}) {
      const out: CheckInRecord[] = [];
      for (const record of records.values()) {
        if (filter.state !== undefined && record.state !== filter.state) continue;
        if (filter.toolName !== undefined && record.request.toolName !== filter.toolName) continue;
        if (filter.tenant !== undefined && record.request.identity?.tenant !== filter.tenant) continue;
        if (filter.limit !== undefined && out.length >= filter.limit) break;
        out.push(copy(record));
      }
      return out;
    },
    async revoke(id) {
      const record = records.get(id);
      if (record === undefined || record.state !== 'pending') return false;
      records.set(id, { ...record, state: 'revoked' });
      return true;
    },
  };
}
