// Per-principal credentials (`credentials.<name>.perPrincipal`): one value per tenant and principal,
// kept in a store (memory, SQLite or PostgreSQL) sealed with AES-256-GCM under the configured key. The sealed
// value is bound to its (name, tenant, principal) as additional data, so a row copied onto another
// principal's, or edited, does not open: it is refused, never sent. Set and deleted through the
// operator API (credentials-api.ts) and `toolgate credentials`; read per call by the upstream's
// identity (upstream-identity.ts).

import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { postgresPrincipalCredentials } from '@toolgate/store-postgres';
import { sqlitePrincipalCredentials, type PrincipalCredentialEntry } from '@toolgate/store-sqlite';
import { fingerprint } from './config/fingerprint';
import type { ResolvedConfig, StateStoreLocation } from './config/types';
import type { PrincipalCredentials } from './upstream-identity';

export type { PrincipalCredentialEntry } from '@toolgate/store-sqlite';

/** A stored value that does not open with the configured key (edited, moved, or sealed under another key). */
export class CredentialUnreadableError extends Error {
  override readonly name = 'CredentialUnreadableError';
  constructor(readonly credential: string) {
    super(`the stored value of the credential '${credential}' does not open with the configured key`);
  }
}

export interface PrincipalCredentialVault extends PrincipalCredentials {
  /** The per-principal credentials' names. */
  names(): string[];
  set(name: string, tenant: string, principal: string, value: string): Promise<void>;
  delete(name: string, tenant: string, principal: string): Promise<boolean>;
  list(name: string, tenant?: string): Promise<PrincipalCredentialEntry[]>;
  /** Equal fingerprints mean the same stores and keys: a reload keeps the vault. */
  readonly fingerprint: string;
  close(): Promise<void>;
}

interface RowStore {
  get(name: string, tenant: string, principal: string): Promise<string | undefined>;
  set(name: string, tenant: string, principal: string, sealed: string): Promise<void>;
  delete(name: string, tenant: string, principal: string): Promise<boolean>;
  list(name: string, tenant?: string): Promise<PrincipalCredentialEntry[]>;
  close(): void;
}

/** 32 bytes from 64 hex digits or base64 (the configuration checks the form, load.ts). */
export function credentialKey(text: string): Buffer {
  const trimmed = text.trim();
  const key = /^[0-9a-f]{64}$/i.test(trimmed) ? Buffer.from(trimmed, 'hex') : Buffer.from(trimmed, 'base64');
  if (key.length !== 32) throw new TypeError('a per-principal credential key must be 32 bytes');
  return key;
}

const VERSION = 'v1';
const boundTo = (name: string, tenant: string, principal: string): Buffer =>
  Buffer.from(JSON.stringify(['toolgate.credential.v1', name, tenant, principal]));

export function sealCredential(
  key: Buffer,
  name: string,
  tenant: string,
  principal: string,
  value: string,
): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(boundTo(name, tenant, principal));
  const sealed = Buffer.concat([cipher.update(value, 'utf8'), cipher.final()]);
  return `${VERSION}.${Buffer.concat([iv, sealed, cipher.getAuthTag()]).toString('base64url')}`;
}

export function openCredential(
  key: Buffer,
  name: string,
  tenant: string,
  principal: string,
  sealed: string,
): string {
  const [version, body = ''] = sealed.split('.');
  const bytes = Buffer.from(body, 'base64url');
  if (version !== VERSION || bytes.length < 12 + 16) throw new CredentialUnreadableError(name);
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, bytes.subarray(0, 12));
    decipher.setAAD(boundTo(name, tenant, principal));
    decipher.setAuthTag(bytes.subarray(bytes.length - 16));
    return Buffer.concat([decipher.update(bytes.subarray(12, bytes.length - 16)), decipher.final()]).toString(
      'utf8',
    );
  } catch {
    throw new CredentialUnreadableError(name);
  }
}

function memoryRows(): RowStore {
  const rows = new Map<string, { sealed: string; entry: PrincipalCredentialEntry }>();
  const keyOf = (name: string, tenant: string, principal: string) =>
    JSON.stringify([name, tenant, principal]);
  return {
    get: async (name, tenant, principal) => rows.get(keyOf(name, tenant, principal))?.sealed,
    set: async (name, tenant, principal, sealed) => {
      rows.set(keyOf(name, tenant, principal), {
        sealed,
        entry: { name, tenant, principal, updatedAt: new Date().toISOString() },
      });
    },
    delete: async (name, tenant, principal) => rows.delete(keyOf(name, tenant, principal)),
    list: async (name, tenant) =>
      [...rows.values()]
        .map((row) => row.entry)
        .filter((entry) => entry.name === name && (tenant === undefined || entry.tenant === tenant)),
    close: () => rows.clear(),
  };
}

/** The PostgreSQL store, its `close` made synchronous like the others' (the pool ends in the background). */
function postgresRows(url: string): RowStore {
  const store = postgresPrincipalCredentials({ connectionString: url });
  return {
    get: (name, tenant, principal) => store.get(name, tenant, principal),
    set: (name, tenant, principal, sealed) => store.set(name, tenant, principal, sealed),
    delete: (name, tenant, principal) => store.delete(name, tenant, principal),
    list: (name, tenant) => store.list(name, tenant),
    close: () => void store.close().catch(() => undefined),
  };
}

/** Where a per-principal credential is kept: its own `store`, else `stores.state`, else memory. */
export function credentialStoreLocation(config: ResolvedConfig, name: string): StateStoreLocation {
  return config.credentials?.[name]?.perPrincipal?.store ?? config.stores?.state ?? { kind: 'memory' };
}

function openRows(location: StateStoreLocation): RowStore {
  switch (location.kind) {
    case 'memory':
      return memoryRows();
    case 'sqlite':
      return sqlitePrincipalCredentials({ path: location.path });
    case 'postgres':
      return postgresRows(location.url);
  }
}

/** The vault of the configuration's per-principal credentials; undefined when it has none. */
export function openPrincipalCredentials(config: ResolvedConfig): PrincipalCredentialVault | undefined {
  const entries = Object.entries(config.credentials ?? {}).flatMap(([name, credential]) =>
    credential.perPrincipal === undefined
      ? []
      : [{ name, key: credential.perPrincipal.key, location: credentialStoreLocation(config, name) }],
  );
  if (entries.length === 0) return undefined;
  // Credentials kept in the same place share one store.
  const stores = new Map<string, RowStore>();
  const byName = new Map<string, { rows: RowStore; key: Buffer }>();
  for (const { name, key, location } of entries) {
    const place = fingerprint(location);
    let rows = stores.get(place);
    if (rows === undefined) {
      rows = openRows(location);
      stores.set(place, rows);
    }
    byName.set(name, { rows, key: credentialKey(key) });
  }
  const of = (name: string) => {
    const found = byName.get(name);
    if (found === undefined)
      throw new TypeError(`the credential '${name}' is not a per-principal credential`);
    return found;
  };
  return {
    fingerprint: fingerprint(entries),
    names: () => [...byName.keys()],
    has: (name) => byName.has(name),
    async get(name, tenant, principal) {
      const { rows, key } = of(name);
      const sealed = await rows.get(name, tenant, principal);
      return sealed === undefined ? undefined : openCredential(key, name, tenant, principal, sealed);
    },
    async set(name, tenant, principal, value) {
      const { rows, key } = of(name);
      await rows.set(name, tenant, principal, sealCredential(key, name, tenant, principal, value));
    },
    delete: (name, tenant, principal) => of(name).rows.delete(name, tenant, principal),
    list: (name, tenant) => of(name).rows.list(name, tenant),
    async close() {
      for (const rows of stores.values()) rows.close();
    },
  };
}
