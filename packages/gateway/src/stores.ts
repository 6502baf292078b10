// The stores a gateway keeps its state in, built from the configuration's resolved locations:
// `stores.state` (check-ins and grants, MCP tasks, pinned tool definitions; the audit log's default) and
// `stores.limits` (rate buckets).

import {
  inMemoryCheckIns,
  inMemoryPins,
  inMemorySpentStates,
  inMemoryStandingGrants,
  inMemoryTaskRecords,
  type CheckInStore,
  type PinStore,
  type SpentStateStore,
  type StandingGrantStore,
  type TaskRecordStore,
} from '@toolgate/core';
import { inMemoryLimits, type LimitStore } from '@toolgate/middleware';
import {
  postgresCheckIns,
  postgresPins,
  postgresSpentStates,
  postgresStandingGrants,
  postgresTaskRecords,
} from '@toolgate/store-postgres';
import { Redis } from 'ioredis';
import { redisLimits } from '@toolgate/store-redis';
import {
  sqliteCheckIns,
  sqlitePins,
  sqliteSpentStates,
  sqliteStandingGrants,
  sqliteTaskRecords,
} from '@toolgate/store-sqlite';
import type { LimitsStoreLocation, StateStoreLocation } from './config/types';

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
  /** MCP tasks, shared the same way, so any process answers tasks/get, tasks/update and tasks/cancel. */
  readonly tasks: TaskRecordStore;
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

/** The state store at `location`; memory when none is configured. */
export function openStateStore(location: StateStoreLocation = { kind: 'memory' }): StateStore {
  if (location.kind === 'memory') {
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
      tasks: inMemoryTaskRecords(),
      ping: async () => {},
      close: async () => {},
    };
  }
  if (location.kind === 'sqlite') {
    const file = location.path;
    const checkIns = sqliteCheckIns({ path: file });
    // ':memory:' is one database per connection: pins there live as long as the process.
    const inMemory = file === ':memory:';
    const pins = inMemory ? inMemoryPins() : sqlitePins({ path: file });
    const grants = inMemory ? inMemoryStandingGrants() : sqliteStandingGrants({ path: file });
    const spentStates = inMemory ? inMemorySpentStates() : sqliteSpentStates({ path: file });
    const tasks = inMemory ? inMemoryTaskRecords() : sqliteTaskRecords({ path: file });
    return {
      kind: 'sqlite',
      checkIns,
      pins,
      grants,
      spentStates,
      tasks,
      ping: async () => {
        await checkIns.list({ limit: 1 });
      },
      close: async () => {
        checkIns.close();
        for (const store of [pins, grants, spentStates, tasks]) (store as { close?: () => void }).close?.();
      },
    };
  }
  const url = location.url;
  const checkIns = postgresCheckIns({ connectionString: url });
  const pins = postgresPins({ connectionString: url });
  const grants = postgresStandingGrants({ connectionString: url });
  const spentStates = postgresSpentStates({ connectionString: url });
  const tasks = postgresTaskRecords({ connectionString: url });
  return {
    kind: 'postgres',
    checkIns,
    pins,
    grants,
    spentStates,
    tasks,
    ping: async () => {
      await checkIns.list({ limit: 1 });
    },
    close: async () => {
      await Promise.all([checkIns.close(), pins.close(), grants.close(), spentStates.close(), tasks.close()]);
    },
  };
}

/** The limits store at `location`; memory when none is configured. */
export function openLimitsStore(location: LimitsStoreLocation = { kind: 'memory' }): LimitsStore {
  if (location.kind === 'memory') {
    return { kind: 'memory', limits: inMemoryLimits(), ping: async () => {}, close: async () => {} };
  }
  // Our own client, so /readyz can PING it; one retry per command, so a server that is down fails fast.
  const redis = new Redis(location.url, { maxRetriesPerRequest: 1 });
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
