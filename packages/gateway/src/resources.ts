// Resources and prompts through the gateway: each tenant sees those of its own upstreams, under
// their prefixes, and reading one asks the tenant chain's permission checker (capability
// 'resource_read' / 'prompt_get', the prefixed URI or name as target), as `mcpServe` does.

import type { Server } from '@modelcontextprotocol/server';
import type { Chain, Identity } from '@toolgate/core';
import { serveProxied, type McpUpstream } from '@toolgate/mcp';
import type { IdentitySource, ServerHost } from './mcp-server';
import type { Runtime } from './runtime';

/** The upstreams a caller's tenant sees, in the order its configuration lists them. */
export function tenantUpstreams(runtime: Runtime, identity: Identity | undefined): McpUpstream[] {
  const tenant = identity?.tenant === undefined ? undefined : runtime.config.tenants[identity.tenant];
  if (tenant === undefined) return [];
  return tenant.upstreams.flatMap((name) => {
    const upstream = runtime.upstreams.get(name);
    return upstream === undefined ? [] : [upstream.client];
  });
}

/** Registers resources/* and prompts/* on a gateway server, read from the live configuration per request. */
export function serveTenantResources(server: Server, host: ServerHost, identityOf: IdentitySource): void {
  serveProxied(server, {
    upstreams: (extra) => tenantUpstreams(host.current(), identityOf(extra)),
    chain: (identity): Chain => {
      const tenant = identity?.tenant === undefined ? undefined : host.current().tenants.get(identity.tenant);
      // Thrown, so the read is refused as unidentified rather than served without a chain.
      if (tenant === undefined) throw new Error('no tenant');
      return tenant.chain;
    },
    identify: async (extra) => identityOf(extra),
  });
}
