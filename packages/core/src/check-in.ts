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
  /** The digest of the args the person approved and the call ran with. */
  readonly argsDigest: string;
  /**
   * Present when the person approved with changes: the digest of the args as asked (the request's
   * `argsDigest`); `argsDigest` is then the digest of the changed args that ran.
   */
  readonly askedArgsDigest?: string;
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
  /**
   * Approve with changes: the args the person approved instead of the request's `review`. The
   * changed call runs the whole chain again, so policy and every gate judge it; the approval answers
   * the same asker only for exactly these args.
   */
  readonly args?: Readonly<Record<string, unknown>>;
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

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** A JSON copy of changed args, or a TypeError naming `fn` when they are not a JSON object. */
function changedArgs(fn: string, args: unknown): Readonly<Record<string, unknown>> {
  let copy: unknown;
  try {
    copy = JSON.parse(JSON.stringify(args)) as unknown;
  } catch {
    copy = undefined;
  }
  if (!isPlainObject(args) || !isPlainObject(copy))
    throw new TypeError(`${fn}: 'args' must be a JSON object of the changed arguments.`);
  return copy;
}

/**
 * An approval by `by`, with an optional note for the audit trail. With `args`, an approval with
 * changes: the call runs with those args instead of the ones asked (see `CheckInApproval.args`).
 */
export function checkInApproved(input: {
  by: string;
  note?: string;
  args?: Readonly<Record<string, unknown>>;
}): CheckInApproval {
  const by = requireText('checkInApproved', 'by', input?.by);
  return {
    approved: true,
    by,
    ...(input.note !== undefined ? { note: String(input.note) } : {}),
    ...(input.args !== undefined ? { args: changedArgs('checkInApproved', input.args) } : {}),
  };
}

/** A refusal by `by`; the model reads `reason`. */
export function checkInDeclined(input: { by: string; reason: string }): CheckInRefusal {
  const by = requireText('checkInDeclined', 'by', input?.by);
  const reason = requireText('checkInDeclined', 'reason', input?.reason);
  return { approved: false, by, reason };
}

export type CheckInState = 'pending' | 'consumed' | 'revoked';

/**
 * A person's decision as the store keeps it until whoever holds the dispatcher carries it out
 * (`carryOutDecision`): approve (`note`), approve with changes (`args`), or decline (`reason`, which
 * the model reads).
 */
export type RecordedDecision =
  | {
      readonly approved: true;
      readonly by: string;
      readonly note?: string;
      readonly args?: Readonly<Record<string, unknown>>;
      readonly decidedAt: string;
    }
  | {
      readonly approved: false;
      readonly by: string;
      readonly reason: string;
      readonly decidedAt: string;
    };

/**
 * Checks and copies a decision for `decide`; a TypeError names `store` and the fault. Store authors
 * call it so every store refuses the same input in the same words.
 */
export function recordedDecision(store: string, value: unknown): RecordedDecision {
  if (!isPlainObject(value)) throw new TypeError(`${store}: a decision must be an object.`);
  const { approved, by, note, reason, args, decidedAt } = value;
  const fn = `${store}: decide`;
  requireText(fn, 'by', by);
  if (typeof decidedAt !== 'string' || Number.isNaN(Date.parse(decidedAt)))
    throw new TypeError(`${fn}: 'decidedAt' must be an ISO 8601 time.`);
  if (approved === true) {
    if (note !== undefined && typeof note !== 'string')
      throw new TypeError(`${fn}: 'note' must be a string.`);
    return {
      approved: true,
      by: by as string,
      ...(note !== undefined ? { note } : {}),
      ...(args !== undefined ? { args: changedArgs(fn, args) } : {}),
      decidedAt,
    };
  }
  if (approved !== false) throw new TypeError(`${fn}: 'approved' must be true or false.`);
  requireText(fn, 'reason', reason);
  return { approved: false, by: by as string, reason: reason as string, decidedAt };
}

export interface CheckInRecord {
  readonly request: CheckInRequest;
  readonly state: CheckInState;
  readonly receipt?: CheckInReceipt;
  /** A person's decision, recorded by `decide`; present from then on, whatever the state. */
  readonly decision?: RecordedDecision;
}

export interface CheckInFilter {
  readonly tenant?: string;
  readonly principal?: string;
  readonly toolName?: string;
  readonly state?: CheckInState;
  /** true: only records with a decision; false: only records without one. */
  readonly decided?: boolean;
  /** Only requests whose `argsDigest` (the args as asked) is this. */
  readonly argsDigest?: string;
  /** `'oldest'` (the default) or `'newest'` first; `limit` keeps the first ones in this order. */
  readonly order?: 'oldest' | 'newest';
  readonly limit?: number;
}

/**
 * Where pending check-ins live. `consume` answers true exactly once per pending, unexpired id, and
 * `decide` likewise once per pending, unexpired, undecided id; a store shared by several processes
 * must keep both promises across them.
 */
export interface CheckInStore {
  put(request: CheckInRequest): Promise<void>;
  get(id: string): Promise<CheckInRecord | undefined>;
  consume(id: string, receipt?: CheckInReceipt): Promise<boolean>;
  /**
   * Records a person's decision on a pending, unexpired request that has none yet. True for the one
   * decision that is kept; false when the id is unknown, not pending, expired or already decided.
   * Recording decides nothing by itself: the holder of the dispatcher carries it out.
   */
  decide(id: string, decision: RecordedDecision): Promise<boolean>;
  list(filter?: CheckInFilter): Promise<CheckInRecord[]>;
  revoke(id: string): Promise<boolean>;
}

const FILTER_STRINGS = ['tenant', 'principal', 'toolName', 'state', 'argsDigest'] as const;

/** Checks a `list` filter; a TypeError names `store` and the field. For store authors. */
export function checkInFilter(store: string, filter: unknown): CheckInFilter {
  if (!isPlainObject(filter))
    throw new TypeError(
      `${store}: list's filter must be an object { tenant?, principal?, toolName?, state?, decided?, argsDigest?, order?, limit? }.`,
    );
  for (const name of FILTER_STRINGS) {
    if (filter[name] !== undefined && typeof filter[name] !== 'string')
      throw new TypeError(`${store}: list's '${name}' must be a string.`);
  }
  const { decided, order, limit } = filter;
  if (decided !== undefined && typeof decided !== 'boolean')
    throw new TypeError(`${store}: list's 'decided' must be true or false.`);
  if (order !== undefined && order !== 'oldest' && order !== 'newest')
    throw new TypeError(`${store}: list's 'order' must be 'oldest' or 'newest'.`);
  if (limit !== undefined && !(typeof limit === 'number' && Number.isInteger(limit) && limit >= 0))
    throw new TypeError(`${store}: list's 'limit' must be a non-negative integer.`);
  return filter as CheckInFilter;
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
    async decide(id, decision) {
      const kept = recordedDecision('inMemoryCheckIns', decision);
      const record = records.get(id);
      if (record === undefined || record.state !== 'pending' || expired(record.request)) return false;
      if (record.decision !== undefined) return false;
      records.set(id, { ...record, decision: copy(kept) });
      return true;
    },
    async list(filter = {}) {
      checkInFilter('inMemoryCheckIns', filter);
      const out: CheckInRecord[] = [];
      const all = [...records.values()];
      if (filter.order === 'newest') all.reverse();
      for (const record of all) {
        const { request } = record;
        if (filter.state !== undefined && record.state !== filter.state) continue;
        if (filter.toolName !== undefined && request.toolName !== filter.toolName) continue;
        if (filter.tenant !== undefined && request.identity?.tenant !== filter.tenant) continue;
        if (filter.principal !== undefined && request.identity?.principal !== filter.principal) continue;
        if (filter.argsDigest !== undefined && request.argsDigest !== filter.argsDigest) continue;
        if (filter.decided !== undefined && (record.decision !== undefined) !== filter.decided) continue;
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
