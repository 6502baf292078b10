// What decides whether a reload may keep a part (an upstream, a store, the audit log, telemetry)
// open: the resolved configuration it was built from, compared as canonical JSON (key order does
// not matter). One scheme for every part, so two equal settings always compare equal.

import { canonicalJson } from '@toolgate/core';

/** Equal for equal configuration; `undefined` parts count as absent. */
export function fingerprint(...parts: readonly unknown[]): string {
  return canonicalJson(parts.map((part) => part ?? null));
}
