// MCP tasks (GATEWAY.md §6 item 2) kept where every process behind a balancer reads them: a client's
// tasks/get, tasks/update or tasks/cancel may land on any process, not only the one running the call.
// The running process writes status and result here; the others read, cancel and pass on form answers.

export type TaskRecordStatus = 'working' | 'input_required' | 'completed' | 'failed' | 'cancelled';

export const TERMINAL_TASK_STATUSES: ReadonlySet<TaskRecordStatus> = new Set([
  'completed',
  'failed',
  'cancelled',
]);

/** A JSON-RPC error, as a failed task carries it. */
export interface TaskRecordError {
  readonly code: number;
  readonly message: string;
  readonly data?: Readonly<Record<string, unknown>>;
}

export interface TaskRecord {
  readonly id: string;
  /** The owner: only this tenant and principal may read, update or cancel the task. */
  readonly tenant: string | null;
  readonly principal: string | null;
  readonly status: TaskRecordStatus;
  readonly statusMessage?: string;
  readonly createdAt: string;
  readonly lastUpdatedAt: string;
  /** Kept this long from creation once ended; never dropped while it runs. */
  readonly ttlMs: number;
  /** The check-in an approval task waits on. */
  readonly checkInId?: string;
  /** What the task asks for while `input_required` (2026-07-28 `inputRequests`). */
  readonly inputRequests?: Readonly<Record<string, unknown>>;
  /** The owner's answers from tasks/update, not yet taken by the running process. */
  readonly inputResponses?: Readonly<Record<string, unknown>>;
  /** The tool result once `completed` (JSON). */
  readonly result?: Readonly<Record<string, unknown>>;
  readonly error?: TaskRecordError;
  /**
   * When the process running the task last renewed its lease (ms since the epoch); a store keeps it
   * apart from the record's text. Absent on a task created without a lease: such a task is never stale.
   */
  readonly renewedAt?: number;
}

/** A change to a task; only a task that has not ended changes (an ended one is final). */
export interface TaskRecordChange {
  readonly status: TaskRecordStatus;
  readonly statusMessage?: string;
  readonly lastUpdatedAt: string;
  readonly checkInId?: string;
  readonly inputRequests?: Readonly<Record<string, unknown>>;
  readonly result?: Readonly<Record<string, unknown>>;
  readonly error?: TaskRecordError;
}

export interface TaskOwnerKey {
  readonly tenant: string | null;
  readonly principal: string | null;
}

/**
 * Where tasks live. `update` is the one write that ends a task: it changes only a task that has not
 * ended, atomically, so a cancel through one process and a result from another cannot both win.
 */
export interface TaskRecordStore {
  create(record: TaskRecord): Promise<void>;
  /** The task, whoever owns it; the caller checks the owner. Undefined once swept. */
  get(id: string): Promise<TaskRecord | undefined>;
  /** True when the change was written (the task existed and had not ended). */
  update(id: string, change: TaskRecordChange): Promise<boolean>;
  /** Stores the owner's answers for the running process; false when the task is not `input_required`. */
  respond(id: string, responses: Readonly<Record<string, unknown>>): Promise<boolean>;
  /** Takes (and clears) the stored answers; undefined when there are none. */
  takeResponses(id: string): Promise<Readonly<Record<string, unknown>> | undefined>;
  /** The owner's tasks, newest first. */
  list(owner: TaskOwnerKey): Promise<TaskRecord[]>;
  /** How many of the owner's tasks have not ended. */
  countLive(owner: TaskOwnerKey): Promise<number>;
  /** Drops ended tasks past their TTL, and the owner's oldest ended ones beyond `keep`. */
  sweep(owner: TaskOwnerKey, keep: number, now: number): Promise<void>;
  /**
   * Renews the lease of the tasks one process runs: sets their `renewedAt` to `atMs`, in one write for
   * all of them; an ended or unknown id is passed over. A store without it keeps no lease: its tasks
   * are never ended for a runner that stopped.
   */
  renew?(ids: readonly string[], atMs: number): Promise<void>;
  /**
   * Ends as `failed` (with `ending`) each of the owner's tasks that has not ended and whose `renewedAt`
   * is before `renewedBeforeMs`, in one conditional write: a renewal or an end racing it wins, a task
   * without `renewedAt` is never ended. Resolves to how many tasks it ended.
   */
  endStale?(owner: TaskOwnerKey, renewedBeforeMs: number, ending: StaleTaskEnding): Promise<number>;
}

/** What a task whose runner stopped renewing it ends with: always `failed`, with this error. */
export interface StaleTaskEnding {
  readonly statusMessage: string;
  readonly lastUpdatedAt: string;
  readonly error: TaskRecordError;
}

/** Whether a task has not ended and its lease was last renewed before `renewedBeforeMs`. */
export const staleTask = (record: TaskRecord, renewedBeforeMs: number): boolean =>
  !TERMINAL_TASK_STATUSES.has(record.status) &&
  record.renewedAt !== undefined &&
  record.renewedAt < renewedBeforeMs;

/** The fields a stale task loses as it ends (what a `failed` task does not show). */
export const STALE_TASK_DROPPED_FIELDS = ['inputRequests', 'statusMessage', 'result', 'error'] as const;

const sameOwner = (record: TaskRecord, owner: TaskOwnerKey): boolean =>
  record.tenant === owner.tenant && record.principal === owner.principal;

/**
 * A task as a database store keeps it: the columns it is looked up by, and the record's JSON text
 * without its input responses, which a store keeps apart (answers arrive and are taken on their own).
 */
export interface StoredTaskRow {
  readonly id: string;
  readonly tenant: string | null;
  readonly principal: string | null;
  readonly status: TaskRecordStatus;
  readonly createdMs: number;
  readonly expiresMs: number;
  /** The lease's last renewal; null for a task created without a lease. */
  readonly renewedMs: number | null;
  readonly text: string;
}

export function storedTaskRow(record: TaskRecord): StoredTaskRow {
  const { inputResponses: _kept, renewedAt, ...rest } = record;
  const createdMs = Date.parse(record.createdAt);
  return {
    id: record.id,
    tenant: record.tenant,
    principal: record.principal,
    status: record.status,
    createdMs,
    expiresMs: createdMs + record.ttlMs,
    renewedMs: renewedAt ?? null,
    text: JSON.stringify(rest),
  };
}

/**
 * A stored task read back: its record's text, the input responses kept beside it (null: none) and
 * its lease's last renewal (null or absent: none).
 */
export function taskRecordOfStored(
  text: string,
  responses: string | null,
  renewedMs: number | null = null,
): TaskRecord {
  const record = JSON.parse(text) as TaskRecord;
  return {
    ...record,
    ...(responses !== null ? { inputResponses: JSON.parse(responses) as Record<string, unknown> } : {}),
    ...(renewedMs !== null ? { renewedAt: renewedMs } : {}),
  };
}

/** The text `change` writes over a stored task's, or undefined when the task has ended (none reopens). */
export function changedStoredTask(text: string, change: TaskRecordChange): string | undefined {
  const record = JSON.parse(text) as TaskRecord;
  if (TERMINAL_TASK_STATUSES.has(record.status)) return undefined;
  const { inputResponses: _kept, renewedAt: _renewed, ...changed } = changedTaskRecord(record, change);
  return JSON.stringify(changed);
}

/** Applies `change` to `record` as every store does (fields a status does not show are dropped). */
export function changedTaskRecord(record: TaskRecord, change: TaskRecordChange): TaskRecord {
  const {
    inputRequests: _asked,
    inputResponses: _answered,
    statusMessage: _message,
    result: _result,
    error: _error,
    ...kept
  } = record;
  return {
    ...kept,
    status: change.status,
    lastUpdatedAt: change.lastUpdatedAt,
    ...(change.statusMessage !== undefined ? { statusMessage: change.statusMessage } : {}),
    ...(change.checkInId !== undefined ? { checkInId: change.checkInId } : {}),
    ...(change.status === 'input_required' && change.inputRequests !== undefined
      ? { inputRequests: change.inputRequests }
      : {}),
    ...(change.status === 'input_required' && record.inputResponses !== undefined
      ? { inputResponses: record.inputResponses }
      : {}),
    ...(change.result !== undefined ? { result: change.result } : {}),
    ...(change.error !== undefined ? { error: change.error } : {}),
  };
}

/** A `TaskRecordStore` in this process's memory: right for one process only. */
export function inMemoryTaskRecords(): TaskRecordStore {
  const records = new Map<string, TaskRecord>();
  // Copies through JSON so callers can never mutate what the store holds.
  const copy = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;
  return {
    async create(record) {
      if (records.has(record.id))
        throw new Error(`inMemoryTaskRecords: task '${record.id}' is already stored`);
      records.set(record.id, copy(record));
    },
    async get(id) {
      const record = records.get(id);
      return record === undefined ? undefined : copy(record);
    },
    async update(id, change) {
      const record = records.get(id);
      if (record === undefined || TERMINAL_TASK_STATUSES.has(record.status)) return false;
      records.set(id, changedTaskRecord(record, copy(change)));
      return true;
    },
    async respond(id, responses) {
      const record = records.get(id);
      if (record === undefined || record.status !== 'input_required') return false;
      records.set(id, { ...record, inputResponses: copy(responses) });
      return true;
    },
    async takeResponses(id) {
      const record = records.get(id);
      if (record?.inputResponses === undefined) return undefined;
      const { inputResponses, ...rest } = record;
      records.set(id, rest);
      return inputResponses;
    },
    async list(owner) {
      return [...records.values()]
        .filter((record) => sameOwner(record, owner))
        .reverse()
        .map(copy);
    },
    async countLive(owner) {
      let live = 0;
      for (const record of records.values())
        if (sameOwner(record, owner) && !TERMINAL_TASK_STATUSES.has(record.status)) live++;
      return live;
    },
    async renew(ids, atMs) {
      for (const id of ids) {
        const record = records.get(id);
        if (record !== undefined && !TERMINAL_TASK_STATUSES.has(record.status))
          records.set(id, { ...record, renewedAt: atMs });
      }
    },
    async endStale(owner, renewedBeforeMs, ending) {
      let ended = 0;
      for (const [id, record] of records)
        if (sameOwner(record, owner) && staleTask(record, renewedBeforeMs)) {
          records.set(id, changedTaskRecord(record, { status: 'failed', ...copy(ending) }));
          ended++;
        }
      return ended;
    },
    async sweep(owner, keep, now) {
      for (const [id, record] of records)
        if (TERMINAL_TASK_STATUSES.has(record.status) && Date.parse(record.createdAt) + record.ttlMs <= now)
          records.delete(id);
      const ended = [...records.values()].filter(
        (record) => sameOwner(record, owner) && TERMINAL_TASK_STATUSES.has(record.status),
      );
      for (const record of ended.slice(0, Math.max(0, ended.length - keep))) records.delete(record.id);
    },
  };
}
