// MCP tasks in PostgreSQL: every gateway process on the database answers tasks/get, tasks/update and
// tasks/cancel for a task another process runs. Ending a task is one conditional UPDATE (only while it
// has not ended), which row locking makes atomic: a cancel and a result racing end the task once. The
// running process renews its tasks' lease in `renewed_ms`; a task it stopped renewing is ended by one
// conditional UPDATE, whose condition PostgreSQL checks again on a row a racing renewal just changed.

import {
  changedStoredTask,
  STALE_TASK_DROPPED_FIELDS,
  storedTaskRow,
  taskRecordOfStored,
  type StaleTaskEnding,
  type TaskOwnerKey,
  type TaskRecordStore,
} from '@toolgate/core';
import { Connection, type PostgresStoreOptions } from './connection';
import { prefixOf } from './schema';

export type PostgresTaskRecordsOptions = PostgresStoreOptions;

export interface PostgresTaskRecordStore extends TaskRecordStore {
  /** Renews the lease of running tasks (always kept here): one UPDATE for all of `ids`. */
  renew(ids: readonly string[], atMs: number): Promise<void>;
  /** Ends the owner's stale tasks as `failed`: one conditional UPDATE. */
  endStale(owner: TaskOwnerKey, renewedBeforeMs: number, ending: StaleTaskEnding): Promise<number>;
  /** Ends the pool if the store made it; a pool passed in stays open. */
  close(): Promise<void>;
}

interface Row {
  readonly record: string;
  readonly responses: string | null;
  // BIGINT: node-postgres reads it as text.
  readonly renewed_ms: string | null;
}

const ENDED = `status IN ('completed', 'failed', 'cancelled')`;
const OWNER = `tenant IS NOT DISTINCT FROM $1 AND principal IS NOT DISTINCT FROM $2`;

const DROPPED = `ARRAY[${STALE_TASK_DROPPED_FIELDS.map((field) => `'${field}'`).join(', ')}]`;

const recordOf = (row: Row) =>
  taskRecordOfStored(row.record, row.responses, row.renewed_ms === null ? null : Number(row.renewed_ms));

/**
 * MCP tasks in PostgreSQL, beside the check-ins.
 *
 * ```ts
 * const tasks = postgresTaskRecords({ connectionString: process.env.DATABASE_URL! });
 * ```
 */
export function postgresTaskRecords(options: PostgresTaskRecordsOptions): PostgresTaskRecordStore {
  const connection = new Connection('postgresTaskRecords', options);
  const t = prefixOf(connection.schema);
  const read = async (id: string): Promise<Row | undefined> => {
    const { rows } = await connection.use(`read task '${id}'`, (pool) =>
      pool.query<Row>(`SELECT record, responses, renewed_ms FROM ${t}toolgate_tasks WHERE id = $1`, [id]),
    );
    return rows[0];
  };
  return {
    async create(record) {
      const row = storedTaskRow(record);
      await connection.use(`create task '${record.id}'`, (pool) =>
        pool.query(
          `INSERT INTO ${t}toolgate_tasks (id, tenant, principal, status, created_ms, expires_ms, renewed_ms, record)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
          [
            row.id,
            row.tenant,
            row.principal,
            row.status,
            row.createdMs,
            row.expiresMs,
            row.renewedMs,
            row.text,
          ],
        ),
      );
    },
    async get(id) {
      const row = await read(id);
      return row === undefined ? undefined : recordOf(row);
    },
    async update(id, change) {
      const row = await read(id);
      if (row === undefined) return false;
      // What a change writes does not depend on the fields another change may have written meanwhile
      // (all of them are replaced); the status condition is the one atomic point.
      const changed = changedStoredTask(row.record, change);
      if (changed === undefined) return false;
      const { rowCount } = await connection.use(`update task '${id}'`, (pool) =>
        pool.query(
          `UPDATE ${t}toolgate_tasks SET status = $1, record = $2,
             responses = CASE WHEN $1 = 'input_required' THEN responses ELSE NULL END
           WHERE id = $3 AND NOT ${ENDED}`,
          [change.status, changed, id],
        ),
      );
      return rowCount === 1;
    },
    async respond(id, responses) {
      const { rowCount } = await connection.use(`answer task '${id}'`, (pool) =>
        pool.query(
          `UPDATE ${t}toolgate_tasks SET responses = $1 WHERE id = $2 AND status = 'input_required'`,
          [JSON.stringify(responses), id],
        ),
      );
      return rowCount === 1;
    },
    async takeResponses(id) {
      const { rows } = await connection.use(`take the answers of task '${id}'`, (pool) =>
        pool.query<{ responses: string }>(
          `WITH old AS (SELECT id, responses FROM ${t}toolgate_tasks WHERE id = $1 FOR UPDATE)
           UPDATE ${t}toolgate_tasks AS task SET responses = NULL FROM old
           WHERE task.id = old.id AND old.responses IS NOT NULL RETURNING old.responses`,
          [id],
        ),
      );
      return rows[0] === undefined ? undefined : (JSON.parse(rows[0].responses) as Record<string, unknown>);
    },
    async list(owner) {
      const { rows } = await connection.use('list tasks', (pool) =>
        pool.query<Row>(
          `SELECT record, responses, renewed_ms FROM ${t}toolgate_tasks WHERE ${OWNER} ORDER BY created_ms DESC, id`,
          [owner.tenant, owner.principal],
        ),
      );
      return rows.map(recordOf);
    },
    async countLive(owner) {
      const { rows } = await connection.use('count live tasks', (pool) =>
        pool.query<{ live: string }>(
          `SELECT count(*) AS live FROM ${t}toolgate_tasks WHERE ${OWNER} AND NOT ${ENDED}`,
          [owner.tenant, owner.principal],
        ),
      );
      return Number(rows[0]?.live ?? 0);
    },
    async renew(ids, atMs) {
      if (ids.length === 0) return;
      await connection.use('renew task leases', (pool) =>
        pool.query(
          `UPDATE ${t}toolgate_tasks SET renewed_ms = $1 WHERE id = ANY($2::text[]) AND NOT ${ENDED}`,
          [atMs, ids],
        ),
      );
    },
    async endStale(owner, renewedBeforeMs, ending) {
      // NULL < anything is not true: a task created without a lease is never stale.
      const { rowCount } = await connection.use('end stale tasks', (pool) =>
        pool.query(
          `UPDATE ${t}toolgate_tasks SET status = 'failed', responses = NULL,
             record = ((record::jsonb - ${DROPPED}::text[]) || jsonb_build_object(
               'status', 'failed', 'statusMessage', $3::text, 'lastUpdatedAt', $4::text, 'error', $5::jsonb))::text
           WHERE ${OWNER} AND NOT ${ENDED} AND renewed_ms < $6`,
          [
            owner.tenant,
            owner.principal,
            ending.statusMessage,
            ending.lastUpdatedAt,
            JSON.stringify(ending.error),
            renewedBeforeMs,
          ],
        ),
      );
      return rowCount ?? 0;
    },
    async sweep(owner, keep, now) {
      await connection.use('sweep tasks', async (pool) => {
        await pool.query(`DELETE FROM ${t}toolgate_tasks WHERE ${ENDED} AND expires_ms <= $1`, [now]);
        await pool.query(
          `DELETE FROM ${t}toolgate_tasks WHERE id IN (
             SELECT id FROM ${t}toolgate_tasks WHERE ${OWNER} AND ${ENDED}
             ORDER BY created_ms DESC, id OFFSET $3)`,
          [owner.tenant, owner.principal, keep],
        );
      });
    },
    close: () => connection.close(),
  };
}
