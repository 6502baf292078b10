// An AuditStore in this process's memory: one chain for every log in the process, lost on restart.
// For tests, demos and a single process that ships its log elsewhere; use SQLite or PostgreSQL to keep it.

import { auditContinues, type AuditHead, type AuditRecord, type AuditStore } from '@toolgate/core';

export interface InMemoryAuditStore extends AuditStore {
  /** How many records it holds. */
  readonly size: number;
}

const STORE = 'inMemoryAuditStore';

/** Copies through JSON: nobody holding a record can change what the store keeps. */
const copy = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;

export function inMemoryAuditStore(): InMemoryAuditStore {
  const records: AuditRecord[] = [];
  let head: AuditHead | undefined;
  // Appends run one after another: a seal awaits, and another append must not take the same head.
  let tail: Promise<unknown> = Promise.resolve();

  return {
    append(seal) {
      const turn = tail.then(async () => {
        const sealed = await seal(head);
        const next = auditContinues(STORE, head, sealed);
        const kept = copy(sealed);
        records.push(...kept);
        head = next ?? head;
        return copy(kept);
      });
      tail = turn.catch(() => undefined);
      return turn;
    },
    async head() {
      return head === undefined ? undefined : { ...head };
    },
    async read(after, limit) {
      if (!(Number.isSafeInteger(after) && Number.isSafeInteger(limit) && limit >= 0)) {
        throw new TypeError(`${STORE}: read(after, limit) takes integers, limit at least 0.`);
      }
      // seq n sits at index n - 1.
      const from = Math.max(0, after);
      return copy(records.slice(from, from + limit));
    },
    async ready() {},
    get size() {
      return records.length;
    },
  };
}
