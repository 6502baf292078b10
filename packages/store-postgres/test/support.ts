// Shared by the store-postgres tests: the server from TOOLGATE_POSTGRES_URL (skipping, with a note,
// when it is unset), a fresh schema per test file or store, check-in requests built by hand, throwaway
// servers a test may stop and start, and a runner for the fixture programs that play separate processes.

import { execFileSync, spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import pg from 'pg';
import type { CheckInRequest } from '@toolgate/core';

export const T0 = Date.parse('2030-01-01T00:00:00.000Z');

/** The test server's URL, or undefined when the tests cannot reach one. */
export const POSTGRES_URL = process.env['TOOLGATE_POSTGRES_URL'] || undefined;

/** `describe` when a server is configured; otherwise `describe.skip` (jest's global setup says why, once). */
export function describePostgres(title: string, body: () => void): void {
  if (POSTGRES_URL !== undefined) {
    describe(title, body);
    return;
  }
  describe.skip(title, body);
}

/** The configured URL; only called inside `describePostgres`, where it is set. */
export function postgresUrl(): string {
  if (POSTGRES_URL === undefined) throw new Error('TOOLGATE_POSTGRES_URL is not set');
  return POSTGRES_URL;
}

/** A schema name no other test file or run uses. */
export function freshSchemaName(label: string): string {
  return `tg_${label.replace(/[^a-z0-9_]/gi, '_').toLowerCase()}_${randomBytes(5).toString('hex')}`;
}

/**
 * Schemas a test file creates, dropped after its last test. `next()` names a fresh one; the stores
 * create it on first use.
 */
export function schemas(label: string) {
  const made: string[] = [];
  let admin: pg.Pool | undefined;
  afterAll(async () => {
    if (admin === undefined && made.length === 0) return;
    const pool = (admin ??= new pg.Pool({ connectionString: postgresUrl(), max: 1 }));
    for (const name of made) await pool.query(`DROP SCHEMA IF EXISTS "${name}" CASCADE`);
    await pool.end();
  });
  return {
    next(): string {
      const name = freshSchemaName(label);
      made.push(name);
      return name;
    },
    /** A pool for looking at the database beside the stores; ended after the file's last test. */
    admin(): pg.Pool {
      if (admin === undefined) {
        admin = new pg.Pool({ connectionString: postgresUrl(), max: 4 });
        admin.on('error', () => undefined);
      }
      return admin;
    },
  };
}

/** A clock tests move by hand. */
export function manualClock(start = T0) {
  const clock = { now: start, tick: (ms: number) => (clock.now += ms), read: () => clock.now };
  return clock;
}

let counter = 0;

/** A well-formed request; the store never checks signatures, so any text stands in for one. */
export function request(overrides: Partial<CheckInRequest> = {}): CheckInRequest {
  counter += 1;
  return {
    id: `chk_test${String(counter).padStart(16, '0')}`,
    asker: 'check-in',
    toolName: 'send_email',
    toolCallId: `call_${counter}`,
    args: { to: 'a@example.com' },
    review: { to: 'a@example.com' },
    argsDigest: 'd'.repeat(64),
    chainId: 'chain01',
    question: 'Send it?',
    identity: { tenant: 'acme' },
    createdAt: new Date(T0).toISOString(),
    expiresAt: new Date(T0 + 60_000).toISOString(),
    signature: 's'.repeat(64),
    ...overrides,
  };
}

/** Polls `probe` until it answers true, at most `tries` times `everyMs` apart. */
export async function eventually(probe: () => Promise<boolean>, what: string, tries = 200, everyMs = 25) {
  for (let i = 0; i < tries; i++) {
    if (await probe()) return;
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
  throw new Error(`gave up waiting for ${what}`);
}

// Throwaway servers, for tests that stop and start the server under a running dispatcher.

/** The folder with initdb and pg_ctl: the one .ci/services/postgres.sh found, or Debian's newest. */
export function postgresBin(): string | undefined {
  const candidates = [process.env['TOOLGATE_POSTGRES_BIN']];
  const debian = '/usr/lib/postgresql';
  if (existsSync(debian)) {
    const versions = readdirSync(debian).sort((a, b) => Number(b) - Number(a));
    candidates.push(...versions.map((version) => path.join(debian, version, 'bin')));
  }
  return candidates.find(
    (dir) =>
      dir !== undefined && existsSync(path.join(dir, 'initdb')) && existsSync(path.join(dir, 'pg_ctl')),
  );
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address !== null ? address.port : 0));
    });
  });
}

export interface ThrowawayServer {
  readonly url: string;
  start(): void;
  stop(): void;
  destroy(): void;
}

/** initdb into a temp dir and start on a free loopback port; as root, runs as an unprivileged user. */
export async function throwawayServer(bin: string): Promise<ThrowawayServer> {
  const root = process.getuid?.() === 0;
  const user = process.env['TOOLGATE_POSTGRES_USER'] || 'postgres';
  const dir = mkdtempSync(path.join(tmpdir(), 'toolgate-pg-test-'));
  const data = path.join(dir, 'data');
  const run = (tool: string, args: readonly string[]) => {
    const command = path.join(bin, tool);
    const [file, argv] = root ? ['runuser', ['-u', user, '--', command, ...args]] : [command, [...args]];
    // From a folder the server's user can read: postgres tools fail in one they cannot.
    execFileSync(file, argv, { cwd: dir, stdio: 'pipe', timeout: 60_000 });
  };
  if (root) {
    const uid = Number(execFileSync('id', ['-u', user]).toString().trim());
    const gid = Number(execFileSync('id', ['-g', user]).toString().trim());
    chownSync(dir, uid, gid);
  }
  run('initdb', ['-D', data, '-U', 'toolgate', '--auth=trust', '--encoding=UTF8', '--locale=C', '--no-sync']);
  const port = await freePort();
  const options = `-c listen_addresses=127.0.0.1 -p ${port} -c unix_socket_directories='' -c fsync=off`;
  const server: ThrowawayServer = {
    url: `postgres://toolgate@127.0.0.1:${port}/postgres`,
    start: () =>
      run('pg_ctl', [
        'start',
        '-D',
        data,
        '-l',
        path.join(data, 'server.log'),
        '-w',
        '-t',
        '30',
        '-o',
        options,
      ]),
    stop: () => run('pg_ctl', ['stop', '-D', data, '-m', 'fast', '-w', '-t', '30']),
    destroy: () => {
      if (existsSync(path.join(data, 'postmaster.pid'))) server.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  server.start();
  return server;
}

// Fixture processes.

const repoRoot = path.resolve(__dirname, '../../..');
const tsxLoader = pathToFileURL(createRequire(path.join(repoRoot, 'package.json')).resolve('tsx')).href;

/** Starts `test/fixtures/<name>.ts` as its own Node process, with tsconfig paths mapping @toolgate/*. */
export function startFixture(name: string, args: readonly string[]): ChildProcessWithoutNullStreams {
  const script = path.join(__dirname, 'fixtures', `${name}.ts`);
  return spawn(process.execPath, ['--import', tsxLoader, script, ...args], { cwd: repoRoot, stdio: 'pipe' });
}

export interface Finished {
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Waits for `child` to exit, with everything it printed. */
export function finished(child: ChildProcessWithoutNullStreams): Promise<Finished> {
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (status) => resolve({ status, stdout, stderr }));
  });
}

/** Resolves once `child` prints `line` on a line of its own. */
export function printed(child: ChildProcessWithoutNullStreams, line: string): Promise<void> {
  return new Promise((resolve, reject) => {
    let seen = '';
    const onData = (chunk: Buffer | string) => {
      seen += chunk.toString();
      if (seen.split('\n').includes(line)) {
        child.stdout.off('data', onData);
        resolve();
      }
    };
    child.stdout.on('data', onData);
    child.on('close', () => reject(new Error(`fixture exited before printing '${line}'`)));
  });
}

/** Runs a fixture to completion; its last stdout line is JSON. */
export async function runFixture(name: string, args: readonly string[]): Promise<unknown> {
  return lastJson(await finished(startFixture(name, args)));
}

export function lastJson(run: Finished): unknown {
  if (run.status !== 0) throw new Error(`fixture exited with ${String(run.status)}: ${run.stderr}`);
  const lines = run.stdout.trim().split('\n');
  return JSON.parse(lines[lines.length - 1]!) as unknown;
}
