// Policy through the gateway: rules from the configuration (a file of global rules, a tenant's own)
// decide real calls to a real stdio upstream, driven by the SDK client; tools/list hides what an
// identity can never call; a bad rule stops `check` and startup at its file, line and column; and
// `toolgate policy test` exits non-zero on a failing case.

import {
  CHECKIN_KEY,
  cliIn,
  connectClient,
  fixtureServer,
  runToolgate,
  startGateway,
  tempDir,
  textOf,
  type GatewayProcess,
  type TempDir,
} from './helpers';

const TOKENS = {
  BOT_TOKEN: 'bot-token-0123456789abcdef-0123456789',
  INTERN_TOKEN: 'intern-token-0123456789abcdef-0123456789',
  GLOBEX_TOKEN: 'globex-token-0123456789abcdef-0123456789',
};
const env = { ...TOKENS, TOOLGATE_CHECKIN_KEY: CHECKIN_KEY };

const POLICY = `- name: interns-read-only
  when: "'intern' in identity.roles && !tool.annotations.readOnlyHint"
  effect: deny
  reason: interns may only use read-only tools
- name: no-crash
  tools: [shop_crash]
  effect: deny
  reason: this tool is retired
- name: refund-cap
  tools: [shop_refund]
  when: args.amount > 1000.0
  effect: deny
  reason: Offer a refund of at most 1,000, or hand the case to finance
- name: big-refunds-ask
  tools: [shop_refund]
  when: args.amount > 100.0
  effect: ask
  reason: refunds over 100 need a supervisor
`;

function config(dir: TempDir): string {
  return `auth:
  tokens:
    - { token: "\${env:BOT_TOKEN}", identity: { tenant: acme, principal: support-bot } }
    - { token: "\${env:INTERN_TOKEN}", identity: { tenant: acme, principal: ivy, roles: [intern] } }
    - { token: "\${env:GLOBEX_TOKEN}", identity: { tenant: globex, principal: gus } }
checkIns: { key: "\${env:TOOLGATE_CHECKIN_KEY}", hold: 200ms }
upstreams:
  shop:
    command: [node, ${JSON.stringify(fixtureServer)}]
    env: { RUN_LOG: ${JSON.stringify(`${dir.path}/runs.log`)} }
    prefix: shop_
policy:
  file: ./policy.yaml
tenants:
  acme: { upstreams: [shop] }
  globex:
    upstreams: [shop]
    policy:
      - { name: globex-no-slow, tools: [shop_slow], effect: deny, reason: globex has no slow lane }
`;
}

interface Refusal {
  gate: string;
  code: string;
  retryable: boolean;
  checkInId?: string;
}
const refusalOf = (result: unknown) =>
  (result as { _meta?: Record<string, unknown> })._meta?.['io.toolgate/refusal'] as Refusal | undefined;

describe('policy in a gateway process, over Streamable HTTP', () => {
  let dir: TempDir;
  let gateway: GatewayProcess;

  beforeAll(async () => {
    dir = tempDir();
    dir.write('policy.yaml', POLICY);
    gateway = await startGateway(dir.write('toolgate.yaml', config(dir)), env);
  });
  afterAll(async () => {
    await gateway?.stop();
    dir?.remove();
  });

  it('hides from tools/list what a rule refuses an identity whatever the args', async () => {
    const names = async (token: string) => {
      const client = await connectClient(gateway.url, token);
      try {
        return (await client.listTools()).tools.map((tool) => tool.name).sort();
      } finally {
        await client.close();
      }
    };
    // no-crash reads no args: nobody sees shop_crash. Interns see only the read-only tool.
    expect(await names(TOKENS.BOT_TOKEN)).toEqual(['shop_big', 'shop_echo', 'shop_refund', 'shop_slow']);
    expect(await names(TOKENS.INTERN_TOKEN)).toEqual(['shop_echo']);
    // The tenant's own rule applies to it alone.
    expect(await names(TOKENS.GLOBEX_TOKEN)).toEqual(['shop_big', 'shop_echo', 'shop_refund']);
  });

  it('allows, denies with the rule’s reason, and asks — and the upstream runs only what was allowed', async () => {
    const client = await connectClient(gateway.url, TOKENS.BOT_TOKEN);
    try {
      const allowed = await client.callTool({ name: 'shop_refund', arguments: { amount: 50, order: 'o-1' } });
      expect(allowed.isError).toBeFalsy();
      expect(textOf(allowed)).toBe('refunded 50 on o-1');

      const denied = await client.callTool({
        name: 'shop_refund',
        arguments: { amount: 5000, order: 'o-2' },
      });
      expect(denied.isError).toBe(true);
      expect(textOf(denied)).toBe(
        "[policy refused: policy rule 'refund-cap' does not allow 'shop_refund' with these arguments. Retrying with the same arguments will not help. Offer a refund of at most 1,000, or hand the case to finance.]",
      );
      expect(refusalOf(denied)).toEqual({ gate: 'policy', code: 'POLICY_DENIED', retryable: false });
      // The refusal never quotes the argument.
      expect(textOf(denied)).not.toContain('5000');

      const asked = await client.callTool({ name: 'shop_refund', arguments: { amount: 500, order: 'o-3' } });
      expect(refusalOf(asked)).toMatchObject({ gate: 'check-in', code: 'CHECKIN_PENDING', retryable: true });
      expect(textOf(asked)).toContain("'shop_refund' awaits a person's approval");
    } finally {
      await client.close();
    }
    expect(dir.runs()).toEqual(['refund']);
    const line = await gateway.waitForLog((l) => l['msg'] === 'call' && l['code'] === 'POLICY_DENIED');
    expect(line).toMatchObject({
      tenant: 'acme',
      principal: 'support-bot',
      gate: 'policy',
      rule: 'refund-cap',
    });
    expect(JSON.stringify(gateway.logs())).not.toContain('5000');
  });

  it('refuses a hidden tool called by name anyway, and a tenant’s own rule only in that tenant', async () => {
    const intern = await connectClient(gateway.url, TOKENS.INTERN_TOKEN);
    const globex = await connectClient(gateway.url, TOKENS.GLOBEX_TOKEN);
    const bot = await connectClient(gateway.url, TOKENS.BOT_TOKEN);
    const before = dir.runs().length;
    try {
      const refund = await intern.callTool({ name: 'shop_refund', arguments: { amount: 5, order: 'o-4' } });
      expect(refusalOf(refund)).toMatchObject({ code: 'POLICY_DENIED' });
      expect(textOf(refund)).toContain(
        "policy rule 'interns-read-only' does not allow 'shop_refund' for this caller",
      );
      expect(textOf(refund)).toContain('interns may only use read-only tools');
      expect(textOf(await intern.callTool({ name: 'shop_echo', arguments: { text: 'hi' } }))).toBe('hi');

      const slow = await globex.callTool({ name: 'shop_slow', arguments: { ms: 1 } });
      expect(refusalOf(slow)).toMatchObject({ code: 'POLICY_DENIED' });
      expect(textOf(slow)).toContain('globex has no slow lane');
      expect(textOf(await bot.callTool({ name: 'shop_slow', arguments: { ms: 1 } }))).toBe('waited 1');

      const crash = await bot.callTool({ name: 'shop_crash', arguments: {} });
      expect(refusalOf(crash)).toMatchObject({ code: 'POLICY_DENIED' });
    } finally {
      await Promise.all([intern.close(), globex.close(), bot.close()]);
    }
    expect(dir.runs().slice(before)).toEqual(['echo', 'slow']);
  });
});

describe('policy errors and policy tests, from the command line', () => {
  let dir: TempDir;
  beforeEach(() => {
    dir = tempDir();
  });
  afterEach(() => dir.remove());

  const run = (argv: string[]) => cliIn(dir, env)(argv);

  it('check lists, per tenant, the rules that apply to each tool', async () => {
    dir.write('policy.yaml', POLICY);
    dir.write('toolgate.yaml', config(dir));
    const { code, out } = await run(['check']);
    expect(code).toBe(0);
    expect(out).toMatch(
      /acme: upstreams shop; chain chain_\w+: permission → capabilities → validate-args → policy → wants/,
    );
    expect(out).toContain('    policy: 4 rule(s) (4 global, 0 own), default allow');
    expect(out).toContain('    policy: 5 rule(s) (4 global, 1 own), default allow');
    expect(out).toContain(
      'shop_refund  from shop; rules: interns-read-only, refund-cap, big-refunds-ask (then default allow)',
    );
    expect(out).toMatch(
      /shop_slow {2}from shop; rules: interns-read-only, globex-no-slow \(then default allow\)/,
    );
  });

  it('stops check and startup at a rule typed against a field the tool lacks: file, line, column, rule', async () => {
    dir.write('policy.yaml', POLICY.replace('when: args.amount > 100.0', 'when: args.amout > 100.0'));
    const configFile = dir.write('toolgate.yaml', config(dir));
    const checked = await run(['check']);
    expect(checked.code).toBe(1);
    expect(checked.err).toContain(
      `${dir.path}/policy.yaml:16:9: policy.file[3].when: policy rule 'big-refunds-ask' reads args.amout, which tool 'shop_refund' does not declare (it declares amount, order). Fix: fix the field name`,
    );
    // Reported once, although both tenants serve the tool.
    expect(checked.err.match(/args\.amout/g)).toHaveLength(1);

    const started = await runToolgate(['gateway', '--config', configFile, '--port', '0'], env);
    expect(started.code).toBe(1);
    expect(started.stdout).toBe('');
    expect(started.stderr).toContain(`${dir.path}/policy.yaml:16:9:`);
    expect(started.stderr).toContain("policy rule 'big-refunds-ask'");
  });

  it('places a CEL syntax error inside the expression, and a tenant rule at its line in the config', async () => {
    dir.write('policy.yaml', POLICY.replace('when: args.amount > 1000.0', 'when: args.amount >'));
    dir.write(
      'toolgate.yaml',
      config(dir).replace(
        '{ name: globex-no-slow, tools: [shop_slow],',
        '{ name: globex-no-slow, tools: [shop_slw],',
      ),
    );
    const { code, err } = await run(['check']);
    expect(code).toBe(1);
    expect(err).toContain(
      `${dir.path}/policy.yaml:11:22: policy.file: policy rule 'refund-cap': its 'when' is not valid CEL at column 14`,
    );
    expect(err).toContain(
      `${dir.path}/toolgate.yaml:19:40: tenants.globex.policy[0].tools: policy rule 'globex-no-slow': 'shop_slw' matches none of the tools of tenant 'globex'`,
    );
  });

  it('refuses an ask rule when no check-in key is configured, at the rule', async () => {
    dir.write('policy.yaml', POLICY);
    dir.write('toolgate.yaml', config(dir).replace(/^checkIns: .*\n/m, ''));
    const { code, err } = await run(['check']);
    expect(code).toBe(1);
    expect(err).toContain(
      `${dir.path}/policy.yaml:17:11: policy.file[3].effect: policy rule 'big-refunds-ask' asks for a person's approval, and no check-in key is configured`,
    );
  });

  it('policy test: decides each case with its tenant’s rules and real tools; exit 1 on a failing case', async () => {
    dir.write('policy.yaml', POLICY);
    const configFile = dir.write('toolgate.yaml', config(dir));
    const passing = `- name: intern refund
  identity: { tenant: acme, principal: ivy, roles: [intern] }
  tool: shop_refund
  args: { amount: 5, order: o-1 }
  expect: deny
  rule: interns-read-only
- name: big refund asks
  identity: { tenant: acme }
  tool: shop_refund
  args: { amount: 500, order: o-1 }
  expect: ask
- name: globex slow
  identity: { tenant: globex }
  tool: shop_slow
  args: { ms: 1 }
  expect: deny
  rule: globex-no-slow
`;
    // Run from the repository, as `pnpm toolgate` does, so the sources (not stale builds) are loaded.
    const casesFile = dir.write('cases.yaml', passing);
    const ok = await runToolgate(['policy', 'test', casesFile, '--config', configFile], env);
    expect(ok.stdout).toContain("ok    intern refund: deny by rule 'interns-read-only'");
    expect(ok.stdout).toContain('3 passed, 0 failed');
    expect(ok.code).toBe(0);

    dir.write(
      'cases.yaml',
      `${passing}- name: acme slow is not globex
  identity: { tenant: acme }
  tool: shop_slow
  args: { ms: 1 }
  expect: deny
`,
    );
    const failing = await runToolgate(['policy', 'test', casesFile, '--config', configFile], env);
    expect(failing.stdout).toContain(
      `FAIL  ${dir.path}/cases.yaml:18:3: acme slow is not globex: expected deny, got allow by the default.`,
    );
    expect(failing.stdout).toContain('3 passed, 1 failed');
    expect(failing.code).toBe(1);
  });
});
