// The official MCP Inspector CLI against the gateway process. The Inspector needs Node ≥ 22, so it
// runs through `npx -y -p node@22`; where npx cannot fetch it (offline), the test is skipped with a note.

import { spawnSync } from 'node:child_process';
import { fixtureServer, startGateway, tempDir, type GatewayProcess, type TempDir } from './helpers';

const INSPECTOR = [
  '-y',
  '-p',
  'node@22',
  '-p',
  '@modelcontextprotocol/inspector@2.12.0',
  '--',
  'mcp-inspector',
  '--cli',
];
const TOKEN = 'inspector-token-0123456789abcdef-0123456789';

function inspector(args: readonly string[]): { status: number | null; stdout: string; stderr: string } {
  const run = spawnSync('npx', [...INSPECTOR, ...args], {
    encoding: 'utf8',
    timeout: 240_000,
    env: { ...process.env, npm_config_loglevel: 'error' },
  });
  return { status: run.status, stdout: run.stdout ?? '', stderr: run.stderr ?? '' };
}

const available = inspector(['--help']).status === 0;
if (!available)
  console.warn(
    'Inspector CLI test skipped: `npx -y -p node@22 -p @modelcontextprotocol/inspector` is not available here (offline?)',
  );
const run = available ? describe : describe.skip;

run('the official MCP Inspector CLI through the gateway', () => {
  let dir: TempDir;
  let gateway: GatewayProcess;

  beforeAll(async () => {
    dir = tempDir();
    const file = dir.write(
      'toolgate.yaml',
      `auth: { tokens: [{ token: "\${env:TOKEN}", identity: { tenant: acme, principal: inspector } }] }
upstreams: { shop: { command: [node, ${JSON.stringify(fixtureServer)}], prefix: shop_, include: [echo, refund] } }
tenants: { acme: { upstreams: [shop] } }
`,
    );
    gateway = await startGateway(file, { TOKEN });
  });
  afterAll(async () => {
    await gateway?.stop();
    dir?.remove();
  });

  it('lists the tenant’s tools and calls one, with a bearer token', () => {
    const header = `Authorization: Bearer ${TOKEN}`;
    const listed = inspector([
      gateway.url,
      '--transport',
      'http',
      '--header',
      header,
      '--method',
      'tools/list',
    ]);
    expect(listed.status).toBe(0);
    const names = (JSON.parse(listed.stdout) as { tools: { name: string }[] }).tools
      .map((tool) => tool.name)
      .sort();
    expect(names).toEqual(['shop_echo', 'shop_refund']);

    const called = inspector([
      gateway.url,
      '--transport',
      'http',
      '--header',
      header,
      '--method',
      'tools/call',
      '--tool-name',
      'shop_echo',
      '--tool-arg',
      'text=from the inspector',
    ]);
    expect(called.status).toBe(0);
    expect(JSON.parse(called.stdout)).toMatchObject({
      content: [{ type: 'text', text: 'from the inspector' }],
    });
  });

  it('is refused without a token', () => {
    const refused = inspector([
      gateway.url,
      '--transport',
      'http',
      '--stored-auth-only',
      '--method',
      'tools/list',
    ]);
    expect(refused.status).not.toBe(0);
  });
});
