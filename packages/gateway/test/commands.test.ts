// The `toolgate` command line, run in-process through runCli (the bin is a thin shell over it).

import { runCli } from '@toolgate/gateway';
import { fixtureServer, tempDir, type TempDir } from './helpers';

function io(dir: TempDir, env: Record<string, string> = {}) {
  const out: string[] = [];
  const err: string[] = [];
  return {
    out,
    err,
    io: { out: (t: string) => out.push(t), err: (t: string) => err.push(t), env, cwd: dir.path },
  };
}

describe('toolgate check', () => {
  let dir: TempDir;
  beforeEach(() => {
    dir = tempDir();
  });
  afterEach(() => dir.remove());

  it("connects every upstream and prints each tenant's tools with their declarations, exit 0", async () => {
    dir.write(
      'toolgate.yaml',
      `auth: { tokens: [{ token: "\${env:T}", identity: { tenant: acme, principal: bot } }] }
checkIns: { key: "\${env:K}" }
upstreams:
  shop: { command: [node, ${JSON.stringify(fixtureServer)}], prefix: shop_, exclude: [crash], tools: { refund: { checkIn: always, capabilities: [payments] } } }
limits: [{ name: refunds, per: tenant, calls: 5, window: 1h, tools: [shop_refund] }]
tenants: { acme: { upstreams: [shop] } }
`,
    );
    const run = io(dir, { T: 'secret-token-value-0123456789-0123', K: 'k'.repeat(40) });
    expect(await runCli(['check'], run.io)).toBe(0);
    const printed = run.out.join('\n');
    expect(printed).toContain('upstreams:\n  shop (stdio): connected, 4 tool(s)');
    expect(printed).toMatch(
      /acme: upstreams shop; chain chain_\w+: permission → capabilities → validate-args → wants → limits → secret-guard → check-in → credentials → own-secrets → result-ceiling/,
    );
    expect(printed).toContain(
      'shop_refund  from shop; check-in: always; capabilities: payments; limits: refunds; annotations: destructiveHint',
    );
    expect(printed).not.toContain('shop_crash');
    expect(printed).not.toContain('secret-token-value');
    expect(printed).not.toContain('k'.repeat(40));
  });

  it('names a tool the server lists but the gateway does not, with why (a description addressed to the model)', async () => {
    dir.write(
      'toolgate.yaml',
      `auth: { tokens: [{ token: "\${env:T}", identity: { tenant: acme, principal: bot } }] }
upstreams:
  calc: { command: [node, ${JSON.stringify(fixtureServer.replace(/upstream\.mjs$/, 'poisoned.mjs'))}], prefix: calc_ }
tenants: { acme: { upstreams: [calc] } }
`,
    );
    const run = io(dir, { T: 'secret-token-value-0123456789abcdef' });
    expect(await runCli(['check'], run.io)).toBe(0);
    const printed = run.out.join('\n');
    expect(printed).toContain('calc (stdio): connected, 1 tool(s)');
    expect(printed).toMatch(
      /not listed: add: its description contains text addressed to the AI assistant .*and a path where keys or client configuration are kept/,
    );
    expect(printed).not.toContain('calc_add  from');
  });

  it('exits 1 naming a tool the configuration names and the server does not serve, at its position', async () => {
    const file = dir.write(
      'toolgate.yaml',
      `auth: { tokens: [{ token: t-0123456789abcdef-0123456789abcdef, identity: { tenant: acme, principal: bot } }] }
upstreams:
  shop:
    command: [node, ${JSON.stringify(fixtureServer)}]
    include: [echo, refnd]
tenants: { acme: { upstreams: [shop] } }
`,
    );
    const run = io(dir);
    expect(await runCli(['check', '--config', file], run.io)).toBe(1);
    expect(run.err.join('\n')).toContain(
      `${file}:5:21: upstreams.shop.include[1]: matches no tool of 'shop'. Fix: it serves: echo, refund, slow, big, crash`,
    );
  });

  it('exits 1 when an upstream cannot start, naming it', async () => {
    const file = dir.write(
      'toolgate.yaml',
      `auth: { tokens: [{ token: t-0123456789abcdef-0123456789abcdef, identity: { tenant: acme, principal: bot } }] }
upstreams: { ghost: { command: [definitely-not-a-command-here] } }
tenants: { acme: { upstreams: [ghost] } }
`,
    );
    const run = io(dir);
    expect(await runCli(['check', '--config', file], run.io)).toBe(1);
    expect(run.err.join('\n')).toMatch(
      /toolgate\.yaml:2:21: upstreams\.ghost: the command 'definitely-not-a-command-here' was not found/,
    );
  });
});

describe('toolgate command line', () => {
  it('prints usage and exits 2 for an unknown command or a missing value', async () => {
    const dir = tempDir();
    try {
      const unknown = io(dir);
      expect(await runCli(['serve'], unknown.io)).toBe(2);
      expect(unknown.err.join('\n')).toContain("toolgate: unknown command 'serve'");
      const missing = io(dir);
      expect(await runCli(['check', '--config'], missing.io)).toBe(2);
      expect(missing.err.join('\n')).toContain('--config needs a value');
      const none = io(dir);
      expect(await runCli(['check'], none.io)).toBe(2);
      expect(none.err.join('\n')).toContain('no configuration: pass --config toolgate.yaml');
    } finally {
      dir.remove();
    }
  });
});

describe('toolgate pins and toolgate audit, where they cannot work', () => {
  let dir: TempDir;
  beforeEach(() => {
    dir = tempDir();
  });
  afterEach(() => dir.remove());
  const minimal = `auth: { tokens: [{ token: t-0123456789abcdef-0123456789abcdef, identity: { tenant: acme, principal: bot } }] }
upstreams: { shop: { command: [node, ${JSON.stringify(fixtureServer)}] } }
tenants: { acme: { upstreams: [shop] } }
`;

  it('pins on a memory: store: says the pins live inside the running gateway (exit 2)', async () => {
    dir.write('toolgate.yaml', minimal);
    const run = io(dir);
    expect(await runCli(['pins', 'list'], run.io)).toBe(2);
    expect(run.err.join('\n')).toContain(
      'stores.state is memory:, so the pins live only inside the running gateway',
    );
  });

  it('pins accept of a tool nobody pinned: exit 1, naming it', async () => {
    dir.write('toolgate.yaml', `${minimal}stores: { state: "sqlite:./state.db" }\n`);
    const run = io(dir);
    expect(await runCli(['pins', 'accept', 'nothing_here'], run.io)).toBe(1);
    expect(run.err.join('\n')).toContain("no pinned tool 'nothing_here'");
  });

  it('audit without an audit log configured: exit 1 saying how to add one', async () => {
    dir.write('toolgate.yaml', `${minimal}stores: { state: "sqlite:./state.db" }\n`);
    const run = io(dir);
    expect(await runCli(['audit', 'verify'], run.io)).toBe(1);
    expect(run.err.join('\n')).toContain('this configuration has no audit log');
  });

  it('an audit log whose signing key is not a key: the gateway refuses to start, naming audit', async () => {
    dir.write('toolgate.yaml', `${minimal}audit: { signingKey: "not-a-key" }\n`);
    const run = io(dir);
    expect(await runCli(['check'], run.io)).toBe(1);
    const printed = run.err.join('\n');
    expect(printed).toMatch(
      /toolgate\.yaml:4:22: audit\.signingKey: the audit log cannot start: 'signingKey': expected a PEM or JWK Ed25519 key/,
    );
    expect(printed).not.toContain('not-a-key');
  });
});
