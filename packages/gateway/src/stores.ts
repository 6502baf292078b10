// The stores a gateway keeps its state in, built from the configuration's URLs: `stores.state`
// (check-ins and grants; pins and the audit log join them) and `stores.limits` (rate buckets).

import { resolve } from 'node:path';
import { inMemoryCheckIns, type CheckInStore } from '@toolgate/core';
import { inMemoryLimits, type LimitStore } from '@toolgate/middleware';
import { postgresCheckIns } from '@toolgate/store-postgres';
import { Redis } from 'ioredis';
import { redisLimits } from '@toolgate/store-redis';
import { sqliteCheckIns } from '@toolgate/store-sqlite';

export interface StateStore {
  /** What it is, for /readyz and `check`: `memory`, `sqlite` or `postgres` (never the URL). */
  readonly kind: 'memory' | 'sqlite' | 'postgres';
  readonly checkIns: CheckInStore;
  /** Resolves when the store answers; rejects with a message that names no secret. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

export interface LimitsStore {
  readonly kind: 'memory' | 'redis';
  readonly limits: LimitStore;
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** `memory:`, `sqlite:PATH` (relative to `baseDir`) or `postgres://…`. */
export function openStateStore(url: string | undefined, baseDir: string): StateStore {
  if (url === undefined || url === 'memory:') {
    const checkIns = inMemoryCheckIns();
    return { kind: 'memory', checkIns, ping: async () => {}, close: async () => {} };
  }
  if (url.startsWith('sqlite:')) {
    const path = url.slice('sqlite:'.length);
    const checkIns = sqliteCheckIns({ path: path === ':memory:' ? path : resolve(baseDir, path) });
    return {
      kind: 'sqlite',
      checkIns,
      ping: async () => {
        await checkIns.list({ limit: 1 });
      },
      close: async () => checkIns.close(),
    };
  }
  if (/^postgres(ql)?:\/\//.test(url)) {
    const checkIns = postgresCheckIns({ connectionString: url });
    return {
      kind: 'postgres',
      checkIns,
      ping: async () => {
        await checkIns.list({ limit: 1 });
      },
      close: () => checkIns.close(),
    };
  }
  throw new TypeError("stores.state: expected 'memory:', 'sqlite:PATH' or a 'postgres://' URL.");
}

/** `memory:` or `redis://…`. */
export function openLimitsStore(url: string | undefined): LimitsStore {
  if (url === undefined || url === 'memory:') {
    return { kind: 'memory', limits: inMemoryLimits(), ping: async () => {}, close: async () => {} };
  }
  if (/^rediss?:\/\//.test(url)) {
    // Our own client, so /readyz can PING it; one retry per command, so a server that is down fails fast.
    const redis = new Redis(url, { maxRetriesPerRequest: 1 });
    redis.on('error', () => undefined);
    return {
      kind: 'redis',
      limits: redisLimits({ redis }),
      ping: async () => {
        await redis.ping();
      },
      close: async () => {
        try {
          await redis.quit();
        } catch {
          redis.disconnect();
        }
      },
    };
  }
  throw new TypeError("stores.limits: expected 'memory:' or a 'redis://' URL.");
}
