// An ArtifactStore in this process's memory. Lost on restart; use @toolgate/store-sqlite to keep them.

import {
  newArtifactRef,
  type ArtifactMeta,
  type ArtifactScope,
  type ArtifactStore,
  type StoredArtifact,
} from '@toolgate/core';

export interface InMemoryArtifactsOptions {
  /** Milliseconds since the epoch; injectable for deterministic tests. */
  readonly now?: () => number;
  /** The most `list` returns, whatever the caller asks; default 100. */
  readonly maxList?: number;
}

interface Entry {
  readonly scopeKey: string;
  readonly meta: ArtifactMeta;
  readonly data: unknown;
  readonly expiresAtMs: number | undefined;
}

/** One key per scope; a missing field and an empty one are the same scope. */
export function scopeKey(scope: ArtifactScope): string {
  return JSON.stringify([scope.tenant ?? '', scope.principal ?? '', scope.conversation ?? '']);
}

export function inMemoryArtifacts(options: InMemoryArtifactsOptions = {}): ArtifactStore {
  const now = options.now ?? Date.now;
  const maxList = options.maxList ?? 100;
  const entries = new Map<string, Entry>();
  const live = (entry: Entry) => entry.expiresAtMs === undefined || entry.expiresAtMs > now();
  return {
    async put(scope, artifact) {
      if (typeof artifact?.kind !== 'string' || artifact.kind.trim() === '') {
        throw new TypeError('inMemoryArtifacts.put: kind must be a non-empty string, e.g. "dataset/rows".');
      }
      if (artifact.ttlMs !== undefined && (!Number.isFinite(artifact.ttlMs) || artifact.ttlMs <= 0)) {
        throw new TypeError('inMemoryArtifacts.put: ttlMs must be a positive number of milliseconds.');
      }
      const ref = newArtifactRef();
      const createdAtMs = now();
      const expiresAtMs = artifact.ttlMs === undefined ? undefined : createdAtMs + artifact.ttlMs;
      const meta: ArtifactMeta = {
        ref,
        kind: artifact.kind,
        createdAt: new Date(createdAtMs).toISOString(),
        ...(expiresAtMs !== undefined ? { expiresAt: new Date(expiresAtMs).toISOString() } : {}),
        ...(artifact.meta !== undefined ? { meta: structuredClone(artifact.meta) } : {}),
      };
      entries.set(ref, {
        scopeKey: scopeKey(scope),
        meta,
        data: structuredClone(artifact.data),
        expiresAtMs,
      });
      return ref;
    },
    async get(scope, ref) {
      const entry = entries.get(ref);
      // Same answer for "unknown", "expired" and "another scope": a caller learns nothing about other tenants.
      const visible = entry !== undefined && entry.scopeKey === scopeKey(scope) && live(entry);
      if (!visible) return undefined;
      // One clone of both: meta and data were stored as separate copies, so they share nothing.
      const found: StoredArtifact = structuredClone({ meta: entry.meta, data: entry.data });
      return found;
    },
    async list(scope, kind, limit = 10) {
      const key = scopeKey(scope);
      const bound = Math.max(0, Math.min(Math.trunc(limit), maxList));
      const found: ArtifactMeta[] = [];
      for (const entry of entries.values()) {
        if (entry.scopeKey === key && entry.meta.kind === kind && live(entry)) found.push(entry.meta);
      }
      found.reverse();
      return found.slice(0, bound).map((meta) => structuredClone(meta));
    },
  };
}
