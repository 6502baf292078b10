// The TLS key a server presents is part of its identity: read on a probe connection, as the SHA-256
// of its public key; another key reads differently. Certificates are made here with openssl.

import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { tlsKeyOf } from '../src/client';

let dir: string;
const servers: Server[] = [];

function certificate(name: string): { key: Buffer; cert: Buffer } {
  const key = join(dir, `${name}.key`);
  const cert = join(dir, `${name}.crt`);
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      key,
      '-out',
      cert,
      '-days',
      '1',
      '-subj',
      '/CN=127.0.0.1',
    ],
    { stdio: 'ignore' },
  );
  return { key: readFileSync(key), cert: readFileSync(cert) };
}

async function serve(credentials: { key: Buffer; cert: Buffer }): Promise<URL> {
  const server = createServer(credentials, (_req, res) => res.end('ok'));
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return new URL(`https://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`);
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'toolgate-tls-'));
});
afterAll(async () => {
  await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  rmSync(dir, { recursive: true, force: true });
});

describe('tlsKeyOf', () => {
  it('reads the same key twice, and another key differently', async () => {
    const first = certificate('first');
    const a = await serve(first);
    const again = await serve(first);
    const b = await serve(certificate('second'));

    const key = await tlsKeyOf(a);
    expect(key).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(await tlsKeyOf(again)).toBe(key);
    expect(await tlsKeyOf(b)).not.toBe(key);
  });

  it('fails when nothing answers, so the identity pins as unreadable', async () => {
    await expect(tlsKeyOf(new URL('https://127.0.0.1:1/mcp'))).rejects.toThrow();
  });
});
