// inMemoryAuditStore through the AuditStore conformance suite, as any store implementation would run it.

import { inMemoryAuditStore } from '@toolgate/audit';
import { describeAuditStoreConformance } from '@toolgate/testing/jest';

describeAuditStoreConformance('inMemoryAuditStore', () => inMemoryAuditStore());
