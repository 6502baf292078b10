// End to end: a dispatcher whose check-ins live in SQLite, across processes, restarts, races, and a
// database that is corrupt or locked. The fixture processes are in test/fixtures.

import { DatabaseSync as Database } from 'node:sqlite';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { Type } from 'typebox';
import {
  checkInApproved,
  createChain,
  createDispatcher,
  defineTool,
  type CheckInRequest,
  type Middleware,
} from '@toolgate/core';
import { sqliteCheckIns, type SqliteCheckInStore } from '@toolgate/store-sqlite';
import { finished, lastJson, printed, runFixture, startFixture, tempDir } from './support';

const linesIn = (file: string) =>
  existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean) : [];

describe('check-ins that outlive a process', () => {
  let tmp: ReturnType<typeof tempDir>;
  beforeEach(() => (tmp = tempDir()));
  afterEach(() => tmp.cleanup());

  it('lets a restarted process honor an approval once, and refuses the same approval a second time', async () => {
    const [db, log, req] = [tmp.file('toolgate.db'), tmp.file('ran.log'), tmp.file('request.json')];

    expect(await runFixture('dispatch', [db, log, req])).toEqual({ kind: 'paused', ran: false });
    expect(linesIn(log)).toEqual([]);

    expect(await runFixture('resume', [db, log, req])).toEqual({ kind: 'result', ran: true });
    expect(linesIn(log)).toEqual(['ran']);

    expect(await runFixture('resume', [db, log, req])).toEqual({
      kind: 'refused',
      ran: false,
      code: 'CHECKIN_NOT_PENDING',
    });
    expect(linesIn(log)).toEqual(['ran']);
  });

  it('runs the tool once when two processes race to consume the same approval', async () => {
    const [db, log, req] = [tmp.file('toolgate.db'), tmp.file('ran.log'), tmp.file('request.json')];
    await runFixture('dispatch', [db, log, req]);

    const racers = [
      startFixture('resume', [db, log, req, '--on-go']),
      startFixture('resume', [db, log, req, '--on-go']),
    ];
    const done = racers.map(finished);
    await Promise.all(racers.map((child) => printed(child, 'ready')));
    for (const child of racers) child.stdin.end('go\n');
    const outcomes = (await Promise.all(done)).map(lastJson);

    expect(outcomes).toContainEqual({ kind: 'result', ran: true });
    expect(outcomes).toContainEqual({ kind: 'refused', ran: false, code: 'CHECKIN_NOT_PENDING' });
    expect(linesIn(log)).toEqual(['ran']);
  });
});

describe('a database that cannot be used fails closed', () => {
  let tmp: ReturnType<typeof tempDir>;
  const stores: SqliteCheckInStore[] = [];
  beforeEach(() => (tmp = tempDir()));
  afterEach(() => {
    for (const s of stores.splice(0)) s.close();
    tmp.cleanup();
  });

  function app(path: string) {
    const store = sqliteCheckIns({ path, busyTimeoutMs: 20 });
    stores.push(store);
    const calls: string[] = [];
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
    return { dispatcher, calls, store };
  }

  async function paused(path: string): Promise<CheckInRequest> {
    const outcome = await app(path).dispatcher.dispatch({
      toolName: 'delete_file',
      args: { name: 'report.pdf' },
    });
    if (outcome.kind !== 'paused') throw new Error(`expected a pause, got ${outcome.kind}`);
    return outcome.checkIn;
  }

  it('refuses to pause a call on a corrupt file, and the tool never runs', async () => {
    const path = tmp.file('corrupt.db');
    writeFileSync(path, Buffer.alloc(4096, 0x5a));
    const { dispatcher, calls } = app(path);
    const outcome = await dispatcher.dispatch({ toolName: 'delete_file', args: { name: 'report.pdf' } });
    expect(outcome).toMatchObject({
      kind: 'refused',
      code: 'CHECKIN_STORE_FAILED',
      retryable: true,
      ran: false,
    });
    expect(calls).toEqual([]);
  });

  it('refuses a resume after the file was corrupted while the human decided, and the tool never runs', async () => {
    const path = tmp.file('toolgate.db');
    const request = await paused(path);
    for (const s of stores.splice(0)) s.close();
    writeFileSync(path, Buffer.alloc(4096, 0x5a));

    const { dispatcher, calls } = app(path);
    const outcome = await dispatcher.resume(request, checkInApproved({ by: 'ops@example.com' }));
    expect(outcome).toMatchObject({ kind: 'refused', code: 'CHECKIN_STORE_FAILED', ran: false });
    expect(calls).toEqual([]);
  });

  it('refuses a resume while the file is locked without using up the approval, which works once the lock is gone', async () => {
    const path = tmp.file('toolgate.db');
    const request = await paused(path);
    const { dispatcher, calls } = app(path);

    const other = new Database(path);
    other.exec('BEGIN IMMEDIATE');
    const locked = await dispatcher.resume(request, checkInApproved({ by: 'ops@example.com' }));
    expect(locked).toMatchObject({
      kind: 'refused',
      code: 'CHECKIN_STORE_FAILED',
      retryable: true,
      ran: false,
    });
    expect(calls).toEqual([]);

    other.exec('ROLLBACK');
    other.close();
    const retried = await dispatcher.resume(request, checkInApproved({ by: 'ops@example.com' }));
    expect(retried).toMatchObject({ kind: 'result', ran: true });
    expect(calls).toEqual(['report.pdf']);
  });
});
