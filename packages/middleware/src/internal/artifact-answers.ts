// What an artifact store may answer. Anything else (a number, a string, an object without meta, a
// proxy that throws) is the store failing, so the gate that asked fails closed instead of guessing.

import type { ArtifactMeta, StoredArtifact } from '@toolgate/core';

function isArtifactMeta(value: unknown): value is ArtifactMeta {
  if (typeof value !== 'object' || value === null) return false;
  const { ref, kind } = value as Partial<ArtifactMeta>;
  return typeof ref === 'string' && typeof kind === 'string';
}

/** A `get` answer for `ref`: the stored artifact it names. May throw on a hostile value; call it where a throw fails closed. */
export function isStoredArtifact(value: unknown, ref: string): value is StoredArtifact {
  if (typeof value !== 'object' || value === null || !('data' in value)) return false;
  const { meta } = value as { meta?: unknown };
  return isArtifactMeta(meta) && meta.ref === ref;
}

/** A `list` answer: an array of artifact metadata. May throw on a hostile value, like isStoredArtifact. */
export function isArtifactMetaList(value: unknown): value is ArtifactMeta[] {
  return Array.isArray(value) && value.every(isArtifactMeta);
}
