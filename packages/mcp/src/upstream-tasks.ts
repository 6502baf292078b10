// An upstream tool whose `execution.taskSupport` is 'required' cannot be called plainly: the server
// answers such a call with an error. On revision 2025-11-25 (the experimental tasks of SEP-1686, which
// the SDK v2 carries as types only) the call asks for a task, polls `tasks/get` until the task ends
// and reads its result with `tasks/result`; cancelling the call cancels the upstream task. The caller
// sees one tools/call that took as long as the task did.

import type { CallToolResult, Client, RequestOptions } from '@modelcontextprotocol/client';

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
      await sleep(pollMs, options.signal);
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

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((done) => {
    const timer = setTimeout(finish, ms);
    function finish() {
      clearTimeout(timer);
      signal.removeEventListener('abort', finish);
      done();
    }
    signal.addEventListener('abort', finish, { once: true });
  });
}
