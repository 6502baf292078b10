// An upstream that fails to start is reported with its own reason: the last lines it wrote to stderr
// (credential values and secret-looking text redacted) end the start error `toolgate check` prints
// and the `/readyz` entry of an upstream that stopped coming back; a missing working folder is named
// as such, never as a missing command.

import { pathToFileURL } from 'node:url';
import { createGateway, runCli, type Gateway } from '@toolgate/gateway';
import { fixtureServer, tempDir, type TempDir } from './helpers';
import { redactLine } from '../src/stderr-tail';

const SECRET = 'sk-live-4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c';
/** /readyz names upstreams, and so their stderr, only to an identity with the role operator. */
const OPERATOR_TOKEN = 'operator-token-0123456789abcdef0123';

function io(dir: TempDir, env: Record<string, string> = {}) {
  const out: string[] = [];
  const err: string[] = [];
  return {
    out,
    err,
    io: { out: (t: string) => out.push(t), err: (t: string) => err.push(t), env, cwd: dir.path },
  };
}

/** A configuration with one stdio upstream `shop` running `script`, its credential in SHOP_TOKEN. */
function config(script: string, extra = ''): string {
  return `auth: { tokens: [{ token: ${OPERATOR_TOKEN}, identity: { tenant: acme, principal: ops, roles: [operator] } }] }
credentials: { shop: { env: SHOP_TOKEN } }
upstreams:
  shop: { command: [node, ${JSON.stringify(script)}], env: { SHOP_TOKEN: "\${credential:shop}" }${extra} }
tenants: { acme: { upstreams: [shop] } }
`;
}

describe('upstream start errors', () => {
  let dir: TempDir;
  beforeEach(() => (dir = tempDir()));
  afterEach(() => dir.remove());

  it('`toolgate check` ends the start error with the last stderr lines, the credential redacted', async () => {
    const script = dir.write(
      'fails.mjs',
      `for (let i = 1; i <= 15; i++) console.error('noise line ' + i);
console.error('shop: cannot open ./orders.db: permission denied');
console.error('shop: started with token ' + process.env.SHOP_TOKEN);
console.error('Authorization: Bearer abc.def.ghi');
process.exit(3);
`,
    );
    const file = dir.write('toolgate.yaml', config(script));
    const run = io(dir, { SHOP_TOKEN: SECRET });
    expect(await runCli(['check', '--config', file], run.io)).toBe(1);
    const printed = run.err.join('\n');
    expect(printed).toMatch(/upstreams\.shop: the server started by 'node' did not answer the MCP handshake/);
    expect(printed).toContain('its stderr ended with:');
    expect(printed).toContain('shop: cannot open ./orders.db: permission denied');
    expect(printed).toContain('shop: started with token [redacted]');
    expect(printed).toContain('Authorization: [redacted]');
    // Only the last ten lines are kept.
    expect(printed).not.toContain('noise line 6 ');
    expect(printed).toContain('noise line 15');
    expect(printed).not.toContain(SECRET);
    expect(printed).not.toContain('abc.def.ghi');
  });

  it('names a missing working folder as such, not as a missing command', async () => {
    const file = dir.write('toolgate.yaml', config(fixtureServer, ', cwd: ./no-such-folder'));
    const run = io(dir, { SHOP_TOKEN: SECRET });
    expect(await runCli(['check', '--config', file], run.io)).toBe(1);
    const printed = run.err.join('\n');
    expect(printed).toContain('upstreams.shop: its working folder (cwd) does not exist:');
    expect(printed).toContain('no-such-folder');
    expect(printed).not.toContain('was not found');
  });

  describe('/readyz', () => {
    let gateway: Gateway | undefined;
    afterEach(async () => {
      await gateway?.close();
      gateway = undefined;
    });

    it('shows the stderr of an upstream that stopped and cannot start again', async () => {
      // Serves until the test says stop (once the gateway is up); every later start fails, saying why.
      const script = dir.write(
        'once.mjs',
        `import { existsSync, writeFileSync } from 'node:fs';
const marker = new URL('./started', import.meta.url);
if (existsSync(marker)) {
  console.error('shop: the database is locked by another process');
  console.error('api_key=' + process.env.SHOP_TOKEN);
  process.exit(2);
}
writeFileSync(marker, '');
const stop = new URL('./stop', import.meta.url);
setInterval(() => existsSync(stop) && process.exit(0), 50);
await import(${JSON.stringify(pathToFileURL(fixtureServer).href)});
`,
      );
      const file = dir.write('toolgate.yaml', config(script));
      gateway = await createGateway(file, { port: 0, env: { SHOP_TOKEN: SECRET }, log: () => undefined });
      dir.write('stop', '');
      const deadline = Date.now() + 15_000;
      let body: { upstreams: Record<string, { state: string; stderr?: string[]; error?: string }> };
      for (;;) {
        const res = await fetch(`${gateway.url.replace(/\/mcp$/, '')}/readyz`, {
          headers: { authorization: `Bearer ${OPERATOR_TOKEN}` },
        });
        body = (await res.json()) as typeof body;
        if ((body.upstreams['shop']?.stderr?.length ?? 0) >= 2 || Date.now() > deadline) break;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(body.upstreams['shop']).toMatchObject({
        state: expect.not.stringMatching(/^connected$/),
        stderr: ['shop: the database is locked by another process', 'api_key=[redacted]'],
      });
      expect(JSON.stringify(body)).not.toContain(SECRET);
    }, 30_000);
  });
});

describe('redactLine', () => {
  it.each([
    ['password=hunter2 user=ana', [], 'password=[redacted] user=ana'],
    ['"apiKey": "abc123"', [], '"apiKey": "[redacted]"'],
    ['X-Api-Key: zzzz', [], 'X-Api-Key: [redacted]'],
    ['using Bearer eyJhbGciOi.eyJzdWIi.sig', [], 'using Bearer [redacted]'],
    ['key ghp_0123456789abcdefghijABCDEFGHIJ0123 loaded', [], 'key [redacted] loaded'],
    ['connected to db with s3cr3t-value', ['s3cr3t-value'], 'connected to db with [redacted]'],
    ['\u001b[31mred error\u001b[0m', [], 'red error'],
    ['listening on port 8080 at /srv/app', [], 'listening on port 8080 at /srv/app'],
  ])('%s', (line, secrets, expected) => {
    expect(redactLine(line, secrets)).toBe(expected);
  });
});
