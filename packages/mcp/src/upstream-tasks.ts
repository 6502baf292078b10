// An upstream tool whose `execution.taskSupport` is 'required' cannot be called plainly: the server
// answers such a call with an error. On revision 2025-11-25 (the experimental tasks of SEP-1686, which
// the SDK v2 carries as types only) the call asks for a task, polls `tasks/get` until the task ends
// and reads its result with `tasks/result`; cancelling the call cancels the upstream task. The caller
// sees one tools/call that took as long as the task did.

import { setTimeout as delay } from 'node:timers/promises';
import type { CallToolResult, Client, RequestOptions, Transport } from '@modelcontextprotocol/client';

/** The tool's listed `execution`, as far as it decides how it is called. */
export function requiresTask(execution: unknown): boolean {
  return (
    typeof execution === 'object' &&
    execution !== null &&
    (execution as { taskSupport?: unknown }).taskSupport === 'required'
  );
}

/** Whether the upstream server takes task-augmented tools/call on revision 2025-11-25. */
export function upstreamTakesTasks(client: Client): boolean {
  const tasks = (client.getServerCapabilities() as { tasks?: { requests?: { tools?: { call?: unknown } } } })
    ?.tasks;
  return typeof tasks?.requests?.tools?.call === 'object';
}

type Loose = Record<string, unknown>;

// The SDK has no result schema for the 2025-11-25 task methods; each answer is checked here instead.
const anyResult = {
  '~standard': {
    version: 1 as const,
    vendor: 'toolgate',
    validate: (value: unknown) =>
      typeof value === 'object' && value !== null && !Array.isArray(value)
        ? { value: value as Loose }
        : { issues: [{ message: 'expected an object' }] },
    types: undefined as unknown as { input: Loose; output: Loose },
  },
};

const TERMINAL = new Set(['completed', 'failed', 'cancelled']);
// An upstream's pollInterval is a hint; it is kept within these bounds.
const MIN_POLL_MS = 100;
const MAX_POLL_MS = 5_000;
/** How long an upstream task is asked to keep its result. */
const TASK_TTL_MS = 10 * 60_000;

/** An upstream that answered a task request with something that is not a task. */
export class UpstreamTaskError extends Error {
  override readonly name = 'UpstreamTaskError';
}

export interface UpstreamTaskCall {
  readonly name: string;
  readonly arguments: Readonly<Record<string, unknown>>;
  readonly _meta?: Readonly<Record<string, unknown>>;
}

/** Runs `call` upstream as a task and returns its final CallToolResult. */
export async function callAsUpstreamTask(
  client: Client,
  call: UpstreamTaskCall,
  options: { readonly signal: AbortSignal; readonly timeoutMs: number },
): Promise<CallToolResult> {
  const requestOptions: RequestOptions = { signal: options.signal, timeout: options.timeoutMs };
  const created = await client.request(
    {
      method: 'tools/call',
      params: { ...call, arguments: { ...call.arguments }, task: { ttl: TASK_TTL_MS } },
    } as never,
    anyResult,
    requestOptions,
  );
  const task = created['task'] as Loose | undefined;
  const taskId = task?.['taskId'];
  if (typeof taskId !== 'string' || taskId === '')
    throw new UpstreamTaskError('the MCP server answered a task-augmented tools/call without a task');
  let status = String(task!['status']);
  let pollMs = clampPoll(task!['pollInterval']);
  // A task outlives one request's timeout by design; it is still bounded.
  const deadline = Date.now() + Math.max(options.timeoutMs, TASK_TTL_MS);
  try {
    // input_required: the server's questions travel on the tasks/result stream, so it is read now.
    while (!TERMINAL.has(status) && status !== 'input_required') {
      if (Date.now() >= deadline)
        throw new UpstreamTaskError("the MCP server's task did not end before its time to live");
      await delay(pollMs, undefined, { signal: options.signal }).catch(() => undefined);
      options.signal.throwIfAborted();
      const got = await client.request(
        { method: 'tasks/get', params: { taskId } } as never,
        anyResult,
        requestOptions,
      );
      status = String(got['status']);
      pollMs = clampPoll(got['pollInterval'] ?? pollMs);
    }
    if (status === 'cancelled') throw new UpstreamTaskError("the MCP server cancelled the tool's task");
    const result = await client.request(
      { method: 'tasks/result', params: { taskId } } as never,
      anyResult,
      requestOptions,
    );
    if (!Array.isArray(result['content']))
      throw new UpstreamTaskError("the MCP server's task result is not a tool result");
    return result as unknown as CallToolResult;
  } catch (error) {
    if (options.signal.aborted) {
      // The caller gave up: so does the upstream task (best effort; it expires on its own otherwise).
      await client
        .request({ method: 'tasks/cancel', params: { taskId } } as never, anyResult, { timeout: 5_000 })
        .catch(() => undefined);
    }
    throw error;
  }
}

function clampPoll(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value)
    ? Math.min(MAX_POLL_MS, Math.max(MIN_POLL_MS, value))
    : 1_000;
}

/** The tasks extension of revision 2026-07-28 (SEP-2663). */
export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

/** Where a lifted 2026-07-28 task handle rides in the tool result the SDK client hands back. */
export const UPSTREAM_TASK_META = 'io.toolgate/upstream-task';

/**
 * The SDK v2 client (2.4) answers a `resultType: "task"` result with UnsupportedResultType. Toward a
 * 2026-07-28 upstream that hands out a task, the transport lifts the handle into a complete, empty
 * tool result carrying it in `_meta`, so the call can follow the task with tasks/get.
 */
export function liftTaskResults(transport: Transport): Transport {
  // Methods are bound once each (the SDK reads `send` for every message).
  const bound = new Map<PropertyKey, { readonly of: unknown; readonly fn: unknown }>();
  return new Proxy(transport, {
    get(target, property) {
      const value = Reflect.get(target, property, target) as unknown;
      if (typeof value !== 'function') return value;
      const known = bound.get(property);
      if (known?.of === value) return known.fn;
      const fn = (value as (...args: unknown[]) => unknown).bind(target);
      bound.set(property, { of: value, fn });
      return fn;
    },
    set(target, property, value: unknown) {
      if (property === 'onmessage' && typeof value === 'function') {
        const deliver = value as (message: unknown, extra?: unknown) => void;
        target.onmessage = ((message: unknown, extra?: unknown) =>
          deliver(liftTaskResult(message), extra)) as Transport['onmessage'];
        return true;
      }
      return Reflect.set(target, property, value, target);
    },
  });
}

function liftTaskResult(message: unknown): unknown {
  const result = (message as { result?: Loose } | null)?.result;
  if (
    typeof result !== 'object' ||
    result === null ||
    result['resultType'] !== 'task' ||
    typeof result['taskId'] !== 'string'
  )
    return message;
  return {
    ...(message as Loose),
    result: { resultType: 'complete', content: [], _meta: { [UPSTREAM_TASK_META]: result } },
  };
}

/** The task handle a 2026-07-28 upstream answered a tools/call with, when it did. */
export function upstreamTaskOf(result: CallToolResult): Loose | undefined {
  const handle = (result._meta as Loose | undefined)?.[UPSTREAM_TASK_META];
  return typeof handle === 'object' && handle !== null ? (handle as Loose) : undefined;
}

/** A followed 2026-07-28 upstream task that waits for answers (status `input_required`). */
export interface UpstreamTaskQuestions {
  readonly taskId: string;
  /** Its `inputRequests` as tasks/get showed them, keyed as tasks/update must answer them. */
  readonly inputRequests: Readonly<Record<string, unknown>>;
}

export type FollowedUpstreamTask =
  { readonly result: CallToolResult } | { readonly questions: UpstreamTaskQuestions };

export interface FollowUpstreamTaskOptions {
  readonly signal: AbortSignal;
  readonly timeoutMs: number;
  /**
   * Its questions are handed back to relay (the task is left waiting), not refused with a cancel.
   * Without it, a task asking for input is cancelled and the call fails.
   */
  readonly relayInput?: boolean;
  /**
   * The keys just answered with tasks/update: a task still showing only these has not read the
   * answers yet, and is polled on rather than asking again (SEP-2663 keys are new each round).
   */
  readonly answered?: readonly string[];
}

/** Cancels an upstream task, best effort (it expires on its own otherwise). */
export const cancelUpstreamTask = (client: Client, taskId: string): Promise<unknown> =>
  client
    .request({ method: 'tasks/cancel', params: { taskId } } as never, anyResult, { timeout: 5_000 })
    .catch(() => undefined);

/** Whether a task showing `input_required` asks only what was just answered. */
function asksOnlyAnswered(task: Loose, answered: readonly string[] | undefined): boolean {
  if (answered === undefined || answered.length === 0 || task['status'] !== 'input_required') return false;
  const asked = task['inputRequests'];
  if (typeof asked !== 'object' || asked === null) return false;
  const keys = Object.keys(asked);
  return keys.length > 0 && keys.every((key) => answered.includes(key));
}

/**
 * Follows a 2026-07-28 upstream task with tasks/get until it ends (its result, or a thrown error) or,
 * with `relayInput`, until it asks for input (its questions).
 */
export async function followUpstreamTask(
  client: Client,
  handle: Loose,
  options: FollowUpstreamTaskOptions,
): Promise<FollowedUpstreamTask> {
  const taskId = String(handle['taskId']);
  const requestOptions: RequestOptions = { signal: options.signal, timeout: options.timeoutMs };
  let task: Loose = handle;
  let pollMs = clampPoll(handle['pollIntervalMs']);
  const deadline = Date.now() + Math.max(options.timeoutMs, TASK_TTL_MS);
  // A task that keeps showing the answered questions this long is taken to ask them again.
  const answersReadBy = Date.now() + options.timeoutMs;
  try {
    while (
      task['status'] === 'working' ||
      task['status'] === undefined ||
      (asksOnlyAnswered(task, options.answered) && Date.now() < answersReadBy) ||
      // A handle shows no questions: tasks/get does (SEP-2663).
      (task === handle && task['status'] === 'input_required' && task['inputRequests'] === undefined)
    ) {
      if (Date.now() >= deadline)
        throw new UpstreamTaskError("the MCP server's task did not end before its time to live");
      await delay(pollMs, undefined, { signal: options.signal }).catch(() => undefined);
      options.signal.throwIfAborted();
      task = await client.request(
        { method: 'tasks/get', params: { taskId } } as never,
        anyResult,
        requestOptions,
      );
      pollMs = clampPoll(task['pollIntervalMs'] ?? pollMs);
    }
  } catch (error) {
    if (options.signal.aborted) await cancelUpstreamTask(client, taskId);
    throw error;
  }
  const status = String(task['status']);
  const result = task['result'] as Loose | undefined;
  if (status === 'completed' && Array.isArray(result?.['content']))
    return { result: result as unknown as CallToolResult };
  if (status === 'failed') {
    const message = (task['error'] as { message?: unknown } | undefined)?.message;
    throw new UpstreamTaskError(
      `the MCP server's task failed${typeof message === 'string' ? `: ${message.slice(0, 500)}` : ''}`,
    );
  }
  if (status === 'input_required') {
    const inputRequests = task['inputRequests'];
    // The task waits while the client answers; it expires on its own ttl if the client never does.
    if (
      options.relayInput === true &&
      typeof inputRequests === 'object' &&
      inputRequests !== null &&
      !Array.isArray(inputRequests) &&
      Object.keys(inputRequests).length > 0
    )
      return { questions: { taskId, inputRequests: inputRequests as Loose } };
    // Its questions would be answered with tasks/update; nobody downstream is there to answer them.
    await cancelUpstreamTask(client, taskId);
    throw new UpstreamTaskError("the MCP server's task asked for input, which this call cannot relay");
  }
  throw new UpstreamTaskError(`the MCP server's task ended ${status}`);
}

/**
 * Sends a 2026-07-28 upstream task the client's answers to its questions (tasks/update; nothing when
 * there are none) and follows it again: it may end, or ask again.
 */
export async function resumeUpstreamTask(
  client: Client,
  taskId: string,
  inputResponses: Readonly<Record<string, unknown>>,
  options: FollowUpstreamTaskOptions,
): Promise<FollowedUpstreamTask> {
  const answered = Object.keys(inputResponses);
  const requestOptions: RequestOptions = { signal: options.signal, timeout: options.timeoutMs };
  if (answered.length > 0) {
    // A state whose round was answered already (replayed) finds its keys no longer asked: the task
    // is not sent the same answers twice (SEP-2663 keys are new each round).
    const now = await client.request(
      { method: 'tasks/get', params: { taskId } } as never,
      anyResult,
      requestOptions,
    );
    const asking = now['status'] === 'input_required' ? now['inputRequests'] : undefined;
    if (typeof asking !== 'object' || asking === null || !answered.every((key) => Object.hasOwn(asking, key)))
      throw new UpstreamTaskError(
        "the MCP server's task is not waiting for these answers (they were given already, or it ended); call the tool again without a requestState",
      );
    await client.request(
      { method: 'tasks/update', params: { taskId, inputResponses: { ...inputResponses } } } as never,
      anyResult,
      requestOptions,
    );
  }
  // Read at once: the task may already have ended, or still show the questions just answered.
  return followUpstreamTask(
    client,
    { taskId, status: 'working', pollIntervalMs: MIN_POLL_MS },
    { ...options, answered },
  );
}
