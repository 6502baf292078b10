// Issue 32, finding 4: no interpolated value in any output. Every string field of a full
// configuration in turn is given a secret through ${env:…}; whether the result is valid or not,
// nothing `toolgate check` prints, nothing `createGateway` throws or logs, and nothing a reload
// logs contains it. (listen.host and listen.port are left out: the listening line must name them.)

import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { createGateway } from '@toolgate/gateway';
import { cliIn, CHECKIN_KEY, fixtureServer, tempDir, type TempDir } from './helpers';

type Json = string | number | boolean | null | Json[] | { [key: string]: Json };

const BASE: Json = {
  auth: {
    tokens: [
      {
        token: 'static-token-0123456789abcdef-0123456789',
        identity: { tenant: 'acme', principal: 'bot', roles: ['ops'] },
      },
    ],
    jwt: {
      issuer: 'https://id.example',
      audience: 'toolgate',
      jwks: './jwks.json',
      clockTolerance: '5s',
      maxLifetime: '1h',
      claims: { tenant: 'org', principal: 'sub', roles: 'roles' },
    },
  },
  credentials: { billing: { env: 'BILLING_KEY' } },
  stores: { state: 'memory:', limits: 'memory:' },
  checkIns: { key: CHECKIN_KEY, ttl: '10m' },
  upstreams: {
    shop: {
      command: ['node', fixtureServer],
      cwd: '.',
      env: { MODE: 'test-mode', KEY: '${credential:billing}' },
      prefix: 'shop_',
      include: ['echo', 'refund'],
      timeout: '5s',
      tools: { refund: { checkIn: 'always', capabilities: ['payments'], paths: { order: ['/srv/data'] } } },
    },
  },
  limits: [{ name: 'refunds', per: 'tenant', calls: 5, window: '1h', tools: ['shop_refund'] }],
  policy: [
    { name: 'no-x', tools: ['shop_echo'], when: "args.text != 'x'", effect: 'allow', reason: 'x is out' },
  ],
  tenants: { acme: { upstreams: ['shop'] } },
};

/** Every string leaf and where it is. */
function fields(node: Json, at: (string | number)[] = []): (string | number)[][] {
  if (typeof node === 'string') return [at];
  if (Array.isArray(node)) return node.flatMap((item, i) => fields(item, [...at, i]));
  if (typeof node === 'object' && node !== null)
    return Object.entries(node).flatMap(([key, item]) => fields(item, [...at, key]));
  return [];
}

function withSecretAt(at: readonly (string | number)[]): Json {
  const copy = structuredClone(BASE) as Record<string | number, Json>;
  let node = copy as Record<string | number, Json>;
  for (const key of at.slice(0, -1)) node = node[key] as Record<string | number, Json>;
  node[at[at.length - 1]!] = '${env:SECRET}';
  return copy;
}

const FIELDS = fields(BASE);
// Random secrets shaped like what operators write: words, paths, URLs, tokens.
const SECRET = fc
  .tuple(
    fc.constantFrom('', '/', 'https://', 'sk-', 'shop'),
    fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9._-]{9,24}$/),
  )
  .map(([prefix, body]) => `${prefix}zq${body}`);

describe('no interpolated value in any output (property)', () => {
  let dir: TempDir;
  beforeAll(() => {
    dir = tempDir();
    dir.write('jwks.json', JSON.stringify({ keys: [] }));
  });
  afterAll(() => dir.remove());

  it('holds for `toolgate check`, whichever field carries the secret', async () => {
    expect(FIELDS.length).toBeGreaterThan(30);
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...FIELDS), SECRET, async (at, secret) => {
        const file = join(dir.path, 'toolgate.json');
        writeFileSync(file, JSON.stringify(withSecretAt(at), null, 2));
        const answer = await cliIn(dir, { SECRET: secret, BILLING_KEY: 'billing-key-0123456789' })([
          'check',
          '--config',
          file,
        ]);
        const printed = `${answer.out}\n${answer.err}`;
        if (printed.includes(secret)) throw new Error(`${at.join('.')} leaked: ${printed}`);
      }),
      // Every field once with a fixed secret, then random fields with random secrets.
      {
        numRuns: 20,
        examples: FIELDS.map((at) => [at, 'zq-example-secret-0123456789'] as [typeof at, string]),
      },
    );
  }, 120_000);

  it('holds for the three fields that used to leak, and for the gateway, its log and a reload', async () => {
    const secret = 'zq-secret-value-0123456789';
    const env = { SECRET: secret, BILLING_KEY: 'billing-key-0123456789' };
    for (const at of [
      ['auth', 'jwt', 'jwks'],
      ['upstreams', 'shop', 'command', 0],
      ['tenants', 'acme', 'upstreams', 0],
    ]) {
      const file = join(dir.path, 'toolgate.json');
      writeFileSync(file, JSON.stringify(withSecretAt(at)));
      const lines: string[] = [];
      const started = await createGateway(file, {
        env,
        port: 0,
        host: '127.0.0.1',
        log: (line) => lines.push(line),
        watch: false,
      }).then(
        () => 'started',
        (error: Error) => error.message,
      );
      expect(started).not.toBe('started');
      expect(started).toContain(`${file}:`);
      expect(`${started}\n${lines.join('\n')}`).not.toContain(secret);
    }
    // A running gateway reloads a file that now leaks the secret in each of the three places.
    const file = join(dir.path, 'toolgate.json');
    const running = structuredClone(BASE) as { auth: Record<string, unknown> };
    delete running.auth['jwt'];
    writeFileSync(file, JSON.stringify(running));
    const lines: string[] = [];
    const gateway = await createGateway(file, {
      env,
      port: 0,
      host: '127.0.0.1',
      log: (line) => lines.push(line),
      watch: false,
    });
    try {
      for (const at of [
        ['auth', 'jwt', 'jwks'],
        ['upstreams', 'shop', 'command', 0],
        ['tenants', 'acme', 'upstreams', 0],
      ]) {
        writeFileSync(file, JSON.stringify(withSecretAt(at)));
        const result = await gateway.reload();
        expect(result.ok).toBe(false);
        expect(result.ok ? '' : result.error.message).not.toContain(secret);
      }
      expect(lines.some((line) => line.includes('reload.refused'))).toBe(true);
      expect(lines.join('\n')).not.toContain(secret);
    } finally {
      await gateway.close();
    }
  }, 120_000);
});
