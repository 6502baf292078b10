/**
 * The library target of the conformance runs: `mcpClient` imports the reference upstream (at the URL
 * given as the only argument), `mcpServe` serves it again through a chain that allows everything, and
 * `serveHttp` puts it on a free loopback port. Prints `listening <url>` once it accepts connections.
 *
 *   node --import tsx test-support/conformance/library-proxy.ts http://127.0.0.1:PORT/mcp
 */
import { mcpClient, mcpServe, serveHttp } from '@toolgate/mcp';
import { canonicalChain } from '@toolgate/middleware';

async function main(upstreamUrl: string | undefined): Promise<void> {
  if (upstreamUrl === undefined || !/^https?:\/\//.test(upstreamUrl)) {
    process.stderr.write('usage: library-proxy.ts <upstream MCP URL>\n');
    process.exit(2);
  }
  const upstream = mcpClient({ name: 'reference', url: upstreamUrl });
  // Conformance measures what the proxy carries, so the chain permits every call.
  const chain = canonicalChain({ permissions: { check: () => ({ allow: true as const }) } });
  const served = mcpServe(await upstream.tools(), {
    name: 'toolgate-conformance-library',
    version: '1.0.0',
    chain,
    upstreams: [upstream],
  });
  const serving = await serveHttp(served, { port: 0 });
  process.stdout.write(`listening ${serving.url.href}\n`);
  const stop = () => {
    void Promise.allSettled([serving.close(), upstream.close()]).then(() => process.exit(0));
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

void main(process.argv[2]);
