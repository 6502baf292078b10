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
}

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
  readonly text: string;
}

export function storedTaskRow(record: TaskRecord): StoredTaskRow {
  const { inputResponses: _kept, ...rest } = record;
  const createdMs = Date.parse(record.createdAt);
  return {
    id: record.id,
    tenant: record.tenant,
    principal: record.principal,
    status: record.status,
    createdMs,
    expiresMs: createdMs + record.ttlMs,
    text: JSON.stringify(rest),
  };
}

/** A stored task read back: its record's text and the input responses kept beside it (null: none). */
export function taskRecordOfStored(text: string, responses: string | null): TaskRecord {
  const record = JSON.parse(text) as TaskRecord;
  return responses === null
    ? record
    : { ...record, inputResponses: JSON.parse(responses) as Record<string, unknown> };
}

/** The text `change` writes over a stored task's, or undefined when the task has ended (none reopens). */
export function changedStoredTask(text: string, change: TaskRecordChange): string | undefined {
  const record = JSON.parse(text) as TaskRecord;
  if (TERMINAL_TASK_STATUSES.has(record.status)) return undefined;
  const { inputResponses: _kept, ...changed } = changedTaskRecord(record, change);
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
