// What redisLimits does beyond the LimitStore laws: the keys it writes, a script cache the server
// lost, a client it shares, and a server that is down or goes down mid-run.

import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { createDispatcher, defineTool } from '@toolgate/core';
import { canonicalChain, type LimitCharge, type LimitStore } from '@toolgate/middleware';
import { RedisLimitsError, redisLimits } from '@toolgate/store-redis';
import { closedPort, describeRedis, prefixes, redisUrl } from './support';

const HOUR = 3_600_000;
const charge = (key: string, limit = 5): LimitCharge => ({
  rule: 'tenant-calls',
  key,
  amount: 1,
  limit,
  windowMs: HOUR,
});

function app(store: LimitStore, failOpen = false) {
  let runs = 0;
  const ping = defineTool({
    name: 'ping',
    description: 'Answers pong.',
    inputSchema: { type: 'object', properties: {} },
    execute: () => {
      runs++;
      return 'pong';
    },
  });
  const dispatcher = createDispatcher({
    tools: [ping],
    chain: canonicalChain({
      deadlineMs: 2_000,
      limits: {
        store,
        failOpen,
        limits: [{ name: 'tenant-calls', per: 'tenant', calls: 5, windowMs: HOUR }],
      },
    }),
  });
  const events: object[] = [];
  dispatcher.on('limits.failed-open', (event) => events.push(event));
  dispatcher.on('limits.store-failed', (event) => events.push(event));
  const call = () =>
    dispatcher.dispatch({ toolName: 'ping', args: {} }, { identity: { tenant: 'acme-secret-co' } });
  return { call, events, runs: () => runs };
}

describeRedis('redisLimits', () => {
  const prefix = prefixes('limits');

  it('writes one key per bucket, named by prefix, limit and a hash, that expires when the bucket is full again', async () => {
    const name = prefix.next();
    const store = redisLimits({ url: redisUrl(), prefix: name });
    try {
      const { call } = app(store);
      expect((await call()).kind).toBe('result');
      const keys = await prefix.admin().keys(`${name}*`);
      expect(keys).toHaveLength(1);
      expect(keys[0]).toMatch(new RegExp(`^${name}tenant-calls:[A-Za-z0-9_-]{22}$`));
      expect(keys[0]).not.toContain('acme');
      const ttl = await prefix.admin().pttl(keys[0]!);
      // One call of five per hour: full again in 12 minutes.
      expect(ttl).toBeGreaterThan(0);
      expect(ttl).toBeLessThanOrEqual(HOUR / 5);
    } finally {
      await store.close();
    }
  });

  it('keeps working after the server forgets its scripts (NOSCRIPT)', async () => {
    const store = redisLimits({ url: redisUrl(), prefix: prefix.next() });
    try {
      expect(await store.consume([charge('k', 2)], 0)).toEqual({ allowed: true });
      await prefix.admin().script('FLUSH');
      expect(await store.consume([charge('k', 2)], 0)).toEqual({ allowed: true });
      await prefix.admin().script('FLUSH');
      await store.refund([charge('k', 2)], 0);
      expect(await store.consume([charge('k', 2)], 0)).toEqual({ allowed: true });
      expect(await store.consume([charge('k', 2)], 0)).toMatchObject({ allowed: false });
    } finally {
      await store.close();
    }
  });

  it('uses a client it is given and leaves it open on close', async () => {
    const client = new Redis(redisUrl());
    try {
      const store = redisLimits({ redis: client, prefix: prefix.next() });
      expect(await store.consume([charge('k')], 0)).toEqual({ allowed: true });
      await store.close();
      expect(await client.ping()).toBe('PONG');
    } finally {
      await client.quit();
    }
  });

  it('fails at build on options that cannot work', () => {
    expect(() => redisLimits({} as never)).toThrow('pass { url } or { redis }');
    expect(() => redisLimits({ redis: {} as never })).toThrow('ioredis client');
    expect(() => redisLimits({ url: redisUrl(), prefix: 5 as never })).toThrow('prefix');
  });

  describe('a server that is down', () => {
    it('fails closed by default: the call is refused, retryably, and the tool does not run', async () => {
      const url = `redis://:hunter2@127.0.0.1:${await closedPort()}`;
      const store = redisLimits({ url });
      try {
        await expect(store.consume([charge('k')], 0)).rejects.toThrow(RedisLimitsError);
        await expect(store.consume([charge('k')], 0)).rejects.not.toThrow(/hunter2|127\.0\.0\.1/);
        const { call, events, runs } = app(store);
        const outcome = await call();
        expect(outcome).toMatchObject({
          kind: 'refused',
          gate: 'limits',
          code: 'LIMITS_STORE_FAILED',
          retryable: true,
        });
        expect(runs()).toBe(0);
        expect(events).toMatchObject([{ type: 'limits.store-failed', operation: 'consume' }]);
        expect(JSON.stringify([outcome, events])).not.toContain('hunter2');
      } finally {
        await store.close();
      }
    });

    it('with failOpen, runs the call and records that it failed open', async () => {
      const store = redisLimits({ url: `redis://127.0.0.1:${await closedPort()}` });
      try {
        const { call, events, runs } = app(store, true);
        const outcome = await call();
        expect(outcome.kind).toBe('result');
        expect(outcome.ledger.find((row) => row.gate === 'limits')?.why).toMatch(/failed open/);
        expect(events).toMatchObject([{ type: 'limits.failed-open', failure: 'threw' }]);
        expect(runs()).toBe(1);
      } finally {
        await store.close();
      }
    });

    const server = process.env['TOOLGATE_REDIS_SERVER'];
    (server ? it : it.skip)(
      'refuses while a server that stopped mid-run is down, and counts on once it is back',
      async () => {
        const dir = mkdtempSync(path.join(tmpdir(), 'toolgate-redis-test-'));
        const port = await closedPort();
        const start = () =>
          execFileSync(server!, [
            '--port',
            String(port),
            '--bind',
            '127.0.0.1',
            '--save',
            '',
            '--appendonly',
            'no',
            '--daemonize',
            'yes',
            '--dir',
            dir,
            '--pidfile',
            path.join(dir, 'redis.pid'),
          ]);
        const url = `redis://127.0.0.1:${port}`;
        // Waits, boundedly (about 2 s), for the daemon to answer.
        const ready = async () => {
          const probe = new Redis(url, { retryStrategy: () => 50, maxRetriesPerRequest: 40 });
          probe.on('error', () => undefined);
          await probe.ping();
          probe.disconnect();
        };
        // The server drops the connection instead of answering SHUTDOWN: no retries.
        const shutdown = async () => {
          const client = new Redis(url, { retryStrategy: () => null, maxRetriesPerRequest: 0 });
          client.on('error', () => undefined);
          await client.call('SHUTDOWN', 'NOSAVE').catch(() => undefined);
          client.disconnect();
        };
        start();
        const store = redisLimits({ url: `redis://127.0.0.1:${port}` });
        try {
          const { call, runs } = app(store);
          await ready();
          expect((await call()).kind).toBe('result');
          await shutdown();
          expect(await call()).toMatchObject({ kind: 'refused', code: 'LIMITS_STORE_FAILED' });
          start();
          await ready();
          let back = await call();
          for (let i = 0; i < 30 && back.kind !== 'result'; i++) {
            await new Promise((resolve) => setTimeout(resolve, 100));
            back = await call();
          }
          expect(back.kind).toBe('result');
          expect(runs()).toBe(2);
        } finally {
          await store.close();
          await shutdown();
          rmSync(dir, { recursive: true, force: true });
        }
      },
      60_000,
    );
  });
});

// These need no server: a closed port is what they are about.
describe('redisLimits with a server that is down, without a listener of your own', () => {
  let printed: string[];
  let spy: jest.SpyInstance;
  beforeEach(() => {
    printed = [];
    spy = jest.spyOn(console, 'error').mockImplementation((...args: unknown[]) => {
      printed.push(args.map(String).join(' '));
    });
  });
  afterEach(() => spy.mockRestore());

  it('a shared client prints no [ioredis] line; onError hears once, retryably, and the call is refused', async () => {
    const url = `redis://:hunter2@127.0.0.1:${await closedPort()}`;
    const client = new Redis(url, { maxRetriesPerRequest: 1, retryStrategy: () => 20 });
    const heard: RedisLimitsError[] = [];
    const store = redisLimits({ redis: client, onError: (error) => heard.push(error) });
    try {
      const { call, events, runs } = app(store);
      const outcome = await call();
      await call();

      expect(outcome).toMatchObject({ kind: 'refused', code: 'LIMITS_STORE_FAILED', retryable: true });
      expect(runs()).toBe(0);
      expect(events).toMatchObject([{ type: 'limits.store-failed' }, { type: 'limits.store-failed' }]);
      expect(printed.filter((line) => line.includes('[ioredis]'))).toEqual([]);
      expect(heard).toHaveLength(1);
      expect(heard[0]).toBeInstanceOf(RedisLimitsError);
      expect(heard[0]!.retryable).toBe(true);
      expect(heard[0]!.message).not.toMatch(/hunter2|127\.0\.0\.1/);
    } finally {
      await store.close();
      client.disconnect();
    }
  });

  it('its own client prints nothing either, and a throwing onError does not crash', async () => {
    const store = redisLimits({
      url: `redis://127.0.0.1:${await closedPort()}`,
      onError: () => {
        throw new Error('handler bug');
      },
    });
    try {
      await expect(store.consume([charge('k')], 0)).rejects.toThrow(RedisLimitsError);
      expect(printed.filter((line) => line.includes('[ioredis]'))).toEqual([]);
    } finally {
      await store.close();
    }
  });

  it('refuses a charge out of bounds before the server is asked, as not retryable', async () => {
    const store = redisLimits({ url: `redis://127.0.0.1:${await closedPort()}` });
    try {
      const absurd = { ...charge('k'), amount: 1, limit: 1e308 };
      await expect(store.consume([absurd], 0)).rejects.toMatchObject({
        name: 'RedisLimitsError',
        retryable: false,
        message: 'redisLimits: consume (a charge out of bounds) failed',
      });
    } finally {
      await store.close();
    }
  });
});

describeRedis('redisLimits and absurd limits', () => {
  const prefix = prefixes('absurd');

  it('a budget of 1e308 cannot be built, so failOpen never lets calls run uncounted', async () => {
    const store = redisLimits({ url: redisUrl(), prefix: prefix.next() });
    try {
      expect(() =>
        canonicalChain({
          limits: {
            store,
            failOpen: true,
            limits: [{ name: 'spend', per: 'tenant', budget: 1e308, windowMs: HOUR, cost: () => 1 }],
          },
        }),
      ).toThrow(/'budget' to be a whole number/);
      // The largest budget that builds for an hour is counted by the server, with a sane wait.
      const largest = HOUR * 20;
      const spend = (amount: number) => ({
        rule: 'spend',
        key: 'k',
        amount,
        limit: largest,
        windowMs: HOUR,
      });
      expect(await store.consume([spend(largest)], 0)).toEqual({ allowed: true });
      const refused = await store.consume([spend(largest / 2)], 0);
      expect(refused).toMatchObject({ allowed: false, index: 0 });
      expect((refused as { retryAfterMs: number }).retryAfterMs).toBeGreaterThan(HOUR / 2 - 60_000);
      expect((refused as { retryAfterMs: number }).retryAfterMs).toBeLessThanOrEqual(HOUR / 2);
    } finally {
      await store.close();
    }
  });
});
