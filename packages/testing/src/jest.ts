// @toolgate/testing/jest: importing it installs the toolgate matchers on jest's `expect` and types
// them, and exposes the conformance suites (they register jest tests, so they live here).

import { expect } from '@jest/globals';
import { toolgateMatchers, type ToolgateMatchers } from './matchers';

expect.extend(toolgateMatchers);

declare global {
  // The global `expect` of @types/jest.
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace jest {
    // eslint-disable-next-line @typescript-eslint/no-empty-object-type, @typescript-eslint/no-unused-vars
    interface Matchers<R, T = {}> extends ToolgateMatchers<R> {}
  }
}

declare module 'expect' {
  // The `expect` of @jest/globals.
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type, @typescript-eslint/no-unused-vars
  interface Matchers<R extends void | Promise<void>, T = unknown> extends ToolgateMatchers<R> {}
}

export type { LedgerRowExpectation, ToolgateMatchers } from './matchers';
export { toolgateMatchers } from './matchers';
export type {
  ConformanceArgs,
  MiddlewareConformanceOptions,
  MiddlewareFactory,
  RefusedCall,
} from './conformance/middleware-laws';
export { SENTINEL } from './conformance/middleware-laws';
export { describeMiddlewareConformance } from './conformance/middleware';
export type {
  LimitStoreConformanceOptions,
  StoreConformanceOptions,
  StoreFactoryContext,
  TaskRecordStoreConformanceOptions,
} from './conformance/stores';
export {
  describeArtifactStoreConformance,
  describeAuditStoreConformance,
  describeCheckInStoreConformance,
  describeLimitStoreConformance,
  describePinStoreConformance,
  describeSpentStateStoreConformance,
  describeStandingGrantStoreConformance,
  describeTaskRecordStoreConformance,
} from './conformance/stores';
export type {
  StandingGrantPlaceOptions,
  StandingGrantRaceOptions,
} from './conformance/standing-grant-processes';
export {
  describeStandingGrantRace,
  describeStandingGrantReopen,
} from './conformance/standing-grant-processes';
export type { LeasedTaskRecordStore, TaskLeaseSharedOptions } from './conformance/task-lease-shared';
export { describeTaskLeaseShared } from './conformance/task-lease-shared';
