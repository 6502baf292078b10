// A CheckInStore in PostgreSQL, shared by every process and machine on the database: consume is one
// conditional UPDATE, so of all the processes resuming one approval exactly one is told true.

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
import { Connection, type PostgresStoreOptions } from './connection';
import { prefixOf } from './schema';

export type PostgresCheckInsOptions = PostgresStoreOptions & {
  /** How long a record stays after its request expires, for audit, before `sweep` deletes it. Default 7 days. */
  readonly retainMs?: number;
};

export interface PostgresCheckInStore extends CheckInStore {
  /** Deletes records whose request expired more than `retainMs` ago; answers how many. */
  sweep(): Promise<number>;
  /** Ends the pool if the store made it; a pool passed in stays open. */
  close(): Promise<void>;
}

const STORE = 'postgresCheckIns';
const DEFAULT_RETAIN_MS = 7 * 24 * 60 * 60 * 1000;

interface Row {
  readonly state: CheckInState;
  readonly request: CheckInRequest;
  readonly receipt: CheckInReceipt | null;
  readonly decision: RecordedDecision | null;
}

const COLUMNS = 'state, request, receipt, decision';

// pg parses JSON columns into fresh objects on every read, so a caller never holds the store's copy.
const recordOf = (row: Row): CheckInRecord => ({
  request: row.request,
  state: row.state,
  ...(row.receipt !== null ? { receipt: row.receipt } : {}),
  ...(row.decision !== null ? { decision: row.decision } : {}),
});

function requireId(id: unknown): string {
  if (typeof id !== 'string' || id === '') {
    throw new TypeError(`${STORE}: a check-in id must be a non-empty string.`);
  }
  return id;
}

/** The WHERE clause and parameters of a `list` filter; the limit is the last parameter. */
function listQuery(t: string, raw: CheckInFilter): { text: string; values: unknown[] } {
  const filter = checkInFilter(STORE, raw);
  const values: unknown[] = [];
  const where: string[] = [];
  const add = (column: string, value: string | undefined) => {
    if (value === undefined) return;
    values.push(value);
    where.push(`${column} = $${values.length}`);
  };
  add('tenant', filter.tenant);
  add('principal', filter.principal);
  add('tool_name', filter.toolName);
  add('state', filter.state);
  add('args_digest', filter.argsDigest);
  if (filter.decided !== undefined) where.push(`decision IS ${filter.decided ? 'NOT NULL' : 'NULL'}`);
  values.push(filter.limit ?? null);
  const clause = where.length > 0 ? `WHERE ${where.join(' AND ')}` : '';
  const order = filter.order === 'newest' ? 'DESC' : 'ASC';
  return {
    text: `SELECT ${COLUMNS} FROM ${t}toolgate_check_ins ${clause} ORDER BY seq ${order} LIMIT $${values.length}`,
    values,
  };
}

/**
 * Check-ins in PostgreSQL (node-postgres), with versioned migrations run once under an advisory lock.
 *
 * ```ts
 * const checkIns = postgresCheckIns({ connectionString: process.env.DATABASE_URL! });
 * createChain([...], { checkIns: { key, store: checkIns } });
 * ```
 */
export function postgresCheckIns(options: PostgresCheckInsOptions): PostgresCheckInStore {
  const retainMs = options?.retainMs ?? DEFAULT_RETAIN_MS;
  if (!(Number.isInteger(retainMs) && retainMs >= 0)) {
    throw new TypeError(`${STORE}: 'retainMs' must be a non-negative integer of milliseconds.`);
  }
  const connection = new Connection(STORE, options);
  const t = prefixOf(connection.schema);

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
      const values = [
        id,
        request.identity?.tenant ?? null,
        request.identity?.principal ?? null,
        request.toolName,
        typeof request.argsDigest === 'string' ? request.argsDigest : null,
        expiresMs,
        JSON.stringify(request),
      ];
      await connection.use(`store check-in '${id}'`, (pool) =>
        pool.query(
          `INSERT INTO ${t}toolgate_check_ins (id, tenant, principal, tool_name, args_digest, state, expires_ms, request)
           VALUES ($1, $2, $3, $4, $5, 'pending', $6, $7)`,
          values,
        ),
      );
    },
    async get(id) {
      if (typeof id !== 'string') return undefined;
      const { rows } = await connection.use(`read check-in '${id}'`, (pool) =>
        pool.query<Row>(`SELECT ${COLUMNS} FROM ${t}toolgate_check_ins WHERE id = $1`, [id]),
      );
      return rows[0] === undefined ? undefined : recordOf(rows[0]);
    },
    async consume(id, receipt) {
      if (typeof id !== 'string') return false;
      const stored = receipt === undefined ? null : JSON.stringify(receipt);
      // The whole single-use promise: only one UPDATE can move a row out of 'pending', whichever
      // process or machine sends it. Expiry is judged by this process's clock, not the server's.
      const { rowCount } = await connection.use(`consume check-in '${id}'`, (pool) =>
        pool.query(
          `UPDATE ${t}toolgate_check_ins SET state = 'consumed', receipt = $1
           WHERE id = $2 AND state = 'pending' AND expires_ms > $3
           RETURNING id`,
          [stored, id, connection.now()],
        ),
      );
      return rowCount === 1;
    },
    async decide(id, decision) {
      const kept = JSON.stringify(recordedDecision(STORE, decision));
      if (typeof id !== 'string') return false;
      // One decision per request, like consume: only one UPDATE can fill an empty decision.
      const { rowCount } = await connection.use(`record a decision on check-in '${id}'`, (pool) =>
        pool.query(
          `UPDATE ${t}toolgate_check_ins SET decision = $1
           WHERE id = $2 AND state = 'pending' AND expires_ms > $3 AND decision IS NULL
           RETURNING id`,
          [kept, id, connection.now()],
        ),
      );
      return rowCount === 1;
    },
    async list(filter = {}) {
      const query = listQuery(t, filter);
      const { rows } = await connection.use('list check-ins', (pool) => pool.query<Row>(query));
      return rows.map(recordOf);
    },
    async revoke(id) {
      if (typeof id !== 'string') return false;
      const { rowCount } = await connection.use(`revoke check-in '${id}'`, (pool) =>
        pool.query(
          `UPDATE ${t}toolgate_check_ins SET state = 'revoked' WHERE id = $1 AND state = 'pending'`,
          [id],
        ),
      );
      return rowCount === 1;
    },
    async sweep() {
      const { rowCount } = await connection.use('sweep expired check-ins', (pool) =>
        pool.query(`DELETE FROM ${t}toolgate_check_ins WHERE expires_ms <= $1`, [
          connection.now() - retainMs,
        ]),
      );
      return rowCount ?? 0;
    },
    close() {
      return connection.close();
    },
  };
}
