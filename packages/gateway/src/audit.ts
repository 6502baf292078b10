// The gateway's audit log (`audit:` in the configuration): an `auditLog` over the store the
// configuration names (`audit.store`, else `stores.state`), attached to every tenant's dispatcher,
// and the records of what is not a call (a reload, a pin accepted). Keys come as `${file:…}` or
// `${env:…}`; with no `digestKey`, one is derived from the signing key, never equal to it.

import { createHmac } from 'node:crypto';
import { rename, writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import {
  auditLog,
  inMemoryAuditStore,
  type AuditCheckpoint,
  type AuditCheckpointOptions,
  type AuditEntry,
  type AuditLog,
} from '@toolgate/audit';
import type { AuditHead, AuditStore, Dispatcher } from '@toolgate/core';
import { postgresAuditStore } from '@toolgate/store-postgres';
import { sqliteAuditJournal, sqliteAuditStore, type SqliteAuditJournal } from '@toolgate/store-sqlite';
import { ConfigError } from './config/errors';
import { fingerprint } from './config/fingerprint';
import { resolvePart } from './config/resolve';
import type {
  AuditCheckpointsConfig,
  AuditConfig,
  GatewayConfig,
  ResolvedConfig,
  StateStoreLocation,
} from './config/types';
import type { Runtime } from './runtime';

export interface OpenedAuditStore {
  readonly kind: 'memory' | 'sqlite' | 'postgres';
  readonly store: AuditStore;
  close(): Promise<void>;
}

export interface GatewayAudit {
  /** Equal keys mean equal configuration: a reload keeps the same log (and its writer) open. */
  readonly key: string;
  readonly kind: OpenedAuditStore['kind'];
  readonly log: AuditLog;
  /** `dispatcher` with every dispatch and resume recorded. */
  attach(dispatcher: Dispatcher): Dispatcher;
  /** Appends an action; rejects when it cannot be stored (then do not act). */
  record(entry: AuditEntry): Promise<void>;
  /** Resolves when the store answers. */
  ping(): Promise<void>;
  /** The stored log's last record (sequence and hash); undefined while it is empty. */
  head(): Promise<AuditHead | undefined>;
  /** Whether `audit.checkpoints` is configured. */
  readonly checkpoints: boolean;
  /** The last checkpoint this process published, if any. */
  lastCheckpoint(): { readonly seq: number; readonly at: string } | undefined;
  close(): Promise<void>;
}

/** Where the log is kept: `audit.store` when set, else `stores.state`, else memory. */
export function auditStoreLocation(config: Pick<ResolvedConfig, 'audit' | 'stores'>): StateStoreLocation {
  return config.audit?.store ?? config.stores?.state ?? { kind: 'memory' };
}

/** With `durability: batch`, how long SQLite commits may wait for an fsync (see docs/audit.md). */
export const BATCH_SYNC_INTERVAL_MS = 1000;

export function openAuditStore(
  location: StateStoreLocation,
  options: { readonly syncIntervalMs?: number } = {},
): OpenedAuditStore {
  switch (location.kind) {
    case 'memory':
      return { kind: 'memory', store: inMemoryAuditStore(), close: async () => {} };
    case 'sqlite': {
      const store = sqliteAuditStore({
        path: location.path,
        ...(options.syncIntervalMs !== undefined ? { syncIntervalMs: options.syncIntervalMs } : {}),
      });
      return { kind: 'sqlite', store, close: async () => store.close() };
    }
    case 'postgres': {
      const store = postgresAuditStore({ connectionString: location.url });
      return { kind: 'postgres', store, close: () => store.close() };
    }
  }
}

/**
 * The journal of `audit.journal` (on by default with `durability: batch` on a SQLite file): a file
 * per process beside the database, `<file>-audit-journal`, `.2`, ….
 */
function openAuditJournal(
  location: StateStoreLocation,
  durability: 'batch' | 'record',
  configured: boolean | undefined,
): SqliteAuditJournal | undefined {
  if (durability !== 'batch' || configured === false) return undefined;
  if (location.kind !== 'sqlite' || location.path === ':memory:') return undefined;
  return sqliteAuditJournal({ path: `${location.path}-audit-journal` });
}

/**
 * The digest key when the configuration gives none: an HMAC of a fixed label under the signing key.
 * It is as secret as the signing key, differs from it, and stays the same across restarts, so the
 * digests of one value stay comparable.
 */
export function derivedDigestKey(signingKey: string): string {
  return createHmac('sha256', signingKey).update('toolgate audit digest key v1').digest('hex');
}

/** What decides whether a reload can keep the log open: its settings and where it is kept. */
export function auditKeyOf(config: Pick<ResolvedConfig, 'audit' | 'stores'>): string {
  return fingerprint(config.audit, auditStoreLocation(config));
}

const WEBHOOK_DEADLINE_MS = 5000;

/** Writes the newest checkpoint whole (a temporary file renamed over it), so a reader never sees half of one. */
async function writeCheckpointFile(path: string, checkpoint: AuditCheckpoint): Promise<void> {
  const temporary = `${path}.${process.pid}.tmp`;
  await writeFile(temporary, `${JSON.stringify(checkpoint)}\n`, { mode: 0o644 });
  await rename(temporary, path);
}

async function postCheckpoint(url: string, checkpoint: AuditCheckpoint): Promise<void> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(checkpoint),
    redirect: 'error',
    signal: AbortSignal.timeout(WEBHOOK_DEADLINE_MS),
  });
  await response.body?.cancel();
  if (!response.ok) throw new Error(`the checkpoint webhook answered HTTP ${response.status}`);
}

/** `audit.checkpoints` as the log takes it: publish to the file and the webhook, both or either. */
export function checkpointOptions(
  config: AuditCheckpointsConfig<ResolvedConfig>,
  baseDir: string,
  onError?: (error: unknown) => void,
): AuditCheckpointOptions {
  const file = config.file === undefined ? undefined : resolve(baseDir, config.file);
  const webhook = config.webhook;
  return {
    every: config.every ?? 100,
    intervalMs: config.interval ?? 10_000,
    publish: async (checkpoint) => {
      // Both are tried; one failing does not keep the checkpoint from the other.
      const results = await Promise.allSettled([
        file === undefined ? undefined : writeCheckpointFile(file, checkpoint),
        webhook === undefined ? undefined : postCheckpoint(webhook, checkpoint),
      ]);
      const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
      if (failed !== undefined) throw failed.reason;
    },
    ...(onError !== undefined ? { onError } : {}),
  };
}

/**
 * Opens the log a configuration file describes (`audit`, and `stores.state` as its default store);
 * `ready()` is the caller's to await. Takes the file's form so a command or a test can call it alone.
 */
export function openAudit(
  written: GatewayConfig,
  baseDir: string,
  onCheckpointError?: (error: unknown) => void,
  onJournalError?: (error: unknown) => void,
): GatewayAudit {
  const config = {
    ...(written.audit !== undefined ? { audit: resolvePart(['audit'], written.audit, baseDir) } : {}),
    ...(written.stores !== undefined ? { stores: resolvePart(['stores'], written.stores, baseDir) } : {}),
  } as Pick<ResolvedConfig, 'audit' | 'stores'>;
  const audit = config.audit as AuditConfig<ResolvedConfig>;
  const durability = audit.durability ?? 'batch';
  const location = auditStoreLocation(config);
  const opened = openAuditStore(
    location,
    durability === 'batch' ? { syncIntervalMs: BATCH_SYNC_INTERVAL_MS } : {},
  );
  let journal: SqliteAuditJournal | undefined;
  try {
    journal = openAuditJournal(location, durability, audit.journal);
  } catch (error) {
    void opened.close();
    throw error;
  }
  // The last checkpoint published, for the metrics and the status page.
  let published: AuditCheckpoint | undefined;
  const checkpoints =
    audit.checkpoints === undefined
      ? undefined
      : checkpointOptions(audit.checkpoints, baseDir, onCheckpointError);
  const log = auditLog({
    store: opened.store,
    signingKey: audit.signingKey,
    digestKey: audit.digestKey ?? derivedDigestKey(audit.signingKey),
    onAuditFailure: audit.onAuditFailure ?? 'refuse',
    durability,
    ...(audit.commitWindow !== undefined ? { commitWindowMs: audit.commitWindow } : {}),
    ...(journal !== undefined ? { journal } : {}),
    ...(journal !== undefined && onJournalError !== undefined ? { onJournalError } : {}),
    ...(checkpoints !== undefined
      ? {
          checkpoints: {
            ...checkpoints,
            publish: async (checkpoint: AuditCheckpoint) => {
              await checkpoints.publish(checkpoint);
              published = checkpoint;
            },
          },
        }
      : {}),
  });
  return {
    key: auditKeyOf(config),
    kind: opened.kind,
    log,
    attach: (dispatcher) => log.attach(dispatcher),
    record: async (entry) => {
      await log.record(entry);
    },
    ping: async () => {
      await opened.store.head();
    },
    head: async () => {
      const head = await opened.store.head();
      return head === undefined ? undefined : { seq: head.seq, hash: head.hash };
    },
    checkpoints: checkpoints !== undefined,
    lastCheckpoint: () => (published === undefined ? undefined : { seq: published.seq, at: published.at }),
    async close() {
      try {
        await log.close();
      } finally {
        // What the store did not take stays in the journal for the next start.
        journal?.close();
        await opened.close();
      }
    },
  };
}

/**
 * Records that `runtime`'s configuration starts serving (`config.loaded`, `config.reloaded`), with
 * its keyed digest, before it does. A record that cannot be written stops it, unless the log is
 * configured to let calls through (`onAuditFailure: allow`).
 */
export async function recordConfig(
  runtime: Runtime,
  kind: 'config.loaded' | 'config.reloaded',
  weakens: readonly string[] = [],
): Promise<void> {
  const audit = runtime.audit;
  if (audit === undefined) return;
  try {
    // Each way a reload weakens security is its own record, in words (not a digest).
    for (const weakening of weakens)
      await audit.record({ kind: 'config.weakened', code: 'CONFIG_WEAKENED', rule: weakening });
    // The configuration as written: its digest does not depend on how the loader resolves units.
    await audit.record({ kind, args: runtime.loaded.config });
  } catch (error) {
    if (runtime.config.audit?.onAuditFailure === 'allow') return;
    throw new ConfigError([
      runtime.loaded.issue(
        ['audit'],
        `the audit log could not record this configuration (${(error as Error).name})`,
        'check the audit store; with onAuditFailure: allow the gateway serves while it is down',
      ),
    ]);
  }
}
