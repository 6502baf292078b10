// `pnpm bench:audit`: what `@toolgate/audit` adds to a governed dispatch. The same dispatcher runs
// bare and with the audit log attached over the in-memory store and over a SQLite file (WAL,
// synchronous=FULL: every commit reaches the disk), one call at a time and 32 at once (calls waiting
// together share one append and one signature). A second bare task measures the noise. Tasks are
// interleaved and rotated each round; each figure is the median over rounds, wall time and process
// CPU time (all threads, so Web Crypto's work on the thread pool counts). `durability: 'batch'` (a
// 5 ms commit window) runs beside the default `'record'`; its samples end with a flush, so every
// record of a sample is committed inside it. The crypto operations a record needs are timed alone in
// the same run, to show where the time goes.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createHash, createHmac, createPrivateKey, sign } from 'node:crypto';
import path from 'node:path';
import { createDispatcher, defineTool, type Dispatcher } from '@toolgate/core';
import { canonicalChain } from '@toolgate/middleware';
import { auditLog, generateAuditKeys, inMemoryAuditStore } from '@toolgate/audit';
import { sqliteAuditStore } from '@toolgate/store-sqlite';
import { sha256Hex } from '../packages/audit/src/sha256';

const ROUNDS = 9;
const CALLS = 400;
const WIDE = 32;

const tool = defineTool({
  name: 'lookup',
  description: 'a passive tool: no declarations',
  inputSchema: { type: 'object', properties: { order: { type: 'string' } } },
  execute: async (args: { order?: string }) => ({ order: args.order ?? '', status: 'shipped' }),
});

const cpuMs = () => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
};
const median = (values: readonly number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

const call = { toolName: 'lookup', args: { order: 'A-1' } };
const identity = { tenant: 'acme', principal: 'bench' };

/** `CALLS` calls, `width` at a time, then `settle`; answers µs of wall and CPU time per call. */
async function sample(
  dispatcher: Dispatcher,
  width: number,
  settle?: () => Promise<void>,
): Promise<{ wall: number; cpu: number }> {
  const wall0 = performance.now();
  const cpu0 = cpuMs();
  for (let done = 0; done < CALLS; done += width) {
    const outcomes = await Promise.all(
      Array.from({ length: width }, () => dispatcher.dispatch(call, { identity })),
    );
    for (const outcome of outcomes) {
      if (outcome.kind !== 'result') throw new Error(`bench: expected a result, got ${outcome.kind}`);
    }
  }
  await settle?.();
  return { wall: ((performance.now() - wall0) * 1000) / CALLS, cpu: ((cpuMs() - cpu0) * 1000) / CALLS };
}

/** µs per operation of `op`, run `n` times in a row. */
async function timed(n: number, op: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  for (let i = 0; i < n; i++) await op();
  return ((performance.now() - started) * 1000) / n;
}

async function main(): Promise<void> {
  const dir = mkdtempSync(path.join(tmpdir(), 'toolgate-bench-audit-'));
  const keys = await generateAuditKeys();
  const digestKey = 'bench-digest-key-0123456789abcdefghijklmnop';
  const base = createDispatcher({ tools: [tool], chain: canonicalChain() });
  const sqlite = sqliteAuditStore({ path: path.join(dir, 'audit.db') });
  const memoryLog = auditLog({ store: inMemoryAuditStore(), signingKey: keys.privateKey, digestKey });
  const sqliteLog = auditLog({ store: sqlite, signingKey: keys.privateKey, digestKey });
  const sqliteBatch = sqliteAuditStore({ path: path.join(dir, 'audit-batch.db') });
  const memoryBatchLog = auditLog({
    store: inMemoryAuditStore(),
    signingKey: keys.privateKey,
    digestKey,
    durability: 'batch',
  });
  const sqliteBatchLog = auditLog({
    store: sqliteBatch,
    signingKey: keys.privateKey,
    digestKey,
    durability: 'batch',
  });
  await Promise.all([memoryLog.ready(), sqliteLog.ready(), memoryBatchLog.ready(), sqliteBatchLog.ready()]);

  const BARE = 'bare dispatch';
  const tasks: [string, Dispatcher, number, (() => Promise<void>)?][] = [];
  for (const width of [1, WIDE]) {
    const suffix = width === 1 ? 'one at a time' : `${WIDE} at once`;
    tasks.push(
      [`${BARE}, ${suffix}`, base, width],
      [`bare dispatch (again), ${suffix}`, base, width],
      [`audit log, in-memory store, ${suffix}`, memoryLog.attach(base), width],
      [`audit log, SQLite file, ${suffix}`, sqliteLog.attach(base), width],
      [
        `audit log 'batch', in-memory store, ${suffix}`,
        memoryBatchLog.attach(base),
        width,
        () => memoryBatchLog.flush(),
      ],
      [
        `audit log 'batch', SQLite file, ${suffix}`,
        sqliteBatchLog.attach(base),
        width,
        () => sqliteBatchLog.flush(),
      ],
    );
  }
  const results = new Map<string, { wall: number[]; cpu: number[] }>(
    tasks.map(([name]) => [name, { wall: [], cpu: [] }]),
  );
  // Warm-up: JIT, ajv, key imports, the SQLite file.
  for (const [, dispatcher, width, settle] of tasks) await sample(dispatcher, width, settle);
  for (let round = 0; round < ROUNDS; round++) {
    for (let i = 0; i < tasks.length; i++) {
      const [name, dispatcher, width, settle] = tasks[(i + round) % tasks.length]!;
      const { wall, cpu } = await sample(dispatcher, width, settle);
      results.get(name)!.wall.push(wall);
      results.get(name)!.cpu.push(cpu);
    }
  }

  // The Web Crypto work behind one record, alone.
  const subtle = globalThis.crypto.subtle;
  const pair = (await subtle.generateKey({ name: 'Ed25519' }, false, ['sign', 'verify'])) as CryptoKeyPair;
  const hmac = await subtle.importKey(
    'raw',
    new TextEncoder().encode(digestKey),
    { name: 'HMAC', hash: 'SHA-256' },
    false,
    ['sign'],
  );
  const body = new TextEncoder().encode(
    JSON.stringify({ seq: 1, at: new Date().toISOString(), tool: 'lookup', kind: 'result' }).repeat(2),
  );
  const digest32 = new Uint8Array(32);
  const nodeKey = createPrivateKey(keys.privateKey);
  const primitives = {
    'Ed25519 sign (subtle)': await timed(2_000, () => subtle.sign('Ed25519', pair.privateKey, digest32)),
    'Ed25519 sign (node:crypto, in the thread, as the log signs)': await timed(2_000, async () =>
      sign(null, digest32, nodeKey),
    ),
    'SHA-256 of a record (in the thread, as the chain is hashed)': await timed(2_000, async () =>
      sha256Hex(body),
    ),
    'SHA-256 of a record (subtle, for comparison)': await timed(2_000, () => subtle.digest('SHA-256', body)),
    'HMAC-SHA-256 of args (subtle, the portable path)': await timed(2_000, () =>
      subtle.sign('HMAC', hmac, body),
    ),
    'SHA-256 of a record (node:crypto, in the thread, as the log hashes it)': await timed(2_000, async () =>
      createHash('sha256').update(body).digest('hex'),
    ),
    'HMAC-SHA-256 of args (node:crypto, in the thread, as the log digests)': await timed(2_000, async () =>
      createHmac('sha256', digestKey).update(body).digest('hex'),
    ),
  };

  const log = (line: string) => process.stdout.write(`${line}\n`);
  log(`@toolgate/audit: ${ROUNDS} rounds × ${tasks.length} tasks × ${CALLS} calls, medians of rounds`);
  log('');
  log('| task | µs per call (wall) | × bare (wall) | µs per call (CPU) | × bare (CPU) |');
  log('| --- | ---: | ---: | ---: | ---: |');
  for (const [name, , width] of tasks) {
    const bare = results.get(`${BARE}, ${width === 1 ? 'one at a time' : `${WIDE} at once`}`)!;
    const { wall, cpu } = results.get(name)!;
    const wallRatio = median(wall.map((v, i) => v / bare.wall[i]!));
    const cpuRatio = median(cpu.map((v, i) => v / bare.cpu[i]!));
    log(
      `| ${name} | ${median(wall).toFixed(1)} | ${wallRatio.toFixed(2)} | ${median(cpu).toFixed(1)} | ${cpuRatio.toFixed(2)} |`,
    );
  }
  log('');
  log('| one record needs | µs each (wall, in a row) |');
  log('| --- | ---: |');
  for (const [name, us] of Object.entries(primitives)) log(`| ${name} | ${us.toFixed(1)} |`);
  log('');
  log('A record costs two HMACs (args, result) and one SHA-256, all in the thread (node:crypto); calls');
  log('waiting together share one append (one transaction) and one Ed25519 signature (node:crypto), on');
  log("its last record; with 'batch', so do the calls of one 5 ms commit window.");
  for (const [name, audit] of [
    ['in-memory', memoryLog],
    ["SQLite 'batch'", sqliteBatchLog],
  ] as const) {
    log(`${name} log verifies: ${JSON.stringify(await audit.verify())}`);
  }
  sqlite.close();
  sqliteBatch.close();
  rmSync(dir, { recursive: true, force: true });
}

await main();
