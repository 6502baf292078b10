// A file written by @toolgate/store-sqlite 0.1.0, when it ran on better-sqlite3 (the fixture was made
// with that release: two check-ins, one consumed; a JSON and a binary artifact; a pin with a changed
// definition waiting; three signed audit records). The node:sqlite stores open it, read it as it was
// written, verify its chain and keep writing to it.

import { copyFileSync } from 'node:fs';
import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { verifyAuditLog } from '@toolgate/audit';
import {
  sqliteArtifacts,
  sqliteAuditStore,
  sqliteCheckIns,
  sqlitePins,
  sqliteStandingGrants,
} from '@toolgate/store-sqlite';
import { PUBLIC_PEM } from '../../../test-support/audit-fixtures';
import { MIGRATIONS } from '../src/schema';
import { T0, tempDir } from './support';

const FIXTURE = path.join(__dirname, 'fixtures', 'written-by-0.1.0-on-better-sqlite3.db');
const SCOPE = { tenant: 'acme', principal: 'ana', conversation: 'c1' };
const JSON_REF = 'art_XeuQuvykUVkR8l0AcBFsCC';
const BLOB_REF = 'art_nHVfedms4WKixbAltmEYJI';

describe('a file written by store-sqlite 0.1.0 on better-sqlite3', () => {
  let tmp: ReturnType<typeof tempDir>;
  let file: string;
  const closers: { close(): void }[] = [];
  beforeEach(() => {
    tmp = tempDir();
    file = tmp.file('old.db');
    copyFileSync(FIXTURE, file);
  });
  afterEach(() => {
    for (const store of closers.splice(0)) store.close();
    tmp.cleanup();
  });
  const open = <S extends { close(): void }>(store: S): S => (closers.push(store), store);

  it('is at the schema version 0.1.0 wrote (4), in WAL mode, and a store brings it to the newest', async () => {
    const db = open(new DatabaseSync(file, { readOnly: true }));
    expect(db.prepare('PRAGMA user_version').get()).toEqual({ user_version: 4 });
    expect(db.prepare('PRAGMA journal_mode').get()).toEqual({ journal_mode: 'wal' });
    db.close();
    closers.splice(closers.indexOf(db), 1);
    const grants = open(sqliteStandingGrants({ path: file }));
    expect(await grants.list()).toEqual([]);
    const after = open(new DatabaseSync(file, { readOnly: true }));
    expect(after.prepare('PRAGMA user_version').get()).toEqual({ user_version: MIGRATIONS.length });
  });

  it('reads its check-ins and honours the pending one exactly once', async () => {
    const store = open(sqliteCheckIns({ path: file, now: () => T0 }));
    expect(await store.get('chk_consumed00000000002')).toMatchObject({ state: 'consumed' });
    expect(await store.get('chk_pending000000000001')).toMatchObject({
      state: 'pending',
      request: { toolName: 'send_email', identity: { tenant: 'acme', principal: 'ana' } },
    });
    expect(await store.list({ principal: 'ana', state: 'pending' })).toHaveLength(1);
    expect(await store.consume('chk_pending000000000001')).toBe(true);
    expect(await store.consume('chk_pending000000000001')).toBe(false);
  });

  it('reads its artifacts, JSON and bytes alike', async () => {
    const store = open(sqliteArtifacts({ path: file, now: () => T0 }));
    expect(await store.get(SCOPE, JSON_REF)).toMatchObject({
      data: { rows: [1, 2, 3] },
      meta: { meta: { title: 'q3' } },
    });
    const blob = await store.get(SCOPE, BLOB_REF);
    expect(blob?.data).toEqual(new Uint8Array([0, 1, 2, 254, 255]));
    expect(blob?.meta.meta).toEqual({ contentType: 'image/png' });
    expect((await store.list(SCOPE, 'image')).map((meta) => meta.ref)).toEqual([BLOB_REF]);
  });

  it('reads its pin with the change still waiting, and accepts it', async () => {
    const store = open(sqlitePins({ path: file }));
    expect(await store.get('crm', 'tool', 'lookup')).toMatchObject({
      digest: 'sha256:aaa',
      changed: { digest: 'sha256:bbb' },
    });
    expect(await store.accept('crm', 'tool', 'lookup', 'sha256:bbb', '2030-01-03T00:00:00.000Z')).toBe(true);
    expect(await store.get('crm', 'tool', 'lookup')).toMatchObject({ digest: 'sha256:bbb' });
  });

  it('verifies its audit chain, signed by the old writer', async () => {
    const store = open(sqliteAuditStore({ path: file }));
    expect(await verifyAuditLog(store, PUBLIC_PEM)).toEqual({ ok: true, count: 3 });
  });
});
