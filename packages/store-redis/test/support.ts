// Shared by the store-redis tests: the server from TOOLGATE_REDIS_URL (skipping, with a note, when it
// is unset), a key prefix of its own per test file or store (jest runs files in parallel on one
// server), deleting those keys afterwards, and a runner for the fixture processes of the load test.

import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Redis } from 'ioredis';

/** The test server's URL, or undefined when the tests cannot reach one. */
export const REDIS_URL = process.env['TOOLGATE_REDIS_URL'] || undefined;

/** `describe` when a server is configured; otherwise `describe.skip` (jest's global setup says why, once). */
export function describeRedis(title: string, body: () => void): void {
  if (REDIS_URL !== undefined) {
    describe(title, body);
    return;
  }
  describe.skip(title, body);
}

/** The configured URL; only called inside `describeRedis`, where it is set. */
export function redisUrl(): string {
  if (REDIS_URL === undefined) throw new Error('TOOLGATE_REDIS_URL is not set');
  return REDIS_URL;
}

/**
 * Key prefixes a test file uses, each new one unique to this run; every key under them is deleted
 * after the file's last test. `admin()` is a client for looking at the server beside the stores.
 */
export function prefixes(label: string) {
  const made: string[] = [];
  let admin: Redis | undefined;
  afterAll(async () => {
    if (admin === undefined && made.length === 0) return;
    const client = (admin ??= new Redis(redisUrl()));
    for (const prefix of made) {
      const keys = await client.keys(`${prefix}*`);
      if (keys.length > 0) await client.del(...keys);
    }
    await client.quit();
  });
  return {
    next(): string {
      const prefix = `tg-test:${label}:${randomBytes(5).toString('hex')}:`;
      made.push(prefix);
      return prefix;
    },
    admin(): Redis {
      return (admin ??= new Redis(redisUrl()));
    },
  };
}

/** A loopback port nothing listens on (it was free a moment ago). */
export function closedPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

// Fixture processes.

const repoRoot = path.resolve(__dirname, '../../..');
const tsxLoader = pathToFileURL(createRequire(path.join(repoRoot, 'package.json')).resolve('tsx')).href;

/** Starts `test/fixtures/<name>.ts` as its own Node process, with tsconfig paths mapping @toolgate/*. */
export function startFixture(name: string, args: readonly string[]): ChildProcessWithoutNullStreams {
  const script = path.join(__dirname, 'fixtures', `${name}.ts`);
  return spawn(process.execPath, ['--import', tsxLoader, script, ...args], { cwd: repoRoot, stdio: 'pipe' });
}

/** Waits for `child` to exit and parses the JSON on its last stdout line. */
export function lastJson(child: ChildProcessWithoutNullStreams): Promise<unknown> {
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (status) => {
      if (status !== 0) return reject(new Error(`fixture exited with ${String(status)}: ${stderr}`));
      const lines = stdout.trim().split('\n');
      try {
        resolve(JSON.parse(lines[lines.length - 1]!) as unknown);
      } catch (error) {
        reject(error instanceof Error ? error : new Error(String(error)));
      }
    });
  });
}
