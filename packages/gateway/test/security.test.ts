// Issue 32's findings, replayed against a gateway process with a real stdio upstream: a relative
// path is read where the upstream reads it (its working directory) and reaches it absolute; the
// gateway's own secrets (interpolated values, resolved credentials) never reach the model and never
// leave through arguments, whatever their shape; an interpolated value is never read twice.

import { mkdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { fillCredentials } from '../src/credentials';
import type { Tool } from '@toolgate/core';
import { parseConfig } from '../src/config/load';
import { pathBases } from '../src/path-base';
import { connectClient, startGateway, tempDir, textOf, type GatewayProcess, type TempDir } from './helpers';

const reflectServer = join(__dirname, 'fixtures', 'reflect.mjs');
const TOKEN = 'acme-token-0123456789abcdef-0123456789';
const OPS = 'ops-token-0123456789abcdef-0123456789';
// Looks like no known key format: only the gateway's knowledge of its value can catch it.
const BILLING = 'correct-horse-battery-staple-42';
const PLAIN_SECRET = 'plain-words-no-format-1234';

interface Refusal {
  gate: string;
  code: string;
}
const refusalOf = (result: unknown) =>
  (result as { _meta?: Record<string, unknown> })._meta?.['io.toolgate/refusal'] as Refusal | undefined;

function config(dir: TempDir): string {
  return `auth:
  tokens:
    - { token: "\${env:ACME_TOKEN}", identity: { tenant: acme, principal: bot } }
    - { token: "\${env:OPS_TOKEN}", identity: { tenant: acme, principal: ops, roles: [operator] } }
credentials:
  billing: { env: BILLING_KEY }
  rotating: { file: ./rotating.txt }
upstreams:
  root:
    command: [node, ${JSON.stringify(reflectServer)}]
    cwd: /
    env:
      BILLING: "\${credential:billing}"
      PLAIN: "\${env:PLAIN_SECRET}"
      TWICE: "\${env:TRICKY}"
      ROTATING: "\${credential:rotating}"
    tools:
      read_file: { paths: { path: [/srv/data] } }
  data:
    command: [node, ${JSON.stringify(reflectServer)}]
    cwd: ${JSON.stringify(join(dir.path, 'data'))}
    prefix: data_
    tools:
      read_file: { paths: { path: [${JSON.stringify(join(dir.path, 'data'))}] } }
tenants:
  acme: { upstreams: [root, data] }
`;
}

describe('issue 32 replayed against a gateway process', () => {
  let dir: TempDir;
  let gateway: GatewayProcess;

  beforeAll(async () => {
    dir = tempDir();
    mkdirSync(join(dir.path, 'data', 'reports'), { recursive: true });
    symlinkSync('/etc', join(dir.path, 'data', 'etc-link'));
    dir.write('rotating.txt', 'first-rotating-value-0123456789\n');
    gateway = await startGateway(dir.write('toolgate.yaml', config(dir)), {
      ACME_TOKEN: TOKEN,
      OPS_TOKEN: OPS,
      BILLING_KEY: BILLING,
      PLAIN_SECRET,
      TRICKY: '${credential:billing}',
    });
  });
  afterAll(async () => {
    await gateway?.stop();
    dir?.remove();
  });

  it('refuses a relative path that the upstream, started in /, would open outside the root', async () => {
    const client = await connectClient(gateway.url, TOKEN);
    try {
      for (const path of ['etc/passwd', './etc/passwd', 'proc/self/environ', 'srv/data/../../etc/passwd']) {
        const refused = await client.callTool({ name: 'read_file', arguments: { path } });
        expect(refusalOf(refused)).toMatchObject({ gate: 'path-guard', code: 'PATH_OUTSIDE_ROOT' });
        expect(textOf(refused)).not.toContain('root:x:');
      }
      const inside = await client.callTool({ name: 'read_file', arguments: { path: 'srv/data/q1.csv' } });
      expect(textOf(inside)).toBe('would open /srv/data/q1.csv');
    } finally {
      await client.close();
    }
  });

  it('hands the upstream the absolute real path, and refuses a symbolic link out of the root', async () => {
    const client = await connectClient(gateway.url, TOKEN);
    try {
      const ran = await client.callTool({
        name: 'data_read_file',
        arguments: { path: './reports/../q1.csv' },
      });
      expect(textOf(ran)).toMatch(/^would open \/.+\/data\/q1\.csv$/);
      const linked = await client.callTool({
        name: 'data_read_file',
        arguments: { path: 'etc-link/passwd' },
      });
      expect(refusalOf(linked)).toMatchObject({ gate: 'path-guard', code: 'PATH_OUTSIDE_ROOT' });
    } finally {
      await client.close();
    }
  });

  it('redacts a credential an upstream reflects, though it looks like no known key', async () => {
    const client = await connectClient(gateway.url, TOKEN);
    try {
      for (const name of ['BILLING', 'PLAIN']) {
        const result = await client.callTool({ name: 'debug_env', arguments: { name } });
        const text = textOf(result);
        // The rest of the upstream's answer still reaches the model.
        expect(text).toMatch(/^401 for key \[redacted\] \(\d+ chars\)$/);
        expect(text).not.toContain(BILLING);
        expect(text).not.toContain(PLAIN_SECRET);
      }
    } finally {
      await client.close();
    }
  });

  it('refuses the gateway own secrets in arguments, also encoded', async () => {
    const client = await connectClient(gateway.url, TOKEN);
    try {
      for (const text of [
        `send ${BILLING} please`,
        encodeURIComponent(PLAIN_SECRET),
        Buffer.from(BILLING).toString('base64'),
        TOKEN,
      ]) {
        const refused = await client.callTool({ name: 'echo', arguments: { text } });
        expect(refusalOf(refused)?.code).toBe('SECRET_IN_ARGS');
        expect(textOf(refused)).not.toContain(BILLING);
      }
    } finally {
      await client.close();
    }
  });

  it('answers /readyz with counts only to anyone but an operator', async () => {
    for (const headers of [{}, { authorization: `Bearer ${TOKEN}` }, { authorization: 'Bearer nope' }]) {
      const ready = await fetch(new URL('/readyz', gateway.url), { headers });
      expect(ready.status).toBe(200);
      const body = await ready.text();
      expect(JSON.parse(body)).toEqual({
        ready: true,
        upstreams: { total: 2, connected: 2 },
        stores: { total: 2, ok: 2 },
      });
      expect(body).not.toMatch(/root|data|memory/);
    }
    const operator = await fetch(new URL('/readyz', gateway.url), {
      headers: { authorization: `Bearer ${OPS}` },
    });
    expect(((await operator.json()) as { upstreams: Record<string, unknown> }).upstreams).toEqual({
      root: { state: 'connected', tools: 4 },
      data: { state: 'connected', tools: 4 },
    });
  });

  it('hands the upstream an ${env:…} value holding ${credential:…} as that literal text', async () => {
    const client = await connectClient(gateway.url, TOKEN);
    try {
      const result = await client.callTool({ name: 'debug_env', arguments: { name: 'TWICE' } });
      // 21 characters: '${credential:billing}' itself (a configured value, so redacted), not the 31 of the credential.
      expect(textOf(result)).toBe('401 for key [redacted] (21 chars)');
    } finally {
      await client.close();
    }
  });

  it('redacts a credential rotated while the gateway runs, once a reconnection read it', async () => {
    const client = await connectClient(gateway.url, TOKEN);
    try {
      dir.write('rotating.txt', 'second-rotating-value-0123456789\n');
      await client.callTool({ name: 'crash', arguments: {} });
      await gateway.waitForLog((l) => l['msg'] === 'upstream.restarted' && l['upstream'] === 'root');
      const result = await client.callTool({ name: 'debug_env', arguments: { name: 'ROTATING' } });
      expect(textOf(result)).toBe('401 for key [redacted] (32 chars)');
    } finally {
      await client.close();
    }
  });

  it('passes a result that holds no secret', async () => {
    const client = await connectClient(gateway.url, TOKEN);
    try {
      const result = await client.callTool({ name: 'echo', arguments: { text: 'nothing to hide' } });
      expect(textOf(result)).toBe('nothing to hide');
    } finally {
      await client.close();
    }
  });
});

describe('interpolation', () => {
  const text = `upstreams:
  u:
    command: [node, x.mjs]
    env: { TWICE: "\${env:TRICKY}", LITERAL: "$\${credential:billing}", REAL: "\${credential:billing}" }
credentials:
  billing: { env: BILLING_KEY }
tenants:
  acme: { upstreams: [u] }
`;

  it('never reads an ${env:…} value (or a $${ literal) as a reference again when the upstream connects', () => {
    const loaded = parseConfig(text, { env: { TRICKY: '${credential:billing}' } });
    const env = loaded.config.upstreams['u']!.env!;
    const lookup = jest.fn(() => BILLING);
    expect(fillCredentials(env['TWICE']!, lookup)).toBe('${credential:billing}');
    expect(fillCredentials(env['LITERAL']!, lookup)).toBe('${credential:billing}');
    expect(lookup).not.toHaveBeenCalled();
    expect(fillCredentials(env['REAL']!, lookup)).toBe(BILLING);
  });

  it('keeps an ${env:…} value holding ${env:…} or ${file:…} literal everywhere else', () => {
    const literal = '${env:OTHER}${file:/etc/passwd}-0123456789abcdef-0123456789';
    const loaded = parseConfig(
      `${text}checkIns: { key: "\${env:KEY}" }
`,
      {
        env: { TRICKY: 'x', KEY: literal, OTHER: 'must-not-appear' },
      },
    );
    expect(loaded.config.checkIns?.key).toBe(literal);
  });
});

describe('where each upstream reads a relative path', () => {
  const text = (base: string) => `upstreams:
  local: { command: [node, x.mjs], cwd: sub }
  remote: { url: "https://files.example/mcp" }
  based: { url: "https://files.example/mcp", paths: { base: ${JSON.stringify(base)} } }
tenants:
  acme: { upstreams: [local, remote, based] }
`;
  const tool = (name: string) => ({ schema: { name } }) as unknown as Tool;

  it('is the stdio cwd, an HTTP server written base, or unknown', async () => {
    const loaded = parseConfig(text('/srv/app'), { file: '/etc/toolgate/toolgate.yaml' });
    const sources = new Map([
      ['a', 'local'],
      ['b', 'remote'],
      ['c', 'based'],
    ]);
    const bases = pathBases(loaded.config, loaded.baseDir, sources);
    expect(bases.base(tool('a'))).toBe('/etc/toolgate/sub');
    expect(bases.base(tool('b'))).toBeUndefined();
    expect(bases.base(tool('c'))).toBe('/srv/app');
    // Links are resolved only where the gateway sees the server's file system.
    expect(await bases.realpath('/no/such/dir/x', tool('c'))).toBe('/no/such/dir/x');
  });

  it('refuses a paths.base that is not absolute, at its position', () => {
    expect(() => parseConfig(text('srv/app'), { file: '/cfg/toolgate.yaml' })).toThrow(
      "/cfg/toolgate.yaml:4:61: upstreams.based.paths.base: must be an absolute directory without '..'",
    );
    expect(() => parseConfig(text('/srv/../etc'), { file: '/cfg/toolgate.yaml' })).toThrow(/paths\.base/);
  });
});
