// Tasks through `toolgate gateway` (GATEWAY.md §6 item 2, §9): server-everything's task-only tool runs
// through the gateway over a stdio upstream; a call that needs a check-in, from a client that asked for
// a task, gets a task in `input_required` pointing at the check-in's inbox page, then `working` →
// `completed` (the tool ran exactly once) or `failed` (the decline's reason); only its principal can
// read, update or cancel it, and cancelling withdraws the check-in.
//
// The 2026-07-28 requests are sent as JSON-RPC over HTTP, as a tasks-capable client sends them: the SDK
// v2 client (2.4) answers `resultType: "task"` with UnsupportedResultType (docs/design-notes.md).

import {
  Client as V2Client,
  StreamableHTTPClientTransport as V2Transport,
} from '@modelcontextprotocol/client';
import {
  authYaml,
  CALLERS,
  gatewayPerSuite,
  referenceServer,
  shopUpstream,
  tokenEnv,
  type TempDir,
} from './helpers';
import { modernRequest, WITH_TASKS, type ModernAnswer } from '../../../test-support/modern-request';

const TOKENS = tokenEnv(CALLERS);

function config(dir: TempDir): string {
  return `${authYaml(CALLERS)}checkIns: { key: "\${env:TOOLGATE_CHECKIN_KEY}", hold: 200ms, ttl: 10m }
upstreams:
${shopUpstream(dir)}    prefix: shop_
  ev:
    command: [node, ${JSON.stringify(referenceServer('everything'))}]
    prefix: ev_
policy:
  rules:
    - { name: big-refunds-ask, tools: [shop_refund], when: "args.amount > 100.0", effect: ask, reason: refunds over 100 need a supervisor }
  default: allow
tenants:
  acme: { upstreams: [shop, ev] }
  globex: { upstreams: [shop, ev] }
`;
}

type Answer = ModernAnswer;

describe('tasks through toolgate gateway', () => {
  const suite = gatewayPerSuite(config, TOKENS);
  let inbox: string;
  beforeAll(() => {
    inbox = new URL('/inbox', suite.gateway.url).href;
  });

  const refunds = () => suite.dir.runs().filter((tool) => tool === 'refund').length;

  const modern = (
    token: string,
    method: string,
    params: Record<string, unknown>,
    capabilities: Record<string, unknown> = WITH_TASKS,
  ): Promise<Answer> => modernRequest(suite.gateway.url, token, method, params, capabilities);

  async function until(token: string, taskId: string, done: (status: string) => boolean) {
    for (let i = 0; i < 300; i++) {
      const got = await modern(token, 'tasks/get', { taskId });
      if (got.result === undefined) throw new Error(`tasks/get failed: ${got.error?.message}`);
      if (done(String(got.result['status']))) return got.result;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error('the task did not get there in time');
  }

  const inboxApi = async (path: string, body?: unknown) => {
    const response = await fetch(`${inbox}/api/check-ins${path}`, {
      method: body === undefined ? 'GET' : 'POST',
      headers: {
        authorization: `Bearer ${TOKENS.ANA_TOKEN}`,
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    return { status: response.status, json: (await response.json()) as Record<string, unknown> };
  };

  const textOf = (result: unknown) =>
    ((result as { content?: { text?: string }[] }).content ?? []).map((block) => block.text ?? '').join('\n');
  const urlOf = (task: Record<string, unknown>) =>
    String(
      (task['inputRequests'] as Record<string, { params: { url: string } }> | undefined)?.['approval']?.params
        .url,
    );
  const checkInIdOf = (url: string) => decodeURIComponent(url.slice(url.lastIndexOf('/') + 1));

  it("server-everything's task-only tool runs through the gateway (stdio upstream), as a task and plainly", async () => {
    const created = await modern(TOKENS.BOT_TOKEN, 'tools/call', {
      name: 'ev_simulate-research-query',
      arguments: { topic: 'gateways' },
    });
    expect(created.result).toMatchObject({ resultType: 'task', status: 'working' });
    const done = await until(TOKENS.BOT_TOKEN, String(created.result!['taskId']), (s) => s !== 'working');
    expect(done['status']).toBe('completed');
    expect(textOf(done['result'])).toContain('Research Report: gateways');
    // An SDK v2 client on 2025-11-25 that asks for no task gets the result: the gateway waits for the task.
    const legacy = new V2Client(
      { name: 'legacy', version: '1.0.0' },
      { versionNegotiation: { mode: 'legacy' } },
    );
    await legacy.connect(
      new V2Transport(new URL(suite.gateway.url), {
        requestInit: { headers: { authorization: `Bearer ${TOKENS.BOT_TOKEN}` } },
      }),
    );
    try {
      const listed = await legacy.listTools();
      expect(listed.tools.find((t) => t.name === 'ev_simulate-research-query')?.execution).toEqual({
        taskSupport: 'required',
      });
      const plain = await legacy.callTool({
        name: 'ev_simulate-research-query',
        arguments: { topic: 'proxies' },
      });
      expect(plain.isError).not.toBe(true);
      expect(textOf(plain)).toContain('Research Report: proxies');
    } finally {
      await legacy.close();
    }
  }, 60_000);

  it('approval as a task: input_required at the inbox page, approved there, working → completed, the tool ran once', async () => {
    const before = refunds();
    const created = await modern(
      TOKENS.BOT_TOKEN,
      'tools/call',
      { name: 'shop_refund', arguments: { amount: 300, order: 't-1' } },
      { elicitation: { url: {} }, extensions: { 'io.modelcontextprotocol/tasks': {} } },
    );
    expect(created.result).toMatchObject({ resultType: 'task', status: 'input_required' });
    const taskId = String(created.result!['taskId']);
    const waiting = await modern(TOKENS.BOT_TOKEN, 'tasks/get', { taskId });
    expect(waiting.result).toMatchObject({ status: 'input_required' });
    const url = urlOf(waiting.result!);
    expect(url).toMatch(new RegExp(`^${new URL(suite.gateway.url).origin}/inbox/check-ins/[^/]+$`));
    expect(refunds()).toBe(before);
    // Another principal of the tenant, and the same principal name in another tenant, see nothing.
    for (const token of [TOKENS.EVE_TOKEN, TOKENS.GLOBEX_TOKEN])
      expect((await modern(token, 'tasks/get', { taskId })).error?.message).toMatch(/Unknown task/);
    expect((await inboxApi(`/${encodeURIComponent(checkInIdOf(url))}/approve`, {})).status).toBe(200);
    const done = await until(TOKENS.BOT_TOKEN, taskId, (s) => s === 'completed' || s === 'failed');
    expect(done['status']).toBe('completed');
    expect(textOf(done['result'])).toContain('t-1');
    expect(refunds()).toBe(before + 1);
    // The call's log line is written when the task ends, naming the check-in and how it was decided.
    const line = await suite.gateway.waitForLog(
      (l) => l['msg'] === 'call' && l['checkInId'] === checkInIdOf(url) && l['ran'] === true,
    );
    expect(line).toMatchObject({
      tenant: 'acme',
      principal: 'support-bot',
      tool: 'shop_refund',
      checkIn: 'inbox',
    });
    // Reading it again runs nothing again.
    await modern(TOKENS.BOT_TOKEN, 'tasks/get', { taskId });
    expect(refunds()).toBe(before + 1);
  }, 30_000);

  it('2025-11-25: an SDK v2 client asks for a task on a call that needs approval; tasks/result answers once approved', async () => {
    const before = refunds();
    const any = {
      '~standard': {
        version: 1 as const,
        vendor: 'test',
        validate: (value: unknown) => ({ value: value as Record<string, unknown> }),
        types: undefined as unknown as { input: Record<string, unknown>; output: Record<string, unknown> },
      },
    };
    const connect = async (token: string) => {
      const made = new V2Client(
        { name: 'legacy', version: '1.0.0' },
        { versionNegotiation: { mode: 'legacy' } },
      );
      await made.connect(
        new V2Transport(new URL(suite.gateway.url), {
          requestInit: { headers: { authorization: `Bearer ${token}` } },
        }),
      );
      return made;
    };
    const bot = await connect(TOKENS.BOT_TOKEN);
    const eve = await connect(TOKENS.EVE_TOKEN);
    try {
      const created = await bot.request(
        {
          method: 'tools/call',
          params: { name: 'shop_refund', arguments: { amount: 350, order: 'l-1' }, task: { ttl: 60_000 } },
        } as never,
        any,
      );
      const task = created['task'] as { taskId: string; status: string; statusMessage: string };
      expect(task.status).toBe('input_required');
      const page = /(http:\/\/\S+\/inbox\/check-ins\/[^\s.]+)/.exec(task.statusMessage)?.[1];
      expect(page).toBeDefined();
      await expect(
        eve.request({ method: 'tasks/result', params: { taskId: task.taskId } } as never, any),
      ).rejects.toThrow(/Unknown task/);
      const result = bot.request({ method: 'tasks/result', params: { taskId: task.taskId } } as never, any, {
        timeout: 20_000,
      });
      expect(refunds()).toBe(before);
      expect((await inboxApi(`/${encodeURIComponent(checkInIdOf(page!))}/approve`, {})).status).toBe(200);
      expect(textOf(await result)).toContain('l-1');
      expect(refunds()).toBe(before + 1);
    } finally {
      await bot.close();
      await eve.close();
    }
  }, 30_000);

  it('a decline fails the task with the reason; nothing runs', async () => {
    const before = refunds();
    const created = await modern(TOKENS.BOT_TOKEN, 'tools/call', {
      name: 'shop_refund',
      arguments: { amount: 400, order: 't-2' },
    });
    const taskId = String(created.result!['taskId']);
    const pendingList = await inboxApi('');
    const row = (pendingList.json['checkIns'] as { id: string; args?: Record<string, unknown> }[]).find(
      (checkIn) => checkIn.args?.['order'] === 't-2',
    );
    expect(row).toBeDefined();
    await inboxApi(`/${encodeURIComponent(row!.id)}/decline`, { reason: 'refund to the original card only' });
    const done = await until(TOKENS.BOT_TOKEN, taskId, (s) => s === 'completed' || s === 'failed');
    expect(done['status']).toBe('failed');
    expect((done['error'] as { message: string }).message).toContain('refund to the original card only');
    expect(refunds()).toBe(before);
  }, 30_000);

  it('form answer through tasks/update decides; only the owner can update', async () => {
    const before = refunds();
    const created = await modern(
      TOKENS.BOT_TOKEN,
      'tools/call',
      { name: 'shop_refund', arguments: { amount: 150, order: 't-3' } },
      { elicitation: { form: {} }, extensions: { 'io.modelcontextprotocol/tasks': {} } },
    );
    const taskId = String(created.result!['taskId']);
    const waiting = await modern(TOKENS.BOT_TOKEN, 'tasks/get', { taskId });
    const asked = (waiting.result!['inputRequests'] as Record<string, { params: { message: string } }>)[
      'approval'
    ];
    expect(asked?.params.message).toContain('order: "t-3"');
    const approve = { approval: { action: 'accept', content: { decision: 'approve' } } };
    const foreign = await modern(TOKENS.EVE_TOKEN, 'tasks/update', { taskId, inputResponses: approve });
    expect(foreign.error?.message).toMatch(/Unknown task/);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect((await modern(TOKENS.BOT_TOKEN, 'tasks/get', { taskId })).result).toMatchObject({
      status: 'input_required',
    });
    expect(
      (await modern(TOKENS.BOT_TOKEN, 'tasks/update', { taskId, inputResponses: approve })).result,
    ).toEqual(expect.objectContaining({ resultType: 'complete' }));
    const done = await until(TOKENS.BOT_TOKEN, taskId, (s) => s === 'completed' || s === 'failed');
    expect(done['status']).toBe('completed');
    expect(refunds()).toBe(before + 1);
    // Replaying the answer, or cancelling now, changes nothing and runs nothing again.
    await modern(TOKENS.BOT_TOKEN, 'tasks/update', { taskId, inputResponses: approve });
    await modern(TOKENS.BOT_TOKEN, 'tasks/cancel', { taskId });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect((await modern(TOKENS.BOT_TOKEN, 'tasks/get', { taskId })).result).toMatchObject({
      status: 'completed',
    });
    expect(refunds()).toBe(before + 1);
  }, 30_000);

  it("cancel by another principal changes nothing; the owner's cancel withdraws the check-in and nothing runs", async () => {
    const before = refunds();
    const created = await modern(TOKENS.BOT_TOKEN, 'tools/call', {
      name: 'shop_refund',
      arguments: { amount: 500, order: 't-4' },
    });
    const taskId = String(created.result!['taskId']);
    const findRow = async () =>
      ((await inboxApi('')).json['checkIns'] as { id: string; args?: Record<string, unknown> }[]).find(
        (checkIn) => checkIn.args?.['order'] === 't-4',
      );
    const row = await findRow();
    expect(row).toBeDefined();
    expect((await modern(TOKENS.EVE_TOKEN, 'tasks/cancel', { taskId })).error?.message).toMatch(
      /Unknown task/,
    );
    expect((await modern(TOKENS.BOT_TOKEN, 'tasks/get', { taskId })).result).toMatchObject({
      status: 'input_required',
    });
    expect((await modern(TOKENS.BOT_TOKEN, 'tasks/cancel', { taskId })).result).toMatchObject({
      resultType: 'complete',
    });
    expect((await modern(TOKENS.BOT_TOKEN, 'tasks/get', { taskId })).result).toMatchObject({
      status: 'cancelled',
    });
    // The check-in leaves the inbox; approving it now runs nothing.
    for (let i = 0; i < 50 && (await findRow()) !== undefined; i++)
      await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await findRow()).toBeUndefined();
    const late = await inboxApi(`/${encodeURIComponent(row!.id)}/approve`, {});
    expect(late.status).not.toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(refunds()).toBe(before);
  }, 30_000);
});
