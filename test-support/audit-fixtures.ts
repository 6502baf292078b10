// Shared by the audit tests: keys made by `openssl genpkey -algorithm ed25519` (test keys, used
// nowhere else), a store a test can take down, hang or slow, and a reader for everything a store holds.

import type { AuditHead, AuditRecord, AuditSeal, AuditStore } from '@toolgate/core';
import { inMemoryAuditStore } from '@toolgate/audit';

export const PRIVATE_PEM = `-----BEGIN PRIVATE KEY-----
MC4CAQAwBQYDK2VwBCIEII/37/YKqCtJitZ1sChOg/TkeIgscmxZjBiKQeuXukXR
-----END PRIVATE KEY-----
`;

export const PUBLIC_PEM = `-----BEGIN PUBLIC KEY-----
MCowBQYDK2VwAyEAEjr8SE40o1Z7FJHcR40QvA7oibcy/JrXKx2Tey0oS68=
-----END PUBLIC KEY-----
`;

/** Another key: its signatures must not verify with PUBLIC_PEM. */
export const OTHER_PRIVATE_PEM = `-----BEGIN PRIVATE KEY-----
MC4CAQAwBQYDK2VwBCIEIL02GyFoq1EVgH9M+YLf14mJXYKQY8WVPUEJ+ro3+VMG
-----END PRIVATE KEY-----
`;

export const DIGEST_KEY = 'audit-digest-key-for-tests-0123456789abcdef';

export type StoreMode = 'up' | 'down' | 'hang';

/** An AuditStore over an in-memory one that a test can take down, hang, or make answer late. */
export interface ControlledStore extends AuditStore {
  mode: StoreMode;
  /** When set, an append stores its records at once but answers only after this many ms. */
  answerLateMs: number;
  /** When set, an append waits this many ms before it takes the head (and seals). */
  startLateMs: number;
  readonly appends: number;
  readonly inner: AuditStore;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const never = () => new Promise<never>(() => undefined);

class StoreDown extends Error {
  override readonly name = 'StoreDown';
  readonly code = 'ECONNREFUSED';
  constructor() {
    super('connect ECONNREFUSED 10.0.0.7:5432 (password=hunter2)');
  }
}

export function controlledStore(inner: AuditStore = inMemoryAuditStore()): ControlledStore {
  const gate = async () => {
    if (store.mode === 'down') throw new StoreDown();
    if (store.mode === 'hang') await never();
  };
  let appends = 0;
  const store: ControlledStore = {
    mode: 'up',
    answerLateMs: 0,
    startLateMs: 0,
    get appends() {
      return appends;
    },
    inner,
    async append(seal: AuditSeal) {
      await gate();
      appends += 1;
      if (store.startLateMs > 0) await sleep(store.startLateMs);
      const records = await inner.append(seal);
      if (store.answerLateMs > 0) await sleep(store.answerLateMs);
      return records;
    },
    async head(): Promise<AuditHead | undefined> {
      await gate();
      return inner.head();
    },
    async read(after: number, limit: number) {
      await gate();
      return inner.read(after, limit);
    },
    async ready() {
      await gate();
    },
  };
  return store;
}

/** Every record `store` holds, in order. */
export async function recordsOf(store: AuditStore): Promise<AuditRecord[]> {
  const all: AuditRecord[] = [];
  for (;;) {
    const page = await store.read(all.at(-1)?.seq ?? 0, 100);
    if (page.length === 0) return all;
    all.push(...page);
  }
}
