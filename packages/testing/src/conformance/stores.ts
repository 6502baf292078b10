// describeCheckInStoreConformance and describeArtifactStoreConformance: the store laws as jest
// suites, for any implementation. The suite owns the clock and hands it to the factory.

import { describe, it } from '@jest/globals';
import type {
  ArtifactStore,
  AuditStore,
  CheckInStore,
  PinStore,
  SpentStateStore,
  StandingGrantStore,
  TaskRecordStore,
} from '@toolgate/core';
import type { LimitStore } from '@toolgate/middleware';
import { fixedClock } from '../clock';
import { ARTIFACT_STORE_LAWS } from './artifact-store-laws';
import { AUDIT_STORE_LAWS } from './audit-store-laws';
import { CHECK_IN_STORE_LAWS } from './check-in-store-laws';
import { LIMIT_STORE_LAWS } from './limit-store-laws';
import { PIN_STORE_LAWS } from './pin-store-laws';
import { SPENT_STATE_STORE_LAWS, STANDING_GRANT_STORE_LAWS } from './standing-grant-store-laws';
import { TASK_LEASE_LAWS, TASK_RECORD_STORE_LAWS } from './task-record-store-laws';

/** What the suite hands a store factory: the clock the store must read time from. */
export interface StoreFactoryContext {
  readonly now: () => number;
}

export interface StoreConformanceOptions<S> {
  /** Runs after each test, e.g. to close a database. */
  readonly close?: (store: S) => void | Promise<void>;
  /** Where the suite's clock starts (ISO 8601). */
  readonly start?: string;
}

function describeStore<S, C>(
  title: string,
  laws: readonly { readonly title: string; readonly check: (context: C) => Promise<void> }[],
  factory: (context: StoreFactoryContext) => S | Promise<S>,
  options: StoreConformanceOptions<S>,
  contextOf: (store: S, clock: ReturnType<typeof fixedClock>) => C,
): void {
  if (typeof factory !== 'function')
    throw new TypeError(`${title}: factory must be a function ({ now }) => store.`);
  describe(title, () => {
    for (const law of laws) {
      it(law.title, async () => {
        const clock = fixedClock(options.start);
        const store = await factory({ now: clock.now });
        try {
          await law.check(contextOf(store, clock));
        } finally {
          await options.close?.(store);
        }
      });
    }
  });
}

/**
 * Registers one test per CheckInStore law: put/get, consume exactly once (also under 100 parallel
 * consumes), expiry, revoke, list filters, JSON round trip, and serving a real chain's pause service.
 * `factory` is called for every test with the suite's clock; the store must read time from it.
 *
 * @example
 * describeCheckInStoreConformance('sqlite check-ins', ({ now }) => sqliteCheckIns({ path: ':memory:', now }), {
 *   close: (store) => store.close(),
 * });
 */
export function describeCheckInStoreConformance<S extends CheckInStore>(
  name: string,
  factory: (context: StoreFactoryContext) => S | Promise<S>,
  options: StoreConformanceOptions<S> = {},
): void {
  describeStore(
    `${name}: CheckInStore conformance`,
    CHECK_IN_STORE_LAWS,
    factory,
    options,
    (store, clock) => ({ store, clock }),
  );
}

/**
 * Registers one test per ArtifactStore law: scope isolation between tenants, principals and
 * conversations, kinds, unknown refs, ttl, list by kind (newest first, limited), exact round trips,
 * and serving a real wants gate.
 *
 * @example
 * describeArtifactStoreConformance('in-memory artifacts', ({ now }) => inMemoryArtifacts({ now }));
 */
export function describeArtifactStoreConformance<S extends ArtifactStore>(
  name: string,
  factory: (context: StoreFactoryContext) => S | Promise<S>,
  options: StoreConformanceOptions<S> = {},
): void {
  describeStore(
    `${name}: ArtifactStore conformance`,
    ARTIFACT_STORE_LAWS,
    factory,
    options,
    (store, clock) => ({ store, clock }),
  );
}

export interface LimitStoreConformanceOptions<S> extends StoreConformanceOptions<S> {
  /**
   * The store keeps time by its own clock (Redis keeps the server's), not the `now` it is passed:
   * the refill law then waits real time (about a second) instead of moving the suite's clock.
   */
  readonly ownClock?: boolean;
}

/**
 * Registers one test per LimitStore law: up to the limit and no more (also under 200 parallel
 * consumes), budgets by amount, all of a call's charges or none, the charge that frees up last,
 * refunds capped at a full bucket, separate buckets per rule and key, refill over the window, and
 * serving a real limits gate. `factory` is called for every test and must return an empty store.
 *
 * @example
 * describeLimitStoreConformance('in-memory limits', () => inMemoryLimits());
 */
export function describeLimitStoreConformance<S extends LimitStore>(
  name: string,
  factory: (context: StoreFactoryContext) => S | Promise<S>,
  options: LimitStoreConformanceOptions<S> = {},
): void {
  describeStore(`${name}: LimitStore conformance`, LIMIT_STORE_LAWS, factory, options, (store, clock) => ({
    store,
    clock,
    wait: async (ms: number) => {
      clock.advance(ms);
      // A few milliseconds over, since a timer may fire a little early.
      if (options.ownClock === true) await new Promise((resolve) => setTimeout(resolve, ms + 5));
    },
  }));
}

/**
 * Registers one test per PinStore law: first sight pins once (also under parallel observers), a
 * change is recorded beside the pin and cleared on revert, accept takes only the reviewed digest,
 * records stay apart and list in order, definitions round-trip as JSON.
 *
 * @example
 * describePinStoreConformance('in-memory pins', () => inMemoryPins());
 */
export function describePinStoreConformance<S extends PinStore>(
  name: string,
  factory: (context: StoreFactoryContext) => S | Promise<S>,
  options: StoreConformanceOptions<S> = {},
): void {
  describeStore(`${name}: PinStore conformance`, PIN_STORE_LAWS, factory, options, (store) => store);
}

/**
 * Registers one test per AuditStore law: the seal gets the true head, an append is stored whole or not
 * at all, records come back exactly as written and page in seq order, records that do not continue the
 * log are refused, and 60 concurrent appends stay one chain. `factory` must return an empty log.
 * Appends from several processes are the store's own tests to show.
 *
 * @example
 * describeAuditStoreConformance('in-memory audit log', () => inMemoryAuditStore());
 */
export function describeAuditStoreConformance<S extends AuditStore>(
  name: string,
  factory: (context: StoreFactoryContext) => S | Promise<S>,
  options: StoreConformanceOptions<S> = {},
): void {
  describeStore(`${name}: AuditStore conformance`, AUDIT_STORE_LAWS, factory, options, (store) => ({
    store,
  }));
}

/**
 * Registers one test per StandingGrantStore law: kept as created, uses counted up to the limit (also
 * under 40 racing uses), no use once revoked or expired, list filters. The store must read time from
 * the suite's clock (`now`).
 *
 * @example
 * describeStandingGrantStoreConformance('in-memory grants', ({ now }) => inMemoryStandingGrants({ now }));
 */
export function describeStandingGrantStoreConformance<S extends StandingGrantStore>(
  name: string,
  factory: (context: StoreFactoryContext) => S | Promise<S>,
  options: StoreConformanceOptions<S> = {},
): void {
  describeStore(
    `${name}: StandingGrantStore conformance`,
    STANDING_GRANT_STORE_LAWS,
    factory,
    options,
    (store, clock) => ({ store, clock }),
  );
}

/**
 * Registers one test per SpentStateStore law: a nonce is spent once (also under 30 racing spends)
 * and stays spent until it expires.
 *
 * @example
 * describeSpentStateStoreConformance('in-memory states', ({ now }) => inMemorySpentStates({ now }));
 */
export function describeSpentStateStoreConformance<S extends SpentStateStore>(
  name: string,
  factory: (context: StoreFactoryContext) => S | Promise<S>,
  options: StoreConformanceOptions<S> = {},
): void {
  describeStore(
    `${name}: SpentStateStore conformance`,
    SPENT_STATE_STORE_LAWS,
    factory,
    options,
    (store, clock) => ({ store, clock }),
  );
}

export interface TaskRecordStoreConformanceOptions<S> extends StoreConformanceOptions<S> {
  /** False for a store without a lease (no `renew` and `endStale`): its lease laws are not run. */
  readonly lease?: boolean;
}

/**
 * Registers one test per TaskRecordStore law: kept as created, only a task that has not ended changes
 * (also under 20 racing changes), the owner's answers handed out once, lists and counts by exact owner,
 * and sweeping ended tasks only; and, unless `lease: false`, the lease: renewing running tasks, ending
 * only stale ones, never one without a renewal time, and once under racing calls.
 *
 * @example
 * describeTaskRecordStoreConformance('in-memory tasks', () => inMemoryTaskRecords());
 */
export function describeTaskRecordStoreConformance<S extends TaskRecordStore>(
  name: string,
  factory: (context: StoreFactoryContext) => S | Promise<S>,
  options: TaskRecordStoreConformanceOptions<S> = {},
): void {
  describeStore(
    `${name}: TaskRecordStore conformance`,
    options.lease === false ? TASK_RECORD_STORE_LAWS : [...TASK_RECORD_STORE_LAWS, ...TASK_LEASE_LAWS],
    factory,
    options,
    (store) => ({
      store,
    }),
  );
}
