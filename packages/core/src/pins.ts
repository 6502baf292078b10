// Pinned definitions in this process's memory, for one process or a test. A store shared by
// several processes (SQLite, PostgreSQL) keeps the same promises across them.

import type { PinFilter, PinKind, PinObservation, PinRecord, PinStore } from './ports';

const keyOf = (source: string, kind: PinKind, name: string) => JSON.stringify([source, kind, name]);

/** Matches a filter; shared so every store filters the same way. */
export function pinMatches(record: PinRecord, filter: PinFilter = {}): boolean {
  if (filter.source !== undefined && record.source !== filter.source) return false;
  if (filter.kind !== undefined && record.kind !== filter.kind) return false;
  if (filter.changed !== undefined && (record.changed !== undefined) !== filter.changed) return false;
  return true;
}

const order = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** Orders records by source, kind and name, by code unit (as SQL's binary collation does). */
export function comparePins(a: PinRecord, b: PinRecord): number {
  return order(a.source, b.source) || order(a.kind, b.kind) || order(a.name, b.name);
}

/** A `PinStore` in memory: lost on restart, so every tool is pinned again on first sight. */
export function inMemoryPins(): PinStore {
  const records = new Map<string, PinRecord>();
  return {
    async observe(seen: PinObservation, at: string) {
      const key = keyOf(seen.source, seen.kind, seen.name);
      const current = records.get(key);
      if (current === undefined) {
        const record: PinRecord = { ...seen, pinnedAt: at };
        records.set(key, record);
        return { record, pinned: true };
      }
      let record: PinRecord;
      if (current.digest === seen.digest) {
        const { changed: _cleared, ...rest } = current;
        record = rest;
      } else if (current.changed?.digest === seen.digest) {
        record = current;
      } else {
        record = { ...current, changed: { digest: seen.digest, definition: seen.definition, seenAt: at } };
      }
      records.set(key, record);
      return { record, pinned: false };
    },
    async get(source, kind, name) {
      return records.get(keyOf(source, kind, name));
    },
    async accept(source, kind, name, digest, at) {
      const key = keyOf(source, kind, name);
      const current = records.get(key);
      if (current?.changed === undefined || current.changed.digest !== digest) return false;
      const { changed, ...rest } = current;
      records.set(key, { ...rest, digest: changed.digest, definition: changed.definition, pinnedAt: at });
      return true;
    },
    async list(filter) {
      return [...records.values()].filter((record) => pinMatches(record, filter)).sort(comparePins);
    },
  };
}
