// A durable ArtifactStore: artifacts keyed by the full scope (tenant, principal, conversation), so a
// ref read from another scope answers exactly like an unknown one. Data is JSON, or bytes with a
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
import type { SQLInputValue } from 'node:sqlite';
import { Connection, transaction, type SqliteDatabase, type SqliteStoreOptions } from './connection';

export type SqliteArtifactsOptions = SqliteStoreOptions & {
  /** The most refs one `list` answers, whatever limit is asked for. Default 100. */
  readonly maxList?: number;
};

export interface SqliteArtifactStore extends ArtifactStore {
  /** Deletes expired artifacts (they are never readable); answers how many. `put` also sweeps. */
  sweep(): Promise<number>;
  /** Closes the database if the store opened it. */
  close(): void;
}

const STORE = 'sqliteArtifacts';
const DEFAULT_LIST = 10;
const DEFAULT_MAX_LIST = 100;
const OCTET_STREAM = 'application/octet-stream';

interface Row {
  readonly ref: string;
  readonly kind: string;
  readonly created_ms: number;
  readonly expires_ms: number | null;
  readonly meta: string | null;
  readonly content_type: string | null;
}

interface DataRow extends Row {
  readonly data_json: string | null;
  readonly data_blob: Uint8Array | null;
}

// An absent scope field is stored as '', so absent and empty are one scope, as in inMemoryArtifacts.
const SCOPE = 'tenant = @tenant AND principal = @principal AND conversation = @conversation';
const LIVE = '(expires_ms IS NULL OR expires_ms > @now)';
const META_COLUMNS = 'ref, kind, created_ms, expires_ms, meta, content_type';

function prepare(db: SqliteDatabase) {
  const sweep = db.prepare(`DELETE FROM toolgate_artifacts WHERE expires_ms <= ?`);
  const insert = db.prepare(
    `INSERT INTO toolgate_artifacts (ref, tenant, principal, conversation, kind, created_ms, expires_ms, meta, data_json, data_blob, content_type)
     VALUES (@ref, @tenant, @principal, @conversation, @kind, @createdMs, @expiresMs, @meta, @dataJson, @dataBlob, @contentType)`,
  );
  return {
    sweep,
    put: (row: Record<string, SQLInputValue>, now: number) =>
      transaction(db, () => {
        sweep.run(now);
        insert.run(row);
      }),
    get: db.prepare(
      `SELECT ${META_COLUMNS}, data_json, data_blob FROM toolgate_artifacts WHERE ref = @ref AND ${SCOPE} AND ${LIVE}`,
    ),
    list: db.prepare(
      `SELECT ${META_COLUMNS} FROM toolgate_artifacts WHERE ${SCOPE} AND kind = @kind AND ${LIVE}
       ORDER BY created_ms DESC, seq DESC LIMIT @limit`,
    ),
  };
}

function metaOf(row: Row): ArtifactMeta {
  const stored = row.meta === null ? undefined : (JSON.parse(row.meta) as Record<string, unknown>);
  const meta = row.content_type === null ? stored : { ...stored, contentType: row.content_type };
  return {
    ref: row.ref,
    kind: row.kind,
    createdAt: new Date(row.created_ms).toISOString(),
    ...(row.expires_ms !== null ? { expiresAt: new Date(row.expires_ms).toISOString() } : {}),
    ...(meta !== undefined ? { meta } : {}),
  };
}

/**
 * Artifacts in SQLite (Node's built-in node:sqlite), in WAL mode with `user_version` migrations. A `Uint8Array`
 * is kept as bytes with `meta.contentType` (default `application/octet-stream`); anything else as JSON.
 */
export function sqliteArtifacts(options: SqliteArtifactsOptions): SqliteArtifactStore {
  const maxList = options.maxList ?? DEFAULT_MAX_LIST;
  if (!(Number.isInteger(maxList) && maxList > 0)) {
    throw new TypeError(`${STORE}: 'maxList' must be a positive integer.`);
  }
  const connection = new Connection(STORE, options, prepare);

  function rowOf(scope: ArtifactScope, artifact: ArtifactInput, ref: string, now: number) {
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
    return {
      ref,
      ...scopeFields(STORE, scope),
      kind: artifactKind(STORE, kind),
      createdMs: now,
      expiresMs: ttlMs === undefined ? null : Math.ceil(now + ttlMs),
      meta: meta === undefined ? null : artifactJson(STORE, 'meta', meta),
      dataJson: binary ? null : artifactJson(STORE, 'data', data),
      dataBlob: binary ? data : null,
      contentType,
    };
  }

  return {
    async put(scope, artifact) {
      const now = connection.now();
      const row = rowOf(scope, artifact, newArtifactRef(), now);
      connection.use(`store a '${row.kind}' artifact`, (s) => s.put(row, now));
      return row.ref;
    },
    async get(scope, ref): Promise<StoredArtifact | undefined> {
      if (typeof ref !== 'string') return undefined;
      const params = { ...scopeFields(STORE, scope), ref, now: connection.now() };
      const row = connection.use(
        'read an artifact',
        (s) => s.get.get(params) as unknown as DataRow | undefined,
      );
      if (row === undefined) return undefined;
      const data =
        row.data_blob !== null ? Uint8Array.from(row.data_blob) : (JSON.parse(row.data_json!) as unknown);
      return { meta: metaOf(row), data };
    },
    async list(scope, kind, limit = DEFAULT_LIST) {
      if (typeof kind !== 'string') throw new TypeError(`${STORE}: list's 'kind' must be a string.`);
      // Bounded whatever is asked: a limit below zero or not a number lists nothing.
      const bound = Number.isNaN(limit) ? 0 : Math.max(0, Math.min(Math.trunc(limit), maxList));
      const params = { ...scopeFields(STORE, scope), kind, now: connection.now(), limit: bound };
      const rows = connection.use(`list '${kind}' artifacts`, (s) => s.list.all(params) as unknown as Row[]);
      return rows.map(metaOf);
    },
    async sweep() {
      return connection.use('sweep expired artifacts', (s) => Number(s.sweep.run(connection.now()).changes));
    },
    close() {
      connection.close();
    },
  };
}
