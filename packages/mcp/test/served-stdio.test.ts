import { describeServedTools } from './fixtures/conformance';
import { spawnFixture } from './fixtures/spawn';

// Both clients in the suite talk to one spawned process each; closing a client ends its process.
describeServedTools(
  'stdio (a spawned server process)',
  async () => ({
    identity: { principal: 'local-user', tenant: null },
    transport: () => spawnFixture('served'),
  }),
  async () => undefined,
);
