// An ArtifactStore in PostgreSQL: artifacts keyed by the full scope (tenant, principal, conversation),
// so a ref read from another scope answers exactly like an unknown one. Data is JSON, or bytes with a
// content type when it is a Uint8Array.

import {
  artifactJson,
  artifactKind,
  scopeFields,
  newArtifactRef,
  type ArtifactInput,
  type ArtifactMeta,
  type ArtifactScope,
  type ArtifactStore,
  type StoredArtifact,
} from '@toolgate/core';
import { Connection, type PostgresStoreOptions } from './connection';
import { prefixOf } from './schema';

export type PostgresArtifactsOptions = PostgresStoreOptions & {
  /** The most refs one `list` answers, whatever limit is asked for. Default 100. */
  readonly maxList?: number;
};

export interface PostgresArtifactStore extends ArtifactStore {
  /** Deletes expired artifacts (they are never readable); answers how many. `put` also sweeps. */
  sweep(): Promise<number>;
  /** Ends the pool if the store made it; a pool passed in stays open. */
  close(): Promise<void>;
}

const STORE = 'postgresArtifacts';
const DEFAULT_LIST = 10;
const DEFAULT_MAX_LIST = 100;
const OCTET_STREAM = 'application/octet-stream';

interface Row {
  readonly ref: string;
  readonly kind: string;
  // BIGINT columns arrive as strings from pg.
  readonly created_ms: string;
  readonly expires_ms: string | null;
  readonly meta: Record<string, unknown> | null;
  readonly content_type: string | null;
}

interface DataRow extends Row {
  readonly data_json: unknown;
  readonly data_bytes: Buffer | null;
}

// An absent scope field is stored as '', so absent and empty are one scope, as in inMemoryArtifacts.
// $1..$3 are always the scope and $4 the time judged by this process's clock.
const SCOPE = 'tenant = $1 AND principal = $2 AND conversation = $3';
const LIVE = '(expires_ms IS NULL OR expires_ms > $4)';
const META_COLUMNS = 'ref, kind, created_ms, expires_ms, meta, content_type';

function scopeValues(scope: ArtifactScope): [string, string, string] {
  const { tenant, principal, conversation } = scopeFields(STORE, scope);
  return [tenant, principal, conversation];
}

function metaOf(row: Row): ArtifactMeta {
  const stored = row.meta ?? undefined;
  const meta = row.content_type === null ? stored : { ...stored, contentType: row.content_type };
  return {
    ref: row.ref,
    kind: row.kind,
    createdAt: new Date(Number(row.created_ms)).toISOString(),
    ...(row.expires_ms !== null ? { expiresAt: new Date(Number(row.expires_ms)).toISOString() } : {}),
    ...(meta !== undefined ? { meta } : {}),
  };
}

/**
 * Artifacts in PostgreSQL (node-postgres), with versioned migrations run once under an advisory
 * lock. A `Uint8Array` is kept as bytes with `meta.contentType` (default `application/octet-stream`);
 * anything else as JSON.
 */
export function postgresArtifacts(options: PostgresArtifactsOptions): PostgresArtifactStore {
  const maxList = options?.maxList ?? DEFAULT_MAX_LIST;
  if (!(Number.isInteger(maxList) && maxList > 0)) {
    throw new TypeError(`${STORE}: 'maxList' must be a positive integer.`);
  }
  const connection = new Connection(STORE, options);
  const t = prefixOf(connection.schema);

  function valuesOf(scope: ArtifactScope, artifact: ArtifactInput, ref: string, now: number): unknown[] {
    if (typeof artifact !== 'object' || artifact === null) {
      throw new TypeError(`${STORE}: put expects { kind, data, meta?, ttlMs? }.`);
    }
    const { kind, data, meta, ttlMs } = artifact;
    if (ttlMs !== undefined && !(Number.isFinite(ttlMs) && ttlMs > 0)) {
      throw new TypeError(`${STORE}: 'ttlMs' must be a positive number of milliseconds.`);
    }
    if (meta !== undefined && (typeof meta !== 'object' || meta === null || Array.isArray(meta))) {
      throw new TypeError(`${STORE}: the artifact's 'meta' must be a plain object.`);
    }
    if (data instanceof ArrayBuffer || (ArrayBuffer.isView(data) && !(data instanceof Uint8Array))) {
      throw new TypeError(`${STORE}: binary artifact data must be a Uint8Array.`);
    }
    const binary = data instanceof Uint8Array;
    let contentType: string | null = null;
    if (binary) contentType = typeof meta?.['contentType'] === 'string' ? meta['contentType'] : OCTET_STREAM;
    return [
      ...scopeValues(scope),
      now,
      ref,
      artifactKind(STORE, kind),
      ttlMs === undefined ? null : Math.ceil(now + ttlMs),
      meta === undefined ? null : artifactJson(STORE, 'meta', meta),
      // Text, not objects: pg would turn a JS array into a PostgreSQL array literal.
      binary ? null : artifactJson(STORE, 'data', data),
      binary ? Buffer.from(data.buffer, data.byteOffset, data.byteLength) : null,
      contentType,
    ];
  }

  return {
    async put(scope, artifact) {
      const values = valuesOf(scope, artifact, newArtifactRef(), connection.now());
      const kind = values[5] as string;
      // One statement: the sweep and the insert commit together.
      await connection.use(`store a '${kind}' artifact`, (pool) =>
        pool.query(
          `WITH swept AS (DELETE FROM ${t}toolgate_artifacts WHERE expires_ms <= $4)
           INSERT INTO ${t}toolgate_artifacts
             (tenant, principal, conversation, created_ms, ref, kind, expires_ms, meta, data_json, data_bytes, content_type)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
          values,
        ),
      );
      return values[4] as string;
    },
    async get(scope, ref): Promise<StoredArtifact | undefined> {
      if (typeof ref !== 'string') return undefined;
      const values = [...scopeValues(scope), connection.now(), ref];
      const { rows } = await connection.use('read an artifact', (pool) =>
        pool.query<DataRow>(
          `SELECT ${META_COLUMNS}, data_json, data_bytes FROM ${t}toolgate_artifacts
           WHERE ref = $5 AND ${SCOPE} AND ${LIVE}`,
          values,
        ),
      );
      const row = rows[0];
      if (row === undefined) return undefined;
      const data = row.data_bytes !== null ? Uint8Array.from(row.data_bytes) : row.data_json;
      return { meta: metaOf(row), data };
    },
    async list(scope, kind, limit = DEFAULT_LIST) {
      if (typeof kind !== 'string') throw new TypeError(`${STORE}: list's 'kind' must be a string.`);
      // Bounded whatever is asked: a limit below zero or not a number lists nothing.
      const bound = Number.isNaN(limit) ? 0 : Math.max(0, Math.min(Math.trunc(limit), maxList));
      const values = [...scopeValues(scope), connection.now(), kind, bound];
      const { rows } = await connection.use(`list '${kind}' artifacts`, (pool) =>
        pool.query<Row>(
          `SELECT ${META_COLUMNS} FROM ${t}toolgate_artifacts
           WHERE ${SCOPE} AND kind = $5 AND ${LIVE}
           ORDER BY created_ms DESC, seq DESC LIMIT $6`,
          values,
        ),
      );
      return rows.map(metaOf);
    },
    async sweep() {
      const { rowCount } = await connection.use('sweep expired artifacts', (pool) =>
        pool.query(`DELETE FROM ${t}toolgate_artifacts WHERE expires_ms <= $1`, [connection.now()]),
      );
      return rowCount ?? 0;
    },
    close() {
      return connection.close();
    },
  };
}
