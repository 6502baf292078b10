// Tasks through mcpServe (the `io.modelcontextprotocol/tasks` extension on 2026-07-28, the experimental
// tasks of 2025-11-25): server-everything's task-only tool runs through the governing proxy; a task is
// handed out only after the chain decided; only the principal that created a task can read, update or
// cancel it — anyone else's request is answered exactly as for an id that does not exist.

import {
  Client as V2Client,
  StreamableHTTPClientTransport as V2Transport,
} from '@modelcontextprotocol/client';
import {
  defineTool,
  inMemoryTaskRecords,
  type PermissionRequest,
  type TaskRecord,
  type TaskRecordStore,
} from '@toolgate/core';
import { canonicalChain } from '@toolgate/middleware';
import {
  mcpClient,
  mcpServe,
  serveHttp,
  type HttpServing,
  type McpClient,
  type McpServed,
} from '@toolgate/mcp';
import { InMemoryTransport } from '@modelcontextprotocol/client';
import { ServedTasks, TASK_RUNNER_LOST } from '../src/tasks';
import { referenceServer } from './fixtures/reference';
import { serveUpstreams, taskUpstream, type TaskUpstream } from './fixtures/proxy';
import { modernRequest, WITH_TASKS } from '../../../test-support/modern-request';

const TOOL = 'ev_simulate-research-query';
const TOKENS: Record<string, { tenant: string; principal: string }> = {
  'bot-token': { tenant: 'acme', principal: 'bot' },
  'eve-token': { tenant: 'acme', principal: 'eve' },
  'other-tenant-bot': { tenant: 'globex', principal: 'bot' },
};

let upstream: McpClient;
let served: McpServed;

/** A result schema that takes whatever the server answers, for requests the SDK has no schema of. */
const ANY_RESULT = {
  '~standard': {
    version: 1 as const,
    vendor: 'test',
    validate: (value: unknown) => ({ value: value as Record<string, unknown> }),
    types: undefined as unknown as { input: Record<string, unknown>; output: Record<string, unknown> },
  },
};

/** A 2025-11-25 SDK client connected in memory to `server`, and a request taking any result. */
async function legacyClientOf(server: McpServed) {
  const [clientEnd, serverEnd] = InMemoryTransport.createLinkedPair();
  await server.connect(serverEnd);
  const legacy = new V2Client(
    { name: 'legacy', version: '1.0.0' },
    { versionNegotiation: { mode: 'legacy' } },
  );
  await legacy.connect(clientEnd);
  const ask = (method: string, params: Record<string, unknown>) =>
    legacy.request({ method, params } as never, ANY_RESULT);
  return { legacy, ask };
}
let http: HttpServing;
const asked: PermissionRequest[] = [];

beforeAll(async () => {
  const [command, ...args] = referenceServer('server-everything');
  upstream = mcpClient({ name: 'ev', command: [command, ...args], stderr: 'ignore', prefix: 'ev_' });
  served = mcpServe(await upstream.tools(), {
    name: 'proxy',
    version: '1.0.0',
    chain: canonicalChain({
      permissions: {
        check: (request: PermissionRequest) => {
          asked.push(request);
          const topic = (request.args as { topic?: string } | undefined)?.topic;
          return topic === 'forbidden'
            ? { allow: false as const, reason: 'that topic is off limits' }
            : { allow: true as const };
        },
      },
    }),
    upstreams: [upstream],
    identityFrom: (authInfo) =>
      authInfo?.extra?.['identity'] as { tenant: string; principal: string } | undefined,
    tasks: { pollIntervalMs: 100 },
  });
  http = await serveHttp(served, {
    port: 0,
    authenticate: (request) => {
      const token = /^Bearer (.+)$/.exec(request.headers.authorization ?? '')?.[1];
      const identity = token === undefined ? undefined : TOKENS[token];
      return identity === undefined
        ? undefined
        : { token: token!, clientId: token!, scopes: [], extra: { identity } };
    },
  });
}, 30_000);

afterAll(async () => {
  await http?.close();
  await served?.close();
  await upstream?.close();
});

/** One 2026-07-28 request as a tasks-capable client sends it. */
const modern = (
  token: string,
  method: string,
  params: Record<string, unknown>,
  capabilities: Record<string, unknown> = WITH_TASKS,
  at: URL = http.url,
) => modernRequest(at, token, method, params, capabilities);

async function pollModern(
  token: string,
  taskId: string,
  until: (status: string) => boolean,
  at: URL = http.url,
) {
  for (let i = 0; i < 200; i++) {
    const got = await modern(token, 'tasks/get', { taskId }, WITH_TASKS, at);
    if (got.result === undefined) throw new Error(`tasks/get failed: ${got.error?.message}`);
    if (until(String(got.result['status']))) return got.result;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error('the task did not reach the status in time');
}

const textOf = (result: Record<string, unknown>) =>
  (result['content'] as { type: string; text?: string }[]).map((block) => block.text ?? '').join('\n');

describe('tasks through mcpServe (server-everything upstream)', () => {
  it('advertises tasks on both revisions; 2025-11-25 lists the task-only tool with its execution', async () => {
    // 2026-07-28 has no taskSupport in core (the server decides per request): the extension is advertised.
    const discovered = await modern('bot-token', 'server/discover', {});
    expect(discovered.result).toMatchObject({
      capabilities: { extensions: { 'io.modelcontextprotocol/tasks': {} } },
    });
    const legacy = new V2Client(
      { name: 'legacy-list', version: '1.0.0' },
      { versionNegotiation: { mode: 'legacy' } },
    );
    await legacy.connect(
      new V2Transport(http.url, { requestInit: { headers: { authorization: 'Bearer bot-token' } } }),
    );
    try {
      const { tools } = await legacy.listTools();
      expect(tools.find((t) => t.name === TOOL)?.execution).toEqual({ taskSupport: 'required' });
    } finally {
      await legacy.close();
    }
  });

  it('2026-07-28: the task-only tool runs as a task with the gateway-side id, and completes with the report', async () => {
    const created = await modern('bot-token', 'tools/call', { name: TOOL, arguments: { topic: 'tides' } });
    expect(created.error).toBeUndefined();
    expect(created.result).toMatchObject({ resultType: 'task', status: 'working' });
    const taskId = String(created.result!['taskId']);
    expect(taskId).toMatch(/^[0-9a-f-]{36}$/);
    const done = await pollModern('bot-token', taskId, (status) => status !== 'working');
    expect(done).toMatchObject({ resultType: 'complete', status: 'completed', taskId });
    expect(textOf(done['result'] as Record<string, unknown>)).toContain('Research Report: tides');
  }, 30_000);

  it('a client without the extension still gets the result: the proxy runs the upstream task and waits', async () => {
    const plain = await modern('bot-token', 'tools/call', { name: TOOL, arguments: { topic: 'reefs' } }, {});
    expect(plain.result).toMatchObject({ resultType: 'complete' });
    expect(plain.result!['isError']).not.toBe(true);
    expect(textOf(plain.result!)).toContain('Research Report: reefs');
  }, 30_000);

  it('the chain decides before any task exists: a refused call is answered as a refusal, no task', async () => {
    const refused = await modern('bot-token', 'tools/call', {
      name: TOOL,
      arguments: { topic: 'forbidden' },
    });
    expect(refused.result).toMatchObject({ resultType: 'complete', isError: true });
    expect(refused.result!['taskId']).toBeUndefined();
    expect(textOf(refused.result!)).toContain('off limits');
  });

  it("another principal's, another tenant's and a made-up task id are answered alike; cancel by another changes nothing", async () => {
    const created = await modern('bot-token', 'tools/call', { name: TOOL, arguments: { topic: 'owls' } });
    const taskId = String(created.result!['taskId']);
    const unknown = await modern('bot-token', 'tasks/get', {
      taskId: '00000000-0000-4000-8000-000000000000',
    });
    expect(unknown.error).toBeDefined();
    for (const token of ['eve-token', 'other-tenant-bot']) {
      for (const method of ['tasks/get', 'tasks/cancel', 'tasks/update']) {
        const foreign = await modern(token, method, {
          taskId,
          ...(method === 'tasks/update' ? { inputResponses: {} } : {}),
        });
        expect(foreign.result).toBeUndefined();
        expect(foreign.error).toEqual(unknown.error);
      }
    }
    // The owner still sees it running, then done: nobody else's cancel reached it.
    const done = await pollModern('bot-token', taskId, (status) => status !== 'working');
    expect(done['status']).toBe('completed');
  }, 30_000);

  it("the owner's cancel ends the task as cancelled, and the upstream task with it", async () => {
    const created = await modern('bot-token', 'tools/call', { name: TOOL, arguments: { topic: 'moths' } });
    const taskId = String(created.result!['taskId']);
    const cancelled = await modern('bot-token', 'tasks/cancel', { taskId });
    expect(cancelled.result).toMatchObject({ resultType: 'complete' });
    const got = await modern('bot-token', 'tasks/get', { taskId });
    expect(got.result).toMatchObject({ status: 'cancelled' });
    expect(got.result!['result']).toBeUndefined();
    // It stays cancelled: the upstream's late answer does not revive it.
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect((await modern('bot-token', 'tasks/get', { taskId })).result).toMatchObject({
      status: 'cancelled',
    });
  });

  it('2025-11-25: an SDK v2 client asks for a task with the task param, polls tasks/get and reads tasks/result', async () => {
    const client = new V2Client(
      { name: 'legacy-tasks', version: '1.0.0' },
      { versionNegotiation: { mode: 'legacy' } },
    );
    const other = new V2Client(
      { name: 'legacy-tasks', version: '1.0.0' },
      { versionNegotiation: { mode: 'legacy' } },
    );
    await client.connect(
      new V2Transport(http.url, { requestInit: { headers: { authorization: 'Bearer bot-token' } } }),
    );
    await other.connect(
      new V2Transport(http.url, { requestInit: { headers: { authorization: 'Bearer eve-token' } } }),
    );
    try {
      expect(client.getServerCapabilities()).toMatchObject({ tasks: { requests: { tools: { call: {} } } } });
      const created = await client.request(
        {
          method: 'tools/call',
          params: { name: TOOL, arguments: { topic: 'kelp' }, task: { ttl: 60_000 } },
        } as never,
        ANY_RESULT,
      );
      const task = created['task'] as { taskId: string; status: string };
      expect(task.status).toBe('working');
      // Another principal's session cannot read, list or cancel it.
      await expect(
        other.request({ method: 'tasks/get', params: { taskId: task.taskId } } as never, ANY_RESULT),
      ).rejects.toThrow(/Unknown task/);
      await expect(
        other.request({ method: 'tasks/cancel', params: { taskId: task.taskId } } as never, ANY_RESULT),
      ).rejects.toThrow(/Unknown task/);
      const othersList = await other.request({ method: 'tasks/list', params: {} } as never, ANY_RESULT);
      expect((othersList['tasks'] as unknown[]).length).toBe(0);
      const mine = await client.request({ method: 'tasks/list', params: {} } as never, ANY_RESULT);
      expect((mine['tasks'] as { taskId: string }[]).map((t) => t.taskId)).toContain(task.taskId);
      const result = await client.request(
        { method: 'tasks/result', params: { taskId: task.taskId } } as never,
        ANY_RESULT,
        {
          timeout: 20_000,
        },
      );
      expect(textOf(result)).toContain('Research Report: kelp');
      const got = await client.request(
        { method: 'tasks/get', params: { taskId: task.taskId } } as never,
        ANY_RESULT,
      );
      expect(got['status']).toBe('completed');
    } finally {
      await client.close();
      await other.close();
    }
  }, 30_000);
});

describe('ServedTasks: bound to their owner, bounded in number and time', () => {
  const bot = { tenant: 'acme', principal: 'bot' };
  const eve = { tenant: 'acme', principal: 'eve' };
  const otherBot = { tenant: 'globex', principal: 'bot' };

  it('finds a task only for its tenant and principal', async () => {
    const tasks = new ServedTasks();
    const task = await tasks.create(bot, 'working', 'running');
    expect((await tasks.find(task.id, bot))?.id).toBe(task.id);
    expect(await tasks.find(task.id, eve)).toBeUndefined();
    expect(await tasks.find(task.id, otherBot)).toBeUndefined();
    expect(await tasks.find(task.id, { tenant: null, principal: null })).toBeUndefined();
    expect(await tasks.find(42, bot)).toBeUndefined();
    expect(await tasks.list(eve)).toEqual([]);
    await tasks.close();
  });

  it('caps the unfinished tasks of one caller, not of the others', async () => {
    const tasks = new ServedTasks({ maxLivePerOwner: 2 });
    await tasks.create(bot, 'working', 'one');
    expect(await tasks.hasRoom(bot)).toBe(true);
    await tasks.create(bot, 'input_required', 'two');
    expect(await tasks.hasRoom(bot)).toBe(false);
    expect(await tasks.hasRoom(eve)).toBe(true);
    await tasks.close();
    expect(await tasks.hasRoom(bot)).toBe(true);
  });

  it('keeps ended tasks up to the cap per caller, oldest dropped first, and none past their TTL', async () => {
    const tasks = new ServedTasks({ maxKeptPerOwner: 2 });
    const first = await tasks.create(bot, 'working', 'a');
    const second = await tasks.create(bot, 'working', 'b');
    await tasks.close();
    const third = await tasks.create(bot, 'working', 'c');
    expect(await tasks.find(first.id, bot)).toBeUndefined();
    expect((await tasks.find(second.id, bot))?.status).toBe('cancelled');
    expect((await tasks.find(third.id, bot))?.status).toBe('working');
    await tasks.close();
    const short = new ServedTasks({ ttlMs: 1 });
    const brief = await short.create(bot, 'working', 'a');
    await short.close();
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(await short.find(brief.id, bot)).toBeUndefined();
  });
});

describe('ServedTasks on a store shared by two processes', () => {
  const bot = { tenant: 'acme', principal: 'bot' };
  const eve = { tenant: 'acme', principal: 'eve' };

  it('a cancel through the other process aborts the running task, and a result after it does not overwrite it', async () => {
    const store = inMemoryTaskRecords();
    const running = new ServedTasks({ store, sharedPollMs: 10 });
    const other = new ServedTasks({ store, sharedPollMs: 10 });
    try {
      const task = await running.create(bot, 'working', 'running');
      expect(await other.find(task.id, eve)).toBeUndefined();
      const seen = await other.find(task.id, bot);
      expect(seen?.status).toBe('working');
      const aborted = new Promise<void>((resolve) =>
        task.abort.signal.addEventListener('abort', () => resolve(), { once: true }),
      );
      expect((await other.cancel(seen!)).status).toBe('cancelled');
      await aborted;
      await running.change(task, { status: 'completed', result: { content: [] } });
      expect((await other.find(task.id, bot))?.status).toBe('cancelled');
      expect(await running.hasRoom(bot)).toBe(true);
    } finally {
      await running.close();
      await other.close();
    }
  });

  it("passes the owner's answers given to the other process to the code waiting in the running one", async () => {
    const store = inMemoryTaskRecords();
    const running = new ServedTasks({ store, sharedPollMs: 10 });
    const other = new ServedTasks({ store, sharedPollMs: 10 });
    try {
      const task = await running.create(bot, 'input_required', 'waiting');
      const answered = new Promise<Readonly<Record<string, unknown>>>((resolve) => (task.update = resolve));
      await other.respond((await other.find(task.id, bot))!, { approval: { action: 'accept' } });
      expect(await answered).toEqual({ approval: { action: 'accept' } });
      expect(await store.takeResponses(task.id)).toBeUndefined();
      await running.change(task, {
        status: 'completed',
        result: { content: [{ type: 'text', text: 'ok' }] },
      });
      const ended = await other.waitEnded(task.id, new AbortController().signal);
      expect(ended).toMatchObject({
        status: 'completed',
        result: { content: [{ type: 'text', text: 'ok' }] },
      });
    } finally {
      await running.close();
      await other.close();
    }
  });
});

// A store as one process sees it: frozen, its writes wait (a stopped or crashed process writes nothing).
function freezable(store: TaskRecordStore) {
  let thaw: () => void = () => undefined;
  let thawed: Promise<void> | undefined;
  const waits = async () => thawed;
  const view: TaskRecordStore = {
    ...store,
    renew: async (ids, atMs) => {
      await waits();
      return store.renew!(ids, atMs);
    },
    update: async (id, change) => {
      await waits();
      return store.update(id, change);
    },
  };
  return {
    view,
    freeze: () => (thawed = new Promise<void>((resolve) => (thaw = resolve))),
    thaw: () => {
      thawed = undefined;
      thaw();
    },
  };
}

describe('a task whose running process stopped (a lease on a shared store)', () => {
  const bot = { tenant: 'acme', principal: 'bot' };
  const ana = { tenant: 'acme', principal: 'ana' };
  const cy = { tenant: 'acme', principal: 'cy' };
  const options = { sharedPollMs: 10, leaseMs: 300, maxLivePerOwner: 2 };

  beforeEach(() => jest.useFakeTimers({ now: Date.parse('2030-01-01T00:00:00.000Z') }));
  afterEach(() => jest.useRealTimers());

  it('stays working while its runner renews it; once the runner stops, any reader ends it failed, once, and its late result does not reopen it', async () => {
    const store = inMemoryTaskRecords();
    const crashing = freezable(store);
    const running = new ServedTasks({ store, ...options });
    const stopping = new ServedTasks({ store: crashing.view, ...options });
    const other = new ServedTasks({ store, ...options });
    try {
      const kept = await running.create(bot, 'working', 'running');
      const lostByGet = await stopping.create(bot, 'working', 'running');
      const lostByList = await stopping.create(ana, 'input_required', 'waiting');
      const lostByCap = [
        await stopping.create(cy, 'working', 'running'),
        await stopping.create(cy, 'working', 'running'),
      ];
      expect(await other.hasRoom(cy)).toBe(false);
      crashing.freeze();
      await jest.advanceTimersByTimeAsync(5 * options.leaseMs);

      expect(await other.find(kept.id, bot)).toMatchObject({ status: 'working' });
      const failed = await other.find(lostByGet.id, bot);
      expect(failed).toMatchObject({
        status: 'failed',
        statusMessage: expect.stringMatching(/stopped before it ended; whether the tool ran is not known/),
        error: { code: TASK_RUNNER_LOST, message: failed?.statusMessage },
      });
      expect((await other.list(ana)).map((task) => task.status)).toEqual(['failed']);
      expect(await other.hasRoom(cy)).toBe(true);
      for (const task of lostByCap) expect((await store.get(task.id))?.status).toBe('failed');
      expect(await other.find(kept.id, bot)).toMatchObject({ status: 'working' });

      // The runner was only frozen: it wakes, its result is refused and its task is aborted.
      crashing.thaw();
      await stopping.change(lostByGet, { status: 'completed', result: { content: [] } });
      expect((await store.get(lostByGet.id))?.status).toBe('failed');
      await jest.advanceTimersByTimeAsync(options.sharedPollMs * 2);
      expect(lostByList.abort.signal.aborted).toBe(true);
      expect((await store.get(lostByList.id))?.status).toBe('failed');
    } finally {
      crashing.thaw();
      await running.close();
      await stopping.close();
      await other.close();
    }
  });

  it('renews all the tasks a process runs in one write every leaseMs / 6; a read that finds nothing stale writes nothing', async () => {
    const store = inMemoryTaskRecords();
    const renewals: (readonly string[])[] = [];
    let ends = 0;
    const counted: TaskRecordStore = {
      ...store,
      renew: (ids, atMs) => (renewals.push(ids), store.renew!(ids, atMs)),
      endStale: (...args) => (ends++, store.endStale!(...args)),
    };
    const running = new ServedTasks({ store: counted, ...options, maxLivePerOwner: 10 });
    try {
      const ids = [
        (await running.create(bot, 'working', 'a')).id,
        (await running.create(bot, 'input_required', 'b')).id,
        (await running.create(ana, 'working', 'c')).id,
      ];
      expect((await store.get(ids[0]!))?.renewedAt).toBe(Date.now());
      await jest.advanceTimersByTimeAsync(options.leaseMs);
      expect(renewals.length).toBeGreaterThanOrEqual(5);
      expect(renewals.length).toBeLessThanOrEqual(6);
      for (const renewed of renewals) expect([...renewed].sort()).toEqual([...ids].sort());
      expect((await store.get(ids[2]!))?.renewedAt).toBeGreaterThan(Date.now() - options.leaseMs / 6 - 10);
      for (let poll = 0; poll < 5; poll++) {
        await running.find(ids[0], bot);
        await running.list(ana);
        await running.hasRoom(bot);
      }
      expect(ends).toBe(0);
    } finally {
      await running.close();
    }
  });

  it('keeps no lease on a store that has none, and never ends a task created without a renewal time', async () => {
    const store = inMemoryTaskRecords();
    const { renew: _renew, endStale: _endStale, ...leaseless } = store;
    const withoutLease = new ServedTasks({ store: leaseless, ...options });
    const reader = new ServedTasks({ store, ...options });
    try {
      const task = await withoutLease.create(bot, 'working', 'running');
      await jest.advanceTimersByTimeAsync(5 * options.leaseMs);
      expect(await store.get(task.id)).not.toHaveProperty('renewedAt');
      expect((await reader.find(task.id, bot))?.status).toBe('working');
      expect((await withoutLease.find(task.id, bot))?.status).toBe('working');
    } finally {
      await withoutLease.close();
      await reader.close();
    }
  });

  it('refuses a lease that is not a positive integer of milliseconds', () => {
    for (const leaseMs of [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY])
      expect(() => new ServedTasks({ leaseMs })).toThrow(
        new TypeError('ServedTasks: leaseMs must be a positive integer of milliseconds.'),
      );
    expect(() =>
      mcpServe([], { name: 'bad-lease', version: '1.0.0', chain: canonicalChain(), tasks: { leaseMs: 0 } }),
    ).toThrow(/leaseMs must be a positive integer/);
  });
});

describe('a task whose runner stopped, read through mcpServe', () => {
  it('reads failed with TASK_RUNNER_LOST through tasks/get, tasks/list and tasks/result, naming no argument', async () => {
    const store = inMemoryTaskRecords();
    const at = new Date().toISOString();
    const lost: TaskRecord = {
      id: 'task-of-a-crashed-process',
      tenant: null,
      principal: null,
      status: 'working',
      statusMessage: "'send_email' is running.",
      createdAt: at,
      lastUpdatedAt: at,
      ttlMs: 60_000,
      renewedAt: Date.now() - 10_000,
    };
    await store.create(lost);
    await store.create({ ...lost, id: 'task-of-a-live-process', renewedAt: Date.now() + 60_000 });
    const servedHere = mcpServe([], {
      name: 'lease',
      version: '1.0.0',
      chain: canonicalChain(),
      tasks: { store, leaseMs: 1_000 },
    });
    const { legacy, ask } = await legacyClientOf(servedHere);
    try {
      const got = await ask('tasks/get', { taskId: lost.id });
      expect(got).toMatchObject({
        taskId: lost.id,
        status: 'failed',
        statusMessage: expect.stringMatching(/stopped before it ended.*Check before calling it again/),
      });
      expect(JSON.stringify(got)).not.toContain('send_email');
      const listed = (await ask('tasks/list', {}))['tasks'] as Record<string, unknown>[];
      expect(Object.fromEntries(listed.map((task) => [task['taskId'], task['status']]))).toEqual({
        [lost.id]: 'failed',
        'task-of-a-live-process': 'working',
      });
      const result = await ask('tasks/result', { taskId: lost.id }).then(
        () => undefined,
        (error: { code?: number; message: string }) => error,
      );
      expect(result?.code).toBe(TASK_RUNNER_LOST);
      expect(result?.message).toMatch(/whether the tool ran is not known/);
    } finally {
      await legacy.close();
      await servedHere.close();
    }
  });
});

describe('a task store that cannot answer', () => {
  it('is an internal error naming no file or database, and a call asking for a task still runs plainly', async () => {
    const secret = '/srv/secret-place/state.db';
    const broken = () =>
      Promise.reject(new Error(`sqliteTaskRecords (${secret}): could not open the database`));
    const store = {
      create: broken,
      get: broken,
      update: broken,
      respond: broken,
      takeResponses: broken,
      list: broken,
      countLive: broken,
      sweep: broken,
    };
    const echo = defineTool({
      name: 'echo',
      description: 'Echoes its text.',
      inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
      execute: (args: { text: string }) => args.text,
    });
    const servedHere = mcpServe([echo], {
      name: 'broken-store',
      version: '1.0.0',
      chain: canonicalChain(),
      tasks: { store },
    });
    const { legacy } = await legacyClientOf(servedHere);
    try {
      for (const method of ['tasks/get', 'tasks/list', 'tasks/cancel']) {
        const failure = await legacy
          .request({ method, params: { taskId: 'any-task' } } as never, ANY_RESULT)
          .then(
            () => undefined,
            (error: Error) => error,
          );
        expect(failure?.message).toMatch(/task store could not answer/);
        expect(failure?.message).not.toContain('secret-place');
      }
      const plain = await legacy.request(
        {
          method: 'tools/call',
          params: { name: 'echo', arguments: { text: 'still here' }, task: { ttl: 1000 } },
        } as never,
        ANY_RESULT,
      );
      expect(plain['task']).toBeUndefined();
      expect(JSON.stringify(plain['content'])).toContain('still here');
    } finally {
      await legacy.close();
      await servedHere.close();
    }
  });
});

describe('a 2026-07-28 upstream that answers with tasks (SEP-2663)', () => {
  let jobsUpstream: TaskUpstream;
  let proxy: McpServed;
  let client: V2Client;
  let proxyHttp: HttpServing;

  beforeAll(async () => {
    jobsUpstream = taskUpstream();
    proxy = await serveUpstreams([jobsUpstream.jobs], { name: 'proxy' });
    const [clientEnd, serverEnd] = InMemoryTransport.createLinkedPair();
    await proxy.connect(serverEnd);
    client = new V2Client({ name: 'legacy', version: '1.0.0' }, { versionNegotiation: { mode: 'legacy' } });
    await client.connect(clientEnd);
    proxyHttp = await serveHttp(proxy, { port: 0 });
  }, 30_000);

  afterAll(async () => {
    await client?.close();
    await proxyHttp?.close();
    await proxy?.close();
    await jobsUpstream?.close();
  });

  const runs = () => jobsUpstream.runs();

  it('follows the upstream task with tasks/get: the call answers with its result', async () => {
    const result = await client.callTool({
      name: 'jobs_slow_compute',
      arguments: { a: 2, b: 3, seconds: 0.2 },
    });
    expect(result.isError).not.toBe(true);
    expect(result.content).toEqual([{ type: 'text', text: 'sum 5' }]);
    expect(result._meta?.['io.toolgate/upstream-task']).toBeUndefined();
  });

  it("a task that completes with a tool error is the tool's error; a failed task is a failure, not a result", async () => {
    const failing = await client.callTool({ name: 'jobs_failing_job', arguments: { seconds: 0.1 } });
    expect(failing.isError).toBe(true);
    expect(JSON.stringify(failing.content)).toContain('the job failed');
    const crashed = await client.callTool({ name: 'jobs_protocol_error_job', arguments: { seconds: 0.1 } });
    expect(crashed.isError).toBe(true);
    expect(JSON.stringify(crashed.content)).toContain('the job crashed');
  });

  it("a client that declared tasks gets the proxy's own task once the upstream hands out one", async () => {
    const created = await modern(
      'anyone',
      'tools/call',
      { name: 'jobs_slow_compute', arguments: { a: 20, b: 22, seconds: 0.3 } },
      WITH_TASKS,
      proxyHttp.url,
    );
    expect(created.result).toMatchObject({ resultType: 'task', status: 'working' });
    const taskId = String(created.result!['taskId']);
    expect(taskId).not.toMatch(/^up-/);
    const done = await pollModern('anyone', taskId, (status) => status !== 'working', proxyHttp.url);
    expect(done['status']).toBe('completed');
    expect(textOf(done['result'] as Record<string, unknown>)).toBe('sum 42');
  });

  it('cancelling the call cancels the upstream task', async () => {
    const abort = new AbortController();
    const call = client.callTool(
      { name: 'jobs_slow_compute', arguments: { a: 1, b: 1, seconds: 30 } },
      { signal: abort.signal },
    );
    for (let i = 0; i < 50 && !runs().some((line) => line === 'start slow_compute'); i++)
      await new Promise((resolve) => setTimeout(resolve, 50));
    const before = runs().filter((line) => line.startsWith('cancel ')).length;
    await new Promise((resolve) => setTimeout(resolve, 200));
    abort.abort();
    await expect(call).rejects.toThrow();
    for (let i = 0; i < 50 && runs().filter((line) => line.startsWith('cancel ')).length === before; i++)
      await new Promise((resolve) => setTimeout(resolve, 50));
    expect(runs().filter((line) => line.startsWith('cancel ')).length).toBe(before + 1);
  });
});
