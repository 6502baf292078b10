// End to end: a dispatcher whose check-ins live in PostgreSQL, across processes, in a race of eight,
// and while connections drop and the server restarts. The fixture processes are in test/fixtures.

import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { Type } from 'typebox';
import {
  checkInApproved,
  createChain,
  createDispatcher,
  defineTool,
  type CheckInRequest,
  type DispatchOutcome,
  EVENT_TYPES,
  type Middleware,
} from '@toolgate/core';
import {
  postgresArtifacts,
  postgresCheckIns,
  type PostgresCheckInsOptions,
  type PostgresCheckInStore,
} from '@toolgate/store-postgres';
import { canonicalChain } from '@toolgate/middleware';
import { mockTool } from '@toolgate/testing';
import {
  describePostgres,
  eventually,
  finished,
  freshSchemaName,
  lastJson,
  postgresBin,
  postgresUrl,
  printed,
  runFixture,
  schemas,
  startFixture,
  throwawayServer,
  type ThrowawayServer,
} from './support';

const linesIn = (file: string) =>
  existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean) : [];

function tempDir() {
  const dir = mkdtempSync(path.join(tmpdir(), 'toolgate-pg-'));
  return {
    file: (name: string) => path.join(dir, name),
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** A dispatcher whose one gate asks a human first; records every tool run and every event. */
function app(options: PostgresCheckInsOptions) {
  const store = postgresCheckIns(options);
  const calls: string[] = [];
  const events: unknown[] = [];
  const askFirst: Middleware = {
    name: 'ask-first',
    async run(ctx, next) {
      await ctx.ask('Delete the file?');
      await next();
    },
  };
  const remove = defineTool({
    name: 'delete_file',
    description: 'Deletes a file.',
    inputSchema: Type.Object({ name: Type.String() }),
    execute: ({ name }) => {
      calls.push(name);
      return 'deleted';
    },
  });
  const dispatcher = createDispatcher({
    tools: [remove],
    chain: createChain([askFirst], { checkIns: { key: 'durability-test-check-in-key-0123456789', store } }),
  });
  for (const type of EVENT_TYPES)
    dispatcher.events.on(type, (event: unknown) => events.push({ type, event }));
  const pause = async (): Promise<CheckInRequest> => {
    const outcome = await dispatcher.dispatch({ toolName: 'delete_file', args: { name: 'report.pdf' } });
    if (outcome.kind !== 'paused') throw new Error(`expected a pause, got ${outcome.kind}`);
    return outcome.checkIn;
  };
  const approve = (request: CheckInRequest) =>
    dispatcher.resume(request, checkInApproved({ by: 'ops@example.com' }));
  return { store, dispatcher, calls, events, pause, approve };
}

const FAILED_CLOSED = { kind: 'refused', code: 'CHECKIN_STORE_FAILED', retryable: true, ran: false };

/** Nothing the dispatcher hands out mentions where the server is or who connects to it. */
function expectNoServerDetails(outcomes: DispatchOutcome[], events: unknown[], url: string) {
  const text = JSON.stringify({ outcomes, events });
  const { host, username } = new URL(url);
  expect(text).not.toContain(url);
  expect(text).not.toContain(host);
  expect(text).not.toContain(`${username}@`);
}

describePostgres('check-ins that outlive a process', () => {
  const schema = schemas('durability');
  let tmp: ReturnType<typeof tempDir>;
  beforeEach(() => (tmp = tempDir()));
  afterEach(() => tmp.cleanup());

  it('lets a restarted process honor an approval once, and refuses the same approval a second time', async () => {
    const [name, log, req] = [schema.next(), tmp.file('ran.log'), tmp.file('request.json')];

    expect(await runFixture('dispatch', [name, log, req])).toEqual({ kind: 'paused', ran: false });
    expect(linesIn(log)).toEqual([]);

    expect(await runFixture('resume', [name, log, req])).toEqual({ kind: 'result', ran: true });
    expect(linesIn(log)).toEqual(['ran']);

    expect(await runFixture('resume', [name, log, req])).toEqual({
      kind: 'refused',
      ran: false,
      code: 'CHECKIN_NOT_PENDING',
    });
    expect(linesIn(log)).toEqual(['ran']);
  });

  it('runs the tool exactly once when eight processes resume the same approved request at once', async () => {
    const [name, log, req] = [schema.next(), tmp.file('ran.log'), tmp.file('request.json')];
    await runFixture('dispatch', [name, log, req]);

    const racers = Array.from({ length: 8 }, () => startFixture('resume', [name, log, req, '--on-go']));
    const done = racers.map(finished);
    await Promise.all(racers.map((child) => printed(child, 'ready')));
    for (const child of racers) child.stdin.end('go\n');
    const outcomes = (await Promise.all(done)).map(lastJson);

    expect(
      outcomes.filter((o) => JSON.stringify(o) === JSON.stringify({ kind: 'result', ran: true })),
    ).toHaveLength(1);
    expect(
      outcomes.filter(
        (o) =>
          JSON.stringify(o) === JSON.stringify({ kind: 'refused', ran: false, code: 'CHECKIN_NOT_PENDING' }),
      ),
    ).toHaveLength(7);
    expect(linesIn(log)).toEqual(['ran']);
    const { rows } = await schema
      .admin()
      .query(`SELECT state, receipt->>'by' AS by FROM "${name}".toolgate_check_ins`);
    expect(rows).toEqual([{ state: 'consumed', by: 'ops@example.com' }]);
  }, 120_000);
});

describePostgres('a connection that drops fails closed', () => {
  const schema = schemas('dropped');
  const stores: PostgresCheckInStore[] = [];
  afterEach(async () => {
    for (const s of stores.splice(0)) await s.close();
  });

  const named = (application: string) => {
    const url = new URL(postgresUrl());
    url.searchParams.set('application_name', application);
    return url.toString();
  };

  it('refuses a resume whose connection is terminated mid-consume, retryably, and the next resume runs the tool once', async () => {
    const application = freshSchemaName('app');
    const name = schema.next();
    const { store, calls, events, pause, approve } = app({
      connectionString: named(application),
      schema: name,
    });
    stores.push(store);
    const request = await pause();

    // Hold the row, so the consume waits on it; then cut that consume's connection.
    const admin = await schema.admin().connect();
    try {
      await admin.query('BEGIN');
      await admin.query(`SELECT id FROM "${name}".toolgate_check_ins WHERE id = $1 FOR UPDATE`, [request.id]);
      const resumed = approve(request);
      const waiting = () =>
        admin.query(
          `SELECT pid FROM pg_stat_activity WHERE application_name = $1 AND wait_event_type = 'Lock'`,
          [application],
        );
      await eventually(async () => (await waiting()).rows.length > 0, 'the consume to wait on the row lock');
      await admin.query(
        `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1 AND wait_event_type = 'Lock'`,
        [application],
      );
      const cut = await resumed;
      expect(cut).toMatchObject(FAILED_CLOSED);
      expect(calls).toEqual([]);
      await admin.query('ROLLBACK');

      const retried = await approve(request);
      expect(retried).toMatchObject({ kind: 'result', ran: true });
      expect(calls).toEqual(['report.pdf']);
      expect(await approve(request)).toMatchObject({ kind: 'refused', code: 'CHECKIN_NOT_PENDING' });
      expect(calls).toEqual(['report.pdf']);
      expectNoServerDetails([cut, retried], events, postgresUrl());
    } finally {
      admin.release();
    }
  });

  it('survives its idle connections being terminated, and the next call opens a new one and succeeds', async () => {
    const application = freshSchemaName('app');
    const pool = new pg.Pool({ connectionString: named(application), max: 3 });
    try {
      const { store, calls, pause, approve } = app({ pool, schema: schema.next() });
      stores.push(store);
      const request = await pause();
      expect(pool.idleCount).toBeGreaterThan(0);

      await schema
        .admin()
        .query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1`, [
          application,
        ]);
      // The pool reports each dropped idle client as an 'error' event; unheard, it would crash the process.
      await eventually(async () => pool.totalCount === 0, 'the pool to drop its terminated clients');

      expect(await approve(request)).toMatchObject({ kind: 'result', ran: true });
      expect(calls).toEqual(['report.pdf']);
    } finally {
      await pool.end();
    }
  });
});

const bin = postgresBin();
const describeRestart = bin === undefined ? describe.skip : describe;
if (bin === undefined) {
  process.stderr.write(
    'store-postgres: no initdb/pg_ctl found (TOOLGATE_POSTGRES_BIN or the postgresql lib folder), so the server-restart test is skipped\n',
  );
}

describeRestart('a server that restarts mid-run', () => {
  let server: ThrowawayServer | undefined;
  const stores: PostgresCheckInStore[] = [];
  const closers: { close(): Promise<void> }[] = [];
  afterAll(async () => {
    for (const s of [...stores.splice(0), ...closers.splice(0)]) await s.close();
    server?.destroy();
  });

  beforeAll(async () => {
    server = await throwawayServer(bin!);
  });

  it('refuses calls retryably while the server is down, runs nothing, and honours the approval once it is back', async () => {
    if (server === undefined) throw new Error('no server');
    const { store, calls, events, pause, approve, dispatcher } = app({
      connectionString: server.url,
      connectTimeoutMs: 2000,
    });
    stores.push(store);
    const request = await pause();

    server.stop();
    const whileDown = await approve(request);
    expect(whileDown).toMatchObject(FAILED_CLOSED);
    const newCall = await dispatcher.dispatch({ toolName: 'delete_file', args: { name: 'other.pdf' } });
    expect(newCall).toMatchObject(FAILED_CLOSED);
    expect(calls).toEqual([]);

    server.start();
    const back = await approve(request);
    expect(back).toMatchObject({ kind: 'result', ran: true });
    expect(calls).toEqual(['report.pdf']);
    expect(await approve(request)).toMatchObject({ kind: 'refused', code: 'CHECKIN_NOT_PENDING' });
    expect(calls).toEqual(['report.pdf']);
    expectNoServerDetails([whileDown, newCall, back], events, server.url);
  }, 120_000);

  it('refuses a wanted artifact retryably while the server is down, and serves it once the server is back', async () => {
    if (server === undefined) throw new Error('no server');
    const artifacts = postgresArtifacts({
      connectionString: server.url,
      schema: 'wants',
      connectTimeoutMs: 2000,
    });
    closers.push(artifacts);
    const tool = mockTool({ name: 'summarize', wants: { report: 'report/rows' }, result: 'summary' });
    const dispatcher = createDispatcher({ tools: [tool], chain: canonicalChain({ artifacts }) });
    const identity = { tenant: 'acme', principal: 'ann', conversation: 'c-1' };
    const ref = await artifacts.put(identity, { kind: 'report/rows', data: { rows: [1, 2] } });
    const call = () => dispatcher.dispatch({ toolName: 'summarize', args: { report: ref } }, { identity });

    server.stop();
    const whileDown = await call();
    expect(whileDown).toMatchObject({
      kind: 'refused',
      code: 'ARTIFACT_STORE_FAILED',
      retryable: true,
      ran: false,
    });
    expect(tool.callCount).toBe(0);

    server.start();
    expect(await call()).toMatchObject({ kind: 'result', ran: true });
    expect(tool.lastCall?.args).toEqual({ report: { rows: [1, 2] } });
  }, 120_000);
});
