// One pg Pool per store (or one the caller shares), migrated on first use rather than in the factory,
// so a server that is down never throws where the store is built: every operation rejects instead,
// and the next operation tries again.

import pg from 'pg';
import { PostgresStoreError, storeError } from './errors';
import { migrate } from './schema';

export type PostgresPool = pg.Pool;

interface SharedOptions {
  /** Milliseconds since the epoch: the dispatcher's clock, which judges expiry. Injectable for tests. */
  readonly now?: () => number;
  /**
   * The PostgreSQL schema that holds the tables, created if missing. Default: the connection's
   * current schema (the first on its `search_path`, usually `public`).
   */
  readonly schema?: string;
}

/** Where a store keeps its data: a connection string, or a pool you made yourself. */
export type PostgresStoreOptions = SharedOptions &
  (
    | {
        /** e.g. `postgres://user:password@host:5432/db`; never repeated in an error. */
        readonly connectionString: string;
        /** The most connections the store's own pool opens. Default 10. */
        readonly maxConnections?: number;
        /** How long the store's own pool waits for a connection before rejecting. Default 5000. */
        readonly connectTimeoutMs?: number;
        /**
         * The server cancels a statement that runs longer (e.g. a consume waiting on a locked row).
         * Default 4000: below the dispatcher's 5000 ms store deadline, so a consume the dispatcher
         * has already refused is cancelled rather than committed later, spending the approval.
         */
        readonly statementTimeoutMs?: number;
        readonly pool?: never;
      }
    | {
        /**
         * Shared with the caller: the store never ends it. While the store is open it listens for the
         * pool's 'error' events, so an idle connection that drops cannot crash the process.
         */
        readonly pool: PostgresPool;
        readonly connectionString?: never;
        readonly maxConnections?: never;
        readonly connectTimeoutMs?: never;
        readonly statementTimeoutMs?: never;
      }
  );

const DEFAULT_MAX_CONNECTIONS = 10;
const DEFAULT_CONNECT_TIMEOUT_MS = 5000;
const DEFAULT_STATEMENT_TIMEOUT_MS = 4000;
const SCHEMA_NAME = /^[A-Za-z_][A-Za-z0-9_$]{0,62}$/;

/** Everything in `connectionString` that must never reach a message: itself, and its password. */
function secretsOf(connectionString: string | undefined): string[] {
  if (connectionString === undefined) return [];
  const secrets = [connectionString];
  let password = '';
  try {
    password = decodeURIComponent(new URL(connectionString).password);
  } catch {
    // Not a URL: a libpq key=value string, e.g. "host=db password='s3cret'".
    const match = /(?:^|\s)password\s*=\s*('(?:[^'\\]|\\.)*'|\S+)/.exec(connectionString);
    password = match?.[1]?.replace(/^'|'$/g, '') ?? '';
  }
  if (password !== '') secrets.push(password, encodeURIComponent(password));
  return secrets;
}

// An idle client whose connection drops makes the pool emit 'error'; with no listener Node would
// crash the process. The pool has already discarded that client, and the next query opens another.
const ignorePoolError = () => undefined;

export class Connection {
  readonly now: () => number;
  readonly schema: string | undefined;
  readonly #pool: PostgresPool;
  readonly #ownsPool: boolean;
  readonly #secrets: readonly string[];
  #ready: Promise<void> | undefined;
  #closed = false;

  constructor(
    readonly store: string,
    options: PostgresStoreOptions,
  ) {
    if (typeof options !== 'object' || options === null) {
      throw new TypeError(
        `${store}: expected { connectionString } or { pool }; got ${options === null ? 'null' : typeof options}.`,
      );
    }
    const hasString = options.connectionString !== undefined;
    const hasPool = options.pool !== undefined;
    if (hasString === hasPool) {
      throw new TypeError(
        `${store}: pass exactly one of 'connectionString' (postgres://...) and 'pool' (a pg Pool).`,
      );
    }
    if (hasString && (typeof options.connectionString !== 'string' || options.connectionString === '')) {
      throw new TypeError(`${store}: 'connectionString' must be a non-empty string.`);
    }
    const pool = options.pool as Partial<PostgresPool> | undefined;
    if (
      hasPool &&
      !(
        typeof pool?.query === 'function' &&
        typeof pool.connect === 'function' &&
        typeof pool.on === 'function'
      )
    ) {
      throw new TypeError(`${store}: 'pool' must be a pg Pool.`);
    }
    const max = options.maxConnections;
    if (max !== undefined && !(Number.isInteger(max) && max > 0)) {
      throw new TypeError(`${store}: 'maxConnections' must be a positive integer.`);
    }
    for (const name of ['connectTimeoutMs', 'statementTimeoutMs'] as const) {
      const ms = options[name];
      if (ms !== undefined && !(Number.isInteger(ms) && ms > 0)) {
        throw new TypeError(`${store}: '${name}' must be a positive integer of milliseconds.`);
      }
    }
    if (
      options.schema !== undefined &&
      !(typeof options.schema === 'string' && SCHEMA_NAME.test(options.schema))
    ) {
      throw new TypeError(
        `${store}: 'schema' must be a plain identifier (letters, digits, _ and $, at most 63 characters, not starting with a digit).`,
      );
    }
    if (options.now !== undefined && typeof options.now !== 'function') {
      throw new TypeError(`${store}: 'now' must be a function answering milliseconds since the epoch.`);
    }
    this.now = options.now ?? Date.now;
    this.schema = options.schema;
    this.#secrets = secretsOf(options.connectionString);
    this.#ownsPool = !hasPool;
    this.#pool =
      options.pool ??
      new pg.Pool({
        connectionString: options.connectionString,
        max: max ?? DEFAULT_MAX_CONNECTIONS,
        connectionTimeoutMillis: options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS,
        statement_timeout: options.statementTimeoutMs ?? DEFAULT_STATEMENT_TIMEOUT_MS,
      });
    this.#pool.on('error', ignorePoolError);
  }

  /** Runs `work` once the tables are ready; any failure becomes a `PostgresStoreError` saying what `action` was. */
  async use<T>(action: string, work: (pool: PostgresPool) => Promise<T>): Promise<T> {
    await this.#connect();
    try {
      return await work(this.#pool);
    } catch (error) {
      throw storeError(this.store, action, error, this.#secrets);
    }
  }

  /** Ends the pool if this store made it; later operations reject. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    // Its own pool keeps the listener: clients may still report a dropped connection while closing.
    if (this.#ownsPool) await this.#pool.end();
    else this.#pool.off('error', ignorePoolError);
  }

  #connect(): Promise<void> {
    if (this.#closed) {
      return Promise.reject(
        new PostgresStoreError(this.store, 'ERR_STORE_CLOSED', false, `${this.store}: the store is closed.`),
      );
    }
    // One migration per store; a failed one is forgotten, so the next operation tries again.
    this.#ready ??= migrate(this.#pool, this.schema).catch((error: unknown) => {
      this.#ready = undefined;
      throw storeError(this.store, 'prepare the database', error, this.#secrets);
    });
    return this.#ready;
  }
}
