// The stores a gateway keeps its state in, built from the configuration's resolved locations:
// `stores.state` (check-ins and grants, pinned tool definitions; the audit log's default) and
// `stores.limits` (rate buckets).

import {
  inMemoryCheckIns,
  inMemoryPins,
  inMemoryStandingGrants,
  type CheckInStore,
  type PinStore,
  type StandingGrantStore,
} from '@toolgate/core';
import { inMemoryLimits, type LimitStore } from '@toolgate/middleware';
import { postgresCheckIns, postgresPins } from '@toolgate/store-postgres';
import { Redis } from 'ioredis';
import { redisLimits } from '@toolgate/store-redis';
import { sqliteCheckIns, sqlitePins } from '@toolgate/store-sqlite';
import type { LimitsStoreLocation, StateStoreLocation } from './config/types';

export interface StateStore {
  /** What it is, for /readyz and `check`: `memory`, `sqlite` or `postgres` (never the URL). */
  readonly kind: 'memory' | 'sqlite' | 'postgres';
  readonly checkIns: CheckInStore;
  /** Pinned tool definitions and server identities (`toolgate pins`). */
  readonly pins: PinStore;
  /**
   * Standing grants. Only with `memory:` for now: a grant's use count must be shared by every process
   * that serves its caller, and the durable stores do not keep grants yet, so with them the inbox
   * offers no standing grants (never a per-process count that would let a grant run more often).
   */
  readonly grants?: StandingGrantStore;
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
    return { kind: 'memory', checkIns, pins, grants, ping: async () => {}, close: async () => {} };
  }
  if (location.kind === 'sqlite') {
    const file = location.path;
    const checkIns = sqliteCheckIns({ path: file });
    // ':memory:' is one database per connection: pins there live as long as the process.
    const pins = file === ':memory:' ? inMemoryPins() : sqlitePins({ path: file });
    return {
      kind: 'sqlite',
      checkIns,
      pins,
      ping: async () => {
        await checkIns.list({ limit: 1 });
      },
      close: async () => {
        checkIns.close();
        (pins as { close?: () => void }).close?.();
      },
    };
  }
  const url = location.url;
  const checkIns = postgresCheckIns({ connectionString: url });
  const pins = postgresPins({ connectionString: url });
  return {
    kind: 'postgres',
    checkIns,
    pins,
    ping: async () => {
      await checkIns.list({ limit: 1 });
    },
    close: async () => {
      await Promise.all([checkIns.close(), pins.close()]);
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
