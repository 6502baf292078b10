// The in-memory stores through the store conformance suites, as any store implementation would run them.

import { inMemoryArtifacts, inMemoryCheckIns } from '@toolgate/testing';
import {
  inMemoryPins,
  inMemorySpentStates,
  inMemoryStandingGrants,
  inMemoryTaskRecords,
} from '@toolgate/core';
import {
  describeArtifactStoreConformance,
  describeCheckInStoreConformance,
  describePinStoreConformance,
  describeSpentStateStoreConformance,
  describeStandingGrantStoreConformance,
  describeTaskLeaseShared,
  describeTaskRecordStoreConformance,
} from '@toolgate/testing/jest';

describeCheckInStoreConformance('inMemoryCheckIns', ({ now }) => inMemoryCheckIns({ now }));
describeArtifactStoreConformance('inMemoryArtifacts', ({ now }) => inMemoryArtifacts({ now }));
describePinStoreConformance('inMemoryPins', () => inMemoryPins());
describeStandingGrantStoreConformance('inMemoryStandingGrants', ({ now }) => inMemoryStandingGrants({ now }));
describeSpentStateStoreConformance('inMemorySpentStates', ({ now }) => inMemorySpentStates({ now }));
describeTaskRecordStoreConformance('inMemoryTaskRecords', () => inMemoryTaskRecords());

// Two "stores" on one place are one in-memory store here: the shared-lease tests as any store runs them.
const memoryPlaces = new Map<string, ReturnType<typeof leasedInMemoryTasks>>();
let memoryPlaceCount = 0;
function leasedInMemoryTasks() {
  const store = inMemoryTaskRecords();
  const { renew, endStale } = store;
  if (renew === undefined || endStale === undefined) throw new Error('inMemoryTaskRecords keeps no lease');
  return { ...store, renew, endStale };
}
const memoryPlace = (place: string) => {
  const store = memoryPlaces.get(place) ?? leasedInMemoryTasks();
  memoryPlaces.set(place, store);
  return store;
};
describeTaskLeaseShared('inMemoryTaskRecords shared by two holders', {
  place: () => `place-${(memoryPlaceCount += 1)}`,
  open: memoryPlace,
  close: () => undefined,
  writeWithoutRenewal: (place, record) => memoryPlace(place).create(record),
});
