// `audit.checkpoints` and `toolgate audit verify --checkpoint / --head`: the gateway's log publishes
// signed checkpoints outside its store, and verify catches a log cut short or wiped together with
// its head row, which the store alone cannot show (finding #32.3, replayed on SQLite).

import { generateKeyPairSync } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { DatabaseSync as Database } from 'node:sqlite';
import { loadConfig, runCli } from '@toolgate/gateway';
import { openAudit } from '../src/audit';
import { tempDir, fixtureServer, type TempDir } from './helpers';

function io(dir: TempDir) {
  const out: string[] = [];
  const err: string[] = [];
  return {
    out,
    err,
    io: { out: (t: string) => out.push(t), err: (t: string) => err.push(t), env: {}, cwd: dir.path },
  };
}

const base = `auth: { tokens: [{ token: t-0123456789abcdef0123456789abcdef, identity: { tenant: acme, principal: bot } }] }
upstreams: { shop: { command: [node, ${JSON.stringify(fixtureServer)}] } }
tenants: { acme: { upstreams: [shop] } }
stores: { state: "sqlite:./state.db" }
`;

describe('audit checkpoints through the gateway and `toolgate audit verify`', () => {
  let dir: TempDir;
  let head7: string;
  beforeEach(async () => {
    dir = tempDir();
    const { privateKey } = generateKeyPairSync('ed25519');
    dir.write('audit-key.pem', privateKey.export({ type: 'pkcs8', format: 'pem' }) as string);
    dir.write(
      'toolgate.yaml',
      `${base}audit: { signingKey: "\${file:./audit-key.pem}", checkpoints: { file: ./checkpoint.json, every: 3 } }\n`,
    );
    const loaded = loadConfig(join(dir.path, 'toolgate.yaml'), { env: {} });
    const audit = openAudit(loaded.config, loaded.baseDir);
    await audit.log.ready();
    for (let i = 0; i < 7; i++) await audit.record({ kind: 'grant.used', tool: `t${i}`, args: { i } });
    await audit.close();
    const verified = io(dir);
    expect(await runCli(['audit', 'verify', '--checkpoint', 'checkpoint.json'], verified.io)).toBe(0);
    head7 = /^head: (7:[0-9a-f]{64})$/m.exec(verified.out.join('\n'))![1]!;
  });
  afterEach(() => dir.remove());

  /** What someone with the database does: cut records and move the head row back to match. */
  function cutTo(seq: number): void {
    const db = new Database(join(dir.path, 'state.db'));
    try {
      db.prepare('DELETE FROM toolgate_audit WHERE seq > ?').run(seq);
      if (seq === 0) db.prepare('DELETE FROM toolgate_audit_head').run();
      else {
        const row = db.prepare('SELECT record FROM toolgate_audit WHERE seq = ?').get(seq) as {
          record: string;
        };
        const hash = (JSON.parse(row.record) as { hash: string }).hash;
        db.prepare('UPDATE toolgate_audit_head SET seq = ?, hash = ? WHERE id = 1').run(seq, hash);
      }
    } finally {
      db.close();
    }
  }

  it('an intact log: ok, the head printed, the tail anchored by the published checkpoint', async () => {
    const run = io(dir);
    expect(await runCli(['audit', 'verify', '--checkpoint', 'checkpoint.json'], run.io)).toBe(0);
    expect(run.out.join('\n')).toMatch(
      /tail anchored: the log reaches and agrees with the checkpoint of .* \(record 7\)/,
    );
    const bare = io(dir);
    expect(await runCli(['audit', 'verify'], bare.io)).toBe(0);
    expect(bare.out.join('\n')).toContain(`head: ${head7}`);
    expect(bare.out.join('\n')).toContain('tail unanchored');
    expect(bare.out.join('\n')).toContain('--checkpoint ./checkpoint.json');
  });

  it('"delete the last 3 records and the head row": ok on its own, detected with --checkpoint and with --head', async () => {
    cutTo(4);
    const bare = io(dir);
    expect(await runCli(['audit', 'verify'], bare.io)).toBe(0);
    expect(bare.out.join('\n')).toContain('tail unanchored');
    const anchored = io(dir);
    expect(await runCli(['audit', 'verify', '--checkpoint', 'checkpoint.json'], anchored.io)).toBe(1);
    expect(anchored.err.join('\n')).toMatch(
      /^audit log broken at seq 5: record 5 is missing: the log ends at 4/,
    );
    const headed = io(dir);
    expect(await runCli(['audit', 'verify', '--head', head7], headed.io)).toBe(1);
    expect(headed.err.join('\n')).toMatch(/broken at seq 5/);
  });

  it('"delete every record": detected with --checkpoint', async () => {
    cutTo(0);
    const run = io(dir);
    expect(await runCli(['audit', 'verify', '--checkpoint', join(dir.path, 'checkpoint.json')], run.io)).toBe(
      1,
    );
    expect(run.err.join('\n')).toMatch(/broken at seq 1: record 1 is missing: the log ends at 0/);
  });

  it('a checkpoint edited by hand, a missing file or a malformed --head: refused, never ok', async () => {
    const checkpoint = JSON.parse(readFileSync(join(dir.path, 'checkpoint.json'), 'utf8')) as Record<
      string,
      unknown
    >;
    dir.write('edited.json', JSON.stringify({ ...checkpoint, seq: 4 }));
    const edited = io(dir);
    expect(await runCli(['audit', 'verify', '--checkpoint', 'edited.json'], edited.io)).toBe(1);
    expect(edited.err.join('\n')).toContain('not signed by this key');
    const missing = io(dir);
    expect(await runCli(['audit', 'verify', '--checkpoint', 'nowhere.json'], missing.io)).toBe(2);
    expect(missing.err.join('\n')).toContain('--checkpoint: the file cannot be read (ENOENT)');
    const bad = io(dir);
    expect(await runCli(['audit', 'verify', '--head', '7:nothex'], bad.io)).toBe(2);
    expect(bad.err.join('\n')).toContain('--head: expected SEQ:HASH');
  });
});

describe('audit.checkpoints in the configuration', () => {
  let dir: TempDir;
  let server: Server | undefined;
  beforeEach(() => {
    dir = tempDir();
    const { privateKey } = generateKeyPairSync('ed25519');
    dir.write('audit-key.pem', privateKey.export({ type: 'pkcs8', format: 'pem' }) as string);
  });
  afterEach(async () => {
    dir.remove();
    await new Promise((done) => (server === undefined ? done(undefined) : server.close(done)));
    server = undefined;
  });

  it('a webhook receives each checkpoint as JSON, verifiable with --checkpoint URL', async () => {
    const received: string[] = [];
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => {
        if (req.method === 'POST') received.push(body);
        res.writeHead(200, { 'content-type': 'application/json' }).end(received.at(-1) ?? '');
      });
    });
    await new Promise<void>((done) => server!.listen(0, '127.0.0.1', done));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/checkpoints`;
    dir.write(
      'toolgate.yaml',
      `${base}audit: { signingKey: "\${file:./audit-key.pem}", checkpoints: { webhook: "${url}", every: 2 } }\n`,
    );
    const loaded = loadConfig(join(dir.path, 'toolgate.yaml'), { env: {} });
    const audit = openAudit(loaded.config, loaded.baseDir);
    for (let i = 0; i < 5; i++) await audit.record({ kind: 'grant.used' });
    await audit.close();
    // Every second record, the newest head winning while one is in flight, and the last on close.
    const seqs = received.map((body) => (JSON.parse(body) as { seq: number }).seq);
    expect(seqs[0]).toBe(2);
    expect(seqs.at(-1)).toBe(5);
    expect([...seqs].sort((a, b) => a - b)).toEqual([...new Set(seqs)]);
    const run = io(dir);
    expect(await runCli(['audit', 'verify', '--checkpoint', url], run.io)).toBe(0);
    expect(run.out.join('\n')).toContain('(record 5)');
  });

  it('refuses a webhook over plain http to another host, and a checkpoints block with nowhere to publish', () => {
    dir.write(
      'a.yaml',
      `${base}audit: { signingKey: "\${file:./audit-key.pem}", checkpoints: { webhook: "http://audit.example/cp" } }\n`,
    );
    expect(() => loadConfig(join(dir.path, 'a.yaml'), { env: {} })).toThrow(
      /audit\.checkpoints\.webhook: is not an https URL/,
    );
    dir.write(
      'b.yaml',
      `${base}audit: { signingKey: "\${file:./audit-key.pem}", checkpoints: { every: 5 } }\n`,
    );
    expect(() => loadConfig(join(dir.path, 'b.yaml'), { env: {} })).toThrow(/audit\.checkpoints/);
    dir.write(
      'c.yaml',
      `${base}audit: { signingKey: "\${file:./audit-key.pem}", checkpoints: { file: ./cp.json, interval: soon } }\n`,
    );
    expect(() => loadConfig(join(dir.path, 'c.yaml'), { env: {} })).toThrow(
      /audit\.checkpoints\.interval: is not a duration/,
    );
  });
});
