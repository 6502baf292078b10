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
  describeTaskRecordStoreConformance,
} from '@toolgate/testing/jest';

describeCheckInStoreConformance('inMemoryCheckIns', ({ now }) => inMemoryCheckIns({ now }));
describeArtifactStoreConformance('inMemoryArtifacts', ({ now }) => inMemoryArtifacts({ now }));
describePinStoreConformance('inMemoryPins', () => inMemoryPins());
describeStandingGrantStoreConformance('inMemoryStandingGrants', ({ now }) => inMemoryStandingGrants({ now }));
describeSpentStateStoreConformance('inMemorySpentStates', ({ now }) => inMemorySpentStates({ now }));
describeTaskRecordStoreConformance('inMemoryTaskRecords', () => inMemoryTaskRecords());
