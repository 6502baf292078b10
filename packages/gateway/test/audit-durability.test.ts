// `audit.durability` and `audit.commitWindow`: the gateway batches the audit log by default (a call
// answers once its record is queued; the window's records are committed together under one
// signature), `durability: record` answers each call once its record is committed, and a window that
// is not a short duration is a configuration error placed at its line.

import { generateKeyPairSync } from 'node:crypto';
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync as Database } from 'node:sqlite';
import { createChain, createDispatcher, defineTool } from '@toolgate/core';
import { ConfigError, loadConfig, parseConfig, type ConfigIssue } from '@toolgate/gateway';
import { openAudit } from '../src/audit';
import { tempDir, fixtureServer, type TempDir } from './helpers';

const base = `auth: { tokens: [{ token: t-0123456789abcdef0123456789abcdef, identity: { tenant: acme, principal: bot } }] }
upstreams: { shop: { command: [node, ${JSON.stringify(fixtureServer)}] } }
tenants: { acme: { upstreams: [shop] } }
stores: { state: "sqlite:./state.db" }
`;

const echo = defineTool({
  name: 'echo',
  description: 'Answers its argument.',
  inputSchema: { type: 'object', properties: { n: { type: 'number' } } },
  execute: async ({ n }: { n?: number }) => ({ n }),
});

function issuesOf(text: string): ConfigIssue[] {
  try {
    parseConfig(text, { file: '/etc/toolgate/toolgate.yaml', env: { KEY: 'x' } });
  } catch (error) {
    if (error instanceof ConfigError) return [...error.issues];
    throw error;
  }
  throw new Error('expected a ConfigError');
}

describe('audit.durability through the gateway', () => {
  let dir: TempDir;
  beforeEach(() => {
    dir = tempDir();
    const { privateKey } = generateKeyPairSync('ed25519');
    dir.write('audit-key.pem', privateKey.export({ type: 'pkcs8', format: 'pem' }) as string);
  });
  afterEach(() => dir.remove());

  const stored = () => {
    const db = new Database(join(dir.path, 'state.db'), { readOnly: true });
    try {
      return (db.prepare('SELECT COUNT(*) AS n FROM toolgate_audit').get() as { n: number }).n;
    } finally {
      db.close();
    }
  };

  async function calls(audit: string, n: number) {
    dir.write('toolgate.yaml', `${base}audit: { signingKey: "\${file:./audit-key.pem}"${audit} }\n`);
    const loaded = loadConfig(join(dir.path, 'toolgate.yaml'), { env: {} });
    const opened = openAudit(loaded.config, loaded.baseDir);
    await opened.log.ready();
    const dispatcher = opened.attach(createDispatcher({ tools: [echo], chain: createChain([]) }));
    const counts: number[] = [];
    for (let i = 0; i < n; i++) {
      expect((await dispatcher.dispatch({ toolName: 'echo', args: { n: i } })).kind).toBe('result');
      counts.push(stored());
    }
    return { opened, counts };
  }

  it('by default (batch): calls answer before their records are committed, and flush() and close() write them', async () => {
    const { opened, counts } = await calls(', commitWindow: 1m', 3);
    expect(counts).toEqual([0, 0, 0]);
    await opened.log.flush();
    expect(stored()).toBe(3);
    expect(await opened.log.verify()).toEqual({ ok: true, count: 3 });
    await opened.record({ kind: 'grant.used', tool: 'echo' });
    const dispatcher = opened.attach(createDispatcher({ tools: [echo], chain: createChain([]) }));
    await dispatcher.dispatch({ toolName: 'echo', args: { n: 9 } });
    await opened.close();
    expect(stored()).toBe(5);
  });

  it('by default a SQLite log journals each window beside the database and stores it at close; journal: false opens none', async () => {
    const journalFile = join(dir.path, 'state.db-audit-journal');
    const { opened, counts } = await calls('', 3);
    expect(existsSync(journalFile)).toBe(true);
    expect(counts).toEqual([0, 0, 0]);
    await opened.close();
    expect(stored()).toBe(3);
    rmSync(journalFile);
    const off = await calls(', journal: false', 1);
    await off.opened.close();
    expect(existsSync(journalFile)).toBe(false);
    expect(stored()).toBe(4);
  });

  it('durability: record: each call answers once its record is in the file', async () => {
    const { opened, counts } = await calls(', durability: record', 3);
    expect(counts).toEqual([1, 2, 3]);
    await opened.close();
  });

  it('a commit window that is not a short duration, or an unknown durability, is refused at its line', () => {
    const long = issuesOf(`${base}audit: { signingKey: "\${env:KEY}", commitWindow: 2m }\n`);
    expect(long).toContainEqual(
      expect.objectContaining({ line: 5, message: expect.stringMatching(/longer than a minute/) }),
    );
    expect(issuesOf(`${base}audit: { signingKey: "\${env:KEY}", commitWindow: soon }\n`)).toContainEqual(
      expect.objectContaining({ line: 5 }),
    );
    expect(issuesOf(`${base}audit: { signingKey: "\${env:KEY}", durability: eventually }\n`)).toContainEqual(
      expect.objectContaining({ line: 5 }),
    );
    expect(
      issuesOf(`${base}audit: { signingKey: "\${env:KEY}", durability: record, journal: true }\n`),
    ).toContainEqual(
      expect.objectContaining({ line: 5, message: expect.stringMatching(/^needs durability: batch/) }),
    );
    const inMemory = base.replace('sqlite:./state.db', 'memory:');
    expect(issuesOf(`${inMemory}audit: { signingKey: "\${env:KEY}", journal: true }\n`)).toContainEqual(
      expect.objectContaining({ line: 5, message: expect.stringMatching(/needs the log in a SQLite file/) }),
    );
    expect(() =>
      parseConfig(`${base}audit: { signingKey: "\${env:KEY}", journal: true }\n`, { env: { KEY: 'x' } }),
    ).not.toThrow();
  });
});
