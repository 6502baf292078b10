// serveHttp as an OAuth 2.1 resource server: what the SDK's own client discovery reads (RFC 9728).

import {
  discoverOAuthProtectedResourceMetadata,
  extractWWWAuthenticateParams,
} from '@modelcontextprotocol/sdk/client/auth.js';
import { serveHttp, type HttpServing, type McpServed } from '@toolgate/mcp';
import { governedServe } from './fixtures/governed';

const initialize = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } },
};

describe('serveHttp OAuth protected resource metadata', () => {
  let served: McpServed;
  let http: HttpServing;

  beforeAll(async () => {
    served = governedServe();
    http = await serveHttp(served, {
      authenticate: () => undefined,
      oauth: {
        authorizationServers: ['https://id.example'],
        scopesSupported: ['tools'],
        resourceName: 'test gateway',
      },
    });
  });
  afterAll(async () => {
    await http.close();
    await served.close();
  });

  it('answers 401 with WWW-Authenticate naming the metadata, which a standard client discovers', async () => {
    const response = await fetch(http.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify(initialize),
    });
    expect(response.status).toBe(401);
    const { resourceMetadataUrl } = extractWWWAuthenticateParams(response);
    expect(resourceMetadataUrl?.href).toBe(`${http.url.origin}/.well-known/oauth-protected-resource/mcp`);
    const metadata = await discoverOAuthProtectedResourceMetadata(http.url, {
      resourceMetadataUrl: resourceMetadataUrl!,
    });
    expect(metadata).toEqual({
      resource: http.url.href,
      authorization_servers: ['https://id.example'],
      scopes_supported: ['tools'],
      bearer_methods_supported: ['header'],
      resource_name: 'test gateway',
    });
    // Found without the header too, at the well-known path for the resource.
    expect(await discoverOAuthProtectedResourceMetadata(http.url)).toEqual(metadata);
  });

  it('serves the metadata to GET only, and nothing else without a token', async () => {
    const root = `${http.url.origin}/.well-known/oauth-protected-resource`;
    expect((await fetch(root)).status).toBe(200);
    expect((await fetch(root, { method: 'POST' })).status).toBe(405);
    expect((await fetch(`${http.url.origin}/.well-known/other`)).status).toBe(404);
  });
});
