// MCP tasks in SQLite: every gateway process on the file answers tasks/get, tasks/update and
// tasks/cancel for a task another process runs. A change is read and written under the write lock, so
// a cancel and a result racing from two processes end the task once. The running process renews its
// tasks' lease in `renewed_ms`; a task it stopped renewing is ended by one conditional UPDATE.

import {
  changedStoredTask,
  STALE_TASK_DROPPED_FIELDS,
  storedTaskRow,
  taskRecordOfStored,
  type StaleTaskEnding,
  type TaskOwnerKey,
  type TaskRecordStore,
} from '@toolgate/core';
import { Connection, transaction, type SqliteDatabase, type SqliteStoreOptions } from './connection';

export type SqliteTaskRecordsOptions = SqliteStoreOptions;

export interface SqliteTaskRecordStore extends TaskRecordStore {
  /** Renews the lease of running tasks (always kept here): one UPDATE for all of `ids`. */
  renew(ids: readonly string[], atMs: number): Promise<void>;
  /** Ends the owner's stale tasks as `failed`: one conditional UPDATE. */
  endStale(owner: TaskOwnerKey, renewedBeforeMs: number, ending: StaleTaskEnding): Promise<number>;
  /** Closes the database if the store opened it. */
  close(): void;
}

const ENDED = `status IN ('completed', 'failed', 'cancelled')`;
const DROPPED = STALE_TASK_DROPPED_FIELDS.map((field) => `'$.${field}'`).join(', ');

function prepareTasks(db: SqliteDatabase) {
  return {
    insert: db.prepare(
      `INSERT INTO toolgate_tasks (id, tenant, principal, status, created_ms, expires_ms, renewed_ms, record)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    get: db.prepare(`SELECT record, responses, renewed_ms FROM toolgate_tasks WHERE id = ?`),
    write: db.prepare(`UPDATE toolgate_tasks SET status = ?, record = ? WHERE id = ? AND NOT ${ENDED}`),
    respond: db.prepare(`UPDATE toolgate_tasks SET responses = ? WHERE id = ? AND status = 'input_required'`),
    clearResponses: db.prepare(`UPDATE toolgate_tasks SET responses = NULL WHERE id = ?`),
    list: db.prepare(
      `SELECT record, responses, renewed_ms FROM toolgate_tasks WHERE tenant IS ? AND principal IS ? ORDER BY created_ms DESC, id`,
    ),
    renew: db.prepare(
      `UPDATE toolgate_tasks SET renewed_ms = ?1 WHERE id IN (SELECT value FROM json_each(?2)) AND NOT ${ENDED}`,
    ),
    // NULL < anything is not true: a task created without a lease is never stale.
    endStale: db.prepare(
      `UPDATE toolgate_tasks SET status = 'failed', responses = NULL,
         record = json_set(json_remove(record, ${DROPPED}),
           '$.status', 'failed', '$.statusMessage', ?3, '$.lastUpdatedAt', ?4, '$.error', json(?5))
       WHERE tenant IS ?1 AND principal IS ?2 AND NOT ${ENDED} AND renewed_ms < ?6`,
    ),
    live: db.prepare(
      `SELECT count(*) AS live FROM toolgate_tasks WHERE tenant IS ? AND principal IS ? AND NOT ${ENDED}`,
    ),
    expire: db.prepare(`DELETE FROM toolgate_tasks WHERE ${ENDED} AND expires_ms <= ?`),
    trim: db.prepare(
      `DELETE FROM toolgate_tasks WHERE id IN (
         SELECT id FROM toolgate_tasks WHERE tenant IS ?1 AND principal IS ?2 AND ${ENDED}
         ORDER BY created_ms DESC, id LIMIT -1 OFFSET ?3)`,
    ),
  };
}

interface Row {
  readonly record: string;
  readonly responses: string | null;
  readonly renewed_ms: number | null;
}

const recordOf = (row: Row) => taskRecordOfStored(row.record, row.responses, row.renewed_ms);

/**
 * MCP tasks in SQLite (Node's built-in node:sqlite), beside the check-ins in the same file.
 *
 * ```ts
 * const tasks = sqliteTaskRecords({ path: './toolgate.db' });
 * ```
 */
export function sqliteTaskRecords(options: SqliteTaskRecordsOptions): SqliteTaskRecordStore {
  const connection = new Connection('sqliteTaskRecords', options, prepareTasks);
  return {
    async create(record) {
      const row = storedTaskRow(record);
      connection.use(`create task '${record.id}'`, (s) =>
        s.insert.run(
          row.id,
          row.tenant,
          row.principal,
          row.status,
          row.createdMs,
          row.expiresMs,
          row.renewedMs,
          row.text,
        ),
      );
    },
    async get(id) {
      const row = connection.use(`read task '${id}'`, (s) => s.get.get(id) as Row | undefined);
      return row === undefined ? undefined : recordOf(row);
    },
    async update(id, change) {
      return connection.use(`update task '${id}'`, (s, db) =>
        transaction(
          db,
          () => {
            const row = s.get.get(id) as Row | undefined;
            if (row === undefined) return false;
            const changed = changedStoredTask(row.record, change);
            if (changed === undefined) return false;
            if (change.status !== 'input_required') s.clearResponses.run(id);
            return s.write.run(change.status, changed, id).changes === 1;
          },
          'immediate',
        ),
      );
    },
    async respond(id, responses) {
      return connection.use(
        `answer task '${id}'`,
        (s) => s.respond.run(JSON.stringify(responses), id).changes === 1,
      );
    },
    async takeResponses(id) {
      return connection.use(`take the answers of task '${id}'`, (s, db) =>
        transaction(
          db,
          () => {
            const row = s.get.get(id) as Row | undefined;
            if (row?.responses === null || row === undefined) return undefined;
            s.clearResponses.run(id);
            return JSON.parse(row.responses) as Record<string, unknown>;
          },
          'immediate',
        ),
      );
    },
    async list(owner) {
      const rows = connection.use(
        'list tasks',
        (s) => s.list.all(owner.tenant, owner.principal) as unknown as Row[],
      );
      return rows.map(recordOf);
    },
    async countLive(owner) {
      return connection.use(
        'count live tasks',
        (s) => (s.live.get(owner.tenant, owner.principal) as { live: number }).live,
      );
    },
    async renew(ids, atMs) {
      if (ids.length === 0) return;
      connection.use('renew task leases', (s) => s.renew.run(atMs, JSON.stringify(ids)));
    },
    async endStale(owner, renewedBeforeMs, ending) {
      return connection.use('end stale tasks', (s) =>
        Number(
          s.endStale.run(
            owner.tenant,
            owner.principal,
            ending.statusMessage,
            ending.lastUpdatedAt,
            JSON.stringify(ending.error),
            renewedBeforeMs,
          ).changes,
        ),
      );
    },
    async sweep(owner, keep, now) {
      connection.use('sweep tasks', (s) => {
        s.expire.run(now);
        s.trim.run(owner.tenant, owner.principal, keep);
      });
    },
    close() {
      connection.close();
    },
  };
}
