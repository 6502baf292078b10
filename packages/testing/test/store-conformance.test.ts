// The in-memory stores through the store conformance suites, as any store implementation would run them.

import { inMemoryArtifacts, inMemoryCheckIns } from '@toolgate/testing';
import { inMemoryPins } from '@toolgate/core';
import {
  describeArtifactStoreConformance,
  describeCheckInStoreConformance,
  describePinStoreConformance,
} from '@toolgate/testing/jest';

describeCheckInStoreConformance('inMemoryCheckIns', ({ now }) => inMemoryCheckIns({ now }));
describeArtifactStoreConformance('inMemoryArtifacts', ({ now }) => inMemoryArtifacts({ now }));
describePinStoreConformance('inMemoryPins', () => inMemoryPins());
