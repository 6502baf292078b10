// A durable CheckInStore: a check-in survives a restart, and one approval is honored exactly once
// even when several processes share the file, because consume is one conditional UPDATE.

import {
  checkInFilter,
  recordedDecision,
  type CheckInFilter,
  type CheckInReceipt,
  type CheckInRecord,
  type CheckInRequest,
  type CheckInState,
  type CheckInStore,
  type RecordedDecision,
} from '@toolgate/core';
import type { StatementSync as Statement } from 'node:sqlite';
import { Connection, transaction, type SqliteDatabase, type SqliteStoreOptions } from './connection';

export type SqliteCheckInsOptions = SqliteStoreOptions & {
  /** How long a record stays after its request expires, for audit, before `sweep` deletes it. Default 7 days. */
  readonly retainMs?: number;
};

export interface SqliteCheckInStore extends CheckInStore {
  /** Deletes records whose request expired more than `retainMs` ago; answers how many. */
  sweep(): Promise<number>;
  /** Closes the database if the store opened it. */
  close(): void;
}

const STORE = 'sqliteCheckIns';
const DEFAULT_RETAIN_MS = 7 * 24 * 60 * 60 * 1000;

interface Row {
  readonly state: CheckInState;
  readonly request: string;
  readonly receipt: string | null;
  readonly decision: string | null;
}

const COLUMNS = 'state, request, receipt, decision';

function prepare(db: SqliteDatabase) {
  const lists = new Map<string, Statement>();
  // The whole single-use promise: only one UPDATE can move a row out of 'pending'.
  const consume = db.prepare(
    `UPDATE toolgate_check_ins SET state = 'consumed', receipt = ?
     WHERE id = ? AND state = 'pending' AND expires_ms > ?`,
  );
  // Likewise one decision per request: only one UPDATE can fill an empty decision.
  const decide = db.prepare(
    `UPDATE toolgate_check_ins SET decision = ?
     WHERE id = ? AND state = 'pending' AND expires_ms > ? AND decision IS NULL`,
  );
  return {
    insert: db.prepare(
      `INSERT INTO toolgate_check_ins (id, tenant, principal, tool_name, args_digest, state, expires_ms, request)
       VALUES (@id, @tenant, @principal, @toolName, @argsDigest, 'pending', @expiresMs, @request)`,
    ),
    get: db.prepare(`SELECT ${COLUMNS} FROM toolgate_check_ins WHERE id = ?`),
    consume: (id: string, receipt: string | null, now: number) =>
      transaction(db, () => consume.run(receipt, id, now).changes === 1, 'immediate'),
    decide: (id: string, decision: string, now: number) =>
      transaction(db, () => decide.run(decision, id, now).changes === 1, 'immediate'),
    revoke: db.prepare(`UPDATE toolgate_check_ins SET state = 'revoked' WHERE id = ? AND state = 'pending'`),
    sweep: db.prepare(`DELETE FROM toolgate_check_ins WHERE expires_ms <= ?`),
    list(filter: ListParams): Statement {
      const where = [
        filter.tenant !== undefined ? 'tenant = @tenant' : undefined,
        filter.principal !== undefined ? 'principal = @principal' : undefined,
        filter.toolName !== undefined ? 'tool_name = @toolName' : undefined,
        filter.state !== undefined ? 'state = @state' : undefined,
        filter.argsDigest !== undefined ? 'args_digest = @argsDigest' : undefined,
        filter.decided === undefined
          ? undefined
          : filter.decided === 1
            ? 'decision IS NOT NULL'
            : 'decision IS NULL',
      ].filter((clause) => clause !== undefined);
      const order = filter.newest ? 'DESC' : 'ASC';
      const sql = `SELECT ${COLUMNS} FROM toolgate_check_ins ${where.length > 0 ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY seq ${order} LIMIT @limit`;
      let statement = lists.get(sql);
      if (statement === undefined) {
        statement = db.prepare(sql);
        // One parameter object serves every variant; a variant ignores the filters it does not test.
        statement.setAllowUnknownNamedParameters(true);
        lists.set(sql, statement);
      }
      return statement;
    },
  };
}

function recordOf(row: Row): CheckInRecord {
  return {
    request: JSON.parse(row.request) as CheckInRequest,
    state: row.state,
    ...(row.receipt !== null ? { receipt: JSON.parse(row.receipt) as CheckInReceipt } : {}),
    ...(row.decision !== null ? { decision: JSON.parse(row.decision) as RecordedDecision } : {}),
  };
}

function requireId(id: unknown): string {
  if (typeof id !== 'string' || id === '') {
    throw new TypeError(`${STORE}: a check-in id must be a non-empty string.`);
  }
  return id;
}

interface ListParams {
  readonly tenant?: string;
  readonly principal?: string;
  readonly toolName?: string;
  readonly state?: string;
  readonly argsDigest?: string;
  /** SQLite binds no booleans. */
  readonly decided?: 0 | 1;
  readonly newest: boolean;
  readonly limit: number;
}

function filterParams(raw: CheckInFilter): ListParams {
  const { tenant, principal, toolName, state, argsDigest, decided, order, limit } = checkInFilter(STORE, raw);
  return {
    ...(tenant !== undefined ? { tenant } : {}),
    ...(principal !== undefined ? { principal } : {}),
    ...(toolName !== undefined ? { toolName } : {}),
    ...(state !== undefined ? { state } : {}),
    ...(argsDigest !== undefined ? { argsDigest } : {}),
    ...(decided !== undefined ? { decided: decided ? 1 : 0 } : {}),
    newest: order === 'newest',
    limit: limit ?? -1,
  };
}

/**
 * Check-ins in SQLite (Node's built-in node:sqlite), in WAL mode with `user_version` migrations.
 *
 * ```ts
 * const checkIns = sqliteCheckIns({ path: './toolgate.db' });
 * createChain([...], { checkIns: { key, store: checkIns } });
 * ```
 */
export function sqliteCheckIns(options: SqliteCheckInsOptions): SqliteCheckInStore {
  const retainMs = options.retainMs ?? DEFAULT_RETAIN_MS;
  if (!(Number.isInteger(retainMs) && retainMs >= 0)) {
    throw new TypeError(`${STORE}: 'retainMs' must be a non-negative integer of milliseconds.`);
  }
  const connection = new Connection(STORE, options, prepare);

  return {
    async put(request) {
      const id = requireId(request?.id);
      const expiresMs = Date.parse(request.expiresAt);
      if (Number.isNaN(expiresMs)) {
        throw new TypeError(`${STORE}: check-in '${id}' has no valid 'expiresAt'.`);
      }
      if (typeof request.toolName !== 'string') {
        throw new TypeError(`${STORE}: check-in '${id}' has no 'toolName'.`);
      }
      const row = {
        id,
        tenant: request.identity?.tenant ?? null,
        principal: request.identity?.principal ?? null,
        toolName: request.toolName,
        argsDigest: typeof request.argsDigest === 'string' ? request.argsDigest : null,
        expiresMs,
        request: JSON.stringify(request),
      };
      connection.use(`store check-in '${id}'`, (s) => s.insert.run(row));
    },
    async get(id) {
      if (typeof id !== 'string') return undefined;
      const row = connection.use(`read check-in '${id}'`, (s) => s.get.get(id) as unknown as Row | undefined);
      return row === undefined ? undefined : recordOf(row);
    },
    async consume(id, receipt) {
      if (typeof id !== 'string') return false;
      const stored = receipt === undefined ? null : JSON.stringify(receipt);
      return connection.use(`consume check-in '${id}'`, (s) => s.consume(id, stored, connection.now()));
    },
    async decide(id, decision) {
      const kept = JSON.stringify(recordedDecision(STORE, decision));
      if (typeof id !== 'string') return false;
      return connection.use(`record a decision on check-in '${id}'`, (s) =>
        s.decide(id, kept, connection.now()),
      );
    },
    async list(filter = {}) {
      const params = filterParams(filter);
      // `newest` picks the statement; it is no parameter of it.
      const { newest: _newest, ...bound } = params;
      const rows = connection.use('list check-ins', (s) => s.list(params).all(bound) as unknown as Row[]);
      return rows.map(recordOf);
    },
    async revoke(id) {
      if (typeof id !== 'string') return false;
      return connection.use(`revoke check-in '${id}'`, (s) => s.revoke.run(id).changes === 1);
    },
    async sweep() {
      return connection.use('sweep expired check-ins', (s) =>
        Number(s.sweep.run(connection.now() - retainMs).changes),
      );
    },
    close() {
      connection.close();
    },
  };
}
