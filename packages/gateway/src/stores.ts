// The stores a gateway keeps its state in, built from the configuration's URLs: `stores.state`
// (check-ins and grants, pinned tool definitions; the audit log's default) and `stores.limits` (rate buckets).

import { resolve } from 'node:path';
import {
  inMemoryCheckIns,
  inMemoryPins,
  inMemorySpentStates,
  inMemoryStandingGrants,
  type CheckInStore,
  type PinStore,
  type SpentStateStore,
  type StandingGrantStore,
} from '@toolgate/core';
import { inMemoryLimits, type LimitStore } from '@toolgate/middleware';
import {
  postgresCheckIns,
  postgresPins,
  postgresSpentStates,
  postgresStandingGrants,
} from '@toolgate/store-postgres';
import { Redis } from 'ioredis';
import { redisLimits } from '@toolgate/store-redis';
import { sqliteCheckIns, sqlitePins, sqliteSpentStates, sqliteStandingGrants } from '@toolgate/store-sqlite';

export interface StateStore {
  /** What it is, for /readyz and `check`: `memory`, `sqlite` or `postgres` (never the URL). */
  readonly kind: 'memory' | 'sqlite' | 'postgres';
  readonly checkIns: CheckInStore;
  /** Pinned tool definitions and server identities (`toolgate pins`). */
  readonly pins: PinStore;
  /**
   * Standing grants, in the same store as the check-ins: a grant's use count is shared by every
   * process on that store, so a grant never answers more calls than it allows.
   */
  readonly grants: StandingGrantStore;
  /** Nonces of spent `requestState`s, shared the same way, so a state runs its call once across processes. */
  readonly spentStates: SpentStateStore;
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
    const pins = inMemoryPins();
    const grants = inMemoryStandingGrants();
    const spentStates = inMemorySpentStates();
    return {
      kind: 'memory',
      checkIns,
      pins,
      grants,
      spentStates,
      ping: async () => {},
      close: async () => {},
    };
  }
  if (url.startsWith('sqlite:')) {
    const path = url.slice('sqlite:'.length);
    const file = path === ':memory:' ? path : resolve(baseDir, path);
    const checkIns = sqliteCheckIns({ path: file });
    // ':memory:' is one database per connection: pins there live as long as the process.
    const inMemory = file === ':memory:';
    const pins = inMemory ? inMemoryPins() : sqlitePins({ path: file });
    const grants = inMemory ? inMemoryStandingGrants() : sqliteStandingGrants({ path: file });
    const spentStates = inMemory ? inMemorySpentStates() : sqliteSpentStates({ path: file });
    return {
      kind: 'sqlite',
      checkIns,
      pins,
      grants,
      spentStates,
      ping: async () => {
        await checkIns.list({ limit: 1 });
      },
      close: async () => {
        checkIns.close();
        for (const store of [pins, grants, spentStates]) (store as { close?: () => void }).close?.();
      },
    };
  }
  if (/^postgres(ql)?:\/\//.test(url)) {
    const checkIns = postgresCheckIns({ connectionString: url });
    const pins = postgresPins({ connectionString: url });
    const grants = postgresStandingGrants({ connectionString: url });
    const spentStates = postgresSpentStates({ connectionString: url });
    return {
      kind: 'postgres',
      checkIns,
      pins,
      grants,
      spentStates,
      ping: async () => {
        await checkIns.list({ limit: 1 });
      },
      close: async () => {
        await Promise.all([checkIns.close(), pins.close(), grants.close(), spentStates.close()]);
      },
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
