// postgresAuditStore end to end under the real audit log: processes and pools appending at once keep
// one chain, edits made in the database behind the log's back are found at their seq, and a server
// that is down refuses calls (or, with 'allow', runs them and writes their records once it is back).

import { createDispatcher, type AuditRecord } from '@toolgate/core';
import { canonicalChain } from '@toolgate/middleware';
import { mockTool } from '@toolgate/testing';
import { auditLog, verifyAuditLog, type AuditLogOptions } from '@toolgate/audit';
import {
  postgresAuditStore,
  type PostgresAuditStore,
  type PostgresAuditStoreOptions,
} from '@toolgate/store-postgres';
import { DIGEST_KEY, PRIVATE_PEM, PUBLIC_PEM } from '../../../test-support/audit-fixtures';
import {
  describePostgres,
  finished,
  lastJson,
  postgresBin,
  postgresUrl,
  printed,
  schemas,
  startFixture,
  throwawayServer,
  type ThrowawayServer,
} from './support';

describePostgres('postgresAuditStore under the audit log', () => {
  const schema = schemas('audit');
  const stores: PostgresAuditStore[] = [];
  afterEach(async () => {
    for (const store of stores.splice(0)) await store.close();
  });

  function open(options: PostgresAuditStoreOptions, extra: Partial<AuditLogOptions> = {}) {
    const store = postgresAuditStore(options);
    stores.push(store);
    const audit = auditLog({ store, signingKey: PRIVATE_PEM, digestKey: DIGEST_KEY, ...extra });
    const tool = mockTool({ name: 'refund', result: { ok: true } });
    const dispatcher = audit.attach(createDispatcher({ tools: [tool], chain: canonicalChain() }));
    return { store, audit, dispatcher, tool };
  }

  const records = async (name: string) =>
    (
      await schema
        .admin()
        .query<{ record: AuditRecord }>(`SELECT record FROM "${name}".toolgate_audit ORDER BY seq`)
    ).rows.map((row) => row.record);

  it('keeps one valid chain when four processes append at once', async () => {
    const name = schema.next();
    // Migrated before the race, so the processes race on appends, not on creating tables.
    await open({ connectionString: postgresUrl(), schema: name }).audit.ready();
    const writers = ['p1', 'p2', 'p3', 'p4'].map((who) => ({
      who,
      child: startFixture('audit-writer', [name, who, '40']),
    }));
    const done = writers.map(({ child }) => finished(child));
    await Promise.all(writers.map(({ child }) => printed(child, 'ready')));
    for (const { child } of writers) child.stdin.end('go\n');
    expect((await Promise.all(done)).map(lastJson)).toEqual(writers.map(() => ({ results: 40 })));

    const all = await records(name);
    expect(all).toHaveLength(4 * 44);
    for (const { who } of writers)
      expect(all.filter((r) => r.principal === who && r.kind === 'result')).toHaveLength(40);
    const store = postgresAuditStore({ connectionString: postgresUrl(), schema: name });
    stores.push(store);
    expect(await verifyAuditLog(store, PUBLIC_PEM)).toEqual({ ok: true, count: 4 * 44 });
  }, 120_000);

  it('keeps one valid chain when three pools in one process append at once', async () => {
    const name = schema.next();
    const apps = [1, 2, 3].map(() =>
      open({ connectionString: postgresUrl(), schema: name, maxConnections: 4 }),
    );
    await apps[0]!.audit.ready();
    const outcomes = await Promise.all(
      apps.flatMap(({ dispatcher }, a) =>
        Array.from({ length: 50 }, (_, n) =>
          dispatcher.dispatch({ toolName: 'refund', args: { n } }, { identity: { principal: `pool-${a}` } }),
        ),
      ),
    );
    expect(outcomes.every((o) => o.kind === 'result')).toBe(true);
    expect(await verifyAuditLog(apps[0]!.store, PUBLIC_PEM)).toEqual({ ok: true, count: 150 });
  });

  describe('edits made in the database behind the log’s back', () => {
    async function written(length: number) {
      const name = schema.next();
      const { dispatcher, store } = open({ connectionString: postgresUrl(), schema: name });
      for (let n = 0; n < length; n++) await dispatcher.dispatch({ toolName: 'refund', args: { n } });
      return { name, verify: () => verifyAuditLog(store, PUBLIC_PEM) };
    }

    it('a changed record', async () => {
      const { name, verify } = await written(5);
      await schema
        .admin()
        .query(
          `UPDATE "${name}".toolgate_audit SET record = jsonb_set(record::jsonb, '{ran}', 'false')::json WHERE seq = 2`,
        );
      expect(await verify()).toEqual({
        ok: false,
        seq: 2,
        why: 'record 2 was changed: its content does not match its hash',
      });
    });

    it('a deleted record, in the middle or at the end', async () => {
      const middle = await written(5);
      await schema.admin().query(`DELETE FROM "${middle.name}".toolgate_audit WHERE seq = 3`);
      expect(await middle.verify()).toMatchObject({ ok: false, seq: 3 });
      const end = await written(5);
      await schema.admin().query(`DELETE FROM "${end.name}".toolgate_audit WHERE seq = 5`);
      expect(await end.verify()).toMatchObject({
        ok: false,
        seq: 5,
        why: "record 5 is missing: the log ends at 4, but the store's head is record 5",
      });
    });

    it('a record moved to another place', async () => {
      const { name, verify } = await written(5);
      const admin = schema.admin();
      await admin.query(`UPDATE "${name}".toolgate_audit SET seq = 99 WHERE seq = 2`);
      await admin.query(`UPDATE "${name}".toolgate_audit SET seq = 2 WHERE seq = 4`);
      await admin.query(`UPDATE "${name}".toolgate_audit SET seq = 4 WHERE seq = 99`);
      expect(await verify()).toMatchObject({ ok: false, seq: 2 });
    });
  });

  it('refuses calls while the server cannot be reached, and the tool never runs', async () => {
    const unreachable = new URL(postgresUrl());
    unreachable.port = '1';
    const { dispatcher, tool } = open({
      connectionString: unreachable.toString(),
      schema: schema.next(),
      connectTimeoutMs: 500,
    });
    const events: unknown[] = [];
    dispatcher.events.on('audit.failed', (event) => events.push(event));
    expect(await dispatcher.dispatch({ toolName: 'refund', args: {} })).toMatchObject({
      kind: 'refused',
      code: 'AUDIT_UNAVAILABLE',
      ran: false,
    });
    expect(tool.callCount).toBe(0);
    expect(events).toEqual([
      expect.objectContaining({ refused: true, failure: expect.stringMatching(/^PostgresStoreError/) }),
    ]);
    expect(JSON.stringify(events)).not.toContain(unreachable.host);
  });

  const bin = postgresBin();
  (bin === undefined ? it.skip : it)(
    "with 'allow', runs calls while the server is stopped and writes their records once it is back",
    async () => {
      let server: ThrowawayServer | undefined;
      try {
        server = await throwawayServer(bin!);
        const { dispatcher, audit, tool, store } = open(
          { connectionString: server.url, schema: 'audit_restart', connectTimeoutMs: 500 },
          { onAuditFailure: 'allow', deadlineMs: 2_000 },
        );
        await dispatcher.dispatch({ toolName: 'refund', args: { n: 1 } });
        server.stop();
        const ranUnrecorded: string[] = [];
        dispatcher.events.on('audit.failed-open', () => ranUnrecorded.push('open'));
        await dispatcher.dispatch({ toolName: 'refund', args: { n: 2 } });
        await dispatcher.dispatch({ toolName: 'refund', args: { n: 3 } });
        expect(tool.callCount).toBe(3);
        expect(ranUnrecorded).toEqual(['open', 'open']);
        server.start();
        await audit.flush();
        await dispatcher.dispatch({ toolName: 'refund', args: { n: 4 } });
        expect(await verifyAuditLog(store, PUBLIC_PEM)).toEqual({ ok: true, count: 4 });
        const digests = await Promise.all([1, 2, 3, 4].map((n) => audit.digest({ n })));
        const stored = await store.read(0, 10);
        expect(stored.map((r) => r.argsDigest)).toEqual(digests);
      } finally {
        for (const s of stores.splice(0)) await s.close();
        server?.destroy();
      }
    },
    120_000,
  );
});
