// sqliteAuditStore end to end under the real audit log: several processes appending at once keep one
// chain, a restarted process continues it, an older file gains the tables, a file that cannot be used
// refuses calls, and every edit made to the file behind the log's back is found at its seq.

import { DatabaseSync as Database } from 'node:sqlite';
import { writeFileSync } from 'node:fs';
import { createDispatcher, type AuditRecord, type AuditStore } from '@toolgate/core';
import { canonicalChain } from '@toolgate/middleware';
import { mockTool } from '@toolgate/testing';
import { auditLog, verifyAuditLog } from '@toolgate/audit';
import { sqliteAuditStore, sqliteCheckIns, type SqliteAuditStore } from '@toolgate/store-sqlite';
import { DIGEST_KEY, PRIVATE_PEM, PUBLIC_PEM } from '../../../test-support/audit-fixtures';
import { migrate, MIGRATIONS } from '../src/schema';
import { finished, lastJson, printed, startFixture, tempDir } from './support';

const CHECK_IN_KEY = 'check-in-key-for-the-sqlite-audit-tests-0123';

describe('sqliteAuditStore under the audit log', () => {
  let tmp: ReturnType<typeof tempDir>;
  const stores: SqliteAuditStore[] = [];
  beforeEach(() => (tmp = tempDir()));
  afterEach(() => {
    for (const store of stores.splice(0)) store.close();
    tmp.cleanup();
  });

  /** A log on `path`, its store noting the head each seal was given (its seq, 0 for an empty log). */
  function open(path: string) {
    const store = sqliteAuditStore({ path });
    stores.push(store);
    const seals: number[] = [];
    const noting: AuditStore = {
      append: (seal) =>
        store.append((head) => {
          seals.push(head?.seq ?? 0);
          return seal(head);
        }),
      head: () => store.head(),
      read: (after, limit) => store.read(after, limit),
      ready: () => store.ready!(),
    };
    const audit = auditLog({ store: noting, signingKey: PRIVATE_PEM, digestKey: DIGEST_KEY });
    const tool = mockTool({ name: 'refund', result: { ok: true } });
    const dispatcher = audit.attach(createDispatcher({ tools: [tool], chain: canonicalChain() }));
    return { store, audit, dispatcher, tool, seals };
  }

  const rows = (path: string) => {
    const db = new Database(path, { readOnly: true });
    const all = db.prepare('SELECT seq, record FROM toolgate_audit ORDER BY seq').all() as {
      seq: number;
      record: string;
    }[];
    db.close();
    return all.map((row) => JSON.parse(row.record) as AuditRecord);
  };

  it("keeps each record as the log handed it back: the row's JSON is the record, whatever its text fields hold", async () => {
    const path = tmp.file('audit.db');
    const { audit, dispatcher } = open(path);
    const odd = ['a "quoted" name', 'line\nbreak\t\u2028', 'back\\slash', 'émoji 🙂', '\u0000nul'];
    const handed: AuditRecord[] = [];
    for (const text of odd)
      handed.push(await audit.record({ kind: 'pin.accepted', approver: text, tool: 'refund', rule: text }));
    await dispatcher.dispatch({ toolName: 'refund', args: { note: odd.join('') } });
    await audit.flush();
    const stored = rows(path);
    expect(stored).toHaveLength(odd.length + 1);
    expect(stored.slice(0, odd.length)).toEqual(handed);
    expect(stored.map((record) => record.approver)).toEqual([...odd, undefined]);
    expect(await verifyAuditLog(stored, PUBLIC_PEM)).toEqual({ ok: true, count: odd.length + 1 });
  });

  it('keeps one valid chain when four processes append at once', async () => {
    const path = tmp.file('audit.db');
    const writers = ['w1', 'w2', 'w3', 'w4'].map((name) => ({
      name,
      child: startFixture('audit-writer', [path, name, '40']),
    }));
    const done = writers.map(({ child }) => finished(child));
    await Promise.all(writers.map(({ child }) => printed(child, 'ready')));
    for (const { child } of writers) child.stdin.end('go\n');
    const answers = (await Promise.all(done)).map(lastJson);
    expect(answers).toEqual(writers.map(() => ({ results: 40 })));

    const records = rows(path);
    // 40 calls and 4 records of actions per process.
    expect(records).toHaveLength(4 * 44);
    for (const { name } of writers) {
      expect(records.filter((r) => r.principal === name && r.kind === 'result')).toHaveLength(40);
    }
    const store = sqliteAuditStore({ path });
    stores.push(store);
    expect(await verifyAuditLog(store, PUBLIC_PEM)).toEqual({ ok: true, count: 4 * 44 });
  }, 120_000);

  it('seals again when another writer moved the head this store last committed, and forks nothing', async () => {
    const path = tmp.file('audit.db');
    const first = open(path);
    const second = open(path);
    await first.dispatcher.dispatch({ toolName: 'refund', args: { n: 1 } });
    // The second writer appends behind the first one's back: the head the first remembers is stale.
    await second.dispatcher.dispatch({ toolName: 'refund', args: { n: 2 } });
    await first.dispatcher.dispatch({ toolName: 'refund', args: { n: 3 } });
    // Sealed against the head it committed (1), refused there, sealed again on the moved one (2).
    expect(first.seals).toEqual([0, 1, 2]);
    expect(rows(path).map((r) => r.seq)).toEqual([1, 2, 3]);
    expect(await first.audit.verify()).toEqual({ ok: true, count: 3 });
  });

  it('takes the first record of an empty log once when two writers race for it', async () => {
    const path = tmp.file('audit.db');
    const first = open(path);
    const second = open(path);
    await Promise.all([
      first.dispatcher.dispatch({ toolName: 'refund', args: { n: 1 } }),
      second.dispatcher.dispatch({ toolName: 'refund', args: { n: 2 } }),
    ]);
    expect(rows(path).map((r) => r.seq)).toEqual([1, 2]);
    // Both sealed against the empty log; one stored, the other sealed again on top of it.
    expect([...first.seals, ...second.seals].sort()).toEqual([0, 0, 1]);
    expect(await first.audit.verify()).toEqual({ ok: true, count: 2 });
  });

  it('continues the chain after a restart', async () => {
    const path = tmp.file('audit.db');
    const first = open(path);
    await first.dispatcher.dispatch({ toolName: 'refund', args: { n: 1 } });
    first.store.close();
    const second = open(path);
    await second.dispatcher.dispatch({ toolName: 'refund', args: { n: 2 } });
    expect(rows(path).map((r) => r.seq)).toEqual([1, 2]);
    expect(await second.audit.verify()).toEqual({ ok: true, count: 2 });
  });

  it('shares a file with the check-in store of the same process, whose writes never wait on a seal', async () => {
    const path = tmp.file('shared.db');
    const store = sqliteAuditStore({ path });
    const checkIns = sqliteCheckIns({ path });
    stores.push(store);
    const audit = auditLog({ store, signingKey: PRIVATE_PEM, digestKey: DIGEST_KEY });
    const erase = mockTool({ name: 'erase', checkIn: 'always' });
    const dispatcher = audit.attach(
      createDispatcher({ tools: [erase], chain: canonicalChain({ checkIns, checkInKey: CHECK_IN_KEY }) }),
    );
    const outcomes = await Promise.all(
      Array.from({ length: 60 }, (_, n) => dispatcher.dispatch({ toolName: 'erase', args: { n } })),
    );
    expect(outcomes.map((o) => o.kind)).toEqual(outcomes.map(() => 'paused'));
    expect(await checkIns.list()).toHaveLength(60);
    expect(await audit.verify()).toEqual({ ok: true, count: 60 });
    checkIns.close();
  });

  it('adds its tables to a file of the first schema version and leaves the check-ins there alone', async () => {
    const path = tmp.file('v1.db');
    const db = new Database(path);
    migrate(db, MIGRATIONS.slice(0, 1));
    db.prepare(
      `INSERT INTO toolgate_check_ins (id, tenant, tool_name, state, expires_ms, request) VALUES ('chk_1', 'acme', 'refund', 'pending', 1, '{}')`,
    ).run();
    db.close();
    const { dispatcher, audit } = open(path);
    await dispatcher.dispatch({ toolName: 'refund', args: {} });
    expect(await audit.verify()).toEqual({ ok: true, count: 1 });
    const after = new Database(path, { readOnly: true });
    expect(after.prepare('SELECT id FROM toolgate_check_ins').all()).toEqual([{ id: 'chk_1' }]);
    after.close();
  });

  it('refuses calls when the file cannot be used, and the tool never runs', async () => {
    const path = tmp.file('corrupt.db');
    writeFileSync(path, Buffer.alloc(4096, 0x5a));
    const { dispatcher, tool } = open(path);
    expect(await dispatcher.dispatch({ toolName: 'refund', args: {} })).toMatchObject({
      kind: 'refused',
      gate: 'audit',
      code: 'AUDIT_UNAVAILABLE',
      ran: false,
    });
    expect(tool.callCount).toBe(0);
  });

  describe('edits made to the file behind the log’s back', () => {
    async function written(length: number) {
      const path = tmp.file(`tamper-${Math.random().toString(36).slice(2)}.db`);
      const { dispatcher, store } = open(path);
      for (let n = 0; n < length; n++) await dispatcher.dispatch({ toolName: 'refund', args: { n } });
      store.close();
      const db = new Database(path);
      const verify = async () => {
        const fresh = sqliteAuditStore({ path });
        stores.push(fresh);
        return verifyAuditLog(fresh, PUBLIC_PEM);
      };
      return { db, verify };
    }

    it('a changed record', async () => {
      const { db, verify } = await written(6);
      db.prepare(
        `UPDATE toolgate_audit SET record = json_set(record, '$.tool', 'other') WHERE seq = 3`,
      ).run();
      db.close();
      expect(await verify()).toEqual({
        ok: false,
        seq: 3,
        why: 'record 3 was changed: its content does not match its hash',
      });
    });

    it('a deleted record, in the middle or at the end', async () => {
      const middle = await written(6);
      middle.db.prepare('DELETE FROM toolgate_audit WHERE seq = 4').run();
      middle.db.close();
      expect(await middle.verify()).toMatchObject({ ok: false, seq: 4 });
      const end = await written(6);
      end.db.prepare('DELETE FROM toolgate_audit WHERE seq = 6').run();
      end.db.close();
      expect(await end.verify()).toEqual({
        ok: false,
        seq: 6,
        why: "record 6 is missing: the log ends at 5, but the store's head is record 6",
      });
    });

    it('two records swapped', async () => {
      const { db, verify } = await written(6);
      db.exec(`BEGIN;
        UPDATE toolgate_audit SET seq = -2 WHERE seq = 2;
        UPDATE toolgate_audit SET seq = 2 WHERE seq = 5;
        UPDATE toolgate_audit SET seq = 5 WHERE seq = -2;
        COMMIT;`);
      db.close();
      expect(await verify()).toMatchObject({ ok: false, seq: 2 });
    });

    it('a record that is no longer JSON', async () => {
      const { db, verify } = await written(3);
      db.prepare(`UPDATE toolgate_audit SET record = 'not json' WHERE seq = 2`).run();
      db.close();
      expect(await verify()).toMatchObject({
        ok: false,
        seq: 2,
        why: expect.stringMatching(/^record 2 is malformed/),
      });
    });
  });
});
