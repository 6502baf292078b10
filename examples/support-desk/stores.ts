// Where the demo keeps check-ins and artifacts, picked by `--store`. Each entry opens one kind of
// store; adding a kind is one more entry here.

import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ArtifactStore, CheckInStore } from '@toolgate/core';
import { inMemoryArtifacts, inMemoryLimits, type LimitStore } from '@toolgate/middleware';
import { postgresArtifacts, postgresCheckIns } from '@toolgate/store-postgres';
import { redisLimits } from '@toolgate/store-redis';
import { sqliteArtifacts, sqliteCheckIns } from '@toolgate/store-sqlite';
import { inMemoryCheckIns } from '@toolgate/testing';

export interface DemoStores {
  readonly artifacts: ArtifactStore;
  readonly checkIns: CheckInStore;
  /** Where the limits gate counts calls. */
  readonly limits: LimitStore;
  /** Where the stores keep their data, in words, for the banner. */
  readonly where: string;
  close(): Promise<void>;
}

export interface StoreOptions {
  /** The SQLite file; a fresh file in the temp dir when absent. */
  readonly dbPath?: string;
  /** The PostgreSQL server for `--store postgres`; default the TOOLGATE_POSTGRES_URL variable. */
  readonly postgresUrl?: string;
  /** With `--store postgres`, the Redis server the limits are counted in; default TOOLGATE_REDIS_URL, else in memory. */
  readonly redisUrl?: string;
}

/** Thrown when the chosen store cannot be opened as asked; the demo prints it and exits. */
export class StoreUnavailable extends Error {
  override readonly name = 'StoreUnavailable';
}

const OPENERS = {
  memory: async (): Promise<DemoStores> => ({
    artifacts: inMemoryArtifacts(),
    checkIns: inMemoryCheckIns(),
    limits: inMemoryLimits(),
    where: 'in memory',
    close: async () => undefined,
  }),
  sqlite: async (options: StoreOptions): Promise<DemoStores> => {
    const path = options.dbPath ?? join(tmpdir(), `toolgate-demo-${process.pid}.db`);
    const checkIns = sqliteCheckIns({ path });
    const artifacts = sqliteArtifacts({ path });
    return {
      artifacts,
      checkIns,
      limits: inMemoryLimits(),
      where: `SQLite at ${path}`,
      async close() {
        checkIns.close();
        artifacts.close();
      },
    };
  },
  postgres: async (options: StoreOptions): Promise<DemoStores> => {
    const connectionString = options.postgresUrl ?? process.env['TOOLGATE_POSTGRES_URL'];
    if (connectionString === undefined || connectionString === '') {
      throw new StoreUnavailable(
        '--store postgres needs a server: set TOOLGATE_POSTGRES_URL (postgres://user@host:port/db), or start a throwaway one with `bash .ci/services/postgres.sh -- npx -y pnpm@12.4.2 demo --store postgres`',
      );
    }
    // Its own schema, so the demo's rows never mix with an application's.
    const checkIns = postgresCheckIns({ connectionString, schema: 'toolgate_demo' });
    const artifacts = postgresArtifacts({ connectionString, schema: 'toolgate_demo' });
    const redisUrl = options.redisUrl ?? process.env['TOOLGATE_REDIS_URL'];
    // Shared limits live in Redis when there is one; a prefix per run keeps one run's count from the next.
    const redis =
      redisUrl === undefined || redisUrl === ''
        ? undefined
        : redisLimits({ url: redisUrl, prefix: `toolgate-demo:${process.pid}-${Date.now()}:` });
    return {
      artifacts,
      checkIns,
      limits: redis ?? inMemoryLimits(),
      where: `PostgreSQL (schema toolgate_demo at ${new URL(connectionString).host}), limits ${redis === undefined ? 'in memory' : `in Redis at ${new URL(redisUrl!).host}`}`,
      async close() {
        await Promise.all([checkIns.close(), artifacts.close(), redis?.close()]);
      },
    };
  },
} satisfies Record<string, (options: StoreOptions) => Promise<DemoStores>>;

export type StoreKind = keyof typeof OPENERS;

/** The values `--store` accepts. */
export const STORE_KINDS = Object.keys(OPENERS) as StoreKind[];

export function isStoreKind(value: string): value is StoreKind {
  return Object.hasOwn(OPENERS, value);
}

/** Opens the check-in and artifact stores the `--store` flag names. */
export function openStores(kind: StoreKind, options: StoreOptions = {}): Promise<DemoStores> {
  return OPENERS[kind](options);
}
