// Tasks for the clients of mcpServe: the `io.modelcontextprotocol/tasks` extension on revision
// 2026-07-28 (SEP-2663: tasks/get, tasks/update, tasks/cancel, `resultType: "task"`) and the
// experimental tasks of 2025-11-25 (SEP-1686: a `task` param, tasks/get, tasks/result, tasks/list,
// tasks/cancel). A task is handed out only after the chain decided: once the tool runs, or once the
// call paused for a person. Its id is this server's own (random, never the upstream's) and it is bound
// to the tenant and principal that created it: anyone else's request names a task that does not exist.

import {
  CLIENT_CAPABILITIES_META_KEY,
  ProtocolError,
  ProtocolErrorCode,
  type CallToolRequest,
  type CallToolResult,
  type Server,
} from '@modelcontextprotocol/server';
import type { DispatchOutcome, Identity, PausedOutcome } from '@toolgate/core';
import type { McpRequestExtra } from './serve';
import type { McpSettled } from './results';
import { TASKS_EXTENSION } from './upstream-tasks';

export { TASKS_EXTENSION };

const RELATED_TASK = 'io.modelcontextprotocol/related-task';

export type McpTaskStatus = 'working' | 'input_required' | 'completed' | 'failed' | 'cancelled';

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

/** What the code settling a paused call as a task (a gateway's check-in flow) can do with it. */
export interface McpTaskControl {
  readonly taskId: string;
  /** Aborted when the task's owner cancels it (or the server closes). */
  readonly signal: AbortSignal;
  /** The task waits for a person: `inputRequests` are shown to 2026-07-28 clients by tasks/get. */
  inputRequired(inputRequests: Readonly<Record<string, unknown>>, message: string): void;
  /** The task runs again (a person decided). */
  working(message: string): void;
  /** Answers the `inputResponses` of the owner's tasks/update. */
  onUpdate(handler: (responses: Readonly<Record<string, unknown>>) => Promise<void> | void): void;
}

interface TaskEntry {
  readonly id: string;
  readonly owner: TaskOwner;
  readonly createdAt: string;
  readonly ttlMs: number;
  readonly abort: AbortController;
  status: McpTaskStatus;
  statusMessage?: string;
  lastUpdatedAt: string;
  inputRequests?: Readonly<Record<string, unknown>>;
  result?: CallToolResult;
  error?: TaskError;
  update?: (responses: Readonly<Record<string, unknown>>) => Promise<void> | void;
  ended: Promise<void>;
  end: () => void;
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
}

const TERMINAL: ReadonlySet<McpTaskStatus> = new Set(['completed', 'failed', 'cancelled']);

/** The tasks one mcpServe has handed out, in memory (a process's own: see docs/design-notes.md). */
export class ServedTasks {
  private readonly tasks = new Map<string, TaskEntry>();
  readonly ttlMs: number;
  readonly maxLivePerOwner: number;
  readonly pollIntervalMs: number;
  readonly maxKeptPerOwner: number;

  constructor(options: ServedTasksOptions = {}) {
    this.maxKeptPerOwner = options.maxKeptPerOwner ?? 1_000;
    this.ttlMs = options.ttlMs ?? 30 * 60_000;
    this.maxLivePerOwner = options.maxLivePerOwner ?? 100;
    this.pollIntervalMs = options.pollIntervalMs ?? 1_000;
  }

  /** Whether `owner` may start one more task. */
  hasRoom(owner: TaskOwner): boolean {
    this.sweep();
    let live = 0;
    for (const task of this.tasks.values())
      if (sameOwner(task.owner, owner) && !TERMINAL.has(task.status)) live++;
    return live < this.maxLivePerOwner;
  }

  create(owner: TaskOwner, status: McpTaskStatus, statusMessage: string): TaskEntry {
    this.sweep();
    // Ended tasks hold results: one caller's many quick tasks must not grow memory without bound.
    const ended = [...this.tasks.values()].filter(
      (task) => sameOwner(task.owner, owner) && TERMINAL.has(task.status),
    );
    for (const task of ended.slice(0, Math.max(0, ended.length - this.maxKeptPerOwner + 1)))
      this.tasks.delete(task.id);
    const now = new Date().toISOString();
    let end!: () => void;
    const over = new Promise<void>((resolve) => (end = resolve));
    const task: TaskEntry = {
      id: crypto.randomUUID(),
      owner,
      createdAt: now,
      ttlMs: this.ttlMs,
      lastUpdatedAt: now,
      abort: new AbortController(),
      status,
      statusMessage,
      ended: over,
      end,
    };
    this.tasks.set(task.id, task);
    return task;
  }

  /** The owner's task; undefined for an unknown id and for anyone else's alike. */
  find(id: unknown, owner: TaskOwner): TaskEntry | undefined {
    if (typeof id !== 'string') return undefined;
    this.sweep();
    const task = this.tasks.get(id);
    return task !== undefined && sameOwner(task.owner, owner) ? task : undefined;
  }

  list(owner: TaskOwner): TaskEntry[] {
    this.sweep();
    return [...this.tasks.values()].filter((task) => sameOwner(task.owner, owner));
  }

  /** Cancels every task that has not ended (the server closes). */
  close(): void {
    for (const task of this.tasks.values()) if (!TERMINAL.has(task.status)) cancelTask(task);
  }

  // A task is kept for its TTL from creation, and never dropped while it runs.
  private sweep(): void {
    const now = Date.now();
    for (const [id, task] of this.tasks)
      if (TERMINAL.has(task.status) && Date.parse(task.createdAt) + task.ttlMs <= now) this.tasks.delete(id);
  }
}

const sameOwner = (a: TaskOwner, b: TaskOwner): boolean =>
  a.tenant === b.tenant && a.principal === b.principal;

function setStatus(task: TaskEntry, status: McpTaskStatus, statusMessage?: string): void {
  if (TERMINAL.has(task.status)) return;
  task.status = status;
  if (statusMessage !== undefined) task.statusMessage = statusMessage;
  else delete task.statusMessage;
  if (status !== 'input_required') delete task.inputRequests;
  task.lastUpdatedAt = new Date().toISOString();
  if (TERMINAL.has(status)) task.end();
}

function cancelTask(task: TaskEntry): void {
  setStatus(task, 'cancelled', 'The task was cancelled by its requester.');
  task.abort.abort(new Error('task cancelled'));
}

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
  const detach = (task: TaskEntry) => {
    call.requestSignal.removeEventListener('abort', follow);
    task.abort.signal.addEventListener('abort', () => own.abort(task.abort.signal.reason), { once: true });
  };
  if (first === 'started') {
    const task = tasks.create(owner, 'working', 'The tool is running.');
    detach(task);
    void dispatching
      .then((outcome) => conclude(task, call.finish({ kind: 'outcome', outcome }, outcome), false))
      .catch(() => fail(task, { code: ProtocolErrorCode.InternalError, message: 'The call failed.' }))
      .finally(() => call.release());
    return { kind: 'task', result: handle(task, call.modern, tasks.pollIntervalMs) };
  }
  if (first.kind !== 'paused' || call.settlePaused === undefined) {
    call.requestSignal.removeEventListener('abort', follow);
    return { kind: 'plain', first };
  }
  const task = tasks.create(owner, 'input_required', `'${first.toolName}' awaits a person's approval.`);
  detach(task);
  // The handle is handed out once the task says what it waits for (or ended), so it is accurate.
  let markAsked!: () => void;
  const asked = new Promise<void>((resolve) => (markAsked = resolve));
  const control: McpTaskControl = {
    taskId: task.id,
    signal: task.abort.signal,
    inputRequired(inputRequests, message) {
      setStatus(task, 'input_required', message);
      if (task.status === 'input_required') task.inputRequests = inputRequests;
      markAsked();
    },
    working(message) {
      setStatus(task, 'working', message);
      markAsked();
    },
    onUpdate(handler) {
      task.update = handler;
    },
  };
  void call
    .settlePaused(first, control)
    .then((settled) => conclude(task, call.finish(settled, first), true))
    .catch(() => fail(task, { code: ProtocolErrorCode.InternalError, message: 'The call failed.' }))
    .finally(() => {
      markAsked();
      call.release();
    });
  await asked;
  return { kind: 'task', result: handle(task, call.modern, tasks.pollIntervalMs) };
}

// A paused call refused in the end (declined, withdrawn, expired) fails with the refusal as its error;
// everything else, a tool's own error included, completes with the tool result.
function conclude(task: TaskEntry, result: CallToolResult, paused: boolean): void {
  if (TERMINAL.has(task.status)) return;
  const refusal = (result._meta as Record<string, unknown> | undefined)?.['io.toolgate/refusal'] as
    Record<string, unknown> | undefined;
  if (paused && refusal !== undefined) {
    const text = result.content.map((block) => (block.type === 'text' ? block.text : '')).join('\n');
    fail(task, { code: TASK_REFUSED, message: text, data: { 'io.toolgate/refusal': refusal } });
    return;
  }
  task.result = result;
  setStatus(task, 'completed', result.isError === true ? 'The tool answered with an error.' : 'Done.');
}

function fail(task: TaskEntry, error: TaskError): void {
  if (TERMINAL.has(task.status)) return;
  task.error = error;
  setStatus(task, 'failed', error.message);
}

/** The task as the tools/call answer hands it out: CreateTaskResult of the client's revision. */
function handle(task: TaskEntry, modern: boolean, pollIntervalMs: number): Record<string, unknown> {
  return modern
    ? { resultType: 'task', ...modernTask(task, pollIntervalMs, false) }
    : // The SDK v2 server checks a 2025-11-25 tools/call answer as a CallToolResult: an empty `content`
      // passes it, and a client reading CreateTaskResult reads `task` (docs/design-notes.md).
      { task: legacyTask(task, pollIntervalMs), content: [] };
}

function modernTask(task: TaskEntry, pollIntervalMs: number, detailed: boolean): Record<string, unknown> {
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

function legacyTask(task: TaskEntry, pollIntervalMs: number): Record<string, unknown> {
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
  const find = async (taskId: unknown, extra: McpRequestExtra): Promise<TaskEntry> => {
    let identity: Identity | undefined;
    try {
      identity = await options.identify(extra);
    } catch {
      throw unknownTask();
    }
    const task = tasks.find(taskId, ownerOf(identity));
    if (task === undefined) throw unknownTask();
    return task;
  };
  const register = server.setRequestHandler.bind(server) as unknown as (
    method: string,
    schemas: { params: unknown },
    handler: (params: Record<string, unknown>, extra: McpRequestExtra) => Promise<Record<string, unknown>>,
  ) => void;
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
    if (task.status === 'input_required' && typeof responses === 'object' && responses !== null)
      await task.update?.(responses as Record<string, unknown>);
    return { resultType: 'complete' };
  });
  register('tasks/cancel', { params: taskIdParams }, async (params, extra) => {
    const task = await find(params['taskId'], extra);
    if (options.isModern(extra)) {
      cancelTask(task);
      return { resultType: 'complete' };
    }
    if (TERMINAL.has(task.status))
      throw new ProtocolError(
        ProtocolErrorCode.InvalidParams,
        `Cannot cancel task: it is already ${task.status}`,
      );
    cancelTask(task);
    return legacyTask(task, tasks.pollIntervalMs);
  });
  register('tasks/result', { params: taskIdParams }, async (params, extra) => {
    const task = await find(params['taskId'], extra);
    // Blocks until the task ends, as 2025-11-25 asks; the client's own timeout bounds the wait.
    await Promise.race([
      task.ended,
      new Promise<void>((resolve) =>
        extra.mcpReq.signal.addEventListener('abort', () => resolve(), { once: true }),
      ),
    ]);
    const related = { [RELATED_TASK]: { taskId: task.id } };
    if (task.status === 'completed' && task.result !== undefined)
      return { ...task.result, _meta: { ...task.result._meta, ...related } };
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
    return { tasks: tasks.list(ownerOf(identity)).map((task) => legacyTask(task, tasks.pollIntervalMs)) };
  });
}
