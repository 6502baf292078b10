// Tasks across gateway processes (GATEWAY.md §6 item 2, scale-out): three `toolgate gateway` processes
// on one `stores.state` (a SQLite file; PostgreSQL too when TOOLGATE_POSTGRES_URL is set) answer a
// task created on any of them. A 2026-07-28 client creates an approval task on one process, reads it
// and cancels it or answers its form on another, and the approval taken through a third runs the call
// exactly once; another principal's or tenant's request names a task that does not exist.
//
// The 2026-07-28 requests are raw JSON-RPC over HTTP: the SDK v2 client (2.4) rejects `resultType:
// "task"` (docs/design-notes.md).

import {
  Client as V2Client,
  StreamableHTTPClientTransport as V2Transport,
} from '@modelcontextprotocol/client';
import {
  CHECKIN_KEY,
  fixtureServer,
  startGateway,
  tempDir,
  type GatewayProcess,
  type TempDir,
} from './helpers';
import { modernRequest, WITH_TASKS, type ModernAnswer } from '../../../test-support/modern-request';

const TOKENS = {
  BOT: 'shared-bot-token-0123456789abcdef-0123456',
  EVE: 'shared-eve-token-0123456789abcdef-0123456',
  GLOBEX: 'shared-globex-token-0123456789abcdef-0123',
  ANA: 'shared-approver-token-0123456789abcdef-01',
};

type Answer = ModernAnswer;

const postgresUrl = process.env['TOOLGATE_POSTGRES_URL'];
// node:sqlite comes with Node 22.13 and later; on an older Node only PostgreSQL (when set) is tried.
const hasSqlite = process.getBuiltinModule?.('node:sqlite') !== undefined;
const stores: [string, string][] = [];
if (hasSqlite) stores.push(['SQLite file', '"sqlite:./state.db"']);
if (postgresUrl !== undefined) stores.push(['PostgreSQL', '"${env:PG}"']);
if (stores.length === 0) {
  console.warn(
    'shared tasks tests skipped: this Node has no node:sqlite and TOOLGATE_POSTGRES_URL is not set',
  );
  stores.push(['none', '']);
}

(hasSqlite || postgresUrl !== undefined ? describe.each(stores) : describe.skip.each(stores))(
  'tasks on three gateway processes sharing one state store (%s)',
  (_kind, state) => {
    let dir: TempDir;
    let gateways: GatewayProcess[] = [];
    let a: GatewayProcess, b: GatewayProcess, c: GatewayProcess;
    const run = `${Date.now().toString(36)}`;

    beforeAll(async () => {
      dir = tempDir();
      const file = dir.write(
        'toolgate.yaml',
        `auth:
  tokens:
    - { token: "\${env:BOT}", identity: { tenant: acme, principal: bot } }
    - { token: "\${env:EVE}", identity: { tenant: acme, principal: eve } }
    - { token: "\${env:GLOBEX}", identity: { tenant: globex, principal: bot } }
    - { token: "\${env:ANA}", identity: { tenant: acme, principal: ana, roles: [approver] } }
stores: { state: ${state} }
checkIns: { key: "\${env:KEY}", hold: 200ms, ttl: 10m }
upstreams:
  shop:
    command: [node, ${JSON.stringify(fixtureServer)}]
    env: { RUN_LOG: ${JSON.stringify(`${dir.path}/runs.log`)} }
    tools: { refund: { checkIn: always } }
tenants:
  acme: { upstreams: [shop] }
  globex: { upstreams: [shop] }
`,
      );
      const env = { ...TOKENS, KEY: CHECKIN_KEY, ...(postgresUrl !== undefined ? { PG: postgresUrl } : {}) };
      // The first one creates the file's tables; the others open it after.
      a = await startGateway(file, env);
      [b, c] = await Promise.all([startGateway(file, env), startGateway(file, env)]);
      gateways = [a, b, c];
    }, 90_000);
    afterAll(async () => {
      await Promise.all(gateways.map((gateway) => gateway.stop()));
      dir?.remove();
    });

    const refunds = () => dir.runs().filter((tool) => tool === 'refund').length;

    const modern = (
      gateway: GatewayProcess,
      token: string,
      method: string,
      params: Record<string, unknown>,
      capabilities: Record<string, unknown> = WITH_TASKS,
    ): Promise<Answer> => modernRequest(gateway.url, token, method, params, capabilities);

    async function until(gateway: GatewayProcess, taskId: string, done: (status: string) => boolean) {
      for (let i = 0; i < 300; i++) {
        const got = await modern(gateway, TOKENS.BOT, 'tasks/get', { taskId });
        if (got.result === undefined) throw new Error(`tasks/get failed: ${got.error?.message}`);
        if (done(String(got.result['status']))) return got.result;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      throw new Error('the task did not get there in time');
    }
    const ended = (status: string) => status === 'completed' || status === 'failed' || status === 'cancelled';

    const checkIns = async (gateway: GatewayProcess, order: string) => {
      const response = await fetch(new URL('/inbox/api/check-ins', gateway.url), {
        headers: { authorization: `Bearer ${TOKENS.ANA}` },
      });
      const listed = (
        (await response.json()) as { checkIns: { id: string; args?: Record<string, unknown> }[] }
      ).checkIns;
      return listed.filter((checkIn) => checkIn.args?.['order'] === order);
    };
    const decide = (gateway: GatewayProcess, id: string, how: 'approve' | 'decline', body: unknown = {}) =>
      fetch(new URL(`/inbox/api/check-ins/${encodeURIComponent(id)}/${how}`, gateway.url), {
        method: 'POST',
        headers: { authorization: `Bearer ${TOKENS.ANA}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const textOf = (result: unknown) =>
      ((result as { content?: { text?: string }[] }).content ?? [])
        .map((block) => block.text ?? '')
        .join('\n');
    const refundLogged = (gateway: GatewayProcess) =>
      gateway
        .logs()
        .filter((line) => line['msg'] === 'call' && line['tool'] === 'refund' && line['ran'] === true).length;

    it('created on A, read on B, approved through C: completed on every process, the tool ran once', async () => {
      const order = `s1-${run}`;
      const before = refunds();
      const ranBefore = gateways.map(refundLogged);
      const created = await modern(
        a,
        TOKENS.BOT,
        'tools/call',
        { name: 'refund', arguments: { amount: 300, order } },
        { elicitation: { url: {} }, ...WITH_TASKS },
      );
      expect(created.result).toMatchObject({ resultType: 'task', status: 'input_required' });
      const taskId = String(created.result!['taskId']);
      const onB = await modern(b, TOKENS.BOT, 'tasks/get', { taskId });
      expect(onB.result).toMatchObject({ taskId, status: 'input_required' });
      const asked = (onB.result!['inputRequests'] as Record<string, { params: { url: string } }>)['approval'];
      expect(asked?.params.url).toMatch(/\/inbox\/check-ins\/[^/]+$/);
      // Another principal of the tenant, the same principal name in another tenant, and a made-up id
      // are answered alike, on every process.
      for (const gateway of [b, c]) {
        for (const token of [TOKENS.EVE, TOKENS.GLOBEX]) {
          const foreign = await modern(gateway, token, 'tasks/get', { taskId });
          expect(foreign.result).toBeUndefined();
          expect(foreign.error?.message).toMatch(/Unknown task/);
        }
        const madeUp = await modern(gateway, TOKENS.BOT, 'tasks/get', {
          taskId: `${taskId.slice(0, -1)}${taskId.endsWith('0') ? '1' : '0'}`,
        });
        expect(madeUp.error?.message).toMatch(/Unknown task/);
      }
      const [pending] = await checkIns(c, order);
      expect(pending).toBeDefined();
      expect(asked!.params.url).toContain(encodeURIComponent(pending!.id));
      expect(refunds()).toBe(before);
      expect((await decide(c, pending!.id, 'approve', { note: 'ok' })).status).toBe(200);
      const done = await until(b, taskId, ended);
      expect(done['status']).toBe('completed');
      expect(textOf(done['result'])).toContain(order);
      expect((await modern(c, TOKENS.BOT, 'tasks/get', { taskId })).result).toMatchObject({
        status: 'completed',
      });
      expect(refunds()).toBe(before + 1);
      // One process ran it (the one whose task it is), the others none; reading again runs nothing.
      const ran = gateways.map((gateway, i) => refundLogged(gateway) - ranBefore[i]!);
      expect(ran).toEqual([1, 0, 0]);
      await modern(c, TOKENS.BOT, 'tasks/get', { taskId });
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(refunds()).toBe(before + 1);
    }, 60_000);

    it("a cancel on B is seen by A: the check-in is withdrawn, a late approval runs nothing; another's cancel changes nothing", async () => {
      const order = `s2-${run}`;
      const before = refunds();
      const created = await modern(a, TOKENS.BOT, 'tools/call', {
        name: 'refund',
        arguments: { amount: 40, order },
      });
      const taskId = String(created.result!['taskId']);
      const [pending] = await checkIns(a, order);
      expect(pending).toBeDefined();
      expect((await modern(b, TOKENS.EVE, 'tasks/cancel', { taskId })).error?.message).toMatch(
        /Unknown task/,
      );
      expect((await modern(c, TOKENS.BOT, 'tasks/get', { taskId })).result).toMatchObject({
        status: 'input_required',
      });
      expect((await modern(b, TOKENS.BOT, 'tasks/cancel', { taskId })).result).toMatchObject({
        resultType: 'complete',
      });
      expect((await modern(c, TOKENS.BOT, 'tasks/get', { taskId })).result).toMatchObject({
        status: 'cancelled',
      });
      // A reads the store, aborts the wait and withdraws the check-in.
      for (let i = 0; i < 100 && (await checkIns(c, order)).length > 0; i++)
        await new Promise((resolve) => setTimeout(resolve, 100));
      expect(await checkIns(c, order)).toEqual([]);
      expect((await decide(b, pending!.id, 'approve')).status).not.toBe(200);
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(refunds()).toBe(before);
      expect((await modern(a, TOKENS.BOT, 'tasks/get', { taskId })).result).toMatchObject({
        status: 'cancelled',
      });
    }, 60_000);

    it('a form answer given through tasks/update on C decides the task A runs; only the owner can answer', async () => {
      const order = `s3-${run}`;
      const before = refunds();
      const created = await modern(
        a,
        TOKENS.BOT,
        'tools/call',
        { name: 'refund', arguments: { amount: 15, order } },
        { elicitation: { form: {} }, ...WITH_TASKS },
      );
      const taskId = String(created.result!['taskId']);
      const approve = { approval: { action: 'accept', content: { decision: 'approve' } } };
      expect(
        (await modern(c, TOKENS.GLOBEX, 'tasks/update', { taskId, inputResponses: approve })).error?.message,
      ).toMatch(/Unknown task/);
      await new Promise((resolve) => setTimeout(resolve, 1000));
      expect((await modern(b, TOKENS.BOT, 'tasks/get', { taskId })).result).toMatchObject({
        status: 'input_required',
      });
      expect(refunds()).toBe(before);
      expect(
        (await modern(c, TOKENS.BOT, 'tasks/update', { taskId, inputResponses: approve })).result,
      ).toMatchObject({
        resultType: 'complete',
      });
      const done = await until(b, taskId, ended);
      expect(done['status']).toBe('completed');
      expect(refunds()).toBe(before + 1);
    }, 60_000);

    it('a decline through B fails the task A runs with the reason, read on C; nothing runs', async () => {
      const order = `s4-${run}`;
      const before = refunds();
      const created = await modern(a, TOKENS.BOT, 'tools/call', {
        name: 'refund',
        arguments: { amount: 9, order },
      });
      const taskId = String(created.result!['taskId']);
      const [pending] = await checkIns(b, order);
      expect((await decide(b, pending!.id, 'decline', { reason: 'not this order' })).status).toBe(200);
      const done = await until(c, taskId, ended);
      expect(done['status']).toBe('failed');
      expect((done['error'] as { message: string }).message).toContain('not this order');
      expect(refunds()).toBe(before);
    }, 60_000);

    // A real crash (SIGKILL) leaves the task live in the store; the lease (30 s) running out is played by
    // moving its renewal time back in the file, which the test can reach for SQLite only (the store
    // laws cover PostgreSQL's lease).
    if (_kind === 'SQLite file')
      it('a task whose process was killed reads failed with TASK_RUNNER_LOST on the others once its lease ran out; nothing runs', async () => {
        const order = `s6-${run}`;
        const before = refunds();
        const doomed = await startGateway(`${dir.path}/toolgate.yaml`, {
          ...TOKENS,
          KEY: CHECKIN_KEY,
        });
        let taskId: string;
        try {
          const created = await modern(doomed, TOKENS.BOT, 'tools/call', {
            name: 'refund',
            arguments: { amount: 7, order },
          });
          taskId = String(created.result!['taskId']);
          expect((await modern(a, TOKENS.BOT, 'tasks/get', { taskId })).result).toMatchObject({
            status: 'input_required',
          });
        } finally {
          await doomed.stop('SIGKILL');
        }
        const { DatabaseSync } = process.getBuiltinModule('node:sqlite') as typeof import('node:sqlite');
        const db = new DatabaseSync(`${dir.path}/state.db`);
        try {
          db.prepare(`UPDATE toolgate_tasks SET renewed_ms = renewed_ms - 60000 WHERE id = ?`).run(taskId);
        } finally {
          db.close();
        }
        const onB = await modern(b, TOKENS.BOT, 'tasks/get', { taskId });
        expect(onB.result).toMatchObject({
          taskId,
          status: 'failed',
          error: { code: -32004, message: expect.stringMatching(/whether the tool ran is not known/) },
        });
        expect(JSON.stringify(onB.result)).not.toContain(order);
        expect((await modern(c, TOKENS.BOT, 'tasks/get', { taskId })).result).toMatchObject({
          status: 'failed',
        });
        expect(refunds()).toBe(before);
        // The process that ended it tells its operator, once, with how many and whose, no values.
        // Its log line reaches this test after the answer did (stderr, written in batches).
        await b.waitForLog((line) => line['event'] === 'task.runner-lost');
        const lost = b.logs().filter((line) => line['event'] === 'task.runner-lost');
        expect(lost).toEqual([
          expect.objectContaining({ level: 'warn', tenant: 'acme', principal: 'bot', tasks: 1 }),
        ]);
        expect(JSON.stringify(lost)).not.toContain(order);
        expect(c.logs().filter((line) => line['event'] === 'task.runner-lost')).toEqual([]);
      }, 60_000);

    it('2025-11-25: a task created in a session on A is listed and its result read in a session on B', async () => {
      const order = `s5-${run}`;
      const before = refunds();
      const any = {
        '~standard': {
          version: 1 as const,
          vendor: 'test',
          validate: (value: unknown) => ({ value: value as Record<string, unknown> }),
          types: undefined as unknown as { input: Record<string, unknown>; output: Record<string, unknown> },
        },
      };
      const connect = async (gateway: GatewayProcess, token: string) => {
        const made = new V2Client(
          { name: 'legacy', version: '1.0.0' },
          { versionNegotiation: { mode: 'legacy' } },
        );
        await made.connect(
          new V2Transport(new URL(gateway.url), {
            requestInit: { headers: { authorization: `Bearer ${token}` } },
          }),
        );
        return made;
      };
      const onA = await connect(a, TOKENS.BOT);
      const onB = await connect(b, TOKENS.BOT);
      const eveOnB = await connect(b, TOKENS.EVE);
      try {
        const created = await onA.request(
          {
            method: 'tools/call',
            params: { name: 'refund', arguments: { amount: 12, order }, task: { ttl: 60_000 } },
          } as never,
          any,
        );
        const taskId = (created['task'] as { taskId: string }).taskId;
        const listed = await onB.request({ method: 'tasks/list', params: {} } as never, any);
        expect((listed['tasks'] as { taskId: string }[]).map((task) => task.taskId)).toContain(taskId);
        const eveListed = await eveOnB.request({ method: 'tasks/list', params: {} } as never, any);
        expect((eveListed['tasks'] as { taskId: string }[]).map((task) => task.taskId)).not.toContain(taskId);
        await expect(
          eveOnB.request({ method: 'tasks/result', params: { taskId } } as never, any),
        ).rejects.toThrow(/Unknown task/);
        const result = onB.request({ method: 'tasks/result', params: { taskId } } as never, any, {
          timeout: 30_000,
        });
        const [pending] = await checkIns(c, order);
        expect((await decide(c, pending!.id, 'approve')).status).toBe(200);
        expect(textOf(await result)).toContain(order);
        expect(refunds()).toBe(before + 1);
      } finally {
        await Promise.all([onA.close(), onB.close(), eveOnB.close()]);
      }
    }, 60_000);
  },
);
