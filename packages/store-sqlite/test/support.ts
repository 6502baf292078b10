// Shared by the store-sqlite tests: temporary directories, check-in requests built by hand, and a
// runner for the fixture programs that play separate processes.

import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { CheckInRequest } from '@toolgate/core';

export const T0 = Date.parse('2030-01-01T00:00:00.000Z');

/** A clock tests move by hand. */
export function manualClock(start = T0) {
  const clock = { now: start, tick: (ms: number) => (clock.now += ms), read: () => clock.now };
  return clock;
}

/** A fresh temporary directory, removed by `cleanup`. */
export function tempDir(): { dir: string; file: (name: string) => string; cleanup: () => void } {
  const dir = mkdtempSync(path.join(tmpdir(), 'toolgate-sqlite-'));
  return {
    dir,
    file: (name) => path.join(dir, name),
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
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
    const onData = (chunk: Buffer) => {
      seen += chunk.toString('utf8');
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
