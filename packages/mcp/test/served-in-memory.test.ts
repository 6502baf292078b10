import type { McpServed } from '@toolgate/mcp';
import { describeServedTools } from './fixtures/conformance';
import { governedServe } from './fixtures/governed';
import { alice, linkTo } from './fixtures/in-memory';

let served: McpServed;

describeServedTools(
  'the in-memory transport',
  async () => {
    served = governedServe();
    return {
      identity: { principal: 'alice', tenant: 'acme' },
      transport: () => linkTo(served.createServer(), alice),
    };
  },
  () => served.close(),
);
