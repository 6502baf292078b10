// An AuditStore in PostgreSQL: every process and machine on the database appends to one chain. An
// append is one transaction that locks the head row (SELECT … FOR UPDATE), seals against it, inserts
// the records and moves the head; the next appender waits on that row, so no two take the same head.

import {
  auditContinues,
  auditRowValues,
  type AuditHead,
  type AuditRecord,
  type AuditSeal,
  type AuditStore,
} from '@toolgate/core';
import { Connection, type PostgresStoreOptions } from './connection';
import { prefixOf } from './schema';

export type PostgresAuditStoreOptions = PostgresStoreOptions;

export interface PostgresAuditStore extends AuditStore {
  /** Ends the pool if the store made it; a pool passed in stays open. */
  close(): Promise<void>;
}

const STORE = 'postgresAuditStore';
const COLUMNS = 7;

interface HeadRow {
  readonly seq: string | number;
  readonly hash: string;
}

/** The head row says seq 0 while the log is empty. */
const headOf = (row: HeadRow | undefined): AuditHead | undefined =>
  row === undefined || Number(row.seq) === 0 ? undefined : { seq: Number(row.seq), hash: row.hash };

/** A seal that failed is the sealer's error, handed back as it is (the writer tells its own errors apart). */
class SealFailed {
  constructor(readonly error: unknown) {}
}

/**
 * The audit log in PostgreSQL (node-postgres), with versioned migrations run once under an advisory lock.
 *
 * ```ts
 * const audit = auditLog({ store: postgresAuditStore({ connectionString: process.env.DATABASE_URL! }), signingKey, digestKey });
 * ```
 */
export function postgresAuditStore(options: PostgresAuditStoreOptions): PostgresAuditStore {
  const connection = new Connection(STORE, options);
  const t = prefixOf(connection.schema);

  async function append(seal: AuditSeal): Promise<readonly AuditRecord[]> {
    const answer = await connection.use('append audit records', async (pool) => {
      const client = await pool.connect();
      // A checked-out client has no error listener; a dropped connection must not crash the process.
      const onError = () => undefined;
      client.on('error', onError);
      let broken: unknown;
      try {
        await client.query('BEGIN');
        // Recreated if someone deleted it, so there is always a row to wait on.
        await client.query(
          `INSERT INTO ${t}toolgate_audit_head (id, seq, hash) VALUES (1, 0, '') ON CONFLICT (id) DO NOTHING`,
        );
        const locked = await client.query<HeadRow>(
          `SELECT seq, hash FROM ${t}toolgate_audit_head WHERE id = 1 FOR UPDATE`,
        );
        const head = headOf(locked.rows[0]);
        let records: readonly AuditRecord[];
        let next: AuditHead | undefined;
        try {
          records = await seal(head);
          next = auditContinues(STORE, head, records);
        } catch (error) {
          await client.query('ROLLBACK');
          return new SealFailed(error);
        }
        if (records.length > 0) {
          const values: unknown[] = [];
          const rows = records.map((record, i) => {
            values.push(...auditRowValues(record));
            const at = i * COLUMNS;
            return `(${Array.from({ length: COLUMNS }, (_, c) => `$${at + c + 1}`).join(', ')})`;
          });
          await client.query(
            `INSERT INTO ${t}toolgate_audit (seq, at, tenant, tool, kind, hash, record) VALUES ${rows.join(', ')}`,
            values,
          );
          await client.query(`UPDATE ${t}toolgate_audit_head SET seq = $1, hash = $2 WHERE id = 1`, [
            next!.seq,
            next!.hash,
          ]);
        }
        await client.query('COMMIT');
        return records;
      } catch (error) {
        broken = error;
        await client.query('ROLLBACK').catch(() => undefined);
        throw error;
      } finally {
        client.off('error', onError);
        // A client that failed mid-transaction is discarded rather than handed to the next caller.
        client.release(broken instanceof Error ? broken : undefined);
      }
    });
    if (answer instanceof SealFailed) throw answer.error;
    return answer;
  }

  return {
    append,
    async head() {
      const { rows } = await connection.use('read the audit head', (pool) =>
        pool.query<HeadRow>(`SELECT seq, hash FROM ${t}toolgate_audit_head WHERE id = 1`),
      );
      return headOf(rows[0]);
    },
    async read(after, limit) {
      if (!(Number.isSafeInteger(after) && Number.isSafeInteger(limit) && limit >= 0)) {
        throw new TypeError(`${STORE}: read(after, limit) takes integers, limit at least 0.`);
      }
      // JSON (not JSONB) keeps each record's text as written; pg parses it into a fresh object.
      const { rows } = await connection.use('read audit records', (pool) =>
        pool.query<{ record: AuditRecord }>(
          `SELECT record FROM ${t}toolgate_audit WHERE seq > $1 ORDER BY seq LIMIT $2`,
          [after, limit],
        ),
      );
      return rows.map((row) => row.record);
    },
    async ready() {
      await connection.use('reach the audit log', (pool) =>
        pool.query(`SELECT 1 FROM ${t}toolgate_audit_head WHERE id = 1`),
      );
    },
    close() {
      return connection.close();
    },
  };
}
