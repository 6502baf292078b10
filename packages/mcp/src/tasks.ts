// Tasks for the clients of mcpServe: the `io.modelcontextprotocol/tasks` extension on revision
// 2026-07-28 (SEP-2663: tasks/get, tasks/update, tasks/cancel, `resultType: "task"`) and the
// experimental tasks of 2025-11-25 (SEP-1686: a `task` param, tasks/get, tasks/result, tasks/list,
// tasks/cancel). A task is handed out only after the chain decided: once the tool runs, or once the
// call paused for a person. Its id is this server's own (random, never the upstream's) and it is bound
// to the tenant and principal that created it: anyone else's request names a task that does not exist.

import {
  CLIENT_CAPABILITIES_META_KEY,
  MissingRequiredClientCapabilityError,
  ProtocolError,
  ProtocolErrorCode,
  type CallToolRequest,
  type CallToolResult,
  type Server,
} from '@modelcontextprotocol/server';
import {
  inMemoryTaskRecords,
  staleTask,
  TERMINAL_TASK_STATUSES,
  type DispatchOutcome,
  type Identity,
  type PausedOutcome,
  type TaskRecord,
  type TaskRecordChange,
  type TaskRecordStore,
} from '@toolgate/core';
import type { McpRequestExtra } from './serve';
import type { McpSettled } from './results';
import { TASKS_EXTENSION } from './upstream-tasks';

export { TASKS_EXTENSION };

const RELATED_TASK = 'io.modelcontextprotocol/related-task';

export type McpTaskStatus = TaskRecord['status'];

/** Who may see a task: the tenant and principal whose call created it. */
export interface TaskOwner {
  readonly tenant: string | null;
  readonly principal: string | null;
}

export const ownerOf = (identity: Identity | undefined): TaskOwner => ({
  tenant: identity?.tenant ?? null,
  principal: identity?.principal ?? null,
});

/** A JSON-RPC error, as a failed task carries it. */
export interface TaskError {
  readonly code: number;
  readonly message: string;
  readonly data?: Readonly<Record<string, unknown>>;
}

/** A failed task's error code: the call was refused after its task was handed out (a decline). */
export const TASK_REFUSED = -32003;

/** A failed task's error code: the process running it stopped renewing its lease (it crashed or froze). */
export const TASK_RUNNER_LOST = -32004;

const RUNNER_LOST_MESSAGE =
  'The gateway process running this task stopped before it ended; whether the tool ran is not known. Check before calling it again.';

/** What the code settling a paused call as a task (a gateway's check-in flow) can do with it. */
export interface McpTaskControl {
  readonly taskId: string;
  /** Aborted when the task's owner cancels it (or the server closes). */
  readonly signal: AbortSignal;
  /** The task waits for a person: `inputRequests` are shown to 2026-07-28 clients by tasks/get. */
  inputRequired(
    inputRequests: Readonly<Record<string, unknown>>,
    message: string,
    /** The check-in it waits on, kept with the task. */
    checkInId?: string,
  ): void;
  /** The task runs again (a person decided). */
  working(message: string): void;
  /** Answers the `inputResponses` of the owner's tasks/update. */
  onUpdate(handler: (responses: Readonly<Record<string, unknown>>) => Promise<void> | void): void;
}

/**
 * What the call of a task handed out once its tool started can do through that task: ask its owner
 * the questions the tool's server asked (an upstream task waiting for input, SEP-2663).
 */
export interface RunningTask {
  /**
   * Shows `inputRequests` on the task (input_required, read by tasks/get) and resolves with the
   * owner's answers to them (only their keys) from the first tasks/update answering any of them; the
   * task is working again by then. Rejects when `signal` aborts (a cancel; or the question withdrawn,
   * and the task is working again) or the task's time to live runs out first.
   */
  ask(
    inputRequests: Readonly<Record<string, unknown>>,
    message: string,
    signal: AbortSignal,
  ): Promise<Readonly<Record<string, unknown>>>;
}

/** A task this process runs: what cannot be shared (its abort, the code answering tasks/update). */
interface LocalTask {
  readonly id: string;
  readonly owner: TaskOwner;
  readonly createdAt: string;
  readonly ttlMs: number;
  readonly abort: AbortController;
  // A mirror of what was last written, for the handle the tools/call answers with.
  status: McpTaskStatus;
  statusMessage?: string;
  lastUpdatedAt: string;
  update?: (responses: Readonly<Record<string, unknown>>) => Promise<void> | void;
  // Writes go out in order; the handle is handed out once they landed.
  writes: Promise<void>;
  readonly ended: Promise<void>;
  readonly end: () => void;
}

export interface ServedTasksOptions {
  /** How long a task and its result are kept from creation; default 30 minutes. */
  readonly ttlMs?: number;
  /** Tasks one owner may have that have not ended; default 100. */
  readonly maxLivePerOwner?: number;
  /** The polling interval suggested to clients; default 1000 ms. */
  readonly pollIntervalMs?: number;
  /** Tasks one owner's ended ones are kept up to, within their TTL; the oldest go first. Default 1000. */
  readonly maxKeptPerOwner?: number;
  /**
   * Where tasks are kept. A store shared by several processes (SQLite file, PostgreSQL) lets any of
   * them answer tasks/get, tasks/update and tasks/cancel; the running process then reads it every
   * `sharedPollMs` for a cancel or a form answer that arrived elsewhere. Default: this process's memory.
   */
  readonly store?: TaskRecordStore;
  /** How often a shared store is read for the tasks this process runs; default 500 ms. */
  readonly sharedPollMs?: number;
  /**
   * How long a task in a shared store stays live without its running process renewing it; default
   * 30 000 ms (a positive integer). The running process renews all its tasks in one write every
   * `leaseMs / 6`; any process reading a task not renewed for longer ends it as `failed` with
   * `TASK_RUNNER_LOST`. Needs a store with `renew` and `endStale`; without them tasks have no lease.
   */
  readonly leaseMs?: number;
}

const TERMINAL: ReadonlySet<McpTaskStatus> = TERMINAL_TASK_STATUSES;

/** The tasks one mcpServe has handed out, kept in a `TaskRecordStore` (memory unless one is given). */
export class ServedTasks {
  private readonly local = new Map<string, LocalTask>();
  private readonly store: TaskRecordStore;
  private readonly shared: boolean;
  private readonly sharedPollMs: number;
  private poller: ReturnType<typeof setInterval> | undefined;
  // The running process renews only where the store keeps a lease and others may read its tasks.
  private readonly leased: boolean;
  private readonly renewEveryMs: number;
  private lastReadMs = 0;
  private lastRenewedMs = 0;
  readonly ttlMs: number;
  readonly leaseMs: number;
  readonly maxLivePerOwner: number;
  readonly pollIntervalMs: number;
  readonly maxKeptPerOwner: number;

  constructor(options: ServedTasksOptions = {}) {
    this.maxKeptPerOwner = options.maxKeptPerOwner ?? 1_000;
    this.ttlMs = options.ttlMs ?? 30 * 60_000;
    this.maxLivePerOwner = options.maxLivePerOwner ?? 100;
    this.pollIntervalMs = options.pollIntervalMs ?? 1_000;
    this.store = options.store ?? inMemoryTaskRecords();
    this.shared = options.store !== undefined;
    this.sharedPollMs = options.sharedPollMs ?? 500;
    const leaseMs = options.leaseMs ?? 30_000;
    if (!Number.isInteger(leaseMs) || leaseMs < 1)
      throw new TypeError('ServedTasks: leaseMs must be a positive integer of milliseconds.');
    this.leaseMs = leaseMs;
    this.renewEveryMs = Math.max(1, Math.floor(leaseMs / 6));
    this.leased = this.shared && typeof this.store.renew === 'function';
  }

  /** Whether `owner` may start one more task; at the cap, tasks whose runner stopped are ended first. */
  async hasRoom(owner: TaskOwner): Promise<boolean> {
    if ((await this.store.countLive(owner)) < this.maxLivePerOwner) return true;
    if (this.store.endStale === undefined) return false;
    const now = Date.now();
    if (!(await this.store.list(owner)).some((task) => this.stale(task, now))) return false;
    await this.endStale(owner);
    return (await this.store.countLive(owner)) < this.maxLivePerOwner;
  }

  async create(owner: TaskOwner, status: McpTaskStatus, statusMessage: string): Promise<LocalTask> {
    // Ended tasks hold results: one caller's many quick tasks must not grow the store without bound.
    await this.store.sweep(owner, Math.max(0, this.maxKeptPerOwner - 1), Date.now());
    const now = new Date().toISOString();
    let end!: () => void;
    const over = new Promise<void>((resolve) => (end = resolve));
    const task: LocalTask = {
      id: crypto.randomUUID(),
      owner,
      createdAt: now,
      ttlMs: this.ttlMs,
      lastUpdatedAt: now,
      abort: new AbortController(),
      status,
      statusMessage,
      writes: Promise.resolve(),
      ended: over,
      end,
    };
    await this.store.create({
      id: task.id,
      tenant: owner.tenant,
      principal: owner.principal,
      status,
      statusMessage,
      createdAt: now,
      lastUpdatedAt: now,
      ttlMs: this.ttlMs,
      ...(this.leased ? { renewedAt: Date.parse(now) } : {}),
    });
    this.local.set(task.id, task);
    this.watch();
    return task;
  }

  /** The owner's task; undefined for an unknown id and for anyone else's alike. */
  async find(id: unknown, owner: TaskOwner): Promise<TaskRecord | undefined> {
    if (typeof id !== 'string') return undefined;
    const task = await this.store.get(id);
    return task !== undefined && sameOwner(task, owner) && !expired(task, Date.now())
      ? this.unlessStale(task)
      : undefined;
  }

  async list(owner: TaskOwner): Promise<TaskRecord[]> {
    let listed = await this.store.list(owner);
    const now = Date.now();
    if (listed.some((task) => this.stale(task, now))) {
      await this.endStale(owner);
      listed = await this.store.list(owner);
    }
    return listed.filter((task) => !expired(task, now)).slice(0, this.maxKeptPerOwner);
  }

  /** Changes a task this process runs; a task that ended (a cancel through another process) stays ended. */
  change(task: LocalTask, change: Omit<TaskRecordChange, 'lastUpdatedAt'>): Promise<void> {
    if (TERMINAL.has(task.status)) return task.writes;
    const lastUpdatedAt = new Date().toISOString();
    task.status = change.status;
    task.lastUpdatedAt = lastUpdatedAt;
    if (change.statusMessage !== undefined) task.statusMessage = change.statusMessage;
    else delete task.statusMessage;
    const ends = TERMINAL.has(change.status);
    task.writes = task.writes
      .then(async () => {
        const written = await this.store.update(task.id, { ...change, lastUpdatedAt });
        if (!written && !ends) await this.ended(task);
      })
      .catch(() => undefined)
      .finally(() => {
        if (ends) this.forget(task);
      });
    return task.writes;
  }

  /** Cancels the owner's task, here or in the process that runs it (which reads the store). */
  async cancel(record: TaskRecord): Promise<TaskRecord> {
    const task = this.local.get(record.id);
    const message = 'The task was cancelled by its requester.';
    if (task !== undefined) {
      await this.change(task, { status: 'cancelled', statusMessage: message });
      task.abort.abort(new Error('task cancelled'));
    } else
      await this.store.update(record.id, {
        status: 'cancelled',
        statusMessage: message,
        lastUpdatedAt: new Date().toISOString(),
      });
    return (await this.store.get(record.id)) ?? record;
  }

  /** Passes the owner's tasks/update answers to the code settling the task, here or where it runs. */
  async respond(record: TaskRecord, responses: Readonly<Record<string, unknown>>): Promise<void> {
    if (record.status !== 'input_required') return;
    const task = this.local.get(record.id);
    if (task !== undefined) await task.update?.(responses);
    else await this.store.respond(record.id, responses);
  }

  /** Resolves when the task ended (or `signal` aborts): at once here, by reading the store elsewhere. */
  async waitEnded(id: string, signal: AbortSignal): Promise<TaskRecord | undefined> {
    const aborted = new Promise<void>((resolve) =>
      signal.addEventListener('abort', () => resolve(), { once: true }),
    );
    for (;;) {
      const stored = await this.store.get(id);
      const record = stored === undefined ? undefined : await this.unlessStale(stored);
      if (record === undefined || TERMINAL.has(record.status) || signal.aborted) return record;
      const task = this.local.get(id);
      await Promise.race([
        aborted,
        task !== undefined ? task.ended : new Promise((resolve) => setTimeout(resolve, this.pollIntervalMs)),
      ]);
    }
  }

  /** Cancels every task this process runs (the server closes). */
  async close(): Promise<void> {
    if (this.poller !== undefined) clearInterval(this.poller);
    this.poller = undefined;
    await Promise.all(
      [...this.local.values()].map(async (task) => {
        await this.change(task, {
          status: 'cancelled',
          statusMessage: 'The task was cancelled: the server closed.',
        });
        task.abort.abort(new Error('task cancelled'));
      }),
    );
  }

  // Reads are polled: only a task found stale costs a write.
  private stale(task: TaskRecord, now: number): boolean {
    return this.store.endStale !== undefined && staleTask(task, now - this.leaseMs);
  }

  /** The task as read, or as ended when its runner stopped renewing it. */
  private async unlessStale(task: TaskRecord): Promise<TaskRecord> {
    if (!this.stale(task, Date.now())) return task;
    await this.endStale(task);
    return (await this.store.get(task.id)) ?? task;
  }

  // One conditional write for all of the owner's stale tasks: a renewal racing it wins.
  private async endStale(owner: TaskOwner): Promise<void> {
    const now = Date.now();
    await this.store.endStale?.({ tenant: owner.tenant, principal: owner.principal }, now - this.leaseMs, {
      statusMessage: RUNNER_LOST_MESSAGE,
      lastUpdatedAt: new Date(now).toISOString(),
      error: { code: TASK_RUNNER_LOST, message: RUNNER_LOST_MESSAGE },
    });
  }

  // A task that ended in the store while it runs here was cancelled through another process.
  private async ended(task: LocalTask): Promise<void> {
    const record = await this.store.get(task.id);
    if (record !== undefined && !TERMINAL.has(record.status)) return;
    task.status = record?.status ?? 'cancelled';
    this.forget(task);
    task.abort.abort(new Error('task cancelled'));
  }

  private forget(task: LocalTask): void {
    this.local.delete(task.id);
    task.end();
    if (this.local.size === 0 && this.poller !== undefined) {
      clearInterval(this.poller);
      this.poller = undefined;
    }
  }

  // Only a shared store can change under a running task: then it is read for cancels and answers,
  // and the lease of the tasks running here is renewed.
  private watch(): void {
    if (!this.shared || this.poller !== undefined) return;
    let reading = false;
    const tickMs = this.leased ? Math.min(this.sharedPollMs, this.renewEveryMs) : this.sharedPollMs;
    this.poller = setInterval(() => {
      if (reading) return;
      reading = true;
      void this.tick(tickMs).finally(() => (reading = false));
    }, tickMs);
    this.poller.unref?.();
  }

  // Half a tick of slack: a timer firing a millisecond early must not skip a renewal or a read.
  private async tick(tickMs: number): Promise<void> {
    const now = Date.now();
    const due = (last: number, every: number) => now - last >= every - tickMs / 2;
    if (this.leased && due(this.lastRenewedMs, this.renewEveryMs)) {
      this.lastRenewedMs = now;
      await this.renew(now);
    }
    if (due(this.lastReadMs, this.sharedPollMs)) {
      this.lastReadMs = now;
      await this.readShared();
    }
  }

  // One write for every task running here; an ended one is passed over by the store.
  private async renew(now: number): Promise<void> {
    const ids = [...this.local.keys()];
    if (ids.length === 0) return;
    try {
      await this.store.renew?.(ids, now);
    } catch {
      // A store that cannot answer now is written again on the next renewal.
    }
  }

  private async readShared(): Promise<void> {
    for (const task of [...this.local.values()]) {
      try {
        const record = await this.store.get(task.id);
        if (record === undefined || TERMINAL.has(record.status)) {
          if (!TERMINAL.has(task.status)) await this.ended(task);
          continue;
        }
        if (record.inputResponses !== undefined && record.status === 'input_required') {
          const responses = await this.store.takeResponses(task.id);
          if (responses !== undefined) await task.update?.(responses);
        }
      } catch {
        // A store that cannot answer now is read again on the next tick.
      }
    }
  }
}

// Reads never sweep: an ended task past its TTL reads as gone until the next create sweeps it.
const expired = (task: TaskRecord, now: number): boolean =>
  TERMINAL.has(task.status) && Date.parse(task.createdAt) + task.ttlMs <= now;

const sameOwner = (a: TaskOwner, b: TaskOwner): boolean =>
  a.tenant === b.tenant && a.principal === b.principal;

/** Whether this tools/call asked for a task: the 2026-07-28 extension declared, or a 2025-11-25 `task` param. */
export function taskAsked(request: CallToolRequest, extra: McpRequestExtra, modern: boolean): boolean {
  if (modern) {
    const declared = extra.mcpReq.envelope?.[
      CLIENT_CAPABILITIES_META_KEY as keyof typeof extra.mcpReq.envelope
    ] as { extensions?: Record<string, unknown> } | undefined;
    return typeof declared?.extensions?.[TASKS_EXTENSION] === 'object';
  }
  const task = (request.params as { task?: unknown }).task;
  return typeof task === 'object' && task !== null;
}

/** Whether a tool's listed `execution` lets it run as a task. */
export function taskCapable(execution: unknown): boolean {
  const support = (execution as { taskSupport?: unknown } | undefined)?.taskSupport;
  return support === 'required' || support === 'optional';
}

/** What one tools/call asking for a task needs from mcpServe. */
export interface TaskCall {
  readonly tasks: ServedTasks;
  readonly owner: TaskOwner;
  readonly modern: boolean;
  /** The tool may run as a task (its `execution`): a handle is handed out once it runs. */
  readonly capable: boolean;
  /** Runs the chain; the signal is the request's until a task is handed out, then the task's. */
  dispatch(signal: AbortSignal): Promise<DispatchOutcome>;
  /** Resolves when the tool starts to run (an imported tool sends its call upstream). */
  readonly started: Promise<void>;
  /** Resolves when the upstream answered with a task of its own (2026-07-28: tools list no `execution`). */
  readonly upstreamTask: Promise<void>;
  readonly requestSignal: AbortSignal;
  /** Settles a pause as a task; absent: a pause is answered as without a task. */
  readonly settlePaused?: (first: PausedOutcome, task: McpTaskControl) => Promise<McpSettled>;
  /** The tool result a settled call answers with (and its report); called once per task. */
  finish(settled: McpSettled, first: DispatchOutcome): CallToolResult;
  /** Releases what the call held; called once when the task ends. */
  release(): void;
  /**
   * Told once what the running call can ask through: the task handed out (when the tool started, or
   * for a paused call), or undefined when the call is answered without one.
   */
  readonly running?: (task: RunningTask | undefined) => void;
}

export type TaskCallAnswer =
  | { readonly kind: 'task'; readonly result: Record<string, unknown> }
  | { readonly kind: 'plain'; readonly first: DispatchOutcome };

/**
 * Dispatches a call that asked for a task. The chain decides first: a refusal (or a result that came
 * before the tool was seen to start) is answered as it is; a tool that starts to run, or a pause that
 * can be settled as a task, gets a task handle, and the call goes on in the background.
 */
export async function dispatchAsTask(call: TaskCall): Promise<TaskCallAnswer> {
  const { tasks, owner } = call;
  const own = new AbortController();
  const follow = () => own.abort(call.requestSignal.reason);
  call.requestSignal.addEventListener('abort', follow, { once: true });
  const dispatching = call.dispatch(own.signal);
  const first = await Promise.race([
    dispatching,
    call.capable ? call.started.then(() => 'started' as const) : new Promise<never>(() => undefined),
    call.upstreamTask.then(() => 'started' as const),
  ]);
  const detach = (task: LocalTask) => {
    call.requestSignal.removeEventListener('abort', follow);
    task.abort.signal.addEventListener('abort', () => own.abort(task.abort.signal.reason), { once: true });
  };
  const failed = (task: LocalTask, error?: unknown) => fail(tasks, task, taskErrorOf(error));
  if (first === 'started') {
    let task: LocalTask;
    try {
      task = await tasks.create(owner, 'working', TOOL_RUNNING);
    } catch (error) {
      // No task could be recorded: the call still runs, answered as without a task.
      call.requestSignal.removeEventListener('abort', follow);
      void error;
      call.running?.(undefined);
      return { kind: 'plain', first: await dispatching };
    }
    detach(task);
    call.running?.(runningTask(tasks, task));
    void dispatching
      .then((outcome) => conclude(tasks, task, call.finish({ kind: 'outcome', outcome }, outcome), false))
      .catch((error: unknown) => failed(task, error))
      .finally(() => call.release());
    return { kind: 'task', result: handle(task, call.modern, tasks.pollIntervalMs) };
  }
  if (first.kind !== 'paused' || call.settlePaused === undefined) {
    call.running?.(undefined);
    call.requestSignal.removeEventListener('abort', follow);
    return { kind: 'plain', first };
  }
  let task: LocalTask;
  try {
    task = await tasks.create(owner, 'input_required', `'${first.toolName}' awaits a person's approval.`);
  } catch {
    call.running?.(undefined);
    call.requestSignal.removeEventListener('abort', follow);
    return { kind: 'plain', first };
  }
  detach(task);
  // Once approved, the tool runs under this task and may ask through it too.
  call.running?.(runningTask(tasks, task));
  // The handle is handed out once the task says what it waits for (or ended), so it is accurate.
  let markAsked!: () => void;
  const asked = new Promise<void>((resolve) => (markAsked = resolve));
  const control: McpTaskControl = {
    taskId: task.id,
    signal: task.abort.signal,
    inputRequired(inputRequests, message, checkInId) {
      void tasks
        .change(task, {
          status: 'input_required',
          statusMessage: message,
          inputRequests,
          ...(checkInId !== undefined ? { checkInId } : {}),
        })
        .finally(markAsked);
    },
    working(message) {
      void tasks.change(task, { status: 'working', statusMessage: message }).finally(markAsked);
    },
    onUpdate(handler) {
      task.update = handler;
    },
  };
  void call
    .settlePaused(first, control)
    .then((settled) => conclude(tasks, task, call.finish(settled, first), true))
    .catch((error: unknown) => failed(task, error))
    .finally(() => {
      markAsked();
      call.release();
    });
  await asked;
  return { kind: 'task', result: handle(task, call.modern, tasks.pollIntervalMs) };
}

/** How a task whose result could not be made fails: the client's missing capabilities by name, else nothing. */
function taskErrorOf(error: unknown): TaskError {
  if (error instanceof MissingRequiredClientCapabilityError)
    return {
      code: error.code,
      message:
        "The tool's MCP server asked for input this client did not declare it can answer; declare the capabilities in data.requiredCapabilities and call again",
      data: { requiredCapabilities: error.requiredCapabilities },
    };
  return { code: ProtocolErrorCode.InternalError, message: 'The call failed.' };
}

const TOOL_RUNNING = 'The tool is running.';

function runningTask(tasks: ServedTasks, task: LocalTask): RunningTask {
  return {
    ask(inputRequests, message, signal) {
      const keys = Object.keys(inputRequests);
      // A paused call's task answered its approval through a handler of its own: it is put back.
      const before = task.update;
      return new Promise((resolve, reject) => {
        const done = () => {
          clearTimeout(expiry);
          signal.removeEventListener('abort', aborted);
          if (task.update !== answer) return;
          if (before !== undefined) task.update = before;
          else delete task.update;
        };
        const aborted = () => {
          done();
          // Withdrawn (the question is gone, the tool goes on): no longer waiting. A cancelled task
          // stays cancelled.
          void tasks.change(task, { status: 'working', statusMessage: TOOL_RUNNING });
          reject(new Error('the task ended while it waited for its requester'));
        };
        const answer = async (responses: Readonly<Record<string, unknown>>) => {
          // Only the keys asked travel on; an update answering none of them leaves the task waiting.
          const given = Object.fromEntries(
            keys.filter((key) => Object.hasOwn(responses, key)).map((key) => [key, responses[key]]),
          );
          if (Object.keys(given).length === 0 || task.update !== answer) return;
          done();
          await tasks.change(task, { status: 'working', statusMessage: TOOL_RUNNING });
          resolve(given);
        };
        const expiry = setTimeout(
          () => {
            done();
            reject(new Error("the task's requester did not answer before the task's time to live"));
          },
          Math.max(0, Date.parse(task.createdAt) + task.ttlMs - Date.now()),
        );
        expiry.unref?.();
        if (signal.aborted) return aborted();
        signal.addEventListener('abort', aborted, { once: true });
        task.update = answer;
        void tasks.change(task, { status: 'input_required', statusMessage: message, inputRequests });
      });
    },
  };
}

// A paused call refused in the end (declined, withdrawn, expired) fails with the refusal as its error;
// everything else, a tool's own error included, completes with the tool result.
function conclude(
  tasks: ServedTasks,
  task: LocalTask,
  result: CallToolResult,
  paused: boolean,
): Promise<void> {
  const refusal = (result._meta as Record<string, unknown> | undefined)?.['io.toolgate/refusal'] as
    Record<string, unknown> | undefined;
  if (paused && refusal !== undefined) {
    const text = result.content.map((block) => (block.type === 'text' ? block.text : '')).join('\n');
    return fail(tasks, task, { code: TASK_REFUSED, message: text, data: { 'io.toolgate/refusal': refusal } });
  }
  return tasks.change(task, {
    status: 'completed',
    statusMessage: result.isError === true ? 'The tool answered with an error.' : 'Done.',
    result: result as unknown as Record<string, unknown>,
  });
}

function fail(tasks: ServedTasks, task: LocalTask, error: TaskError): Promise<void> {
  return tasks.change(task, { status: 'failed', statusMessage: error.message, error });
}

/** The task as the tools/call answer hands it out: CreateTaskResult of the client's revision. */
function handle(task: LocalTask, modern: boolean, pollIntervalMs: number): Record<string, unknown> {
  const shown = {
    id: task.id,
    status: task.status,
    ...(task.statusMessage !== undefined ? { statusMessage: task.statusMessage } : {}),
    createdAt: task.createdAt,
    lastUpdatedAt: task.lastUpdatedAt,
    ttlMs: task.ttlMs,
  };
  return modern
    ? { resultType: 'task', ...modernTask(shown, pollIntervalMs, false) }
    : // The SDK v2 server checks a 2025-11-25 tools/call answer as a CallToolResult: an empty `content`
      // passes it, and a client reading CreateTaskResult reads `task` (docs/design-notes.md).
      { task: legacyTask(shown, pollIntervalMs), content: [] };
}

type Shown = Pick<TaskRecord, 'id' | 'status' | 'statusMessage' | 'createdAt' | 'lastUpdatedAt' | 'ttlMs'> &
  Partial<Pick<TaskRecord, 'inputRequests' | 'result' | 'error'>>;

function modernTask(task: Shown, pollIntervalMs: number, detailed: boolean): Record<string, unknown> {
  return {
    taskId: task.id,
    status: task.status,
    ...(task.statusMessage !== undefined ? { statusMessage: task.statusMessage } : {}),
    createdAt: task.createdAt,
    lastUpdatedAt: task.lastUpdatedAt,
    ttlMs: task.ttlMs,
    pollIntervalMs,
    ...(detailed && task.status === 'input_required' ? { inputRequests: task.inputRequests ?? {} } : {}),
    ...(detailed && task.status === 'completed' && task.result !== undefined ? { result: task.result } : {}),
    ...(detailed && task.status === 'failed' && task.error !== undefined ? { error: task.error } : {}),
  };
}

function legacyTask(task: Shown, pollIntervalMs: number): Record<string, unknown> {
  return {
    taskId: task.id,
    status: task.status,
    ...(task.statusMessage !== undefined ? { statusMessage: task.statusMessage } : {}),
    createdAt: task.createdAt,
    lastUpdatedAt: task.lastUpdatedAt,
    ttl: task.ttlMs,
    pollInterval: pollIntervalMs,
  };
}

// The SDK has no params schema for these methods on every revision: each is checked here.
const taskIdParams = {
  '~standard': {
    version: 1 as const,
    vendor: 'toolgate',
    validate: (value: unknown) =>
      typeof value === 'object' &&
      value !== null &&
      typeof (value as { taskId?: unknown }).taskId === 'string'
        ? { value: value as { taskId: string; inputResponses?: unknown } }
        : { issues: [{ message: 'expected params { taskId: string }' }] },
  },
};
const anyParams = {
  '~standard': {
    version: 1 as const,
    vendor: 'toolgate',
    validate: (value: unknown) => ({ value: (value ?? {}) as Record<string, unknown> }),
  },
};

/** The same answer for a task that does not exist and for one that is not the caller's. */
const unknownTask = (): ProtocolError =>
  new ProtocolError(
    ProtocolErrorCode.InvalidParams,
    'Unknown task: no task with this id exists for this caller',
  );

export interface TaskMethodsOptions {
  readonly tasks: ServedTasks;
  /** The caller's identity; a throw answers as for an unknown task. */
  identify(extra: McpRequestExtra): Promise<Identity | undefined>;
  isModern(extra: McpRequestExtra): boolean;
}

/** tasks/get, tasks/update, tasks/cancel (both revisions), tasks/result and tasks/list (2025-11-25). */
export function serveTaskMethods(server: Server, options: TaskMethodsOptions): void {
  const { tasks } = options;
  const find = async (taskId: unknown, extra: McpRequestExtra): Promise<TaskRecord> => {
    let identity: Identity | undefined;
    try {
      identity = await options.identify(extra);
    } catch {
      throw unknownTask();
    }
    const task = await tasks.find(taskId, ownerOf(identity));
    if (task === undefined) throw unknownTask();
    return task;
  };
  const registerRaw = server.setRequestHandler.bind(server) as unknown as (
    method: string,
    schemas: { params: unknown },
    handler: (params: Record<string, unknown>, extra: McpRequestExtra) => Promise<Record<string, unknown>>,
  ) => void;
  // A store's own error names its file or database: the client is told only that it could not answer.
  const register: typeof registerRaw = (method, schemas, handler) =>
    registerRaw(method, schemas, async (params, extra) => {
      try {
        return await handler(params, extra);
      } catch (error) {
        if (error instanceof ProtocolError) throw error;
        throw new ProtocolError(
          ProtocolErrorCode.InternalError,
          'The task store could not answer; retry later',
        );
      }
    });
  register('tasks/get', { params: taskIdParams }, async (params, extra) => {
    const task = await find(params['taskId'], extra);
    return options.isModern(extra)
      ? { resultType: 'complete', ...modernTask(task, tasks.pollIntervalMs, true) }
      : legacyTask(task, tasks.pollIntervalMs);
  });
  register('tasks/update', { params: taskIdParams }, async (params, extra) => {
    const task = await find(params['taskId'], extra);
    // The SDK lifts a 2026-07-28 request's `inputResponses` out of its params.
    const responses = extra.mcpReq.inputResponses ?? params['inputResponses'];
    if (typeof responses === 'object' && responses !== null)
      await tasks.respond(task, responses as Record<string, unknown>);
    return { resultType: 'complete' };
  });
  register('tasks/cancel', { params: taskIdParams }, async (params, extra) => {
    const task = await find(params['taskId'], extra);
    if (options.isModern(extra)) {
      await tasks.cancel(task);
      return { resultType: 'complete' };
    }
    if (TERMINAL.has(task.status))
      throw new ProtocolError(
        ProtocolErrorCode.InvalidParams,
        `Cannot cancel task: it is already ${task.status}`,
      );
    return legacyTask(await tasks.cancel(task), tasks.pollIntervalMs);
  });
  register('tasks/result', { params: taskIdParams }, async (params, extra) => {
    const found = await find(params['taskId'], extra);
    // Blocks until the task ends, as 2025-11-25 asks; the client's own timeout bounds the wait.
    const task = (await tasks.waitEnded(found.id, extra.mcpReq.signal)) ?? found;
    const related = { [RELATED_TASK]: { taskId: task.id } };
    if (task.status === 'completed' && task.result !== undefined)
      return { ...task.result, _meta: { ...(task.result['_meta'] as object | undefined), ...related } };
    if (task.status === 'failed' && task.error !== undefined)
      throw new ProtocolError(task.error.code, task.error.message, task.error.data);
    throw new ProtocolError(ProtocolErrorCode.InvalidParams, `The task has no result: it is ${task.status}`);
  });
  register('tasks/list', { params: anyParams }, async (_params, extra) => {
    let identity: Identity | undefined;
    try {
      identity = await options.identify(extra);
    } catch {
      return { tasks: [] };
    }
    const owned = await tasks.list(ownerOf(identity));
    return { tasks: owned.map((task) => legacyTask(task, tasks.pollIntervalMs)) };
  });
}
