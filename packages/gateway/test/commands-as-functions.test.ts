// What the commands do, called as library functions (the CLI prints their answers).

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { inMemoryPins } from '@toolgate/core';
import {
  acceptPinnedDefinition,
  checkGateway,
  GATEWAY_VERSION,
  loadConfig,
  PinError,
  testGatewayPolicy,
} from '@toolgate/gateway';
import { fixtureServer, tempDir, type TempDir } from './helpers';

const env = { T: 'secret-token-value-0123456789-0123' };

describe('commands as functions', () => {
  let dir: TempDir;
  beforeEach(() => {
    dir = tempDir();
  });
  afterEach(() => dir.remove());

  const configure = (extra = '') =>
    loadConfig(
      dir.write(
        'toolgate.yaml',
        `auth: { tokens: [{ token: "\${env:T}", identity: { tenant: acme, principal: bot } }] }
upstreams:
  shop: { command: [node, ${JSON.stringify(fixtureServer)}], prefix: shop_, exclude: [crash] }
tenants: { acme: { upstreams: [shop] } }
${extra}`,
      ),
      { env },
    );

  it('checkGateway answers the description `toolgate check` prints, without the secret', async () => {
    const description = await checkGateway(configure(), { env });
    expect(description).toContain('upstreams:\n  shop (stdio): connected, 4 tool(s)');
    expect(description).not.toContain(env.T);
  });

  it('testGatewayPolicy decides each case in order, and fails a case naming an unknown tool', async () => {
    dir.write(
      'policy.yaml',
      '- { name: no-refunds, tools: [shop_refund], effect: deny, reason: refunds go to finance }\n',
    );
    const results = await testGatewayPolicy(
      configure('policy: { file: ./policy.yaml }'),
      [
        { tool: 'shop_refund', args: { amount: 1, order: 'o' }, expect: 'deny', rule: 'no-refunds' },
        { name: 'echo', tool: 'shop_echo', args: { text: 'x' }, expect: 'deny' },
        { tool: 'shop_nothing', args: {}, expect: 'allow' },
      ],
      { env },
    );
    expect(results.map((result) => [result.index, result.passed, result.actual])).toEqual([
      [0, true, 'deny'],
      [1, false, 'allow'],
      [2, false, undefined],
    ]);
    expect(results[0]!.rule).toBe('no-refunds');
    expect(results[1]!.name).toBe('echo');
    expect(results[2]!.problem).toBe("the tenant 'acme' serves no tool named 'shop_nothing'.");
  });

  it('acceptPinnedDefinition accepts a changed definition once, with its diff; unknown names throw PinError', async () => {
    const loaded = configure();
    const pins = inMemoryPins();
    const seen = (description: string) => ({
      source: 'shop',
      kind: 'tool' as const,
      name: 'echo',
      digest: description,
      definition: { name: 'echo', description },
    });
    await pins.observe(seen('Echoes.'), '2026-01-01T00:00:00Z');
    expect((await acceptPinnedDefinition(loaded, pins, 'shop_echo', { approver: 'ops' })).outcome).toBe(
      'unchanged',
    );
    await pins.observe(seen('Echoes, and mails it out.'), '2026-01-02T00:00:00Z');
    const accepted = await acceptPinnedDefinition(loaded, pins, 'shop_echo', { approver: 'ops' });
    expect(accepted.outcome).toBe('accepted');
    expect(accepted.name).toBe('shop_echo');
    expect(accepted.diff).toContain('-   "description": "Echoes.",');
    expect(accepted.diff).toContain('+   "description": "Echoes, and mails it out.",');
    expect((await pins.get('shop', 'tool', 'echo'))?.digest).toBe('Echoes, and mails it out.');
    await expect(acceptPinnedDefinition(loaded, pins, 'shop_nothing', { approver: 'ops' })).rejects.toThrow(
      PinError,
    );
  });

  it('GATEWAY_VERSION is the package version', () => {
    const manifest = JSON.parse(readFileSync(join(__dirname, '..', 'package.json'), 'utf8')) as {
      version: string;
    };
    expect(GATEWAY_VERSION).toBe(manifest.version);
  });
});
